// The index rebuilt on two threads (`akas monitor --index`, docs/INDEX.md 7): a worker reads the
// log's leaves (JSON.parse, the keys each entry mentions by lookupKeysKit's very code, each new
// key numbered and hashed), and this thread keeps the map (IndexRebuild.addRead) and compares
// every logged root. Reading an entry costs about what indexing it does, so the two halves run
// side by side. Node only (a worker thread): `akas verify index`, in the browser too, indexes on
// one thread with IndexRebuild.add.
import { Worker } from 'node:worker_threads';
import { LOOKUP_ROOT_KIND } from '../../../src/core/lookup.js';
import { lookupKeysKit, MAX_LOOKUP_KEY } from '../../../src/core/lookup-keys.js';
import { IndexRebuild } from '../../../verifier/index-rebuild.js';

/** Bundles on their way to the worker at most (the tiles are read faster than they are indexed). */
const IN_FLIGHT = 8;
/** Workers reading leaves: with this thread keeping the map, as much work on each side. */
const READERS = 2;
/** Keys the worker remembers by their text (past it the memory starts again, and keys met again are numbered anew). */
const NUMBERED_KEYS = 1 << 20;

/** A bundle of leaves for the worker: leaf i is bytes[starts[i]] to bytes[ends[i] - 1]. */
interface Bundle {
  bytes: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
}

/** What the worker answers for a bundle, or why it could not read it. */
type Read =
  | {
      /** Keys mentioned by entry i: keys[at[i]] to keys[at[i + 1]] - 1. */
      at: Int32Array;
      keys: Int32Array;
      /** The keys first met in this bundle, numbered from `firstNew` (one stride apart), their hashes 32 bytes each. */
      firstNew: number;
      hashes: Uint8Array;
      /** The index.root.v1 entries: their position in the bundle and their bodies. */
      roots: Array<{ i: number; body: Record<string, unknown> }>;
    }
  | { error: string };

interface Port {
  on(event: 'message', listen: (m: Bundle) => void): void;
  postMessage(m: Read, transfer: ArrayBuffer[]): void;
}

/** The worker's side: self-contained (it runs from its source), handed the key derivation and SHA-256. */
function serveLeaves(
  port: Port,
  keysOf: ReturnType<typeof lookupKeysKit>,
  rootKind: string,
  sha256: (s: string) => Uint8Array,
  o: { most: number; first: number; stride: number },
) {
  let numbers = new Map<string, number>();
  let next = o.first;
  const decoder = new TextDecoder();
  port.on('message', (b) => {
    const at = new Int32Array(b.starts.length + 1);
    const keys: number[] = [];
    const fresh: Uint8Array[] = [];
    const firstNew = next;
    const roots: Array<{ i: number; body: Record<string, unknown> }> = [];
    for (let i = 0; i < b.starts.length; i++) {
      at[i] = keys.length;
      let e: { kind?: unknown; agent?: unknown; body?: unknown };
      try {
        e = JSON.parse(decoder.decode(b.bytes.subarray(b.starts[i], b.ends[i])));
      } catch {
        port.postMessage({ error: `leaf ${i} of a bundle is not the JSON of a log entry` }, []);
        return;
      }
      // As the entry is read on one thread (cli/commands/monitor/index-audit.ts).
      const entry = { kind: String(e.kind), agent: typeof e.agent === 'string' ? e.agent : null, body: (e.body ?? {}) as Record<string, unknown> };
      if (entry.kind === rootKind) roots.push({ i, body: entry.body });
      for (const key of keysOf(entry)) {
        let n = numbers.get(key);
        if (n === undefined) {
          if (numbers.size >= o.most) numbers = new Map();
          n = next;
          next += o.stride;
          numbers.set(key, n);
          fresh.push(sha256(key));
        }
        keys.push(n);
      }
    }
    at[b.starts.length] = keys.length;
    const hashes = new Uint8Array(32 * fresh.length);
    for (let j = 0; j < fresh.length; j++) hashes.set(fresh[j], 32 * j);
    const packed = Int32Array.from(keys);
    port.postMessage({ at, keys: packed, firstNew, hashes, roots }, [at.buffer, packed.buffer, hashes.buffer]);
  });
}

