// Builds the verifier for those who will not install akas (`npm run build:verifier`; ARCHITECTURE 8):
//
// 1. dist/akas-verify.mjs: the akas program cut down to its offline `verify` commands
//    (cli/commands/verify/main.ts) as ONE ES module with every dependency inside and no import but
//    Node's built-ins. Which commands go in is not a list kept here: the whole command table
//    is bundled, and a module loaded lazily by a command (an `import()`) whose static imports
//    reach a package other than those the checks need (commander, canonicalize) is replaced
//    by a stub that says the command needs the full akas. So a verify command added to the
//    CLI is in the single file as soon as it needs nothing more.
// 2. dist/akas-verify.browser.js: verifier/browser.ts for browsers (an ES module): the crypto
//    adapter src/core/crypto.web.ts (WebCrypto Ed25519, @noble/hashes SHA-256) instead of
//    src/core/crypto.ts, the `buffer` package for the Buffer the shared core code uses, and no
//    Node built-in: a `node:` import reached from the entry fails the build, except
//    node:crypto, whose functions (signing, HMAC, key generation: nothing a check calls) are
//    replaced by ones that throw.
// 3. With --sea: dist/akas-verify-linux-x64, a Node single executable application (Node's SEA
//    and postject, both from npm / Node itself) of the same program built as CommonJS.
//
// Every output is checked after the build: its imports, and its size (the single file must
// stay under 400 KB, the issue's bound; the browser build under 200 KiB, which it loads on
// every explorer page that checks something: 143 KiB with the DSSE and Sigstore checks, 157
// KiB with the registry of check ids and their meanings, PROTOCOL 8.8: 3 KiB more gzipped;
// 191 KiB with the verifiable index's lookups and an artifact's evals held to them, issue 51:
// 53 KiB brotli).
import { execFileSync, spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { lazyBuiltins } from './lazy-builtins.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = resolve(root, 'dist');
const rel = (p) => relative(root, p).split('\\').join('/');

/** Packages the checks themselves need, bundled into the single file. */
const ALLOWED = new Set(['commander', 'canonicalize']);
export const SINGLE_FILE_LIMIT = 400 * 1024;
/**
 * The browser build's bound (minified, before compression): 127 KiB, 143 with DSSE, Sigstore and P-256 (issue 47), 157 with the
 * check ids (issue 48), 191 with the lookups and the evals held to them (issue 51).
 */
export const BROWSER_LIMIT = 200 * 1024;

const isBuiltin = (spec) => spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]);
const packageOf = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

/**
 * The lazily loaded modules (targets of import()) that cannot go in the single file: those
 * whose static imports reach a package outside ALLOWED. Found from a first build's metafile,
 * with every package left external.
 */
async function unbundleable(entry, groups, cutTo = []) {
  const meta = (
    await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      metafile: true,
      absWorkingDir: root,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outdir: resolve(dist, '.verifier-scan'),
      splitting: true,
      logLevel: 'silent',
      plugins: [
        groupsPlugin(groups),
        ...cutTo,
        { name: 'external-packages', setup: (b) => b.onResolve({ filter: /^[^./]/ }, (a) => ({ path: a.path, external: true })) },
      ],
    })
  ).metafile;
  const inputs = meta.inputs;
  const closure = new Map();
  // Packages a module reaches through static imports (dynamic ones are cut separately).
  const reach = (file, seen = new Set()) => {
    if (closure.has(file)) return closure.get(file);
    if (seen.has(file)) return new Set();
    seen.add(file);
    const out = new Set();
    for (const imp of inputs[file]?.imports ?? []) {
      if (imp.kind === 'dynamic-import') continue;
      if (imp.external) {
        if (!isBuiltin(imp.path) && !imp.path.startsWith('.')) out.add(packageOf(imp.path));
      } else for (const p of reach(imp.path, seen)) out.add(p);
    }
    closure.set(file, out);
    return out;
  };
  const entryPackages = [...reach(rel(entry))].filter((p) => !ALLOWED.has(p));
  if (entryPackages.length) throw new Error(`the verifier's entry reaches ${entryPackages.join(', ')} statically: it cannot be one file`);
  const cut = new Map();
  for (const input of Object.values(inputs)) {
    for (const imp of input.imports) {
      if (imp.kind !== 'dynamic-import' || imp.external) continue;
      const bad = [...reach(imp.path)].filter((p) => !ALLOWED.has(p));
      if (bad.length) cut.set(resolve(root, imp.path), bad);
    }
  }
  return cut;
}

