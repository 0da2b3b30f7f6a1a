// The LevelDB (classic-level) implementation of Store: one sublevel per Space, per-key locks,
// and group commit: batches of transactions that finish while a sync write is in flight are
// merged into the next single sync write, so concurrent durable commits share one fsync.
//
// Values are JSON text, serialized once when a transaction writes them (that text is both
// the private copy the transaction keeps and what goes to disk). This process is the only
// writer of its folder (LevelDB locks it), so a read cache of that text, updated in the same
// step that commits a batch, never serves a stale value to a reader holding the key's lock.
//
// A failed write closes the store to writes (health.ts): LevelDB's log writer cannot be trusted
// after one. A write that fails half-way (ENOSPC) leaves part of its record in the log while the
// writer counts it whole, so every later record lands off LevelDB's 32 KiB block grid, is
// acknowledged, and is dropped at the next open as a checksum mismatch (ARCHITECTURE 2, "When
// the disk fails"). So nothing more is written until a probe has shown the disk takes writes
// again and the database was closed and opened afresh (a new log, aligned, and no kept
// background error); reads go on meanwhile, and wait only while it reopens.
import type { AbstractSublevel } from 'abstract-level';
import { Level } from 'level';
import { constants, existsSync, mkdirSync } from 'node:fs';
import { access, open as openFile, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BlobStore } from './blobs/store.js';
import { StorageHealth } from './health.js';
import { KeyLocks } from './locks.js';
import { space, type Blobs, type ExclusiveStore, type Range, type Space, type TransactOptions, type Tx } from './types.js';

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
 * What LevelDB dropped of its write-ahead log while opening: records it found broken (a
 * checksum mismatch, a bad length) with records after them. Never a torn record at the end (a
 * crash mid-write; LevelDB reads that as the end of the log): only a log written on after a
 * failed write, whose later records were acknowledged and are now gone.
 */
export interface WalIncident {
  /** When the store was opened and LevelDB reported it (epoch ms). */
  at: number;
  /** The log file, its bytes dropped, and LevelDB's reason. */
  file: string;
  bytes: number;
  reason: string;
}

/** Every WAL incident a store of this folder ever found at an open (`akas log check` reports them). */
export const StoreIncidents = space<WalIncident>('store-incidents');

/** LevelDB's info log of the last open: the lines in which recovery dropped bytes of a log. */
export function walDrops(infoLog: string, at: number): WalIncident[] {
  const found: WalIncident[] = [];
  for (const m of infoLog.matchAll(/(\S+\.log): dropping (\d+) bytes; (.*)$/gm)) {
    found.push({ at, file: m[1].slice(m[1].lastIndexOf('/') + 1), bytes: Number(m[2]), reason: m[3].trim() });
  }
  return found;
}

/** The file naming the process that holds the folder (beside LevelDB's LOCK). */
const PID_FILE = 'akas.pid';

/** A data folder another process holds (LevelDB admits one process per folder). */
export class StoreInUseError extends Error {
  constructor(
    readonly location: string,
    readonly pid?: number,
  ) {
    super(`the data folder ${location} is in use by another akas process${pid ? ` (pid ${pid})` : ''}: stop it, or give this one another --data folder`);
    this.name = 'StoreInUseError';
  }
}

/** Why a LevelDB folder did not open: in use by another process, or the error LevelDB gave (its cause). */
async function openError(location: string, e: unknown): Promise<unknown> {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'LEVEL_LOCKED' || /\bLOCK\b.*(already held|temporarily unavailable)/i.test(cause?.message ?? '')) {
    const pid = Number((await readFile(join(location, PID_FILE), 'utf8').catch(() => '')).trim());
    return new StoreInUseError(location, Number.isInteger(pid) && pid > 0 && pid !== process.pid ? pid : undefined);
  }
  return cause instanceof Error ? cause : e;
}

/** The key a probe deletes (a durable write that leaves nothing behind, outside every space). */
const PROBE_KEY = '~akas-probe';
const MiB = 1024 * 1024;

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

export class LevelStore implements ExclusiveStore {
  /** LevelDB locks its folder: this process holds the store alone. */
  readonly shared = false as const;
  private db: Level<string, string>;
  private readonly subs = new Map<string, Sub>();
  private readonly locks = new KeyLocks();
  private cache: ReadCache;
  private queue: Pending[] = [];
  private flushing = false;
  private closed = false;
  /** Batches written so far (see get). */
  private commits = 0;
  private readonly watchers = new Map<string, Set<(key: string) => void>>();
  /** Whether writes are accepted (a failed write closes the store to them until a probe succeeds). */
  readonly health: StorageHealth;
  /** Set while the database is closed and opened again after a failure: reads wait for it. */
  private reopening: Promise<void> | null = null;
  /** Bumped at each reopen: an iteration that broke on it resumes where it was. */
  private epoch = 0;
  /** Keys of batches whose write failed: they may or may not be on disk; announced after the reopen. */
  private readonly uncertain = new Set<string>();
  /** What LevelDB dropped of its log when this store opened (also kept in StoreIncidents). */
  incidents: WalIncident[] = [];
  /** The blob store beside this one, opened at the first blobs(). */
  private blobStore?: Promise<Blobs>;

