// Cold start of the CLI: `akas --help`, `akas --version` and `akas me --json` (against a
// running node, with an identity saved in a temp config folder) as ratios to `node -e 0`,
// the floor any Node CLI pays, measured in the same run. Wall time of spawnSync, median of
// RUNS, the commands interleaved so that drift hits them all. Target (issue): <= 1.5. And the
// single-file verifier, `node dist/akas-verify.mjs verify credential X` on one judgment
// credential: target <= 1.3 (issue 24), beside `akas verify credential X` for comparison.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cryptoRandom, freshNodeKeys, generateKeyPair, judgmentSigningString, sign } from '../src/core/index.js';
import { issueJudgmentCredential } from '../src/domain/credentials/credentials.js';
import type { JudgmentRecord } from '../src/domain/records.js';
import { header, line } from './lib.js';

const TARGET = 1.5;
const RUNS = 15;
const WARMUP = 2;
const CLI = fileURLToPath(new URL('../bin/main.cjs', import.meta.url));
const SINGLE = fileURLToPath(new URL('../akas-verify.mjs', import.meta.url));
const SINGLE_TARGET = 1.3;

interface Cmd {
  name: string;
  args: string[];
  /** Counted against the target (the baseline is not). */
  target: boolean;
  /** Its own target, when not TARGET. */
  limit?: number;
}

/** One judgment credential, issued as the node issues them, in a file. */
async function credentialFile(dir: string): Promise<{ file: string; issuer: string }> {
  const keys = freshNodeKeys(cryptoRandom, Date.UTC(2026, 0, 1));
  const judge = generateKeyPair();
  const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
  const payload = {
    type: 'akas.judgment.v1' as const,
    kind: 'capability' as const,
    proposalId: 'cprop_0000000000000001',
    judge: 'ak_benchjdg',
    scores,
    rationale: 'Sound.',
  };
  const j = {
    judgmentId: 'jdg_0000000000000001',
    agentTag: 'ak_benchjdg',
    scores,
    composite: 0.8,
    rationale: 'Sound.',
    receivedAt: Date.UTC(2026, 0, 1),
    signature: { algorithm: 'Ed25519', publicKey: judge.publicKey, signature: sign(judge.privateKey, judgmentSigningString(payload)), payload },
  } as unknown as JudgmentRecord;
  const file = join(dir, 'credential.json');
  writeFileSync(file, JSON.stringify(await issueJudgmentCredential(keys, 'capability', 'cprop_0000000000000001', j)));
  return { file, issuer: keys.issuer.did };
}