/**
 * The command groups (cli/commands/index.ts) that add commands under `verify`, found by running
 * each group on a fresh commander program at build time: the single file imports those groups
 * only, so the others are neither bundled nor run at every start. A group that adds a verify
 * command later is picked up by the next build.
 */
async function verifyGroups() {
  const scan = resolve(dist, '.verifier-scan');
  const out = resolve(scan, 'groups.mjs');
  await build({
    entryPoints: [resolve(root, 'cli/commands/index.ts')],
    outfile: out,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
    plugins: [{ name: 'external-packages', setup: (b) => b.onResolve({ filter: /^[^./]/ }, (a) => ({ path: a.path, external: true })) }],
  });
  const { commandGroups } = await import(`${out}?t=${Date.now()}`);
  const { Command } = await import('commander');
  const names = [];
  for (const group of commandGroups) {
    const program = new Command('akas');
    group(program, {});
    if (program.commands.find((c) => c.name() === 'verify')?.commands.length) names.push(group.name);
  }
  // Where each group is defined: the import lines of cli/commands/index.ts (a file may define
  // several groups; the verify group is a folder, ./verify/index.js).
  const index = readFileSync(resolve(root, 'cli/commands/index.ts'), 'utf8');
  const files = new Map(
    [...index.matchAll(/import \{ ([\w, ]+) \} from '\.\/([\w/-]+)\.js';/g)].flatMap((m) =>
      m[1].split(',').map((name) => [name.trim(), resolve(root, 'cli/commands', `${m[2]}.ts`)]),
    ),
  );
  const missing = names.filter((n) => !files.has(n));
  if (missing.length || !names.length)
    throw new Error(`cannot place the verify command groups ${missing.join(', ') || '(none found)'} (cli/commands/index.ts)`);
  return names.map((n) => ({ name: n, file: files.get(n) }));
}

/** cli/commands/verify/main.ts's `../index.js` (the command table), as the verify groups only. */
function groupsPlugin(groups) {
  return {
    name: 'verify-groups',
    setup(b) {
      b.onResolve({ filter: /^\.\.\/index\.js$/ }, (args) =>
        args.importer === resolve(root, 'cli/commands/verify/main.ts') ? { path: 'verify-groups', namespace: 'akas-verify-groups' } : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: 'akas-verify-groups' }, () => ({
        loader: 'ts',
        resolveDir: resolve(root, 'cli/commands'),
        contents:
          groups.map((g) => `import { ${g.name} } from ${JSON.stringify(g.file)};`).join('\n') +
          `\nexport const commandGroups = [${groups.map((g) => g.name).join(', ')}];\n`,
      }));
    },
  };
}

/**
 * The verify group cut to the subcommands named (only: [{ file, name }], a module of cli/ and the
 * function it exports): a floor for bench/coldstart.ts, the same entry, program, grammar, checks
 * and report as the single file, with every other command left out.
 */
