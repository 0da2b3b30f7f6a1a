// The verifiable index rebuilt from the log's entries (docs/INDEX.md 7), as `akas monitor --index`
// does from the tiles and `akas verify index` from the evidence it saved: every entry indexed
// again in order, and each index.root.v1 entry's root compared with the root of the map over the
// entries below its size. Offline and pure: one module for the monitor and the verifiers.
import type { LogEntry } from '../src/core/log-entry.js';
import { LOOKUP_ROOT_KIND, LookupMap } from '../src/core/lookup.js';
import { entryLookupKeys } from '../src/core/lookup-keys.js';

/** A logged root and what the entries gave: `held` when they agree; null when it could not be compared. */
export interface RootCompared {
  /** The index.root.v1 entry's log index. */
  seq: number;
  size: number;
  logged: string;
  rebuilt: string | null;
  held: boolean | null;
  why?: string;
}

/**
 * Entries are taken into the map only this many behind the newest read, so that a root entry
 * appended after entries its map does not cover (entries appended while the root was made) is
 * still compared with the map of exactly its size, and so are roots logged out of the order of
 * their sizes (processes sharing a store each append theirs: one paused may log a root of a size
 * another's root, logged before it, has passed). A root further behind its entry is not compared
 * (said so).
 */
export const REBUILD_WINDOW = 16_384;

/** Indexes entries in log order and compares each logged root. */
export class IndexRebuild {
  private readonly map = new LookupMap();
  /**
   * The keys of the entries read and not yet in the map (at most REBUILD_WINDOW entries), in
   * order from `head`: each key beside its entry's index. An entry's keys are derived as it is
   * read, so only its keys are held, not the entry. A key is its text, or the number a reader
   * elsewhere gave it (addRead).
   */
  private waitingKeys: Array<string | number> = [];
  private waitingSeqs: number[] = [];
  private head = 0;
  /** Entries read: 0 to read-1. */
  private read = 0;
  /** Entries in the map: 0 to taken-1. */
  private taken = 0;
  /** Every root entry read, in log order: compared once the map reaches its size (root() compares those still waiting). */
  readonly roots: RootCompared[] = [];
  /** The roots read and not compared yet, by rising size: each compared when the map reaches its size. */
  private waitingRoots: RootCompared[] = [];
  /** Keys by number (addRead): their hashes, and their ids in the map once they joined it (-1 before). */
  private numbered: Buffer = Buffer.alloc(32 * 1024);
  private ids = new Int32Array(1024).fill(-1);

  /** The next entry of the log (entries must come in order, from 0). */
  add(e: Pick<LogEntry, 'seq' | 'kind' | 'agent' | 'body'>) {
    if (e.seq !== this.read) throw new RangeError(`entry ${e.seq} out of order (expected ${this.read})`);
    if (e.kind === LOOKUP_ROOT_KIND) this.compare(e);
    for (const key of entryLookupKeys(e)) {
      this.waitingKeys.push(key);
      this.waitingSeqs.push(e.seq);
    }
    this.read++;
    if (this.read - this.taken > REBUILD_WINDOW) this.takeUpTo(this.read - REBUILD_WINDOW);
  }

  /** The hash of the key numbered n in the keys addRead is given (numbers from 0, each learnt once before it is used). */
  learn(n: number, k: Uint8Array) {
    if (n >= this.ids.length) {
      const ids = new Int32Array(Math.max(n + 1, 2 * this.ids.length)).fill(-1);
      ids.set(this.ids);
      this.ids = ids;
      const numbered = Buffer.alloc(32 * ids.length);
      this.numbered.copy(numbered);
      this.numbered = numbered;
    }
    this.numbered.set(k.subarray(0, 32), 32 * n);
    this.ids[n] = -1;
  }

  /**
   * The next entry of the log, read elsewhere (a worker): the body of an index.root.v1 entry, or
   * null for any other, and the numbers of the keys it mentions (keys[from] to keys[to - 1]).
   */
  addRead(seq: number, rootBody: Record<string, unknown> | null, keys: ArrayLike<number>, from: number, to: number) {
    if (seq !== this.read) throw new RangeError(`entry ${seq} out of order (expected ${this.read})`);
    if (rootBody) this.compare({ seq, body: rootBody });
    for (let i = from; i < to; i++) {
      this.waitingKeys.push(keys[i]);
      this.waitingSeqs.push(seq);
    }
    this.read++;
    if (this.read - this.taken > REBUILD_WINDOW) this.takeUpTo(this.read - REBUILD_WINDOW);
  }

  /** The map's root over every entry added (hex), every root read compared by then. */
  root(): string {
    this.takeUpTo(this.read);
    return this.map.root().toString('hex');
  }

  private compare(e: Pick<LogEntry, 'seq' | 'body'>) {
    const size = e.body.size;
    const logged = String(e.body.root);
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0 || size > e.seq) {
      this.roots.push({
        seq: e.seq,
        size: Number(size),
        logged,
        rebuilt: null,
        held: false,
        why: `its size ${String(size)} is not a log size below the entry`,
      });
      return;
    }
    if (size < this.taken) {
      this.roots.push({ seq: e.seq, size, logged, rebuilt: null, held: null, why: `more than ${REBUILD_WINDOW} entries behind its entry: not compared` });
      return;
    }
    const root: RootCompared = { seq: e.seq, size, logged, rebuilt: null, held: null, why: 'not compared yet' };
    this.roots.push(root);
    let at = this.waitingRoots.length;
    while (at > 0 && this.waitingRoots[at - 1].size > size) at--;
    this.waitingRoots.splice(at, 0, root);
  }

  // The map reached a waiting root's size: its root compared with the one logged.
  private compareWaiting(size: number) {
    while (this.waitingRoots.length && this.waitingRoots[0].size === size) {
      const root = this.waitingRoots.shift()!;
      root.rebuilt = this.map.root().toString('hex');
      root.held = root.rebuilt === root.logged;
      delete root.why;
    }
  }

  private addNumbered(n: number, seq: number) {
    const id = this.ids[n];
    if (id >= 0) this.map.addTo(id, seq);
    else {
      this.map.add(this.numbered.subarray(32 * n, 32 * n + 32), seq);
      this.ids[n] = this.map.lastId;
    }
  }

  // Takes the keys of the entries below `end` into the map, comparing each waiting root on the way as the map reaches its size.
  private takeUpTo(end: number) {
    const keys = this.waitingKeys;
    const seqs = this.waitingSeqs;
    let i = this.head;
    for (;;) {
      const stop = this.waitingRoots.length && this.waitingRoots[0].size <= end ? this.waitingRoots[0].size : end;
      for (; i < seqs.length && seqs[i] < stop; i++) {
        const key = keys[i];
        if (typeof key === 'string') this.map.addKey(key, seqs[i]);
        else this.addNumbered(key, seqs[i]);
      }
      if (stop === end) break;
      this.compareWaiting(stop);
    }
    this.compareWaiting(end);
    this.head = i;
    this.taken = end;
    // Taken keys are dropped now and then, not one by one (each drop moves the whole array).
    if (this.head > 4 * REBUILD_WINDOW) {
      this.waitingKeys = keys.slice(this.head);
      this.waitingSeqs = seqs.slice(this.head);
      this.head = 0;
    }
  }
}
