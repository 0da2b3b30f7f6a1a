// What a short command loads before it answers (scripts/lazy-builtins.mjs): the built `akas` and
// the single file load a Node built-in when something first uses it, so `akas --help` loads
// neither node:crypto nor node:child_process (commander's, for executable subcommands akas has
// none of), neither does `akas verify credential` (the lazy chunks load commander's copy in
// node_modules on first use), and the single file verifying a credential loads node:crypto but
// not node:zlib (status lists) or node:child_process. And the node's server loads fastify without
// the built-ins fastify requires for HTTP/2 and TLS, which a node never serves.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeVerifierFixtures, type VerifierFixtures } from '../helpers/verifier-fixtures.js';

const CLI = fileURLToPath(new URL('../../dist/bin/main.cjs', import.meta.url));
const SINGLE = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));
/** The node's HTTP app as the build keeps it (an entry of its own: scripts/bundle.mjs). */
const APP_CHUNK = fileURLToPath(new URL('../../dist/bin/lazy/src/http/app.js', import.meta.url));
let work: string;
let fx: VerifierFixtures;
let recorder: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'akas-start-builtins-'));
  fx = await writeVerifierFixtures(work, {});
  // Preloaded: prints, at exit, the built-ins the process loaded (Node's own list of them).
  recorder = join(work, 'record.cjs');
  writeFileSync(
    recorder,
    "const loaded = () => process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13));\n" +
      "process.on('exit', () => process.stderr.write('\\nLOADED ' + JSON.stringify(loaded()) + '\\n'));",
  );
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The built-ins `node <args>` loaded, and its exit code. */
function builtinsOf(args: string[]): { status: number | null; loaded: string[] } {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: work, AKAS_CONFIG_DIR: join(work, '.config') };
  const r = spawnSync(process.execPath, ['--require', recorder, ...args], { cwd: work, env, encoding: 'utf8', timeout: 60_000 });
  const line = r.stderr.split('\n').find((l) => l.startsWith('LOADED '));
  if (!line) throw new Error(`no list of loaded modules: ${r.stderr}`);
  return { status: r.status, loaded: JSON.parse(line.slice('LOADED '.length)) as string[] };
}

/** `node <entry> verify credential` on one credential of the fixtures, status not asked. */
const verifyOne = (entry: string) => [entry, 'verify', 'credential', join(fx.dir, 'credential-0.json'), '--issuer', fx.issuer, '--at', fx.at, '--no-status'];

describe('the built-ins a start loads', () => {
  it('akas --help: neither node:crypto nor node:child_process', () => {
    const { status, loaded } = builtinsOf([CLI, '--help']);
    expect(status).toBe(0);
    expect(loaded).toContain('fs');
    expect(loaded).not.toContain('crypto');
    expect(loaded).not.toContain('child_process');
  });

  it("akas verify credential: not node:child_process, which only commander's copy in node_modules would load (the lazy chunks take it on first use)", () => {
    const { status, loaded } = builtinsOf(verifyOne(CLI));
    expect(status).toBe(0);
    expect(loaded).toContain('crypto');
    expect(loaded).not.toContain('child_process');
  });

  it("the single file's verify credential: node:crypto, which it verifies with, but not node:zlib or node:child_process", () => {
    const { status, loaded } = builtinsOf(verifyOne(SINGLE));
    expect(status).toBe(0);
    expect(loaded).toContain('crypto');
    expect(loaded).not.toContain('zlib');
    expect(loaded).not.toContain('child_process');
  });

  it("the node's HTTP app: fastify loads without node:http2, node:https or node:tls, which it requires for options a node never sets", () => {
    const { status, loaded } = builtinsOf(['--input-type=module', '-e', `await import(${JSON.stringify(APP_CHUNK)})`]);
    expect(status).toBe(0);
    expect(loaded).toContain('http');
    for (const unused of ['http2', 'https', 'tls']) expect(loaded).not.toContain(unused);
  });
});

describe('scripts/lazy-builtins.mjs, the stand-ins themselves', () => {
  it('every import of a built-in reads one copy of its names, loaded on first use; require, default and namespace imports work', async () => {
    const dir = join(work, 'plugin');
    const files: Record<string, string> = {
      'a.mjs': "import * as ns from 'node:crypto';\nimport { createHash } from 'node:crypto';\nexport const a = { ns, hash: () => createHash };\n",
      'b.mjs': "import * as ns from 'crypto';\nimport crypto from 'node:crypto';\nexport const b = { ns, crypto };\n",
      'c.cjs': "exports.c = require('node:crypto');\n",
      'entry.mjs':
        "import { a } from './a.mjs';\nimport { b } from './b.mjs';\nimport { c } from './c.cjs';\n" +
        "const before = process.moduleLoadList.includes('NativeModule crypto');\n" +
        "const hex = a.hash()('sha256').update('x').digest('hex');\n" +
        'console.log(JSON.stringify({ before, hex, shared: a.ns === b.ns, viaDefault: b.crypto.createHash === a.hash(), ' +
        "viaRequire: typeof c.randomBytes, after: process.moduleLoadList.includes('NativeModule crypto') }));\n",
    };
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const { lazyBuiltins } = (await import(new URL('../../scripts/lazy-builtins.mjs', import.meta.url).href)) as { lazyBuiltins: Plugin };
    const out = join(dir, 'out.cjs');
    await build({
      entryPoints: [join(dir, 'entry.mjs')],
      outfile: out,
      bundle: true,
      format: 'cjs',
      platform: 'node',
      logLevel: 'silent',
      plugins: [lazyBuiltins],
    });
    const r = spawnSync(process.execPath, [out], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      before: false,
      hex: '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881',
      // One namespace for every module that imports node:crypto: its names were copied once.
      shared: true,
      viaDefault: true,
      viaRequire: 'function',
      after: true,
    });
  });
});
