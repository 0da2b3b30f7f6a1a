import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashFile, readCasManifest, verifyCasFile, verifyCasManifest } from '../../verifier/index.js';
import { runCli, tempDir } from '../helpers/e2e.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

let dir: string;
const bytes = randomBytes(3 * 1024 * 1024 + 7);
beforeAll(() => {
  dir = tempDir('akas-verify-cas-');
  writeFileSync(join(dir, 'blob.bin'), bytes);
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'note.txt'), 'a note');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('verifier/cas', () => {
  it('hashes a file in a stream', async () => {
    expect(await hashFile(join(dir, 'blob.bin'))).toEqual({ sha256: sha256(bytes), bytes: bytes.length });
  });

  it('tells match, mismatch and unreadable apart', async () => {
    expect((await verifyCasFile(join(dir, 'blob.bin'), sha256(bytes).toUpperCase())).status).toBe('match');
    const wrong = await verifyCasFile(join(dir, 'blob.bin'), sha256('other'));
    expect(wrong).toMatchObject({ status: 'mismatch', actual: sha256(bytes), expected: sha256('other') });
    expect((await verifyCasFile(join(dir, 'missing.bin'), sha256(bytes))).status).toBe('unreadable');
  });

  it('reads a manifest of {path, sha256} relative to its folder and checks each entry', async () => {
    const manifest = join(dir, 'manifest.json');
    writeFileSync(
      manifest,
      JSON.stringify([
        { path: 'blob.bin', sha256: sha256(bytes) },
        { path: 'sub/note.txt', sha256: sha256('a note') },
      ]),
    );
    const r = await verifyCasManifest(await readCasManifest(manifest));
    expect(r).toMatchObject({ ok: true, checked: 2, matched: 2, mismatched: 0, unreadable: 0 });

    writeFileSync(
      manifest,
      JSON.stringify({
        files: [
          { path: 'sub/note.txt', sha256: sha256('another note') },
          { path: 'gone.txt', sha256: sha256('x') },
        ],
      }),
    );
    const bad = await verifyCasManifest(await readCasManifest(manifest));
    expect(bad).toMatchObject({ ok: false, matched: 0, mismatched: 1, unreadable: 1 });

    writeFileSync(manifest, JSON.stringify([{ path: 'blob.bin', sha256: 'xyz' }]));
    await expect(readCasManifest(manifest)).rejects.toThrow();
  });
});

describe('akas verify cas (built binary)', () => {
  const akas = (...args: string[]) => runCli(args, { cwd: dir });

  it('exits 0 on a match, 1 on a mismatch, 2 when the file cannot be read', async () => {
    const ok = await akas('--json', 'verify', 'cas', 'blob.bin', '--sha256', sha256(bytes));
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, status: 'match', bytes: bytes.length });
    expect((await akas('verify', 'cas', 'blob.bin', '--sha256', sha256('nope'))).code).toBe(1);
    expect((await akas('verify', 'cas', 'missing.bin', '--sha256', sha256(bytes))).code).toBe(2);
    expect((await akas('verify', 'cas', 'blob.bin', '--sha256', 'not-hex')).code).toBe(2);
    expect((await akas('verify', 'cas', 'blob.bin')).code).toBe(2);
  }, 30_000);

  it('checks a manifest: 0 all match, 1 any mismatch, 2 unreadable entries or manifest', async () => {
    const m = (name: string, entries: unknown) => {
      writeFileSync(join(dir, name), JSON.stringify(entries));
      return name;
    };
    const good = m('good.json', [
      { path: 'blob.bin', sha256: sha256(bytes) },
      { path: 'sub/note.txt', sha256: sha256('a note') },
    ]);
    const ok = await akas('--json', 'verify', 'cas', '--manifest', good);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, checked: 2 });

    const mismatch = m('mismatch.json', [
      { path: 'blob.bin', sha256: sha256('x') },
      { path: 'gone.bin', sha256: sha256('y') },
    ]);
    expect((await akas('verify', 'cas', '--manifest', mismatch)).code).toBe(1);

    const gone = m('gone.json', [{ path: 'gone.bin', sha256: sha256('y') }]);
    expect((await akas('verify', 'cas', '--manifest', gone)).code).toBe(2);
    expect((await akas('verify', 'cas', '--manifest', 'no-such-manifest.json')).code).toBe(2);
  }, 30_000);
});
