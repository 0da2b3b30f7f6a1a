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
 * still compared with the map of exactly its size. A root further behind its entry is not
 * compared (said so).
 */
export const REBUILD_WINDOW = 16_384;

/** Indexes entries in log order and compares each logged root. */
export class IndexRebuild {
  private readonly map = new LookupMap();
  /**
   * The keys of the entries read and not yet in the map (at most REBUILD_WINDOW entries), in
   * order from `head`: each key beside its entry's index. An entry's keys are derived as it is
   * read, so only its keys are held, not the entry.
   */
  private waitingKeys: string[] = [];
  private waitingSeqs: number[] = [];
  private head = 0;
  /** Entries read: 0 to read-1. */
  private read = 0;
  /** Entries in the map: 0 to taken-1. */
  private taken = 0;
  readonly roots: RootCompared[] = [];

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

  /** The map's root over every entry added (hex). */
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
    this.takeUpTo(size);
    const rebuilt = this.map.root().toString('hex');
    this.roots.push({ seq: e.seq, size, logged, rebuilt, held: rebuilt === logged });
  }

  // Takes the keys of the entries below `end` into the map.
  private takeUpTo(end: number) {
    const keys = this.waitingKeys;
    const seqs = this.waitingSeqs;
    let i = this.head;
    for (; i < seqs.length && seqs[i] < end; i++) this.map.addKey(keys[i], seqs[i]);
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