const WORKER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const keysOf = (${lookupKeysKit.toString()})(workerData.rootKind, workerData.maxKey);
const sha256 = (s) => createHash('sha256').update(s, 'utf8').digest();
(${serveLeaves.toString()})(parentPort, keysOf, workerData.rootKind, sha256, workerData);
`;

/** Indexes the log's leaves on worker threads, bundle by bundle, in order from entry 0. */
export class IndexRebuildInWorker {
  readonly rebuild = new IndexRebuild();
  private readonly workers: Worker[];
  /** Bundles posted, oldest first: their first entry's index, size, worker, and the worker's answer once it came. */
  private readonly posted: Array<{ seq: number; width: number; worker: number; read?: Read }> = [];
  private next = 0;
  private turn = 0;
  private failure: Error | null = null;
  private wake: (() => void) | null = null;

  /** `threads` workers read bundles in turn (each numbers the keys it meets in its own series: n = w + threads * k). */
  constructor(threads = READERS) {
    this.workers = Array.from({ length: threads }, (_, w) => {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { rootKind: LOOKUP_ROOT_KIND, maxKey: MAX_LOOKUP_KEY, most: NUMBERED_KEYS, first: w, stride: threads },
      });
      worker.unref();
      worker.on('message', (m: Read) => this.answer(w, m));
      worker.on('error', (e) => this.fail(e));
      worker.on('exit', (code) => this.fail(new Error(`an index worker stopped (exit ${code})`)));
      return worker;
    });
  }

  /** The next bundle of leaves (leaf i: bytes[starts[i]] to bytes[ends[i] - 1]); waits while enough are on their way. */
  async add(bytes: Uint8Array, starts: ArrayLike<number>, ends: ArrayLike<number>) {
    while (this.posted.length >= IN_FLIGHT * this.workers.length && !this.failure) await this.settle();
    if (this.failure) throw this.failure;
    const b: Bundle = { bytes: new Uint8Array(bytes), starts: Int32Array.from(starts), ends: Int32Array.from(ends) };
    const w = this.turn;
    this.turn = (w + 1) % this.workers.length;
    this.posted.push({ seq: this.next, width: b.starts.length, worker: w });
    this.next += b.starts.length;
    // Alive only while a bundle waits: a monitor that stopped reading never hangs on its workers.
    this.workers[w].ref();
    this.workers[w].postMessage(b, [b.bytes.buffer as ArrayBuffer, b.starts.buffer as ArrayBuffer, b.ends.buffer as ArrayBuffer]);
  }

  /** Waits for every bundle added, stops the workers and answers the rebuild (its roots compared; root() the map's). */
  async finish(): Promise<IndexRebuild> {
    try {
      while (this.posted.length && !this.failure) await this.settle();
      if (this.failure) throw this.failure;
      // Every root read compared (a root waits until the map reaches its size).
      this.rebuild.root();
      return this.rebuild;
    } finally {
      for (const worker of this.workers) worker.removeAllListeners('exit');
      await Promise.all(this.workers.map((worker) => worker.terminate()));
    }
  }

  private settle(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  private poke() {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private fail(e: Error) {
    this.failure ??= e;
    this.poke();
  }

  // A worker answers its bundles in order; the bundles are indexed in the log's order.
  private answer(w: number, m: Read) {
    const mine = this.posted.find((p) => p.worker === w && !p.read);
    if (!mine) return this.fail(new Error('an answer for no bundle'));
    mine.read = m;
    if (!this.posted.some((p) => p.worker === w && !p.read)) this.workers[w].unref();
    while (this.posted[0]?.read && !this.failure) this.take(this.posted.shift()!);
    this.poke();
  }

  private take(bundle: { seq: number; width: number; read?: Read }) {
    const m = bundle.read!;
    if ('error' in m) return this.fail(new Error(`entries from ${bundle.seq}: ${m.error}`));
    try {
      const stride = this.workers.length;
      for (let j = 0; j < m.hashes.length / 32; j++) this.rebuild.learn(m.firstNew + stride * j, m.hashes.subarray(32 * j, 32 * j + 32));
      let r = 0;
      for (let i = 0; i < bundle.width; i++) {
        const root = r < m.roots.length && m.roots[r].i === i ? m.roots[r++].body : null;
        this.rebuild.addRead(bundle.seq + i, root, m.keys, m.at[i], m.at[i + 1]);
      }
    } catch (e) {
      this.fail(e as Error);
    }
  }
}
