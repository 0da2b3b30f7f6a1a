// Builds the explorer's browser files (issue 25; ARCHITECTURE 9) into dist/explorer/: its page
// script (src/explorer/client/main.ts, one ES module, minified, for current browsers) and its
// stylesheet (minified). The verifier's browser build (dist/akas-verify.browser.js, made by
// scripts/build-verifier.mjs) is not bundled in: the page script loads it as it is, when a page
// has something to check. The node serves these files named by their hash (src/explorer/assets.ts).
// Fails when the script imports anything at run time but that build, or grows past its budget.
//
// Subresource Integrity (issue 30): the pinned keys protect a reader from forged data, not from a
// node serving another verifier or page script. So the verifier's SRI hash is built into the page
// script (it loads the verifier only through a modulepreload carrying it), and the integrity of
// the script and the stylesheet, with the sha256 of all three files, is written to
// dist/explorer/integrity.json: the node puts those values on its pages' tags, and a reader
// compares what a node serves with the package's hashes (README, Release integrity).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = resolve(root, 'dist/explorer');
/** The page script's budget, compressed (the issue: 100 KB of script with the verifier). */
export const SCRIPT_BROTLI_LIMIT = 20 * 1024;
/** The files a release names the hashes of, as paths in the package. */
export const INTEGRITY_FILES = ['dist/explorer/explorer.js', 'dist/explorer/explorer.css', 'dist/akas-verify.browser.js'];

/** The sha256 (hex, as sha256sum prints it) and the SRI value (sha384, base64) of a file's bytes. */
export function hashesOf(bytes) {
  return { sha256: createHash('sha256').update(bytes).digest('hex'), integrity: `sha384-${createHash('sha384').update(bytes).digest('base64')}` };
}

export async function buildExplorer() {
  mkdirSync(out, { recursive: true });
  const verifierPath = resolve(root, 'dist/akas-verify.browser.js');
  if (!existsSync(verifierPath))
    throw new Error('dist/akas-verify.browser.js is missing: build the verifier first (npm run build runs scripts/build-verifier.mjs before this)');
  const verifierIntegrity = hashesOf(readFileSync(verifierPath)).integrity;
  const js = await build({
    entryPoints: [resolve(root, 'src/explorer/client/main.ts')],
    outfile: resolve(out, 'explorer.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome110', 'firefox130', 'safari17'],
    minify: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    define: { AKAS_VERIFIER_INTEGRITY: JSON.stringify(verifierIntegrity) },
  });
  const imports = Object.values(js.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external || i.kind !== 'dynamic-import'));
  if (imports.length)
    throw new Error(`the explorer's script imports ${imports.map((i) => i.path).join(', ')}: it must import nothing (the verifier is loaded by URL)`);
  await build({
    entryPoints: [resolve(root, 'src/explorer/client/explorer.css')],
    outfile: resolve(out, 'explorer.css'),
    bundle: true,
    minify: true,
    logLevel: 'warning',
  });
  const sizes = ['explorer.js', 'explorer.css'].map((f) => {
    const bytes = readFileSync(resolve(out, f));
    return { file: relative(root, resolve(out, f)), size: statSync(resolve(out, f)).size, brotli: brotliCompressSync(bytes).length };
  });
  if (sizes[0].brotli > SCRIPT_BROTLI_LIMIT) throw new Error(`${sizes[0].file} is ${sizes[0].brotli} bytes compressed, over ${SCRIPT_BROTLI_LIMIT}`);
  const files = Object.fromEntries(INTEGRITY_FILES.map((f) => [f, hashesOf(readFileSync(resolve(root, f)))]));
  writeFileSync(
    resolve(out, 'integrity.json'),
    `${JSON.stringify(
      {
        note:
          'Written by scripts/build-explorer.mjs: the sha256 of each file and its Subresource Integrity value (the ' +
          "explorer page script carries the verifier's).",
        files,
      },
      null,
      2,
    )}\n`,
  );
  await precompress();
  return sizes;
}

// The compressed forms a node serves (src/explorer/assets.ts), made here once rather than at
// every start: brotli at quality 11 is about a second of CPU for the verifier's 124 KB. With the
// node's own functions (tsc has built dist/src before this script runs), so both agree.
async function precompress() {
  const { compressBrotli, compressGzip, PRECOMPRESSED_DIR } = await import(resolve(root, 'dist/src/explorer/assets.js'));
  const dir = resolve(root, ...PRECOMPRESSED_DIR);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const f of INTEGRITY_FILES) {
    const bytes = readFileSync(resolve(root, f));
    const name = f.split('/').pop();
    writeFileSync(resolve(dir, `${name}.br`), compressBrotli(bytes));
    writeFileSync(resolve(dir, `${name}.gz`), compressGzip(bytes));
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const s of await buildExplorer()) console.log(`${s.file}  ${(s.size / 1024).toFixed(1)} KiB (${(s.brotli / 1024).toFixed(1)} KiB brotli)`);
}
