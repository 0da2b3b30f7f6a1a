// Many credentials are checked on every core (`akas verify credential` over a folder or a JSON
// lines file): Ed25519 verification is most of the work and each credential stands alone, so
// this thread and worker threads running the same verifier take chunks of the batch in turn,
// and the reports come back in input order. This module is also the workers' entry: loaded in
// a worker, it checks chunks. Workers need the built module (a worker cannot load TypeScript),
// so from the sources (tests run in-process) and for small batches everything runs on this thread.
// node:os and node:worker_threads load only when workers are used (a short check starts without them).
// The two verifier modules it needs, not verifier/index.js (which would load the log and bundle checks too).
//
// The hand-off was the pool's cost (issue 32): a report is some sixteen checks, and cloning
// 10,000 of them back to this thread cost a third of verifying them. So the input is shared
// once (one SharedArrayBuffer, no copy per chunk), chunks are claimed from a shared counter
// (no message to ask for work), and each thread sends its reports packed (verify-pack.ts):
// every distinct check once, then each report as indexes into those.
import { verifyCredential } from '../verifier/credential.js';
import { issuerTrustFromPins, trustIssuerKeys, type IssuerKeyList, type IssuerPin } from '../verifier/issuer-keys.js';
import { ReportPacker, unpackReports, type PackedChunk, type PackTables, type PoolReport } from './verify-pack.js';
import { WORKER_ARG } from './verify-worker.js';

export type { PoolReport } from './verify-pack.js';

export interface PoolOptions {
  at?: number;
  issuer?: string;
  /** The node's key list, as read from the file (the trust is rebuilt in each worker). */
  issuerKeys?: IssuerKeyList;
  /** The issuer keys a trust file pins (plain values: the trust is rebuilt in each worker). */
  trustIssuers?: IssuerPin[];
  checkJudgeSignature?: boolean;
  /** Also answer each credential's credentialStatus as parsed (for the status check: no second parse). */
  keepStatus?: boolean;
}

// The module's own file, which a worker loads: a .js chunk of the CLI bundle, or the single
// file dist/akas-verify.mjs. Undefined in a CommonJS build (the Node single executable), which
// then checks on one thread; .ts from the sources (tests run in-process).
const here: string | undefined = import.meta.url;

/** Below this many credentials one thread is faster than starting workers. */
export const PARALLEL_FROM = 1000;
/** Credentials per claim: small enough that the threads finish together, large enough that claims are rare. */
const CHUNK = 128;

/** The batch as every thread sees it: the documents end to end in shared memory, and two shared counters. */
interface SharedBatch {
  bytes: SharedArrayBuffer;
  /** ends[i]: where document i ends (it starts where i - 1 ends). */
  ends: SharedArrayBuffer;
  /** [0]: the next chunk to claim; [1]: documents checked so far (for the progress bar). */
  counters: SharedArrayBuffer;
  count: number;
}

interface WorkerData {
  akasVerifyPool: PoolOptions;
  batch: SharedBatch;
}

type Message = { chunk: PackedChunk } | { done: true };

function verifierFor(opts: PoolOptions) {
  const trust = opts.trustIssuers
    ? issuerTrustFromPins(opts.trustIssuers)
    : opts.issuerKeys && opts.issuer
      ? trustIssuerKeys(opts.issuer, opts.issuerKeys)
      : undefined;
  const base = { at: opts.at, issuer: opts.issuer, trust, checkJudgeSignature: opts.checkJudgeSignature };
  if (!opts.keepStatus) return (bytes: Uint8Array) => ({ report: verifyCredential(bytes, base), status: undefined });
  let status: unknown;
  const keep = { ...base, onDocument: (doc: unknown) => (status = (doc as { credentialStatus?: unknown } | null)?.credentialStatus) };
  return (bytes: Uint8Array) => {
    status = undefined;
    return { report: verifyCredential(bytes, keep), status };
  };
}

/**
 * Claims chunks until none is left, checking each and handing it to `send` packed; the same
 * loop on this thread and in every worker.
 */
function checkChunks(batch: SharedBatch, opts: PoolOptions, packer: ReportPacker, send: (chunk: PackedChunk) => void, onChunk?: () => void) {
  const verify = verifierFor(opts);
  const bytes = new Uint8Array(batch.bytes);
  const ends = new Int32Array(batch.ends);
  const counters = new Int32Array(batch.counters);
  const chunks = Math.ceil(batch.count / CHUNK);
  for (let k = Atomics.add(counters, 0, 1); k < chunks; k = Atomics.add(counters, 0, 1)) {
    const from = k * CHUNK;
    const to = Math.min(batch.count, from + CHUNK);
    for (let i = from; i < to; i++) {
      const r = verify(bytes.subarray(i === 0 ? 0 : ends[i - 1], ends[i]));
      packer.add(r.report, r.status);
    }
    send(packer.take(from));
    Atomics.add(counters, 1, to - from);
    onChunk?.();
  }
}

