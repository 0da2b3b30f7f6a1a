// Node built-ins that a bundle loads on first use instead of at start (scripts/bundle.mjs for the
// CLI's front, scripts/build-verifier.mjs for the single file).
//
// A bundle runs the top level of every module it holds before its command parses argv, and each
// module's imports of built-ins with it: the HTTP client's node:net (and the streams under it),
// commander's node:child_process (for executable subcommands, which akas has none of), the
// status lists' node:zlib, the profiles' node:crypto and node:os. Node compiles each of those
// (and the internal modules behind it) when it is first required, a few milliseconds that
// `akas --help` or the single file's `verify credential` paid for modules they never call
// (`npm run bench -- coldstart`). An import of one of LAZY resolves here to a stand-in module
// whose exports are getters: the built-in is required when a getter is first read.
//
// The names of the exports are those of the built-in in the Node that builds (the stand-in
// cannot ask the running Node before it loads the module); a name a newer Node adds is missing
// from the stand-in, one it removed reads undefined, as an import of it would.
import { builtinModules, createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The built-ins loaded on first use; the rest load with the module that imports them. */
export const LAZY = ['child_process', 'crypto', 'dgram', 'http', 'https', 'net', 'os', 'readline', 'tls', 'worker_threads', 'zlib'];

const bare = (spec) => spec.replace(/^node:/, '');

/** What `specifier` (a built-in or an installed package) exports, by name, as the building Node loads it. */
const namesOf = (specifier) => Object.keys(require(specifier)).filter((k) => k !== 'default' && k !== '__esModule');

/** A stand-in for what `specifier` exports: getters that require it on first read. */
function standInSource(specifier) {
  const names = namesOf(specifier);
  return `let loaded;
const load = () => (loaded ??= require(${JSON.stringify(specifier)}));
for (const name of ${JSON.stringify(names)}) Object.defineProperty(exports, name, { enumerable: true, get: () => load()[name] });
`;
}

/**
 * An esbuild plugin for ES module chunks (which get a real require from their banner): an import
 * of one of `packages` is a stand-in that requires the package on first use. The CLI's lazy
 * chunks import commander (the kit's renamed options, the help model) only to use it inside
 * functions a one-shot action never calls, and loading it from node_modules cost every action
 * that reaches the kit (`akas verify credential` among them) its compile, the CommonJS lexer
 * and the node:child_process it requires at load.
 */
export const packagesOnFirstUse = (packages) => ({
  name: 'packages-on-first-use',
  setup(b) {
    const wanted = new Set(packages);
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      wanted.has(args.path) && args.namespace !== 'package-on-first-use' ? { path: args.path, namespace: 'package-on-first-use' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'package-on-first-use' }, (args) => ({ loader: 'js', contents: standInSource(args.path) }));
  },
});

/**
 * What an `import` of a built-in resolves to: an ES module re-exporting the stand-in's names. The
 * stand-in is CommonJS (its exports are getters), and esbuild gives every module that imports a
 * CommonJS module its own copy of that module's exports, one getter defined per name: a dozen
 * modules importing node:crypto's 67 names cost `akas me` about a millisecond of its start
 * (esbuild's __copyProps in a profile). Imported through this one module, the copy is made once.
 */
function lazyImportSource(name) {
  return `export { default, ${namesOf(`node:${name}`).join(', ')} } from ${JSON.stringify(`node:${name}`)};\n`;
}

/**
 * The built-ins the node's server chunk loads on first use (scripts/bundle.mjs): fastify requires
 * node:http2, node:https (and node:tls behind both) and node:dns when it loads, for options a node
 * never sets (HTTP/2, TLS) and for resolving a host name to listen on, which `akas serve` does
 * only when given one. They were about 20 ms of each start here (bench/coldstart.ts).
 */
export const SERVER_LAZY = ['dns', 'http2', 'https', 'tls'];

/** An esbuild plugin: imports of the built-ins `names` (with or without node:) load them on first use. */
export const lazyBuiltinsOf = (names) => ({
  name: 'lazy-builtins',
  setup(b) {
    const lazy = new Set(names);
    // A require() gets the stand-in itself; an import gets it through its one re-exporting module.
    b.onResolve({ filter: /^(node:)?[a-z_0-9]+$/ }, (args) =>
      args.namespace !== 'lazy-builtin' && builtinModules.includes(bare(args.path)) && lazy.has(bare(args.path))
        ? { path: bare(args.path), namespace: args.kind === 'require-call' || args.namespace === 'lazy-import' ? 'lazy-builtin' : 'lazy-import' }
        : undefined,
    );
    b.onResolve({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({ path: args.path, external: true }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({ loader: 'js', contents: standInSource(`node:${args.path}`) }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-import' }, (args) => ({ loader: 'js', contents: lazyImportSource(args.path) }));
  },
});

/** An esbuild plugin: imports of the LAZY built-ins load them on first use. */
export const lazyBuiltins = lazyBuiltinsOf(LAZY);
