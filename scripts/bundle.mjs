// Bundles the CLI (after tsc) into dist/bin, in two parts (bench/coldstart.ts measures why):
//
// 1. dist/bin/main.cjs: the front of the CLI (commander, the command table, the client,
//    profiles, output) as ONE CommonJS file. A short command such as `akas me` loads this
//    file and node builtins only: no ES module loader starts (about 5 ms of a cold start
//    here), and no chain of small chunks is resolved one by one.
// 2. dist/bin/lazy/**: every module the front imports with a dynamic import() (the node's
//    room and the HTTP app it starts, ink views, undici transfers, the verifier, judge signing), built as ES modules
//    with shared chunks, and loaded only by the commands that need them. They stay ES
//    modules because some of what they import (ink, the VC stack) ships as ESM only.
//
// Runtime packages stay external and load from node_modules, but for the pure-JS ones the
// node's server is made of (`inlined` below), which the lazy chunks carry inside: loaded from
// node_modules they are hundreds of small files, each found, read and compiled on its own, and
// `akas serve` spent more CPU on that than on its own start (1.16 s of CPU to start and stop
// a node here, 0.75 s with them inside; bench/coldstart.ts prints the CPU until it listens).
// undici too, for the blob transfers of `akas cas put | get` (about 80 ms less to load); inside
// a chunk it is a CommonJS module whose exports arrive as the default export alone.
// Packages with native code (classic-level), worker files (pino's transports), ESM-only trees
// (ink, the VC stack) and what the front loads itself stay outside. Code shared by both parts
// is duplicated, so nothing may rely on class identity across the two (CliError is recognised
// by a brand, not instanceof: cli/kit/errors.ts).
import { build } from 'esbuild';
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lazyBuiltins, lazyBuiltinsOf, packagesOnFirstUse, SERVER_LAZY } from './lazy-builtins.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = resolve(root, 'dist');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
const external = Object.keys(pkg.dependencies).filter((name) => name !== 'commander');
/** Pure-JS packages the lazy chunks carry inside instead of loading them from node_modules (the top of this file). */
const inlined = new Set([
  'fastify',
  'ajv',
  'ajv-formats',
  'typebox',
  'helmet',
  '@fastify/swagger',
  'json-logic-js',
  'canonicalize',
  'secure-json-parse',
  'minisearch',
  'undici',
]);
const lazyExternal = external.filter((name) => !inlined.has(name));
// What the inlined packages require but a node never runs, left out of the server's chunk so
// that no `akas serve` compiles it (V8 parses a whole ES module before it runs a line of it:
// most of a start's CPU here, bench/coldstart.ts): fastify's default schema compilers (the node
// hands fastify its own: src/http/app.ts) with fast-json-stringify behind them, and
// light-my-request, behind fastify's inject(), which only tests call (on the sources, not the
// build). Required after all, they load from node_modules, where they are installed with fastify.
const neverRun = ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'light-my-request'];
// commander too: the front carries its own copy; a lazy module that takes something of it (the
// kit's options, loaded by `akas serve` among others) loads it from node_modules as CommonJS,
// whose functions V8 compiles as they first run, not as a second copy in an ES module chunk
// compiled whole (about 110 KB of a start).
const frontOnly = ['commander'];

/**
 * @fastify/swagger requires yaml at load, for the YAML form of the OpenAPI document
 * (/openapi.yaml), which few read: a stand-in loads yaml on first use instead, from swagger's own
 * dependency in node_modules (yaml was an eighth of the server's chunk).
 */
const yamlOnFirstUse = {
  name: 'yaml-on-first-use',
  setup(b) {
    b.onResolve({ filter: /^yaml$/ }, (args) =>
      args.importer.includes(`${join('node_modules', '@fastify', 'swagger')}`) ? { path: 'yaml', namespace: 'yaml-on-first-use' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'yaml-on-first-use' }, () => ({
      loader: 'js',
      contents: `
        let yaml;
        const load = () => (yaml ??= require('node:module').createRequire(require.resolve('@fastify/swagger'))('yaml'));
        module.exports = { parse: (...a) => load().parse(...a), stringify: (...a) => load().stringify(...a) };
      `,
    }));
  },
};

