// `npm test`: the build, the type check, the lint and vitest. On 2 cores vitest leaves about a
// quarter of the machine idle (files waiting on child processes, fsync, PostgreSQL), and the
// build (a few seconds, on one core, before any test can run) leaves the other core idle: the
// lint starts first, beside the build, and the type check once the build is done (it builds on
// the build's type information: tsconfig.test.json references tsconfig.json, so `tsc -b` of the
// tests would otherwise write the same files as the build, at the same time). Run one after the
// other they added 30 s to every run. Their output is held and printed after vitest's, under
// its own heading; any of them failing fails the run, with the exit code of the first that
// failed. Arguments go to vitest (`npm test -- test/http`).
import { spawn } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where the tests' temp folders go (TMPDIR for vitest and all it starts): a private folder in
 * /dev/shm when it is a writable RAM disk with room, else the system's. The tests make
 * hundreds of stores, nodes and config folders, and the kernel's page cache keeps what a
 * killed process wrote either way (the tests kill processes, never the machine; the disk-full
 * and read-only ones mount their own file systems): in RAM, every fsync and file creation of
 * LevelDB, the blob store and PostgreSQL costs nothing, which took a fifth off the HTTP suites
 * here. AKAS_TEST_TMPDIR names another place.
 */
function testTmpdir() {
  const base = process.env.AKAS_TEST_TMPDIR ?? '/dev/shm';
  try {
    accessSync(base, constants.W_OK);
    const { bavail, bsize } = statfsSync(base);
    if (!process.env.AKAS_TEST_TMPDIR && bavail * bsize < 4 * 2 ** 30) return undefined;
    const dir = mkdtempSync(join(base, 'akas-test-'));
    // The PostgreSQL server runs as its own user, in a folder the tests make here.
    chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * The environment of everything this runs: the caller's, without NODE_EXTRA_CA_CERTS. Node reads
 * and parses every certificate of that file when each process starts (about 80 ms of CPU here
 * for Debian's bundle), and the tests start about a thousand Node processes; none of them speaks
 * TLS (they talk plain HTTP to 127.0.0.1 only), so the certificates would never be used.
 */
const baseEnv = { ...process.env };
delete baseEnv.NODE_EXTRA_CA_CERTS;

const children = new Set();
// Ctrl-C reaches the children from the terminal, a SIGTERM is passed on to them: either way this
// waits for them to end, and then removes the temp folder and reports.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => {
  for (const child of children) child.kill('SIGTERM');
});

/** Runs an npm script, keeping its output unless `live`; resolves to its exit code and output. */
function npmRun(script, { live = false, args = [], env = baseEnv } = {}) {
  const child = spawn('npm', ['run', '--silent', script, ...(args.length ? ['--', ...args] : [])], {
    env,
    stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('close', () => children.delete(child));
  let output = '';
  if (!live) {
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
  }
  return new Promise((resolve) => {
    child.once('error', (e) => resolve({ script, code: 127, output: `${output}${e.message}\n` }));
    child.once('close', (code, signal) => resolve({ script, code: code ?? (signal ? 128 : 1), output }));
  });
}

// The lint starts first, the build beside it; the type check waits for both (one check at a
// time: together they never take more than the one core the build or vitest leaves).
let buildDone;
const built = new Promise((resolve) => (buildDone = resolve));
const checks = (async () => {
  const results = [await npmRun('lint')];
  await built;
  results.push(await npmRun('typecheck'));
  return results;
})();
// The tests run the built binary: nothing runs until the build is done, and a failed build ends the run.
const build = await npmRun('build', { live: true });
buildDone();
if (build.code !== 0) {
  for (const child of children) child.kill('SIGTERM');
  process.stdout.write(`\nnpm test failed: the build (exit ${build.code})\n`);
  process.exit(build.code);
}
const tmp = testTmpdir();
const tests = await npmRun('vitest', { live: true, args: process.argv.slice(2), env: tmp ? { ...baseEnv, TMPDIR: tmp } : baseEnv });
try {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
} catch (e) {
  // A test that failed may leave a file system it mounted there: say so, and keep the verdict.
  process.stdout.write(`\ncould not remove the tests' temp folder ${tmp}: ${e.message}\n`);
}
const results = [...(await checks), tests];

for (const r of results.slice(0, -1)) {
  process.stdout.write(`\n── npm run ${r.script}: ${r.code === 0 ? 'passed' : `FAILED (exit ${r.code})`}\n`);
  if (r.output.trim()) process.stdout.write(r.output.endsWith('\n') ? r.output : `${r.output}\n`);
}
const failed = results.filter((r) => r.code !== 0);
if (failed.length) process.stdout.write(`\nnpm test failed: ${failed.map((r) => r.script).join(', ')}\n`);
process.exit(failed[0]?.code ?? 0);
