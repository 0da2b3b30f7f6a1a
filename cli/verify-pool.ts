// Many credentials are checked on every core (`akas verify credential` over a folder or a JSON
// lines file): Ed25519 verification is two thirds of the work and each credential stands
// alone, so chunks go to worker threads running the same verifier, and the reports come back
// in input order. This module is also the workers' entry: loaded in a worker, it serves chunks.
// Workers need the built module (a worker cannot load TypeScript), so from the sources (tests
// run in-process) and for small batches everything runs on this thread.
// node:os and node:worker_threads load only when workers are used (a short check starts without them).
// The two verifier modules it needs, not verifier/index.js (which would load the log and bundle checks too).
import { verifyCredential, type CredentialReport } from '../verifier/credential.js';
import { issuerTrustFromPins, trustIssuerKeys, type IssuerKeyList, type IssuerPin } from '../verifier/issuer-keys.js';
import { WORKER_ARG } from './verify-worker.js';

export interface PoolOptions {
  at?: number;
  issuer?: string;
  /** The node's key list, as read from the file (the trust is rebuilt in each worker). */
  issuerKeys?: IssuerKeyList;
  /** The issuer keys a trust file pins (plain values: the trust is rebuilt in each worker). */
  trustIssuers?: IssuerPin[];
  checkJudgeSignature?: boolean;
}

// The module's own file, which a worker loads: a .js chunk of the CLI bundle, or the single
// file dist/akas-verify.mjs. Undefined in a CommonJS build (the Node single executable), which
// then checks on one thread; .ts from the sources (tests run in-process).
const here: string | undefined = import.meta.url;

/** Below this many credentials one thread is faster than starting workers. */
export const PARALLEL_FROM = 1000;
const CHUNK = 250;

function verifierFor(opts: PoolOptions) {
  const trust = opts.trustIssuers
    ? issuerTrustFromPins(opts.trustIssuers)
    : opts.issuerKeys && opts.issuer
      ? trustIssuerKeys(opts.issuer, opts.issuerKeys)
      : undefined;
  return (bytes: Uint8Array) => verifyCredential(bytes, { at: opts.at, issuer: opts.issuer, trust, checkJudgeSignature: opts.checkJudgeSignature });
}

interface Job {
  id: number;
  docs: Uint8Array[];
}

/** In a worker: checks the chunks the main thread sends (a port holds them until this listens). */
export async function serveChunks() {
  const { isMainThread, parentPort, workerData } = await import('node:worker_threads');
  if (isMainThread || !(workerData as { akasVerifyPool?: PoolOptions } | null)?.akasVerifyPool) return;
  const verify = verifierFor((workerData as { akasVerifyPool: PoolOptions }).akasVerifyPool);
  parentPort!.on('message', (job: Job) => parentPort!.postMessage({ id: job.id, reports: job.docs.map(verify) }));
}
if (process.argv.includes(WORKER_ARG)) void serveChunks();

/**
 * How many workers to use for n credentials (0: check them on this thread); AKAS_VERIFY_THREADS
 * caps it (1: no workers). One core is left to this thread, which reads the input, feeds the
 * workers and takes back every report (a structured clone of each): on two cores two workers
 * measured slower than this thread alone (0.53 against 0.57 of raw verify, issue 32).
 */
export function workersFor(n: number, env = process.env, cores = 1): number {
  if (n < PARALLEL_FROM || typeof here !== 'string' || !/\.m?js$/.test(here)) return 0;
  const cap = Number(env.AKAS_VERIFY_THREADS ?? Infinity);
  const n2 = Math.min(cores - 1, 8, Math.ceil(n / CHUNK), Number.isFinite(cap) && cap >= 1 ? cap : Infinity);
  return n2 <= 1 ? 0 : n2;
}

/**
 * Checks every document, in order, on worker threads when there are many; onProgress is
 * told how many are done. Answers one report per document.
 */
export async function verifyMany(docs: Uint8Array[], options: PoolOptions, onProgress?: (done: number) => void): Promise<CredentialReport[]> {
  // One instant for the whole batch, whichever thread checks a credential and when.
  const opts = { ...options, at: options.at ?? Date.now() };
  const n = docs.length < PARALLEL_FROM ? 0 : workersFor(docs.length, process.env, (await import('node:os')).availableParallelism());
  if (n === 0) {
    const verify = verifierFor(opts);
    return docs.map((d, i) => {
      const r = verify(d);
      onProgress?.(i + 1);
      return r;
    });
  }
  const reports: CredentialReport[] = new Array(docs.length);
  const jobs: Job[] = [];
  for (let start = 0, id = 0; start < docs.length; start += CHUNK, id++) jobs.push({ id, docs: docs.slice(start, start + CHUNK) });
  let next = 0;
  let done = 0;
  const { Worker } = await import('node:worker_threads');
  const workers = Array.from({ length: n }, () => new Worker(new URL(here!), { workerData: { akasVerifyPool: opts }, argv: [WORKER_ARG] }));
  try {
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            const feed = () => {
              if (next >= jobs.length) return resolve();
              w.postMessage(jobs[next++]);
            };
            w.on('message', (m: { id: number; reports: CredentialReport[] }) => {
              for (const [i, r] of m.reports.entries()) reports[m.id * CHUNK + i] = r;
              done += m.reports.length;
              onProgress?.(done);
              feed();
            });
            w.once('error', reject);
            w.once('exit', (code) => (next < jobs.length || code !== 0 ? reject(new Error(`a verifier worker stopped (exit ${code})`)) : undefined));
            feed();
          }),
      ),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return reports;
}
