// End-to-end helpers: the built binary (dist/bin/main.cjs, the bundled binary; so run `npm run build` first)
// as a real `akas serve` on a temp data folder and port 0, and as a client run in a child
// process with its own config folder (AKAS_CONFIG_DIR), so tests never touch the user's.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

/** The built CLI entry point. */
export const CLI = fileURLToPath(new URL('../../dist/bin/main.cjs', import.meta.url));

/**
 * How long a child may take to start or finish before the helper gives up on it. A guard against
 * a hang, never a measure: on a machine loaded twentyfold a node took 22 s to listen, so it sits
 * well under vitest's 180 s test and hook timeouts (vitest.config.ts) and far over any start.
 */
const START_GUARD_MS = 120_000;

function requireBuild() {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the e2e tests`);
}

/** A fresh temp folder (removed by the caller, or left in the OS temp dir). */
export function tempDir(prefix = 'akas-e2e-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * The parent's environment without AKAS_* settings, so a developer's own setup cannot leak in;
 * XDG_STATE_HOME this test file's own (defaultStateDir), unless extra names one.
 */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AKAS_')) env[k] = v;
  return { ...env, NO_COLOR: '1', XDG_STATE_HOME: defaultStateDir(), ...extra };
}

const stateDirs = new Map<string, string>();

/**
 * The XDG_STATE_HOME of this test file's nodes and CLI runs (one per file, as defaultConfigDir):
 * a node records itself there (src/ops/node-registry.ts) and `akas admin` of the same file finds
 * it, never a node of another file running at the same time, nor anything in the user's home.
 */
export function defaultStateDir(): string {
  const file = expect.getState().testPath ?? '';
  let dir = stateDirs.get(file);
  if (!dir) stateDirs.set(file, (dir = tempDir('akas-e2e-state-')));
  return dir;
}

export interface RunningNode {
  /** e.g. http://127.0.0.1:40123 */
  url: string;
  /** The data folder (or the postgres:// store it runs on). */
  dataDir: string;
  process: ChildProcess;
  /** Everything the node wrote to stderr so far (its log). */
  stderr(): string;
  /** Everything it wrote to stdout so far (its banner). */
  stdout(): string;
  /** Stops the node (SIGTERM, then SIGKILL) and removes its data folder unless keepData. */
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

export interface ServeOptions {
  /** Use this data folder instead of a fresh temp one. */
  dataDir?: string;
  /** Run on this postgres:// store instead of a data folder (give AKAS_NODE_SECRET in env). */
  store?: string;
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the "listening on" line (ms). */
  timeoutMs?: number;
}

/** Starts `akas serve --data DIR --port 0` and waits for the "listening on http://..." line it prints. */
export function startServe(extraArgs: string[] = [], opts: ServeOptions = {}): Promise<RunningNode> {
  requireBuild();
  const dataDir = opts.store ?? opts.dataDir ?? tempDir('akas-e2e-data-');
  const where = opts.store ? ['--store', opts.store] : ['--data', dataDir];
  // Tests behind a pretend proxy run on the demo calibration set, which a node others can reach
  // refuses unless told (test/e2e/public-node.test.ts tests the refusal itself).
  const demoOk =
    extraArgs.some((a) => a === '--trust-proxy' || a === '--public-url') && !extraArgs.includes('--calibration') ? ['--allow-demo-calibration'] : [];
  const child = spawn(process.execPath, [CLI, 'serve', ...where, '--port', '0', '--log-level', 'warn', ...demoOk, ...extraArgs], {
    env: cleanEnv(opts.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));

  const stop = async ({ keepData = false } = {}) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
    if (!keepData && !opts.dataDir && !opts.store) rmSync(dataDir, { recursive: true, force: true });
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`akas serve did not print its address within ${opts.timeoutMs ?? START_GUARD_MS} ms\nstdout: ${out}\nstderr: ${err}`));
    }, opts.timeoutMs ?? START_GUARD_MS);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (https?:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], dataDir, process: child, stderr: () => err, stdout: () => out, stop });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`akas serve exited (${code ?? signal}) before listening\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

export interface RunningWitness {
  url: string;
  verifierKey: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `akas witness --json` on port 0 and waits for the JSON document it prints once listening. */
export function startWitness(dataDir: string, name: string, logKey: string): Promise<RunningWitness> {
  requireBuild();
  const child = spawn(process.execPath, [CLI, '--json', 'witness', '--data', dataDir, '--name', name, '--log', logKey, '--port', '0'], {
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => void stop().then(() => reject(new Error(`akas witness did not start: ${out} ${err}`))), START_GUARD_MS);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      let j: { listening: string; verifierKey: string };
      try {
        j = JSON.parse(out) as typeof j; // one JSON document, once whole
      } catch {
        return;
      }
      clearTimeout(timer);
      resolve({ url: j.listening, verifierKey: j.verifierKey, process: child, stop });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`akas witness exited (${code}): ${out} ${err}`));
    });
  });
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout as bytes (for commands that write binary output). */
  stdoutBytes: Buffer;
}

export interface RunOptions {
  /** Extra environment (wins over the defaults, e.g. AKAS_BASE_URL). */
  env?: NodeJS.ProcessEnv;
  /** Bytes or text fed to stdin (stdin is closed either way). */
  input?: string | Buffer;
  /** AKAS_CONFIG_DIR for this run; by default one temp folder shared by every run of this test file. */
  configDir?: string;
  cwd?: string;
  timeoutMs?: number;
}

