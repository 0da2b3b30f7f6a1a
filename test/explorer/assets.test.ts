// The explorer's files compressed once, by the build (dist/explorer/precompressed/), and taken by
// a node only when they decompress to the very bytes it serves: a stale or damaged compressed
// file is made again on first use, never served for a file it does not hold.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadAssets, PRECOMPRESSED_DIR } from '../../src/explorer/assets.js';
import { tempDir } from '../helpers/e2e.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A package root holding a copy of the built explorer files. */
function copiedRoot(): string {
  const root = tempDir('akas-assets-');
  mkdirSync(join(root, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'dist', 'explorer'), join(root, 'dist', 'explorer'), { recursive: true });
  cpSync(join(ROOT, 'dist', 'akas-verify.browser.js'), join(root, 'dist', 'akas-verify.browser.js'));
  return root;
}

describe("the explorer's compressed files", () => {
  it("are the build's own when they decompress to the file served", () => {
    const root = copiedRoot();
    const { files, missing } = loadAssets(root);
    expect(missing).toEqual([]);
    expect(files.size).toBe(3);
    for (const a of files.values()) {
      const name = a.file.startsWith('akas-verify') ? 'akas-verify.browser.js' : `explorer.${a.file.split('.').pop()}`;
      expect(a.br().equals(readFileSync(join(root, ...PRECOMPRESSED_DIR, `${name}.br`))), a.file).toBe(true);
      expect(a.gzip().equals(readFileSync(join(root, ...PRECOMPRESSED_DIR, `${name}.gz`))), a.file).toBe(true);
    }
  });

  it('are made again when the build left them damaged or made for other bytes', () => {
    const root = copiedRoot();
    const dir = join(root, ...PRECOMPRESSED_DIR);
    writeFileSync(join(dir, 'akas-verify.browser.js.br'), Buffer.from('not brotli at all'));
    writeFileSync(join(dir, 'akas-verify.browser.js.gz'), gzipSync(Buffer.from('console.log("another verifier")')));
    const { files } = loadAssets(root);
    const verifier = [...files.values()].find((a) => a.file.startsWith('akas-verify'))!;
    expect(brotliDecompressSync(verifier.br()).equals(verifier.body)).toBe(true);
    expect(gunzipSync(verifier.gzip()).equals(verifier.body)).toBe(true);
    for (const a of files.values()) expect(gunzipSync(a.gzip()).equals(a.body), a.file).toBe(true);
  });

  it('are read at first use, not when the node starts', () => {
    const root = copiedRoot();
    const { files } = loadAssets(root);
    // After the start, the build's brotli form is replaced by another of the same bytes: the one served is the one found then.
    const verifier = [...files.values()].find((a) => a.file.startsWith('akas-verify'))!;
    const other = brotliCompressSync(verifier.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
    writeFileSync(join(root, ...PRECOMPRESSED_DIR, 'akas-verify.browser.js.br'), other);
    expect(verifier.br().equals(other)).toBe(true);
    expect(verifier.br()).toBe(verifier.br()); // and kept
  });
});
