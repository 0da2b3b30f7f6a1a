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
//
// A worker takes some 0.2 s to load, and on a 16 MB file the reading took as long: so the
// command starts its workers before it reads the input (startWorkers, sized by the files'
// bytes), and reads the files straight into shared memory (cli/commands/verify/credential-inputs.ts), which the
// batch then is without a copy.
import { verifyCredential, type CredentialOptions } from '../../../verifier/credential.js';
import { NotCheckableError } from '../../../verifier/report.js';
import { issuerTrustFromPins, trustIssuerKeys, type IssuerKeyList, type IssuerPin } from '../../../verifier/issuer-keys.js';
import { ReportPacker, unpackReports, type PackedChunk, type PackTables, type PoolReport } from './pack.js';
import { statusNotAsked } from './status-ask.js';
import { statusChecksOf, type StatusContext } from './status-check.js';
import { WORKER_ARG } from './worker.js';

export type { PoolReport } from './pack.js';

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
  /**
   * The status lists, read and checked before the batch (saved lists, with the issuer pinned):
   * each thread then checks the status of the credentials it verifies, and the status checks
   * come in the reports. (Lists fetched from the node are read after, from the entries the
   * credentials name: keepStatus.)
   */
  status?: Omit<StatusContext, 'reasons' | 'failedLists'>;
  /**
   * No status was asked for (neither read nor skipped on purpose): a credential that names a
   * status list gets the check that says its status is unknown and how to read it, in its thread.
   */
  statusUnread?: boolean;
}

// The module's own file, which a worker loads: a .js chunk of the CLI bundle, or the single
// file dist/akas-verify.mjs. Undefined in a CommonJS build (the Node single executable), which
// then checks on one thread; .ts from the sources (tests run in-process).
const here: string | undefined = import.meta.url;

/** Below this many credentials one thread is faster than starting workers. */
export const PARALLEL_FROM = 1000;
/** Credentials per claim: small enough that the threads finish together, large enough that claims are rare. */
const CHUNK = 128;

/** A batch of at least this many bytes may hold PARALLEL_FROM credentials (a judgment credential is some 1.6 KB). */
const PARALLEL_FROM_BYTES = PARALLEL_FROM * 1024;

/** The batch as every thread sees it: the documents in shared memory, where each starts and ends, and two shared counters. */
interface SharedBatch {
  bytes: SharedArrayBuffer;
  /** Float64Array: starts[i], ends[i] are where document i starts and ends in bytes. */
  starts: SharedArrayBuffer;
  ends: SharedArrayBuffer;
  /** [0]: the next chunk to claim; [1]: documents checked so far (for the progress bar). */
  counters: SharedArrayBuffer;
  count: number;
}

/** What a worker is sent once loaded: the one message it waits for. */
interface BatchMessage {
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
  if (!opts.keepStatus && !opts.status && !opts.statusUnread) return (bytes: Uint8Array) => ({ report: readable(bytes, base), status: undefined });
  // What the status check reads of a credential: its entries, and its validFrom (a list made before it says nothing of it).
  let status: { credentialStatus?: unknown; validFrom?: unknown } | undefined;
  const keep = {
    ...base,
    onDocument: (doc: unknown) => {
      const d = doc as { credentialStatus?: unknown; validFrom?: unknown } | null;
      status = d?.credentialStatus === undefined ? undefined : { credentialStatus: d.credentialStatus, validFrom: d.validFrom };
    },
  };
  // Saved lists carry no version records: no reason for a set bit but the list's own time.
  const lists: StatusContext | undefined = opts.status && { ...opts.status, reasons: () => undefined };
  return (bytes: Uint8Array) => {
    status = undefined;
    const report = readable(bytes, keep);
    if (lists && !isUnreadable(report)) {
      const checks = statusChecksOf(status ?? {}, lists, report.subject);
      for (const k of checks) report.checks.push(k);
      if (checks.some((k) => k.valid === false)) report.verified = false;
    } else if (opts.statusUnread && status !== undefined) report.checks.push(statusNotAsked(report.subject));
    return { report, status: opts.keepStatus ? status : undefined };
  };
}

/**
 * One credential's report; for input that is not strict JSON (NotCheckableError: no credential
 * to judge, PROTOCOL 8.8), the one `input` check the command lists it by as unreadable (exit 2).
 */
function readable(bytes: Uint8Array, options: CredentialOptions): PoolReport {
  try {
    return verifyCredential(bytes, options);
  } catch (e) {
    if (!NotCheckableError.is(e)) throw e;
    return { verified: false, anchored: true, unanchored: [], checks: [{ id: 'input', layer: 'input', what: UNREADABLE, valid: false, why: e.message }] };
  }
}
const UNREADABLE = 'the input is a credential in strict JSON';

/** Input that could not be read is not a credential that failed: the command lists it as unreadable. */
export const isUnreadable = (r: { checks: Array<{ id: string }> }) => r.checks.length === 1 && r.checks[0].id === 'input';

/**
 * Claims chunks until none is left, checking each and handing it to `send` packed; the same
 * loop on this thread and in every worker.
 */
