// What a short command loads before it answers (scripts/lazy-builtins.mjs): the built `akas` and
// the single file load a Node built-in when something first uses it, so `akas --help` loads
// neither node:crypto nor node:child_process (commander's, for executable subcommands akas has
// none of), and the single file verifying a credential loads node:crypto but not node:zlib
// (status lists) or node:child_process.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeVerifierFixtures, type VerifierFixtures } from '../helpers/verifier-fixtures.js';

const CLI = fileURLToPath(new URL('../../dist/bin/main.cjs', import.meta.url));
const SINGLE = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));
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

describe('the built-ins a start loads', () => {
  it('akas --help: neither node:crypto nor node:child_process', () => {
    const { status, loaded } = builtinsOf([CLI, '--help']);
    expect(status).toBe(0);
    expect(loaded).toContain('fs');
    expect(loaded).not.toContain('crypto');
    expect(loaded).not.toContain('child_process');
  });

  it("the single file's verify credential: node:crypto, which it verifies with, but not node:zlib or node:child_process", () => {
    const { status, loaded } = builtinsOf([
      SINGLE,
      'verify',
      'credential',
      join(fx.dir, 'credential-0.json'),
      '--issuer',
      fx.issuer,
      '--at',
      fx.at,
      '--no-status',
    ]);
    expect(status).toBe(0);
    expect(loaded).toContain('crypto');
    expect(loaded).not.toContain('zlib');
    expect(loaded).not.toContain('child_process');
  });
});
