// The LevelDB (classic-level) implementation of Store: one sublevel per Space, per-key locks,
// and group commit: batches of transactions that finish while a sync write is in flight are
// merged into the next single sync write, so concurrent durable commits share one fsync.
//
// Values are JSON text, serialized once when a transaction writes them (that text is both
// the private copy the transaction keeps and what goes to disk). This process is the only
// writer of its folder (LevelDB locks it), so a read cache of that text, updated in the same
// step that commits a batch, never serves a stale value to a reader holding the key's lock.
import type { AbstractSublevel } from 'abstract-level';
import { Level } from 'level';
import { mkdirSync } from 'node:fs';
import { KeyLocks } from './locks.js';
import type { Range, Space, Store, TransactOptions, Tx } from './types.js';

type Sub = AbstractSublevel<Level<string, string>, string | Buffer | Uint8Array, string, string>;
// Batch operations go to the root database with each key already prefixed the way its
// sublevel prefixes it (the same bytes on disk as sublevel writes), in a chained batch.
type Op = { type: 'put'; key: string; value: string } | { type: 'del'; key: string };

interface Pending {
  ops: Op[];
  /**
   * The keys the batch wrote, to announce to watchers once it is on disk, each with the text
   * the read cache takes (null: deleted; undefined: a space the cache keeps nothing of).
   */
  cached: Array<[string, string | null | undefined]>;
  durable: boolean;
  resolve: () => void;
  reject: (e: unknown) => void;
}

const cacheId = (space: Space<unknown>, key: string) => `${space.name}\u0000${key}`;

/**
 * A bounded cache of committed JSON text by space and key; null remembers a missing key.
 * Two generations instead of a strict LRU: reads and writes go to the young map, and when it
 * is full it becomes the old one (the previous old one is dropped). A hit in the old map moves
 * the entry back. Every step is O(1): evicting one entry at a time from the front of a Map,
 * as a strict LRU does, makes V8 walk the holes deletions leave, which turned a 40,000-write
 * batch quadratic (bench/log.ts).
 */
class ReadCache {
  private young = new Map<string, string | null>();
  private old = new Map<string, string | null>();
  /** Characters of JSON text held by the young generation. */
  private youngChars = 0;
  /**
   * Bounded by entries and by the text they hold (records vary from a few bytes to kilobytes:
   * a count alone let 20,000 decided proposals keep over 100 MiB).
   */
  constructor(
    private readonly max: number,
    private readonly maxChars: number,
  ) {}
  get(id: string): string | null | undefined {
    const v = this.young.get(id);
    if (v !== undefined) return v;
    const o = this.old.get(id);
    if (o !== undefined) this.set(id, o);
    return o;
  }
  set(id: string, v: string | null) {
    this.young.set(id, v);
    this.youngChars += (v?.length ?? 0) + id.length;
    // The old generation may hold an outdated copy: a read must never find it after this write.
    this.old.delete(id);
    if (this.young.size >= this.max / 2 || this.youngChars >= this.maxChars / 2) {
      this.old = this.young;
      this.young = new Map();
      this.youngChars = 0;
    }
  }
}

class LevelTx implements Tx {
  readonly writes = new Map<string, { space: Space<unknown>; key: string; json: string | null }>();
  constructor(private readonly store: LevelStore) {}

  async get<T>(space: Space<T>, key: string): Promise<T | undefined> {
    const own = this.writes.get(cacheId(space, key));
    if (own) return own.json === null ? undefined : (JSON.parse(own.json) as T);
    return space.cached === false ? this.store.getNow(space, key) : this.store.get(space, key);
  }
  put<T>(space: Space<T>, key: string, value: T): void {
    if (value === undefined) throw new TypeError('cannot store undefined');
    this.writes.set(cacheId(space, key), { space, key, json: JSON.stringify(value) });
  }
  del<T>(space: Space<T>, key: string): void {
    this.writes.set(cacheId(space, key), { space, key, json: null });
  }
  list<T>(space: Space<T>, range?: Range) {
    return this.store.list(space, range);
  }
}

export class LevelStore implements Store {
  private readonly db: Level<string, string>;
  private readonly subs = new Map<string, Sub>();
  private readonly locks = new KeyLocks();
  private readonly cache: ReadCache;
  private queue: Pending[] = [];
  private flushing = false;
  private closed = false;
  /** Batches written so far (see get). */
  private commits = 0;
  private readonly watchers = new Map<string, Set<(key: string) => void>>();

  constructor(
    readonly location: string,
    cacheEntries = 20_000,
    cacheChars = 32 * 1024 * 1024,
  ) {
    mkdirSync(location, { recursive: true, mode: 0o700 });
    this.db = new Level<string, string>(`${location}/level`, { valueEncoding: 'utf8' });
    this.cache = new ReadCache(cacheEntries, cacheChars);
  }

  async open() {
    await this.db.open();
    return this;
  }

  private sub(space: Space<unknown>): Sub {
    let s = this.subs.get(space.name);
    if (!s) {
      s = this.db.sublevel<string, string>(space.name, { valueEncoding: 'utf8' }) as Sub;
      this.subs.set(space.name, s);
    }
    return s;
  }

