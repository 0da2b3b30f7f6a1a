// The single-file verifier (dist/akas-verify.mjs, `npm run build:verifier`), as an auditor
// runs it: copied alone into a folder outside the repository, with no node_modules anywhere
// on its path, run in an empty network namespace (unshare -n, where the machine allows it),
// on the public vectors and on what a live node exports. Every verdict (the --json document
// and the exit code) must be the one `akas verify` gives, and its size stays within 400 KB.
// (Here `akas` runs from its source in this process; the binary's own verify commands are run
// by the other e2e suites: credentials, status lists, supply chain, the README.)
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupCli } from '../helpers/e2e.js';
import { writeVerifierFixtures, type VerifierFixtures } from '../helpers/verifier-fixtures.js';

const SINGLE = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let work: string;
let fx: VerifierFixtures;
const canUnshare = spawnSync('unshare', ['-n', 'true']).status === 0;

beforeAll(async () => {
  if (!existsSync(SINGLE)) throw new Error(`${SINGLE} is missing: run npm run build (or npm run build:verifier)`);
  work = mkdtempSync(join(tmpdir(), 'akas-single-file-'));
  copyFileSync(SINGLE, join(work, 'akas-verify.mjs'));
  fx = await writeVerifierFixtures(work, { many: 1100 });
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A clean environment: no NODE_PATH or NODE_OPTIONS that could lend it modules. */
function env() {
  const e: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: work, AKAS_CONFIG_DIR: join(work, '.config') };
  return e;
}

function single(args: string[]) {
  const cmd = canUnshare
    ? ['unshare', ['-n', process.execPath, join(work, 'akas-verify.mjs'), ...args]]
    : [process.execPath, [join(work, 'akas-verify.mjs'), ...args]];
  const r = spawnSync(cmd[0] as string, cmd[1] as string[], { cwd: work, env: env(), encoding: 'utf8', timeout: 120_000, maxBuffer: 256 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The reference verdict: `akas` itself, run in this process from the source both it and the
 * single file are built from (setupCli), in the folder of the fixtures. The single file is what
 * this file checks; some forty runs of the full binary beside it only cost their start.
 */
async function akas(args: string[]) {
  const cwd = process.cwd();
  process.chdir(work);
  try {
    const r = await setupCli(args, { configDir: join(work, '.config'), env: env() });
    return { code: r.code, stdout: r.stdout, stderr: r.stderr };
  } finally {
    process.chdir(cwd);
  }
}

describe('dist/akas-verify.mjs, alone', () => {
  it('stays within 400 KB and sits where no node_modules can be found', () => {
    expect(statSync(SINGLE).size).toBeLessThanOrEqual(400 * 1024);
    for (let d = work; ; d = dirname(d)) {
      expect(existsSync(join(d, 'node_modules')), `${d}/node_modules`).toBe(false);
      if (dirname(d) === d) break;
    }
  });

  it('runs in an empty network namespace (where unshare -n is allowed)', () => {
    if (!canUnshare) return void console.warn('unshare -n is not allowed here: the single file runs with the network present');
    const r = spawnSync('unshare', ['-n', process.execPath, '-e', "require('node:net').connect(80, '1.1.1.1').on('error', (e) => { console.log(e.code); })"], {
      encoding: 'utf8',
    });
    expect(r.stdout.trim()).toMatch(/ENETUNREACH|EHOSTUNREACH|ECONNREFUSED/);
  });

  it('gives the verdicts of akas verify, check for check, on every fixture', async () => {
    const codes: Record<string, number | null> = {};
    for (const args of fx.commands) {
      const mine = single(['--json', ...args]);
      const theirs = await akas(['--json', ...args]);
      const name = args.slice(1, 3).join(' ');
      expect(mine.stderr, name).toBe(theirs.stderr);
      expect(mine.code, `${name}: ${mine.stdout.slice(0, 300)}${mine.stderr}`).toBe(theirs.code);
      expect(JSON.parse(mine.stdout), name).toEqual(JSON.parse(theirs.stdout));
      codes[args.slice(1).join(' ')] = mine.code;
    }
    // The fixtures cover every outcome: holds (0), does not hold (1), could not run (2), unanchored (3).
    expect(new Set(Object.values(codes))).toEqual(new Set([0, 1, 2, 3]));
    // Issue 32: with nothing pinned a bundle, a node read and a log proof are unanchored (never 0);
    // a trust file anchors them; an issuer window in it that ended before the credentials fails.
    expect(codes[`bundle bundle.json --at ${fx.at}`]).toBe(3);
    expect(codes[`bundle bundle.json --trust trust.json --at ${fx.at}`]).toBe(0);
    expect(codes[`bundle bundle.json --trust trust-expired.json --at ${fx.at}`]).toBe(1);
    // A credential that names a status list: STATUS UNKNOWN unless its lists are read, or skipped on purpose.
    expect(codes[`credential credential-0.json --trust trust.json --at ${fx.at}`]).toBe(3);
    expect(codes[`credential credential-0.json --trust trust.json --at ${fx.at} --no-status`]).toBe(0);
    expect(codes[`credential credential-0.json --trust trust-expired.json --at ${fx.at}`]).toBe(1);
    expect(codes['node node.json']).toBe(3);
    expect(codes['node node.json --trust trust.json']).toBe(0);
    expect(codes['log-proof attestation.json']).toBe(3);
    expect(codes['log-proof attestation.json --trust trust.json']).toBe(0);
    expect(codes['log-proof attestation-witnessed.json --trust trust-witnessed.json']).toBe(0);
    expect(codes['log-proof attestation-unwitnessed.json --trust trust-witnessed.json']).toBe(1);
  }, 240_000);

  it('says an unanchored bundle is unanchored and what to pin, and names the expired window of a trust file', () => {
    const open = single(['verify', 'bundle', 'bundle.json', '--at', fx.at]);
    expect(open.code).toBe(3);
    expect(open.stdout).toMatch(/UNANCHORED — .*issuer\.chain.*pin --trust FILE \(akas trust pin > trust\.json\), or --issuer DID and --log-key KEY/);
    const json = JSON.parse(single(['--json', 'verify', 'bundle', 'bundle.json', '--at', fx.at]).stdout);
    expect(json).toMatchObject({ verdict: 'unanchored', verified: false, anchored: false, failed: 0 });
    expect(json.unanchored).toEqual(expect.arrayContaining(['issuer.chain', 'log.key']));
    const expired = single(['verify', 'bundle', 'bundle.json', '--trust', 'trust-expired.json', '--at', fx.at]);
    expect(expired.code).toBe(1);
    expect(expired.stdout).toContain("that key was the issuer's from 2000-01-01T00:00:00.000Z until 2000-01-02T00:00:00.000Z (its window in the trust file)");
    const mixed = single(['verify', 'bundle', 'bundle.json', '--trust', 'trust.json', '--issuer', fx.issuer]);
    expect([mixed.code, mixed.stderr]).toEqual([2, expect.stringContaining('--trust pins the issuer, the log keys and the witnesses: leave out --issuer')]);
  });

  it('prints the same human report as akas verify, and reads `akas-verify credential X` as `verify credential X`', async () => {
    const args = ['verify', 'bundle', 'bundle-tampered.json', '--issuer', fx.issuer, '--at', fx.at];
    const mine = single(args);
    expect(mine.code).toBe(1);
    expect(mine.stdout).toBe((await akas(args)).stdout);
    const short = single(['credential', 'credential-0.json', '--issuer', fx.issuer, '--at', fx.at, '--no-status']);
    expect(short.code, short.stdout + short.stderr).toBe(0);
  });

  it('writes all of a long report to a pipe, and ends quietly when the reader goes early', async () => {
    // 400 credentials in one report: several times a pipe's buffer, written in order and whole.
    const args = [
      '--json',
      'verify',
      'credential',
      ...Array.from({ length: 400 }, () => 'credential-0.json'),
      '--issuer',
      fx.issuer,
      '--at',
      fx.at,
      '--no-status',
    ];
    const whole = single(args);
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stdout.length).toBeGreaterThan(256 * 1024);
    expect(JSON.parse(whole.stdout)).toEqual(JSON.parse((await akas(args)).stdout));
    // A reader that stops after 100 bytes: no EPIPE trace, exit 0.
    const cut = spawnSync(
      'bash',
      ['-c', `"$0" "$@" | head -c 100 >/dev/null; echo "exit=\${PIPESTATUS[0]}" >&2`, process.execPath, join(work, 'akas-verify.mjs'), ...args],
      { cwd: work, env: env(), encoding: 'utf8', timeout: 120_000 },
    );
    expect(cut.stderr.trim()).toBe('exit=0');
  });

  it('cut to verify credential alone (the floor bench/coldstart.ts measures it against), gives the same verdict and holds nothing else', async () => {
    const { buildSingleFile } = (await import(pathToFileURL(join(ROOT, 'scripts/build-verifier.mjs')).href)) as {
      buildSingleFile: (o: { outfile: string; only: Array<{ file: string; name: string }> }) => Promise<{ size: number }>;
    };
    const floor = join(work, 'akas-verify-credential.mjs');
    const { size } = await buildSingleFile({ outfile: floor, only: [{ file: 'cli/commands/verify/credential.ts', name: 'credentialCommand' }] });
    expect(size).toBeLessThan(statSync(join(work, 'akas-verify.mjs')).size);
    const run = (file: string, args: string[]) => spawnSync(process.execPath, [file, ...args], { cwd: work, env: env(), encoding: 'utf8', timeout: 120_000 });
    const args = ['--json', 'verify', 'credential', 'credential-0.json', 'credential-tampered.json', '--issuer', fx.issuer, '--at', fx.at, '--no-status'];
    const cut = run(floor, args);
    const whole = run(join(work, 'akas-verify.mjs'), args);
    expect(cut.status).toBe(1);
    expect(cut.status).toBe(whole.status);
    expect(JSON.parse(cut.stdout)).toEqual(JSON.parse(whole.stdout));
    // No other verify command is in it.
    expect(run(floor, ['verify', 'bundle', 'bundle.json']).status).toBe(2);
    expect(run(floor, ['verify', '--help']).stdout).not.toMatch(/\bbundle\b/);
  }, 120_000);

  it('holds the verify commands only, and says so of a check that needs the full akas', () => {
    const help = single(['--help']);
    expect(help.stdout).toContain('verify');
    expect(help.stdout).not.toMatch(/\bregister\b/);
    expect(single(['register']).code).toBe(2); // not a command of the single file
    expect(single(['verify', 'manifest', 'bundle.json']).code).toBe(2); // asks a node: not in it either
    // An artifact node without the bytes: `akas verify cas --node --fetch` would fetch them (undici), which the single file leaves out.
    writeFileSync(
      join(work, 'artifact-node.json'),
      JSON.stringify({ kind: 'leaf-artifact', path: '/a', payload: { uri: '/api/cas/' + 'a'.repeat(64), sha256: 'a'.repeat(64), bytes: 1 } }),
    );
    // Without --fetch nothing is fetched at all (issue 22): a usage error naming the uri.
    expect(single(['verify', 'cas', '--node', 'artifact-node.json']).code).toBe(2);
    const online = single(['--json', 'verify', 'cas', '--node', 'artifact-node.json', '--fetch']);
    expect(online.code).toBe(2);
    expect(JSON.parse(online.stdout)).toMatchObject({ code: 'not_in_single_file', error: expect.stringContaining('needs the full akas') });
    // With the file given, the same command is offline and in the single file.
    writeFileSync(join(work, 'a.bin'), 'x');
    expect(single(['verify', 'cas', '--node', 'artifact-node.json', 'a.bin']).code).toBe(1);
  });
});