function onlyPlugin(only) {
  return {
    name: 'verify-only',
    setup(b) {
      b.onResolve({ filter: /^akas-verify-only$/ }, () => ({ path: 'akas-verify-only', namespace: 'akas-verify-only' }));
      b.onLoad({ filter: /.*/, namespace: 'akas-verify-only' }, () => ({
        loader: 'ts',
        resolveDir: resolve(root, 'cli/commands/verify'),
        contents:
          only.map((o) => `import { ${o.name} } from ${JSON.stringify(resolve(root, o.file))};`).join('\n') +
          `\nexport function verifyCommands(program, cli) {\n  const verify = program.command('verify');\n` +
          only.map((o) => `  ${o.name}(verify, cli);\n`).join('') +
          '}\n',
      }));
    },
  };
}

/** Replaces each unbundleable lazy module by one that refuses, as a CliError (exit 2) the CLI reports. */
function stubPlugin(cut) {
  return {
    name: 'single-file-stubs',
    setup(b) {
      b.onResolve({ filter: /^\./ }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData?.inner) return undefined;
        const real = await b.resolve(args.path, { resolveDir: args.resolveDir, importer: args.importer, kind: args.kind, pluginData: { inner: true } });
        const abs = real.path;
        if (!cut.has(abs)) return undefined;
        return { path: rel(abs), namespace: 'akas-stub', pluginData: cut.get(abs) };
      });
      // A package loaded lazily (`await import('undici')`) that the checks do not need: the same stub.
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.kind !== 'dynamic-import' || isBuiltin(args.path) || ALLOWED.has(packageOf(args.path))) return undefined;
        return { path: args.path, namespace: 'akas-stub', pluginData: [packageOf(args.path)] };
      });
      b.onLoad({ filter: /.*/, namespace: 'akas-stub' }, (args) => ({
        loader: 'js',
        contents: `const message = ${JSON.stringify(
          `this needs the full akas (npm install -g akas): the single-file verifier holds the ` +
            `offline checks only (${args.path} uses ${args.pluginData.join(', ')})`,
        )};
const e = new Error(message);
e[Symbol.for('akas.CliError')] = true; e.exitCode = 2; e.body = { code: 'not_in_single_file', error: message };
throw e;`,
      }));
    },
  };
}

/**
 * Node built-ins as CommonJS requires made where they are used: esbuild hoists every `import`
 * of the bundle to the top of the one file, so a built-in that only a lazily loaded command
 * needs (node:http, node:worker_threads, node:stream...) would be loaded at every start. As
 * modules of their own they load when the module that imports them is first initialised.
 */
