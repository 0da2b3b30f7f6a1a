// The LevelDB (classic-level) implementation of Store: one sublevel per Space, per-key locks,
// and group commit: batches of transactions that finish while a sync write is in flight are
// merged into the next single sync write, so concurrent durable commits share one fsync.
import { Level } from 'level';
import { mkdirSync } from 'node:fs';
import { KeyLocks } from './locks.js';
import type { Range, Space, Store, TransactOptions, Tx } from './types.js';

import type { AbstractSublevel } from 'abstract-level';

type Sub = AbstractSublevel<Level<string, unknown>, string | Buffer | Uint8Array, string, unknown>;
type Op = { type: 'put'; sublevel: Sub; key: string; value: unknown } | { type: 'del'; sublevel: Sub; key: string };

interface Pending {
  ops: Op[];
  durable: boolean;
  resolve: () => void;
  reject: (e: unknown) => void;
}

const DELETED = Symbol('deleted');

class LevelTx implements Tx {
  readonly writes = new Map<string, { space: Space<unknown>; key: string; value: unknown }>();
  constructor(private readonly store: LevelStore) {}

  private id(space: Space<unknown>, key: string) {
    return `${space.name}\u0000${key}`;
  }
  async get<T>(space: Space<T>, key: string): Promise<T | undefined> {
    const own = this.writes.get(this.id(space, key));
    if (own) return own.value === DELETED ? undefined : structuredClone(own.value as T);
    return this.store.get(space, key);
  }
  put<T>(space: Space<T>, key: string, value: T): void {
    if (value === undefined) throw new TypeError('cannot store undefined');
    this.writes.set(this.id(space, key), { space, key, value: structuredClone(value) });
  }
  del<T>(space: Space<T>, key: string): void {
    this.writes.set(this.id(space, key), { space, key, value: DELETED });
  }
  list<T>(space: Space<T>, range?: Range) {
    return this.store.list(space, range);
  }
}

export class LevelStore implements Store {
  private readonly db: Level<string, unknown>;
  private readonly subs = new Map<string, Sub>();
  private readonly locks = new KeyLocks();
  private queue: Pending[] = [];
  private flushing = false;
  private closed = false;

  constructor(readonly location: string) {
    mkdirSync(location, { recursive: true, mode: 0o700 });
    this.db = new Level<string, unknown>(`${location}/level`, { valueEncoding: 'json' });
  }

  async open() {
    await this.db.open();
    return this;
  }

  private sub(space: Space<unknown>): Sub {
    let s = this.subs.get(space.name);
    if (!s) {
      s = this.db.sublevel<string, unknown>(space.name, { valueEncoding: 'json' }) as Sub;
      this.subs.set(space.name, s);
    }
    return s;
  }

  async get<T>(space: Space<T>, key: string): Promise<T | undefined> {
    return (await this.sub(space).get(key)) as T | undefined;
  }

  async list<T>(space: Space<T>, range: Range = {}): Promise<Array<[string, T]>> {
    return (await this.sub(space).iterator({ ...range, limit: range.limit ?? -1 }).all()) as Array<[string, T]>;
  }

  async *iterate<T>(space: Space<T>, range: Range = {}): AsyncIterable<[string, T]> {
    for await (const entry of this.sub(space).iterator({ ...range, limit: range.limit ?? -1 })) yield entry as [string, T];
  }

  async transact<R>(lockKeys: string[], fn: (tx: Tx) => Promise<R>, options: TransactOptions = {}): Promise<R> {
    if (this.closed) throw new Error('store is closed');
    const release = await this.locks.acquire(lockKeys);
    try {
      const tx = new LevelTx(this);
      const result = await fn(tx);
      if (tx.writes.size > 0) {
        const ops: Op[] = [];
        for (const w of tx.writes.values()) {
          const sublevel = this.sub(w.space);
          ops.push(w.value === DELETED ? { type: 'del', sublevel, key: w.key } : { type: 'put', sublevel, key: w.key, value: w.value });
        }
        await this.commit(ops, options.durable ?? true);
      }
      return result;
    } finally {
      release();
    }
  }

  private commit(ops: Op[], durable: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ops, durable, resolve, reject });
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
        await this.db.batch(ops as never, { sync });
        for (const p of group) p.resolve();
      } catch (e) {
        for (const p of group) p.reject(e);
      }
    }
    this.flushing = false;
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