function checkChunks(batch: SharedBatch, opts: PoolOptions, packer: ReportPacker, send: (chunk: PackedChunk) => void, onChunk?: () => void) {
  const verify = verifierFor(opts);
  const bytes = new Uint8Array(batch.bytes);
  const starts = new Float64Array(batch.starts);
  const ends = new Float64Array(batch.ends);
  const counters = new Int32Array(batch.counters);
  const chunks = Math.ceil(batch.count / CHUNK);
  for (let k = Atomics.add(counters, 0, 1); k < chunks; k = Atomics.add(counters, 0, 1)) {
    const from = k * CHUNK;
    const to = Math.min(batch.count, from + CHUNK);
    for (let i = from; i < to; i++) {
      const r = verify(bytes.subarray(starts[i], ends[i]));
      packer.add(r.report, r.status);
    }
    send(packer.take(from));
    Atomics.add(counters, 1, to - from);
    onChunk?.();
  }
}

/** In a worker: waits for the batch, checks chunks of it until none is left, then says so. */
export async function serveChunks() {
  const { isMainThread, parentPort } = await import('node:worker_threads');
  if (isMainThread || !parentPort) return;
  const port = parentPort;
  port.once('message', (data: BatchMessage) => {
    if (!data?.akasVerifyPool) return port.close(); // not a batch: nothing to do (the worker then ends)
    checkChunks(data.batch, data.akasVerifyPool, new ReportPacker(), (chunk) => port.postMessage({ chunk } satisfies Message));
    port.postMessage({ done: true } satisfies Message);
  });
}
if (process.argv.includes(WORKER_ARG)) void serveChunks();

/**
 * How many workers to use for n credentials beside this thread, which checks chunks too (0:
 * this thread alone). AKAS_VERIFY_THREADS=N asks for N threads (1: no workers). Else one thread
 * per core that other work leaves free (`load`, from busyElsewhere), at most 8: where other
 * processes already keep the cores busy, a second thread adds its start and its own JIT warm-up
 * and gains no core (Linux shares CPU between sessions, not threads), and measured slower than
 * one (issue 32).
 */
export function workersFor(n: number, env = process.env, cores = 1, load = 0): number {
  if (n < PARALLEL_FROM || typeof here !== 'string' || !/\.m?js$/.test(here)) return 0;
  const asked = Number(env.AKAS_VERIFY_THREADS);
  const wanted = Number.isFinite(asked) && asked >= 1 ? Math.floor(asked) : cores - Math.floor(load);
  const threads = Math.min(Math.max(1, wanted), 8, Math.ceil(n / CHUNK));
  return threads - 1;
}

/**
 * How many cores other work keeps busy: the smaller of the tasks runnable now beside this
 * thread (/proc/loadavg's fourth field, "running/total", on Linux) and the 1-minute load
 * average. The average alone lags a minute, so a run just after another (a CI job checking
 * bundles one after the other, or a bench) counted the one before as load and used one thread
 * on an idle machine; the instant alone may catch a passing process. Either being low means
 * the cores are free now, or have been for the last minute but for a passing blip.
 */
export function busyElsewhere(procLoadavg: string | undefined, load1: number, ownRunning = 1): number {
  const running = Number(procLoadavg?.split(' ')[3]?.split('/')[0]);
  return Number.isInteger(running) && running >= 1 ? Math.max(0, Math.min(load1, running - Math.max(1, ownRunning))) : load1;
}

/** How many of this process's threads are runnable now (its own JIT and GC helpers count in /proc/loadavg too); 1 where /proc cannot tell. */
function ownRunning(fs: typeof import('node:fs')): number {
  try {
    let n = 0;
    for (const task of fs.readdirSync('/proc/self/task')) {
      // "pid (name) S ...": the state follows the last parenthesis (a thread's name may hold one).
      const stat = fs.readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      if (stat[stat.lastIndexOf(')') + 2] === 'R') n++;
    }
    return Math.max(1, n);
  } catch {
    return 1;
  }
}

/**
 * Workers for n credentials on this machine, now (workersFor with busyElsewhere). The instant
 * is read five times a millisecond apart and the least taken: a task runnable at one reading
 * (a kernel thread, a passing process) is seldom runnable at all five, where a busy loop is.
 */
async function workersHere(n: number): Promise<number> {
  const os = await import('node:os');
  const fs = await import('node:fs');
  let busy = Infinity;
  for (let i = 0; i < 5 && busy > 0; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 1));
    let proc: string | undefined;
    try {
      proc = fs.readFileSync('/proc/loadavg', 'utf8');
    } catch {
      proc = undefined; // not Linux: the load average alone
    }
    busy = Math.min(busy, busyElsewhere(proc, os.loadavg()[0], proc === undefined ? 1 : ownRunning(fs)));
  }
  return workersFor(n, process.env, os.availableParallelism(), busy);
}

/**
 * The documents in shared memory: where they already are when every one is a view of the same
 * SharedArrayBuffer (the files as cli/commands/verify/credential-inputs.ts reads them), else copied end to end.
 */
