// `npm run chaos -- --minutes N --seed S [--out DIR]` (issue 49): bundles the chaos harness
// (test/chaos/run.ts and what it imports, TypeScript) with the project's own esbuild into
// dist/chaos/run.mjs, then runs it in this process with the arguments npm passed. Node runs no
// TypeScript by itself, and the harness takes no new dependency to do it; packages stay
// external (loaded from node_modules). The processes it starts are the built binary,
// dist/bin/main.cjs: run `npm run build` first (the harness says so when it is missing).
//
// The seeded run of npm test (test/chaos/chaos.test.ts) runs the same harness under vitest instead.
import { build } from 'esbuild';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outfile = resolve(root, 'dist/chaos/run.mjs');

await build({
  entryPoints: [resolve(root, 'test/chaos/run.ts')],
  outfile,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
await import(pathToFileURL(outfile).href);