rmSync(resolve(dist, 'bin'), { recursive: true, force: true });

/**
 * The model `akas --help` is answered from (cli/kit/help-model.ts): read from the whole program as
 * tsc just built it, so the front lists exactly the commands it carries.
 */
async function helpModel() {
  const at = (path) => import(pathToFileURL(resolve(dist, path)).href);
  const [{ commandGroups }, { buildProgram }, { helpModelOf }] = await Promise.all([
    at('cli/commands/index.js'),
    at('cli/program.js'),
    at('cli/kit/help-model.js'),
  ]);
  const quiet = { write: () => true };
  return helpModelOf(buildProgram({ stdout: quiet, stderr: quiet }, commandGroups, {}).program);
}

/** Absolute paths of the modules the front loads lazily. */
const lazy = new Set();
const lazyPath = (abs) => relative(dist, abs).split('\\').join('/');

await build({
  entryPoints: [resolve(dist, 'cli/main.js')],
  outfile: resolve(dist, 'bin/main.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external,
  logLevel: 'warning',
  // The front is CommonJS, where import.meta is empty: src/core/paths.ts finds data/ from
  // import.meta.url, so the bundle gets this file's own URL in its place. And the help model.
  define: { 'import.meta.url': 'importMetaUrl', __AKAS_HELP_MODEL__: JSON.stringify(JSON.stringify(await helpModel())) },
  inject: [resolve(root, 'scripts/import-meta-url.js')],
  plugins: [
    // Built-ins a short command never calls (node:net, node:child_process, ...) load on first use.
    lazyBuiltins,
    {
      name: 'lazy-modules',
      setup(b) {
        b.onResolve({ filter: /^\./ }, (args) => {
          if (args.kind !== 'dynamic-import') return undefined;
          const abs = resolve(args.resolveDir, args.path);
          lazy.add(abs);
          return { path: `./lazy/${lazyPath(abs)}`, external: true };
        });
      },
    },
  ],
});

// The node's HTTP app (src/http/app.ts, fastify and every route) is an entry of its own, at a
// known path: src/node loads it lazily when a node starts, and bench/coldstart.ts preloads it
// before a command on a stopped node to measure what that command no longer loads.
lazy.add(resolve(dist, 'src/http/app.js'));

await build({
  entryPoints: [...lazy],
  outdir: resolve(dist, 'bin/lazy'),
  outbase: dist,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: [...lazyExternal, ...neverRun, ...frontOnly],
  plugins: [yamlOnFirstUse, packagesOnFirstUse(frontOnly), lazyBuiltinsOf(SERVER_LAZY)],
  logLevel: 'warning',
  // Bundled CommonJS code (if any) requires node builtins; give the ESM chunks a real require.
  banner: { js: "import { createRequire as __akasCreateRequire } from 'node:module'; const require = __akasCreateRequire(import.meta.url);" },
});
asciiOnly(resolve(dist, 'bin/lazy'));
chmodSync(resolve(dist, 'bin/main.cjs'), 0o755);

/**
 * Rewrites every non-ASCII character of the lazy chunks as a \uXXXX escape. esbuild escapes
 * them everywhere but in template literals (where the escape would change a tag's raw
 * strings), and the explorer's pages are template literals with a few `·`, `—` and `→` in
 * them: one such character makes V8 hold and scan the whole 2 MB chunk of the node's server
 * as two-byte text, which cost about 45 ms of every `akas serve` start here. The escapes mean
 * the same in strings, cooked template strings, regular expressions and identifiers; only
 * String.raw (or a tag reading `strings.raw`) would see them, and the build refuses a chunk
 * that calls String.raw rather than change what it means.
 */
function asciiOnly(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const file = join(entry.parentPath, entry.name);
    const text = readFileSync(file, 'utf8');
    if (!/[^\x00-\x7f]/.test(text)) continue;
    if (text.includes('String.raw')) throw new Error(`${file}: String.raw beside non-ASCII text; escaping it would change what it means`);
    writeFileSync(
      file,
      text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    );
  }
}