const lateBuiltins = {
  name: 'late-builtins',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      isBuiltin(args.path) && args.namespace !== 'akas-builtin' && args.kind !== 'entry-point'
        ? { path: args.path.replace(/^node:/, ''), namespace: 'akas-builtin' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'akas-builtin' }, (args) => ({
      loader: 'js',
      contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`,
    }));
  },
};

/** Fails when an output imports anything but Node's built-ins (or anything at all, for the browser), as esbuild's metafile lists them. */
function checkImports(file, metafile, { browser }) {
  const out = metafile.outputs[rel(file)];
  if (!out) throw new Error(`no metafile entry for ${rel(file)}`);
  const bad = out.imports.filter((i) => i.external && (browser || !isBuiltin(i.path))).map((i) => i.path);
  if (bad.length) throw new Error(`${rel(file)} imports ${bad.join(', ')}: it must ${browser ? 'import nothing' : 'import only Node built-ins'}`);
}

const banner = '// akas-verify: the offline checks of akas in one file (the npm package akas). Apache-2.0.';

/** The single file; with `only`, cut to those verify subcommands (onlyPlugin). */
export async function buildSingleFile({ format = 'esm', outfile = resolve(dist, 'akas-verify.mjs'), only } = {}) {
  const entry = resolve(root, 'cli/commands/verify/main.ts');
  const groups = only ? [{ name: 'verifyCommands', file: 'akas-verify-only' }] : await verifyGroups();
  const cutTo = only ? [onlyPlugin(only)] : [];
  const cut = await unbundleable(entry, groups, cutTo);
  // verifyGroups' scratch (a cut build writes none, and leaves another build's alone).
  if (!only) rmSync(resolve(dist, '.verifier-scan'), { recursive: true, force: true });
  const { metafile } = await build({
    entryPoints: [entry],
    outfile,
    // Metafiles name files relative to this (here and in unbundleable), wherever the build is run from.
    absWorkingDir: root,
    metafile: true,
    bundle: true,
    format,
    platform: 'node',
    target: 'node20',
    minify: !process.env.AKAS_BUILD_UNMINIFIED,
    legalComments: 'none',
    logLevel: 'warning',
    // commander is CommonJS and requires node builtins: give the ES module a real require.
    banner: {
      js:
        format === 'esm'
          ? `#!/usr/bin/env node\n${banner}\nimport { createRequire as __akasRequire } from 'node:module'; const require = __akasRequire(import.meta.url);`
          : banner,
    },
    plugins: [groupsPlugin(groups), ...cutTo, stubPlugin(cut), lazyBuiltins, lateBuiltins],
    // The CommonJS build (the single executable) has no import.meta: the verify pool then uses one thread.
    ...(format === 'cjs' ? { define: { 'import.meta.url': 'undefined' } } : {}),
  });
  checkImports(outfile, metafile, { browser: false });
  const size = statSync(outfile).size;
  if (process.env.AKAS_BUILD_SIZES) {
    const by = {};
    for (const [f, v] of Object.entries(metafile.outputs[rel(outfile)].inputs)) {
      const k = f.split('/').slice(0, 3).join('/');
      by[k] = (by[k] || 0) + v.bytesInOutput;
    }
    console.log(
      Object.entries(by)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 30),
    );
  }
  if (format === 'esm' && size > SINGLE_FILE_LIMIT) throw new Error(`${rel(outfile)} is ${size} bytes, over ${SINGLE_FILE_LIMIT}`);
  if (format === 'esm') chmodSync(outfile, 0o755);
  return { outfile, size, stubbed: [...cut.keys()].map(rel), groups: groups.map((g) => g.name) };
}

/** The node:crypto of the browser build: whatever a check never calls, throwing if it ever is. */
const NO_NODE_CRYPTO =
  `const no = (name) => () => { throw new Error('akas verifier (browser build): node:crypto ' + name + ' is not ` +
  `available in a browser'); };
export const createHash = no('createHash'), createHmac = no('createHmac'), timingSafeEqual = no('timingSafeEqual'), randomBytes = no('randomBytes'),
  createPrivateKey = no('createPrivateKey'), createPublicKey = no('createPublicKey'), generateKeyPairSync = no('generateKeyPairSync'), sign ` +
  `= no('sign'), verify = no('verify'), hash = undefined;
export default {};`;

export async function buildBrowser({ outfile = resolve(dist, 'akas-verify.browser.js') } = {}) {
  const shim = resolve(dist, '.buffer-shim.mjs');
  mkdirSync(dist, { recursive: true });
  writeFileSync(shim, `export { Buffer } from 'buffer';\n`);
  let metafile;
  try {
    ({ metafile } = await build({
      entryPoints: [resolve(root, 'verifier/browser.ts')],
      outfile,
      metafile: true,
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: ['es2022', 'chrome110', 'firefox130', 'safari17'],
      minify: true,
      legalComments: 'none',
      logLevel: 'warning',
      banner: { js: banner.replace('akas-verify:', 'akas-verify (browser build):') },
      inject: [shim],
      nodePaths: [resolve(root, 'node_modules')],
      plugins: [
        {
          name: 'browser-crypto',
          setup(b) {
            // The crypto adapter: crypto.web.ts in place of crypto.ts.
            b.onResolve({ filter: /\/crypto\.js$/ }, (args) => {
              const abs = resolve(args.resolveDir, args.path);
              if (abs === resolve(root, 'src/core/crypto.js')) return { path: resolve(root, 'src/core/crypto.web.ts') };
              return undefined;
            });
            b.onResolve({ filter: /^node:crypto$|^crypto$/ }, () => ({ path: 'node:crypto', namespace: 'akas-no-node-crypto' }));
            b.onLoad({ filter: /.*/, namespace: 'akas-no-node-crypto' }, () => ({ loader: 'js', contents: NO_NODE_CRYPTO }));
            // Any other Node built-in reached from the entry is a mistake: fail the build, naming it.
            b.onResolve({ filter: /^node:/ }, (args) => ({
              errors: [{ text: `${args.path} imported by ${rel(args.importer)}: the browser build takes no Node built-in` }],
            }));
          },
        },
      ],
    }));
  } finally {
    rmSync(shim, { force: true });
  }
  checkImports(outfile, metafile, { browser: true });
  const size = statSync(outfile).size;
  if (size > BROWSER_LIMIT) throw new Error(`${rel(outfile)} is ${size} bytes, over ${BROWSER_LIMIT}`);
  return { outfile, size };
}