/** In a worker: checks chunks of the shared batch until none is left, then says so. */
export async function serveChunks() {
  const { isMainThread, parentPort, workerData } = await import('node:worker_threads');
  const data = workerData as WorkerData | null;
  if (isMainThread || !data?.akasVerifyPool) return;
  checkChunks(data.batch, data.akasVerifyPool, new ReportPacker(), (chunk) => parentPort!.postMessage({ chunk } satisfies Message));
  parentPort!.postMessage({ done: true } satisfies Message);
}
if (process.argv.includes(WORKER_ARG)) void serveChunks();

/**
 * How many workers to use for n credentials beside this thread, which checks chunks too (0:
 * this thread alone). AKAS_VERIFY_THREADS=N asks for N threads (1: no workers). Else one thread
 * per core that the load average leaves free, at most 8: where other processes already keep the
 * cores busy, a second thread adds its start and its own JIT warm-up and gains no core (Linux
 * shares CPU between sessions, not threads), and measured slower than one (issue 32).
 */
export function workersFor(n: number, env = process.env, cores = 1, load = 0): number {
  if (n < PARALLEL_FROM || typeof here !== 'string' || !/\.m?js$/.test(here)) return 0;
  const asked = Number(env.AKAS_VERIFY_THREADS);
  const wanted = Number.isFinite(asked) && asked >= 1 ? Math.floor(asked) : cores - Math.floor(load);
  const threads = Math.min(Math.max(1, wanted), 8, Math.ceil(n / CHUNK));
  return threads - 1;
}

/** The documents end to end in shared memory. */
function shareBatch(docs: Uint8Array[]): SharedBatch {
  let total = 0;
  for (const d of docs) total += d.length;
  const bytes = new SharedArrayBuffer(total);
  const view = new Uint8Array(bytes);
  const ends = new SharedArrayBuffer(4 * docs.length);
  const endsView = new Int32Array(ends);
  let at = 0;
  for (const [i, d] of docs.entries()) {
    view.set(d, at);
    endsView[i] = at += d.length;
  }
  return { bytes, ends, counters: new SharedArrayBuffer(8), count: docs.length };
}

const tables = (): PackTables => ({ checks: [], strings: [] });

/**
 * Checks every document, in order, on this thread and on worker threads when there are many;
 * onProgress is told how many are done. Answers one report per document, and with keepStatus
 * each document's credentialStatus as parsed (undefined where it has none or is not JSON).
 */
export async function verifyMany(
  docs: Uint8Array[],
  options: PoolOptions,
  onProgress?: (done: number) => void,
): Promise<{ reports: PoolReport[]; statuses: unknown[] }> {
  // One instant for the whole batch, whichever thread checks a credential and when.
  const opts = { ...options, at: options.at ?? Date.now() };
  const reports: PoolReport[] = new Array(docs.length);
  const statuses: unknown[] = new Array(docs.length);
  const os = docs.length < PARALLEL_FROM ? undefined : await import('node:os');
  const n = os ? workersFor(docs.length, process.env, os.availableParallelism(), os.loadavg()[0]) : 0;
  if (n === 0) {
    // One thread: the reports are packed all the same, so that the checks every credential
    // shares are held once (10,000 reports of fresh checks were most of the garbage collector's work).
    const verify = verifierFor(opts);
    const packer = new ReportPacker();
    const mine = tables();
    for (let start = 0; start < docs.length; start += CHUNK) {
      for (let i = start; i < Math.min(docs.length, start + CHUNK); i++) {
        const r = verify(docs[i]);
        packer.add(r.report, r.status);
      }
      unpackReports(packer.take(start), mine, reports, statuses);
      onProgress?.(Math.min(docs.length, start + CHUNK));
    }
    return { reports, statuses };
  }
  const batch = shareBatch(docs);
  const counters = new Int32Array(batch.counters);
  const { Worker } = await import('node:worker_threads');
  const workers = Array.from(
    { length: n },
    () => new Worker(new URL(here!), { workerData: { akasVerifyPool: opts, batch } satisfies WorkerData, argv: [WORKER_ARG] }),
  );
  try {
    const finished = workers.map((w) => {
      const theirs = tables();
      return new Promise<void>((resolve, reject) => {
        w.on('message', (m: Message) => {
          if ('done' in m) return resolve();
          unpackReports(m.chunk, theirs, reports, statuses);
          onProgress?.(Atomics.load(counters, 1));
        });
        w.once('error', reject);
        w.once('exit', (code) => (code !== 0 ? reject(new Error(`a verifier worker stopped (exit ${code})`)) : resolve()));
      });
    });
    // This thread claims chunks as the workers do (while they start, it is already checking).
    const mine = tables();
    checkChunks(
      batch,
      opts,
      new ReportPacker(),
      (chunk) => unpackReports(chunk, mine, reports, statuses),
      () => onProgress?.(Atomics.load(counters, 1)),
    );
    await Promise.all(finished);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  // Every chunk was claimed by a thread that then sent it, or failed the batch above: a hole is a bug, never a pass.
  for (let i = 0; i < reports.length; i++) if (reports[i] === undefined) throw new Error(`credential ${i + 1} was not checked`);
  return { reports, statuses };
}
