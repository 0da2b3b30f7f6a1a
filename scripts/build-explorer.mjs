// Builds the explorer's browser files (issue 25; ARCHITECTURE 9) into dist/explorer/: its page
// script (src/explorer/client/main.ts, one ES module, minified, for current browsers) and its
// stylesheet (minified). The verifier's browser build (dist/akas-verify.browser.js, made by
// scripts/build-verifier.mjs) is not bundled in: the page script loads it as it is, when a page
// has something to check. The node serves these files named by their hash (src/explorer/assets.ts).
// Fails when the script imports anything at run time but that build, or grows past its budget.
import { mkdirSync, statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = resolve(root, 'dist/explorer');
/** The page script's budget, compressed (the issue: 100 KB of script with the verifier). */
export const SCRIPT_BROTLI_LIMIT = 20 * 1024;

export async function buildExplorer() {
  mkdirSync(out, { recursive: true });
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
  });
  const imports = Object.values(js.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external || i.kind !== 'dynamic-import'));
  if (imports.length) throw new Error(`the explorer's script imports ${imports.map((i) => i.path).join(', ')}: it must import nothing (the verifier is loaded by URL)`);
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
  return sizes;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const s of await buildExplorer()) console.log(`${s.file}  ${(s.size / 1024).toFixed(1)} KiB (${(s.brotli / 1024).toFixed(1)} KiB brotli)`);
}