  async get<T>(space: Space<T>, key: string): Promise<T | undefined> {
    if (space.cached === false) {
      const json = await this.sub(space).get(key);
      return json === undefined ? undefined : (JSON.parse(json) as T);
    }
    const id = cacheId(space, key);
    let json = this.cache.get(id);
    if (json === undefined) {
      const before = this.commits;
      json = (await this.sub(space).get(key)) ?? null;
      // Fill the cache only if no batch landed while we read: such a batch may have written
      // this key (and set, or since evicted, its newer text), and ours could be older.
      if (this.commits === before) this.cache.set(id, json);
    }
    return json === null ? undefined : (JSON.parse(json) as T);
  }

  /**
   * A read of an uncached space inside a transaction, with LevelDB's synchronous get. Such a
   * read is mostly a create-unless-present check (the values' owner caches what it reads, as
   * the content store does its verified blobs), and LevelDB answers a missing key from memory:
   * the memtables and each table's bloom filter. The thread-pool round trip of the
   * asynchronous get costs more than the lookup (bench/cas.ts, small uploads: 15 against 2 µs
   * one at a time, and with 32 transactions in flight it cut their rate by about a third).
   * Reads outside transactions, of values that may have to come from the disk, stay off the
   * event loop.
   */
  async getNow<T>(space: Space<T>, key: string): Promise<T | undefined> {
    const sub = this.sub(space);
    // A sublevel finishes opening just after it is first made; getSync needs it open.
    if (sub.status !== 'open') await sub.open();
    const json = sub.getSync(key);
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  async list<T>(space: Space<T>, range: Range = {}): Promise<Array<[string, T]>> {
    const entries = await this.sub(space).iterator({ ...range, limit: range.limit ?? -1 }).all();
    return entries.map(([k, v]) => [k, JSON.parse(v) as T]);
  }

  async *iterate<T>(space: Space<T>, range: Range = {}): AsyncIterable<[string, T]> {
    for await (const [k, v] of this.sub(space).iterator({ ...range, limit: range.limit ?? -1 })) yield [k, JSON.parse(v) as T];
  }

  async transact<R>(lockKeys: string[], fn: (tx: Tx) => Promise<R>, options: TransactOptions = {}): Promise<R> {
    if (this.closed) throw new Error('store is closed');
    const release = await this.locks.acquire(lockKeys);
    try {
      const tx = new LevelTx(this);
      const result = await fn(tx);
      if (tx.writes.size > 0) {
        const ops: Op[] = [];
        const cached: Pending['cached'] = [];
        for (const [id, w] of tx.writes) {
          const key = this.sub(w.space).prefix + w.key;
          ops.push(w.json === null ? { type: 'del', key } : { type: 'put', key, value: w.json });
          cached.push([id, w.space.cached === false ? undefined : w.json]);
        }
        await this.commit(ops, cached, options.durable ?? true);
      }
      return result;
    } finally {
      release();
    }
  }

  private commit(ops: Op[], cached: Pending['cached'], durable: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ops, cached, durable, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  // One writer at a time; everything queued while a write is in flight goes in the next one.
  private async flush() {
    this.flushing = true;
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      const ops = group.flatMap((p) => p.ops);
      const sync = group.some((p) => p.durable);
      try {
        // A chained batch hands each op to LevelDB's native WriteBatch as it is added: three to
        // four times faster per op than an array batch, whose per-op checks and copies
        // dominated large batches (bench/log.ts).
        const batch = this.db.batch();
        for (const op of ops) {
          if (op.type === 'put') batch.put(op.key, op.value);
          else batch.del(op.key);
        }
        await batch.write({ sync });
        this.commits++;
        for (const p of group) for (const [id, json] of p.cached) if (json !== undefined) this.cache.set(id, json);
        if (this.watchers.size) this.notify(group);
        for (const p of group) p.resolve();
      } catch (e) {
        for (const p of group) p.reject(e);
      }
    }
    this.flushing = false;
  }

  /**
   * The names of the spaces that hold at least one entry, in order (a copy to another store
   * walks them). One seek per space: each sublevel's keys are `!name!key`, so the first key
   * past `!name"` belongs to the next space.
   */
  async spaces(): Promise<string[]> {
    const names: string[] = [];
    let after = '!';
    for (;;) {
      const [key] = await this.db.keys({ gt: after, limit: 1 }).all();
      if (key === undefined || !key.startsWith('!')) return names;
      const name = key.slice(1, key.indexOf('!', 1));
      names.push(name);
      after = `!${name}"`;
    }
  }

  watch(space: Space<unknown>, listener: (key: string) => void): () => void {
    let set = this.watchers.get(space.name);
    if (!set) this.watchers.set(space.name, (set = new Set()));
    set.add(listener);
    return () => void set.delete(listener);
  }

  // A listener that throws must not fail the writers whose batch already landed.
  private notify(group: Pending[]) {
    for (const p of group) {
      for (const [id] of p.cached) {
        const at = id.indexOf('\u0000');
        const set = this.watchers.get(id.slice(0, at));
        if (!set) continue;
        for (const listener of set) {
          try {
            listener(id.slice(at + 1));
          } catch {
            // ignored on purpose
          }
        }
      }
    }
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing || this.queue.length) await new Promise((r) => setTimeout(r, 5));
    await this.db.close();
  }
}

/** Opens (creating if needed) the LevelDB store in a data folder. */
export async function openLevelStore(dataDir: string): Promise<LevelStore> {
  return new LevelStore(dataDir).open();
}
