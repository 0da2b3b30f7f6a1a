// Bundles the CLI (after tsc) into dist/bin: the entry and commander in one file, every
// command's heavy work (fastify, ink, undici, ...) in chunks loaded on use. Resolving and
// linking ~25 small ES modules and commander's CommonJS cost a third of `akas --help`'s
// start-up; one file brings it near the `node -e 0` floor. Runtime packages stay external
// and load from node_modules.
import { build } from 'esbuild';
import { chmodSync, readFileSync, rmSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const external = Object.keys(pkg.dependencies).filter((name) => name !== 'commander');

rmSync(new URL('../dist/bin/', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: ['dist/cli/main.js'],
  outdir: 'dist/bin',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  logLevel: 'warning',
  // commander is CommonJS and requires node builtins; give the ESM chunks a real require.
  banner: { js: "import { createRequire as __akasCreateRequire } from 'node:module'; const require = __akasCreateRequire(import.meta.url);" },
});
chmodSync(new URL('../dist/bin/main.js', import.meta.url), 0o755);