  constructor(
    readonly location: string,
    private readonly cacheEntries = 20_000,
    private readonly cacheChars = 32 * 1024 * 1024,
    options: { createIfMissing?: boolean } = {},
  ) {
    if (options.createIfMissing !== false) mkdirSync(location, { recursive: true, mode: 0o700 });
    this.db = this.makeDb(options.createIfMissing !== false);
    this.cache = new ReadCache(cacheEntries, cacheChars);
    this.health = new StorageHealth(() => this.probe());
  }

  private makeDb(createIfMissing = true) {
    return new Level<string, string>(`${this.location}/level`, { valueEncoding: 'utf8', createIfMissing });
  }

  async open() {
    try {
      // LevelDB writes its folder even to read it (its lock, its log): a folder it may not
      // write is said as such (a read-only file system reads as "no such file" in its mkdir).
      if (existsSync(this.location)) await access(this.location, constants.W_OK);
      await this.db.open();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).syscall === 'access') throw e;
      throw await openError(this.location, e);
    }
    // Who holds the folder (LevelDB's LOCK says only that someone does): a second start names it.
    await writeFile(join(this.location, PID_FILE), `${process.pid}\n`).catch(() => undefined);
    await this.noteIncidents();
    return this;
  }

  /**
   * Reads LevelDB's info log of the open just done (LevelDB starts a new one at every open) and
   * keeps what recovery dropped in StoreIncidents, durably, so the audit reports it whenever it
   * runs: acknowledged writes may have been lost there.
   */
  private async noteIncidents() {
    const text = await readFile(join(this.location, 'level', 'LOG'), 'utf8').catch(() => '');
    const found = walDrops(text, Date.now());
    this.incidents = found;
    if (found.length === 0) return;
    await this.transact(['store-incidents'], async (tx) => {
      for (const [i, incident] of found.entries()) tx.put(StoreIncidents, `${new Date(incident.at).toISOString()}-${i}`, incident);
    });
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
      const json = await this.read(() => this.sub(space).get(key));
      return json === undefined ? undefined : (JSON.parse(json) as T);
    }
    const id = cacheId(space, key);
    let json = this.cache.get(id);
    if (json === undefined) {
      const before = this.commits;
      json = (await this.read(() => this.sub(space).get(key))) ?? null;
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
    const json = await this.read(async () => {
      const sub = this.sub(space);
      // A sublevel finishes opening just after it is first made; getSync needs it open.
      if (sub.status !== 'open') await sub.open();
      return sub.getSync(key);
    });
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  /**
   * A read of the database: waits while it is being reopened, and runs again once if a reopen
   * began under it. A database that could not be reopened answers the store's 503.
   */
  private async read<R>(run: () => Promise<R>): Promise<R> {
    for (let attempt = 0; ; attempt++) {
      if (this.reopening) await this.reopening;
      const epoch = this.epoch;
      try {
        return await run();
      } catch (e) {
        if (attempt === 0 && (this.reopening || this.epoch !== epoch)) continue;
        if (this.health.failed && this.db.status !== 'open') throw this.health.error();
        throw e;
      }
    }
  }

  async list<T>(space: Space<T>, range: Range = {}): Promise<Array<[string, T]>> {
    const entries = await this.read(() =>
      this.sub(space)
        .iterator({ ...range, limit: range.limit ?? -1 })
        .all(),
    );
    return entries.map(([k, v]) => [k, JSON.parse(v) as T]);
  }

  async *iterate<T>(space: Space<T>, range: Range = {}): AsyncIterable<[string, T]> {
    // A reopen (after a storage failure) closes the iterator under us: go on past the last key seen.
    let last: string | undefined;
    let left = range.limit !== undefined && range.limit >= 0 ? range.limit : Infinity;
    for (;;) {
      if (this.reopening) await this.reopening;
      const epoch = this.epoch;
      const from: Range = { ...range };
      if (last !== undefined) {
        // Past the last key seen (no undefined bound: the encodings would take it for a key).
        if (range.reverse) {
          delete from.lte;
          from.lt = last;
        } else {
          delete from.gte;
          from.gt = last;
        }
      }
      const it = this.sub(space).iterator({ ...from, limit: left === Infinity ? -1 : left });
      try {
        for await (const [k, v] of it) {
          last = k;
          left--;
          yield [k, JSON.parse(v) as T];
        }
        return;
      } catch (e) {
        if (this.epoch === epoch && !this.reopening) {
          if (this.health.failed && this.db.status !== 'open') throw this.health.error();
          throw e;
        }
      }
    }
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
    // Closed to writes after a failure: nothing is queued, let alone acknowledged.
    if (this.health.failed) return Promise.reject(this.health.error());
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
      // A write failed since these were queued: none of them may reach the log now.
      if (this.health.failed) {
        const refused = this.health.error();
        for (const p of group) p.reject(refused);
        continue;
      }
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
        // Any failure of a write of the open database is the storage's (LevelDB reports a full
        // disk, a read-only folder, an I/O error, a background error it keeps, as IO errors):
        // closed to writes from now on. The batch may or may not have reached the disk.
        const failure = this.closed || (e as { code?: string }).code === 'LEVEL_DATABASE_NOT_OPEN' ? e : this.health.fail(e, 'store');
        if (failure !== e) for (const p of group) for (const [id] of p.cached) this.uncertain.add(id);
        for (const p of group) p.reject(failure);
      }
    }
    this.flushing = false;
  }

  /**
   * The probe after a failure (StorageHealth runs it every second): the file system takes a
   * write as big as what reopening the database writes (its logs become a table), then the
   * database is closed and opened afresh, then one durable write goes through LevelDB itself.
   * Throws while any step fails; the store accepts writes again when it returns.
   */
  private async probe() {
    if (this.closed) throw new Error('store is closed');
    let need = MiB;
    const dir = join(this.location, 'level');
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (/\.log$|^MANIFEST-/.test(name)) need += (await stat(join(dir, name)).catch(() => ({ size: 0 }))).size;
    }
    const path = join(this.location, '.akas-probe');
    const fh = await openFile(path, 'w', 0o600);
    try {
      const chunk = Buffer.alloc(Math.min(need, MiB));
      for (let written = 0; written < need; written += chunk.length) await fh.write(chunk);
      await fh.sync();
    } finally {
      await fh.close().catch(() => undefined);
      await unlink(path).catch(() => undefined);
    }
    await this.reopen();
    await this.db.del(PROBE_KEY, { sync: true });
  }

  /** Closes and opens the database again (reads wait meanwhile); announces what the failed batches wrote. */
  private async reopen() {
    let done!: () => void;
    this.reopening = new Promise<void>((r) => (done = r));
    try {
      while (this.flushing) await new Promise((r) => setTimeout(r, 5));
      await this.db.close().catch(() => undefined);
      this.subs.clear();
      this.epoch++;
      this.db = this.makeDb();
      await this.db.open();
      // The failed batches may have landed whole: nothing cached before may be served now.
      this.cache = new ReadCache(this.cacheEntries, this.cacheChars);
      this.commits++;
    } finally {
      this.reopening = null;
      done();
    }
    await this.noteIncidentsAfterReopen();
    const ids = [...this.uncertain];
    this.uncertain.clear();
    if (this.watchers.size) this.notifyIds(ids);
  }

  // The incidents of a reopen are kept like those of a start (a write here would be refused:
  // the store is still closed to writes, so they go straight to the database).
  private async noteIncidentsAfterReopen() {
    const text = await readFile(join(this.location, 'level', 'LOG'), 'utf8').catch(() => '');
    const found = walDrops(text, Date.now());
    if (found.length === 0) return;
    this.incidents.push(...found);
    const sub = this.sub(StoreIncidents);
    await this.db.batch(
      found.map((incident, i) => ({ type: 'put' as const, key: sub.prefix + `${new Date(incident.at).toISOString()}-r${i}`, value: JSON.stringify(incident) })),
      { sync: true },
    );
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

  private notify(group: Pending[]) {
    for (const p of group) this.notifyIds(p.cached.map(([id]) => id));
  }

  // A listener that throws must not fail the writers whose batch already landed.
  private notifyIds(ids: string[]) {
    for (const id of ids) {
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

  /**
   * The blobs beside this store: small ones inline in it, the others files in location/blobs
   * (its temp folder is cleaned once, at the first call after start, and never under a running
   * upload). An open that failed is tried again at the next call.
   */
  blobs(): Promise<Blobs> {
    if (!this.blobStore) {
      const opening = BlobStore.open(this.location, { store: this });
      this.blobStore = opening;
      opening.catch(() => {
        if (this.blobStore === opening) this.blobStore = undefined;
      });
    }
    return this.blobStore;
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    this.health.close();
    while (this.flushing || this.queue.length || this.reopening) await new Promise((r) => setTimeout(r, 5));
    await this.db.close();
    const pidFile = join(this.location, PID_FILE);
    if ((await readFile(pidFile, 'utf8').catch(() => '')).trim() === String(process.pid)) await unlink(pidFile).catch(() => undefined);
  }
}

/**
 * Opens (creating if needed) the LevelDB store in a data folder. createIfMissing false: a folder
 * that holds no store is refused (an audit must not make a node where there was none).
 */
export async function openLevelStore(dataDir: string, options: { createIfMissing?: boolean } = {}): Promise<LevelStore> {
  return new LevelStore(dataDir, undefined, undefined, options).open();
}