// One config folder per test file. The e2e files share a module graph per worker (vitest.config.ts),
// so the folder is keyed by the file running, not kept in a module variable.
const configDirs = new Map<string, string>();

/** The config folder runCli uses when none is given (one per test file). */
export function defaultConfigDir(): string {
  const file = expect.getState().testPath ?? '';
  let dir = configDirs.get(file);
  if (!dir) configDirs.set(file, (dir = tempDir('akas-e2e-config-')));
  return dir;
}

/** Runs the built `akas` with args in a child process and collects its exit code and output. */
export function runCli(args: string[], opts: RunOptions = {}): Promise<CliRun> {
  requireBuild();
  const child = spawn(process.execPath, [CLI, ...args], {
    env: cleanEnv({ AKAS_CONFIG_DIR: opts.configDir ?? defaultConfigDir(), ...opts.env }),
    cwd: opts.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  child.stdin.on('error', () => undefined);
  child.stdin.end(opts.input ?? '');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`akas ${args.join(' ')} did not finish within ${opts.timeoutMs ?? START_GUARD_MS} ms`));
    }, opts.timeoutMs ?? START_GUARD_MS);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      resolve({ code: code ?? (signal ? 128 : -1), stdout: stdoutBytes.toString(), stderr: Buffer.concat(err).toString(), stdoutBytes });
    });
  });
}

/**
 * Runs `akas ...args` in this process, from the source the binary is built from, for a test's
 * setup: registering and calibrating its agents, publishing what it then reads. A run of the
 * binary costs about 0.3 s of CPU on a loaded machine, and the e2e suites made hundreds of
 * them for setup alone; here a step costs a few ms once the CLI is imported (once per worker,
 * vitest.config.ts). What a test checks runs the binary (runCli); the config folder and the
 * profiles written are the binary's own, so the binary reads them next.
 */
export async function setupCli(args: string[], opts: Pick<RunOptions, 'configDir' | 'env'> = {}): Promise<CliRun> {
  const [{ run }, { commandGroups }] = await Promise.all([import('../../cli/program.js'), import('../../cli/commands/index.js')]);
  const sink = () => {
    const chunks: Buffer[] = [];
    const stream = new Writable({
      write(chunk: Buffer | string, _enc, done) {
        chunks.push(Buffer.from(chunk));
        done();
      },
    });
    return { stream, bytes: () => Buffer.concat(chunks) };
  };
  const [out, err] = [sink(), sink()];
  const saved = process.env.AKAS_CONFIG_DIR;
  process.env.AKAS_CONFIG_DIR = opts.configDir ?? defaultConfigDir();
  try {
    const code = await run(args, { stdout: out.stream, stderr: err.stream }, commandGroups, cleanEnv(opts.env));
    const stdoutBytes = out.bytes();
    return { code, stdout: stdoutBytes.toString(), stderr: err.bytes().toString(), stdoutBytes };
  } finally {
    if (saved === undefined) delete process.env.AKAS_CONFIG_DIR;
    else process.env.AKAS_CONFIG_DIR = saved;
    process.exitCode = 0;
  }
}

/** The identity `akas register` saved for a profile under a config folder (one node per folder). */
export function savedIdentity(profile: string, configDir = defaultConfigDir()): { tag: string; apiKey: string; calibrationPoolId: string } {
  const dir = join(configDir, 'profiles', profile);
  return JSON.parse(readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.json'))!), 'utf8'));
}

/**
 * Registers each profile on the node and calibrates it with its pool's expected answers (a
 * top score: every profile may judge), through the CLI in this process (setupCli): the tests
 * of `akas register` and `akas calibrate` themselves run the binary (identity, newcomer,
 * readme). `work` holds the answer files.
 */
export async function calibratedProfiles(url: string, work: string, profiles: string[], configDir = defaultConfigDir()): Promise<void> {
  for (const profile of profiles) {
    const reg = await setupCli(['--base-url', url, '--profile', profile, '--json', 'register'], { configDir });
    if (reg.code !== 0) throw new Error(`register ${profile}: ${reg.stdout}${reg.stderr}`);
    const poolId = savedIdentity(profile, configDir).calibrationPoolId;
    const pool = JSON.parse(readFileSync(new URL(`../../data/calibration/pool-${poolId}.json`, import.meta.url), 'utf8')) as {
      questions: Array<{ id: string; expected: string }>;
    };
    const answers = join(work, `answers-${profile}.json`);
    writeFileSync(answers, JSON.stringify(Object.fromEntries(pool.questions.map((q) => [q.id, q.expected]))));
    const cal = await setupCli(['--base-url', url, '--profile', profile, '--json', 'calibrate', '--answers', answers], { configDir });
    if (cal.code !== 0) throw new Error(`calibrate ${profile}: ${cal.stdout}${cal.stderr}`);
  }
}

/** `akas judge ID` with the scores the e2e tests judge by (0.9, 0.8, 0.7, 0.8) and a rationale. */
export const judgeCommand = (id: string, rationale: string, ...extra: string[]) => [
  'judge',
  id,
  '--accuracy',
  '0.9',
  '--clarity',
  '0.8',
  '--compression',
  '0.7',
  '--sources',
  '0.8',
  '--rationale',
  rationale,
  ...extra,
];
