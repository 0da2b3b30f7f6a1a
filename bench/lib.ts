import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cryptoRandom, freshNodeKeys, type NodeKeys } from '../src/core/index.js';
import type { Ctx } from '../src/domain/context.js';
import { moveCredits } from '../src/domain/ledger.js';
import { Agents, agentLock, type AgentRecord } from '../src/domain/records.js';

// Tiny benchmark helpers. Every benchmark prints ratios against a baseline measured in the
// same run on the same machine, so results compare across machines; absolute numbers are
// printed alongside for context only.

export interface Rate {
  name: string;
  opsPerSec: number;
  ops: number;
  ms: number;
}

/** Runs fn repeatedly for about `seconds` (after a short warm-up) and answers ops per second. */
export async function rate(name: string, fn: () => unknown | Promise<unknown>, seconds = 1.5): Promise<Rate> {
  const warmUntil = performance.now() + Math.min(300, seconds * 200);
  while (performance.now() < warmUntil) await fn();
  let ops = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    await fn();
    ops++;
  }
  const ms = performance.now() - start;
  return { name, opsPerSec: (ops / ms) * 1000, ops, ms };
}

/** Like rate(), but keeps `concurrency` calls in flight (HTTP throughput). */
export async function concurrentRate(name: string, fn: () => Promise<unknown>, concurrency = 16, seconds = 2): Promise<Rate> {
  const warmEnd = performance.now() + 400;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < warmEnd) await fn();
    }),
  );
  let ops = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await fn();
        ops++;
      }
    }),
  );
  const ms = performance.now() - start;
  return { name, opsPerSec: (ops / ms) * 1000, ops, ms };
}

/** The median of n runs of an async measurement (ops/s). */
export async function median(n: number, measure: () => Promise<Rate>): Promise<Rate> {
  const runs: Rate[] = [];
  for (let i = 0; i < n; i++) runs.push(await measure());
  runs.sort((a, b) => a.opsPerSec - b.opsPerSec);
  return runs[Math.floor(runs.length / 2)];
}

const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2));

/** One result line: `name  value  (ratio to baseline, target)`. */
export function line(label: string, value: string, ratio?: number, target?: string, ok?: boolean) {
  const r = ratio === undefined ? '' : `  ratio ${ratio.toFixed(2)}`;
  const t = target ? `  target ${target}${ok === undefined ? '' : ok ? '  ✓' : '  ✗'}` : '';
  console.log(`  ${label.padEnd(52)} ${value.padStart(14)}${r}${t}`);
}

export const perSec = (r: Rate) => `${fmt(r.opsPerSec)}/s`;

export function header(title: string) {
  console.log(`\n${title}`);
}

/** Node keys for a benchmark node (a fresh issuer key, a fixed HMAC key). */
export function benchKeys(): NodeKeys {
  return { ...freshNodeKeys(cryptoRandom), hmac: [{ signingKeyId: 'hk_bench', key: Buffer.alloc(32, 7), createdAt: 0 }] };
}

/** Marks an agent calibrated at score and mints credits through the ledger (the books still balance). */
export function calibrateForBench(ctx: Pick<Ctx, 'store' | 'clock' | 'random'>, tag: string, score: number, credits: number): Promise<AgentRecord> {
  return ctx.store.transact([agentLock(tag)], async (tx) => {
    const agent = (await tx.get(Agents, tag))!;
    agent.calibration = { attempts: 1, score, bonusPaid: false, lastAttemptAt: 0 };
    if (credits > 0) moveCredits(tx, ctx, agent, 'mint', credits, 'bench funding');
    else tx.put(Agents, agent.tag, agent);
    return agent;
  });
}

let briefSeq = 0;
/** A fresh brief proposal payload (a real one's size), its id `kb:<prefix>-<n>`. */
export function briefPayload(prefix: string) {
  const n = briefSeq++;
  return {
    brief: {
      id: `kb:${prefix}-${n}`,
      domain: 'distributed-systems',
      topic: `Retries with backoff ${n}`,
      title: 'Retry with exponential backoff and jitter',
      version: '2026-11',
      levels: {
        tldr: 'Retry transient failures with exponential backoff plus jitter, cap attempts, and only retry idempotent operations.',
        core: ['Back off exponentially.', 'Add full jitter.', 'Cap the number of attempts.'],
        deep: {
          definitions: { jitter: 'random spread added to a delay' },
          examples: [{ violation: 'retry in a tight loop', fix: 'sleep base * 2^n with jitter' }],
          sources: [
            { citation: 'Exponential Backoff And Jitter', url: 'https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/', year: 2015 },
          ],
        },
      },
      pitfalls: ['retrying non-idempotent writes'],
    },
  };
}

/** The built CLI, as the benches run it (dist/bench beside dist/bin). */
export const BENCH_CLI = fileURLToPath(new URL('../bin/main.cjs', import.meta.url));

/** A running `akas serve` a bench started: its URL, how long it took to listen, and how to stop it. */
export interface ServedProcess {
  url: string;
  child: ChildProcess;
  startMs: number;
  stop(): Promise<void>;
}

/** Starts `akas serve --port 0 ARGS` with the node secret given, resolved once it listens. */
export function serveProcess(args: string[], nodeSecret: string): Promise<ServedProcess> {
  const t = performance.now();
  const child = spawn(process.execPath, [BENCH_CLI, 'serve', '--port', '0', '--log-level', 'silent', ...args], {
    env: { ...process.env, AKAS_NODE_SECRET: nodeSecret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => {
    err += c;
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1], child, startMs: performance.now() - t, stop });
    });
    child.once('exit', (code) => reject(new Error(`akas serve exited ${code}: ${out}${err}`)));
  });
}
