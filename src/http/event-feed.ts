// The log entries the event streams send (PROTOCOL 9.7), read and serialised once for all of
// them. Every append wakes every open stream, and streams that are caught up all ask for the
// same next entry: one store read, and one JSON text per entry, serve them all. Before this,
// each of 500 open streams read the store and hashed and serialised each entry for itself, and
// an append took about 100 ms at that many streams.
import type { LogEntry } from '../core/index.js';
import { LogEntries, seqKey } from '../domain/log/index.js';
import type { Store } from '../store/index.js';

/** One entry as a stream sends it: the entry, and its SSE event text. */
export interface FedEntry {
  entry: LogEntry;
  event: string;
}

/** Entries a read takes at once (the streams' own batch before). */
const BATCH = 200;
/** Recent entries kept in memory for streams a little behind the head. */
const RECENT = 2000;

export class EventFeed {
  private readonly recent = new Map<number, FedEntry>();
  /** Reads in flight, by the seq they start from and the wake-up they follow. */
  private readonly reads = new Map<string, Promise<FedEntry[]>>();
  private readonly streams = new Set<() => void>();
  private unwatch?: () => void;
  /**
   * Bumped at each change of the log, before the streams are woken: a stream woken by an append
   * never joins a read that began before it (which might not see the entry).
   */
  private version = 0;

  constructor(
    private readonly store: Store,
    private readonly toEvent: (e: LogEntry) => string,
  ) {}

  /** Calls wake at each change of the log (one store watcher for every stream); answers the unsubscribe. */
  subscribe(wake: () => void): () => void {
    this.streams.add(wake);
    if (!this.unwatch) {
      const changed = () => {
        this.version += 1;
        for (const w of [...this.streams]) w();
      };
      this.unwatch = this.store.watch(LogEntries, changed, changed);
    }
    return () => {
      this.streams.delete(wake);
      if (this.streams.size === 0 && this.unwatch) {
        this.unwatch();
        this.unwatch = undefined;
      }
    };
  }

  /**
   * Entries from seq `from` on, in seq order, at most BATCH (fewer, or none, when the log holds
   * no more yet; the caller asks again from where it got to). Served from memory while they are
   * there; else one store read, shared by every caller asking from the same seq meanwhile.
   */
  async from(from: number): Promise<FedEntry[]> {
    const held: FedEntry[] = [];
    for (let seq = from; held.length < BATCH; seq++) {
      const e = this.recent.get(seq);
      if (!e) break;
      held.push(e);
    }
    if (held.length > 0) return held;
    const key = `${from}@${this.version}`;
    let read = this.reads.get(key);
    if (!read) {
      read = this.store
        .list(LogEntries, { gte: seqKey(from), limit: BATCH })
        .then((rows) => rows.map(([, e]) => this.keep(e)))
        .finally(() => this.reads.delete(key));
      this.reads.set(key, read);
    }
    return read;
  }

  // Entries are immutable once in the log: what was read once is what every reader would read.
  private keep(entry: LogEntry): FedEntry {
    const known = this.recent.get(entry.seq);
    if (known) return known;
    const fed = { entry, event: this.toEvent(entry) };
    this.recent.set(entry.seq, fed);
    if (this.recent.size > RECENT) this.recent.delete(this.recent.keys().next().value as number);
    return fed;
  }
}