/** The Node single executable (Node's SEA): the program as CommonJS, injected into a copy of node with postject. */
export async function buildSea({ outfile = resolve(dist, `akas-verify-${process.platform}-${process.arch}`) } = {}) {
  const work = resolve(dist, '.sea');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const script = resolve(work, 'akas-verify.cjs');
  await buildSingleFile({ format: 'cjs', outfile: script });
  const blob = resolve(work, 'sea-prep.blob');
  const config = resolve(work, 'sea-config.json');
  writeFileSync(config, JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true, useCodeCache: false }));
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'inherit' });
  rmSync(outfile, { force: true });
  copyFileSync(process.execPath, outfile);
  chmodSync(outfile, 0o755);
  const postject = resolve(root, 'node_modules/postject/dist/cli.js');
  const injected = spawnSync(
    process.execPath,
    [postject, outfile, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'],
    {
      encoding: 'utf8',
    },
  );
  // Node's Linux binaries are built on RHEL 8 with gcc's annobin plugin, which leaves a
  // .gnu.build.attributes section of NOTE type whose notes LIEF (postject's ELF library)
  // cannot name: it warns "Can't find string offset for section name '.note.100'" (or
  // '.note') once per such note, on every injection (nodejs/postject#83), and writes the
  // binary all the same (test/release/sea.test.ts runs it). Those lines alone are dropped;
  // anything else postject says is shown, and a failure still fails the build.
  const noteWarning = /^warning: Can't find string offset for section name '\.note(\.\d+)?'$/;
  const said = `${injected.stdout ?? ''}${injected.stderr ?? ''}`.split('\n').filter((l) => l.trim() !== '');
  const dropped = said.filter((l) => noteWarning.test(l.trim())).length;
  for (const line of said.filter((l) => !noteWarning.test(l.trim()))) console.log(line);
  if (dropped) console.log(`(postject: ${dropped} warnings about the annobin notes of Node's own binary left out; harmless, docs/VERIFIER.md says why)`);
  if (injected.status !== 0) throw new Error(`postject failed (exit ${injected.status}): ${injected.error?.message ?? ''}`);
  rmSync(work, { recursive: true, force: true });
  return { outfile, size: statSync(outfile).size };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const one = await buildSingleFile();
  console.log(
    `${rel(one.outfile)}  ${(one.size / 1024).toFixed(0)} KiB, from ${one.groups.join(', ')}${
      one.stubbed.length ? `  (lazy modules left to ` + `the full akas: ${one.stubbed.join(', ')})` : ''
    }`,
  );
  const web = await buildBrowser();
  console.log(`${rel(web.outfile)}  ${(web.size / 1024).toFixed(0)} KiB`);
  if (process.argv.includes('--sea')) {
    const sea = await buildSea();
    console.log(`${rel(sea.outfile)}  ${(sea.size / 1024 / 1024).toFixed(0)} MiB`);
  }
  console.log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  mkdirSync(dirname(one.outfile), { recursive: true });
}
