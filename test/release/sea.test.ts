// The Node single executable (dist/akas-verify-linux-x64, `npm run build:sea`): Node's SEA with
// the blob injected by postject, from the same source as the single file. Slow to build (about
// 12 s here, a 95 MiB copy of node), so it runs only with AKAS_TEST_RELEASE=1 (.ci/run sets it
// after npm test). Copied alone into a temp folder and run in an empty network namespace, it
// must give every verdict `akas verify` gives.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/e2e.js';
import { writeVerifierFixtures, type VerifierFixtures } from '../helpers/verifier-fixtures.js';

const RELEASE = process.env.AKAS_TEST_RELEASE === '1';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BINARY = join(ROOT, 'dist', `akas-verify-${process.platform}-${process.arch}`);
const canUnshare = spawnSync('unshare', ['-n', 'true']).status === 0;
let work: string;
let fx: VerifierFixtures;
let buildSeconds = 0;
let buildOutput = '';

beforeAll(async () => {
  if (!RELEASE) return;
  const started = Date.now();
  const built = spawnSync(process.execPath, [join(ROOT, 'scripts/build-verifier.mjs'), '--sea'], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
  buildSeconds = (Date.now() - started) / 1000;
  if (built.status !== 0) throw new Error(`npm run build:sea failed: ${built.stdout}${built.stderr}`);
  buildOutput = `${built.stdout}${built.stderr}`;
  console.log(`npm run build:sea took ${buildSeconds.toFixed(1)} s`);
  work = mkdtempSync(join(tmpdir(), 'akas-sea-'));
  copyFileSync(BINARY, join(work, 'akas-verify'));
  fx = await writeVerifierFixtures(work);
}, 360_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
  if (RELEASE) rmSync(BINARY, { force: true }); // 95 MiB: not left in dist/ (nor packed)
});

const env = () => ({ PATH: process.env.PATH, HOME: work, AKAS_CONFIG_DIR: join(work, '.config') });
const run = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { cwd: work, env: env(), encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe.skipIf(!RELEASE)('the Node single executable (AKAS_TEST_RELEASE=1)', () => {
  it('is built, and runs alone', () => {
    expect(existsSync(join(work, 'akas-verify'))).toBe(true);
    const r = run(join(work, 'akas-verify'), ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('akas-verify');
  });

  it("prints none of postject's warnings about Node's annobin notes, and says it left them out (issue 36, 8)", () => {
    expect(buildOutput).not.toContain("Can't find string offset");
    expect(buildOutput).toMatch(/postject: \d+ warnings about the annobin notes of Node's own binary left out/);
  });

  it('gives the verdicts of akas verify on every fixture, with no network', () => {
    for (const args of fx.commands) {
      const mine = canUnshare ? run('unshare', ['-n', join(work, 'akas-verify'), '--json', ...args]) : run(join(work, 'akas-verify'), ['--json', ...args]);
      const theirs = run(process.execPath, [CLI, '--json', ...args]);
      const name = args.slice(1, 3).join(' ');
      expect(mine.code, `${name}: ${mine.stdout.slice(0, 300)}${mine.stderr}`).toBe(theirs.code);
      expect(JSON.parse(mine.stdout), name).toEqual(JSON.parse(theirs.stdout));
    }
  }, 240_000);
});