function shareBatch(docs: Uint8Array[]): SharedBatch {
  const starts = new SharedArrayBuffer(8 * docs.length);
  const ends = new SharedArrayBuffer(8 * docs.length);
  const startsView = new Float64Array(starts);
  const endsView = new Float64Array(ends);
  const shared = docs[0]?.buffer;
  if (shared instanceof SharedArrayBuffer && docs.every((d) => d.buffer === shared)) {
    for (const [i, d] of docs.entries()) endsView[i] = (startsView[i] = d.byteOffset) + d.length;
    return { bytes: shared, starts, ends, counters: new SharedArrayBuffer(8), count: docs.length };
  }
  let total = 0;
  for (const d of docs) total += d.length;
  const bytes = new SharedArrayBuffer(total);
  const view = new Uint8Array(bytes);
  let at = 0;
  for (const [i, d] of docs.entries()) {
    view.set(d, (startsView[i] = at));
    endsView[i] = at += d.length;
  }
  return { bytes, starts, ends, counters: new SharedArrayBuffer(8), count: docs.length };
}

/** A worker, loading or loaded, whose chunks go to `onChunk` and whose end (done, or failed) is `ended`. */
export interface PoolWorker {
  worker: import('node:worker_threads').Worker;
  onChunk?: (chunk: PackedChunk) => void;
  ended: Promise<void>;
}

function startWorker(W: typeof import('node:worker_threads').Worker): PoolWorker {
  const worker = new W(new URL(here!), { argv: [WORKER_ARG] });
  const pw = { worker } as PoolWorker;
  pw.ended = new Promise<void>((resolve, reject) => {
    worker.on('message', (m: Message) => ('done' in m ? resolve() : pw.onChunk?.(m.chunk)));
    worker.once('error', reject);
    worker.once('exit', (code) => (code !== 0 ? reject(new Error(`a verifier worker stopped (exit ${code})`)) : resolve()));
  });
  // Awaited by verifyMany when the worker is used; one never used fails nothing.
  pw.ended.catch(() => undefined);
  return pw;
}

/**
 * Starts, before the input is read, the workers a batch of `bytes` of input will use (none for
 * less than PARALLEL_FROM credentials might hold, or where one thread is asked or best): they
 * load while this thread reads. Hand them to verifyMany, which ends them.
 */
export async function startWorkers(bytes: number): Promise<PoolWorker[]> {
  if (bytes < PARALLEL_FROM_BYTES) return [];
  const n = await workersHere(Math.floor(bytes / 1024));
  if (n === 0) return [];
  const { Worker } = await import('node:worker_threads');
  // Unreferenced until used: a command that fails before checking still ends.
  return Array.from({ length: n }, () => {
    const w = startWorker(Worker);
    w.worker.unref();
    return w;
  });
}

const tables = (): PackTables => ({ checks: [], strings: [] });

/**
 * Checks every document, in order, on this thread and on worker threads when there are many
 * (those `started` before the input was read, or started now); onProgress is told how many are
 * done. Answers one report per document, and with keepStatus each document's credentialStatus
 * as parsed (undefined where it has none or is not JSON). Ends every worker it was handed.
 */
export async function verifyMany(
  docs: Uint8Array[],
  options: PoolOptions,
  onProgress?: (done: number) => void,
  started: PoolWorker[] = [],
): Promise<{ reports: PoolReport[]; statuses: unknown[] }> {
  // One instant for the whole batch, whichever thread checks a credential and when.
  const opts = { ...options, at: options.at ?? Date.now() };
  const reports: PoolReport[] = new Array(docs.length);
  const statuses: unknown[] = new Array(docs.length);
  let workers = docs.length < PARALLEL_FROM ? [] : started;
  if (workers.length === 0 && docs.length >= PARALLEL_FROM && typeof here === 'string') {
    const n = await workersHere(docs.length);
    if (n > 0) {
      const { Worker } = await import('node:worker_threads');
      workers = Array.from({ length: n }, () => startWorker(Worker));
    }
  }
  try {
    if (workers.length === 0) {
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
    for (const w of workers) {
      w.worker.ref();
      const theirs = tables();
      w.onChunk = (chunk) => {
        unpackReports(chunk, theirs, reports, statuses);
        onProgress?.(Atomics.load(counters, 1));
      };
      w.worker.postMessage({ akasVerifyPool: opts, batch } satisfies BatchMessage);
    }
    // This thread claims chunks as the workers do (while they start, it is already checking).
    const mine = tables();
    checkChunks(
      batch,
      opts,
      new ReportPacker(),
      (chunk) => unpackReports(chunk, mine, reports, statuses),
      () => onProgress?.(Atomics.load(counters, 1)),
    );
    await Promise.all(workers.map((w) => w.ended));
  } finally {
    await Promise.all([...new Set([...started, ...workers])].map((w) => w.worker.terminate()));
  }
  // Every chunk was claimed by a thread that then sent it, or failed the batch above: a hole is a bug, never a pass.
  for (let i = 0; i < reports.length; i++) if (reports[i] === undefined) throw new Error(`credential ${i + 1} was not checked`);
  return { reports, statuses };
}