function timeOnce(args: string[], env: NodeJS.ProcessEnv): number {
  const start = performance.now();
  const r = spawnSync(process.execPath, args, { env, encoding: 'utf8', timeout: 20_000 });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr || r.stdout}`);
  return ms;
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Starts `akas serve` on a free port and answers its URL once it listens. */
function startServe(dataDir: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data', dataDir, '--port', '0', '--log-level', 'silent'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`akas serve did not listen within 15 s: ${out} ${err}`));
    }, 15_000);
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`akas serve exited ${code}: ${out} ${err}`));
    });
  });
}

function stopServe(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/**
 * What `akas serve` costs to start: its CPU until it prints that it listens, median of 5. Every
 * e2e test file starts nodes, and the node's own modules were most of this (scripts/bundle.mjs).
 */
async function serveStartCpu(env: NodeJS.ProcessEnv): Promise<number> {
  const seconds: number[] = [];
  for (let i = 0; i < 5; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'akas-bench-data-'));
    const { child } = await startServe(dataDir, env);
    try {
      seconds.push(cpuSecondsOf(child.pid!));
    } finally {
      await stopServe(child);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return med(seconds);
}

export async function run() {
  header(`coldstart: the CLI against \`node -e 0\` (spawnSync wall time, median of ${RUNS}, interleaved)`);
  const dataDir = mkdtempSync(join(tmpdir(), 'akas-bench-data-'));
  const configDir = mkdtempSync(join(tmpdir(), 'akas-bench-config-'));
  // A clean environment for the CLI: no real config touched, no inherited NODE_OPTIONS.
  const env: NodeJS.ProcessEnv = { ...process.env, AKAS_CONFIG_DIR: configDir, XDG_CONFIG_HOME: configDir };
  delete env.NODE_OPTIONS;
  delete env.AKAS_BASE_URL;
  delete env.AKAS_PROFILE;

  const { child, url } = await startServe(dataDir, env);
  try {
    timeOnce([CLI, '--base-url', url, 'register'], env);
    const cred = await credentialFile(configDir);
    const cmds: Cmd[] = [
      { name: 'node -e 0', args: ['-e', '0'], target: false },
      { name: 'akas --help', args: [CLI, '--help'], target: true },
      { name: 'akas --version', args: [CLI, '--version'], target: true },
      { name: 'akas me --json (running node, saved identity)', args: [CLI, '--base-url', url, 'me', '--json'], target: true },
      {
        name: 'node dist/akas-verify.mjs verify credential X',
        args: [SINGLE, 'verify', 'credential', cred.file, '--issuer', cred.issuer],
        target: true,
        limit: SINGLE_TARGET,
      },
      { name: 'akas verify credential X (for comparison)', args: [CLI, 'verify', 'credential', cred.file, '--issuer', cred.issuer], target: false },
      // Diagnostics: what one HTTP GET costs a fresh process, with fetch() (undici inside Node,
      // its llhttp WASM compiled at first use), with node:http (llhttp built in), and with a
      // bare node:net socket, which is what the CLI's http:// client (cli/kit/http1.ts) adds to
      // the cost of its own code. The gap between `akas --help` and `akas me` is that client,
      // the profile read and the node's answer.
      {
        name: 'diagnostic: node + one fetch() GET',
        args: ['--input-type=module', '-e', `await (await fetch(${JSON.stringify(`${url}/healthz`)})).text()`],
        target: false,
      },
      {
        name: 'diagnostic: node + one node:http GET',
        args: ['-e', `require('node:http').get(${JSON.stringify(`${url}/healthz`)}, (r) => r.resume())`],
        target: false,
      },
      {
        name: 'diagnostic: node + one node:net GET',
        args: [
          '-e',
          `const u = new URL(${JSON.stringify(`${url}/healthz`)}); const s = require('node:net').connect(Number(u.port), u.hostname, () => ` +
            `s.end('GET /healthz HTTP/1.1\\r\\nHost: ' + u.host + '\\r\\nConnection: close\\r\\n\\r\\n')); s.resume();`,
        ],
        target: false,
      },
    ];
    const times = new Map<string, number[]>(cmds.map((c) => [c.name, []]));
    for (let i = 0; i < WARMUP + RUNS; i++) {
      for (const c of cmds) {
        const ms = timeOnce(c.args, env);
        if (i >= WARMUP) times.get(c.name)!.push(ms);
      }
    }
    const base = med(times.get('node -e 0')!);
    console.log(`  (ratio = median ms divided by \`node -e 0\` = ${base.toFixed(1)} ms; lower is better)`);
    for (const c of cmds) {
      const ms = med(times.get(c.name)!);
      const ratio = ms / base;
      if (c.target) line(c.name, `${ms.toFixed(1)} ms`, ratio, `<= ${c.limit ?? TARGET}`, ratio <= (c.limit ?? TARGET));
      else line(c.name, `${ms.toFixed(1)} ms`, ratio);
    }
  } finally {
    await stopServe(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
  try {
    if (process.platform === 'linux') line('akas serve: CPU until it listens (median of 5)', `${(await serveStartCpu(env)).toFixed(2)} s`);
  } finally {
    rmSync(configDir, { recursive: true, force: true });
  }
}
