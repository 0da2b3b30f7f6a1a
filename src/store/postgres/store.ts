// The PostgreSQL implementation of Store (node-postgres), for several `akas serve` processes
// sharing one database. It passes the same contract as LevelDB (test/store/contract.ts).
//
// - transact(lockKeys, fn) is one database transaction (READ COMMITTED) that first takes a
//   transaction-scoped advisory lock per lock key, in sorted order, so it serializes with
//   every writer of those keys in every process and never deadlocks. Inside the process the
//   same keys are taken first in memory (KeyLocks): a process sends at most one waiter per
//   key to the database, and a transaction holds database locks only once it holds all of
//   its own. Reads inside the transaction go to the database on its connection; writes are
//   buffered and sent in one statement with the pg_notify of their keys, then COMMIT.
//   Durable transactions commit with synchronous_commit on (PostgreSQL's own group commit
//   shares the WAL flush); non-durable ones with it off. Nothing resolves before COMMIT did.
// - Reads outside transactions use a second pool, so a transaction waiting for a lock can
//   never starve a read its holder needs.
// - watch: the keys a batch wrote are announced locally right after COMMIT, and to other
//   processes through NOTIFY (watch.ts, with the staleness bound).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { KeyLocks } from '../locks.js';
import type { Blobs, Range, SharedBuckets, Space, Store, TransactOptions, Tx } from '../types.js';
import { PgBlobs } from './blobs.js';
import { pgTarget, poolConfig, sortedLockIds, type PgTarget } from './connect.js';
import { assertCurrent, migrate, type MigrationReport } from './schema.js';
import { notifyPayloads, WatchChannel } from './watch.js';

const { Pool } = pg;

/** Rows an iteration reads per query. */
const PAGE = 512;

export interface PgStoreOptions {
  /** Run the missing migrations at open (default true); false refuses a schema that is behind. */
  migrate?: boolean;
  /** Announce committed keys to other processes (default true; a bulk copy into an idle database turns it off). */
  notify?: boolean;
}

interface Write {
  space: Space<unknown>;
  key: string;
  json: string | null;
}

type Watcher = { listener: (key: string) => void; lost?: () => void };

const writeId = (space: Space<unknown>, key: string) => `${space.name}\u0000${key}`;
const keyBytes = (key: string) => Buffer.from(key, 'utf8');

class PgTx implements Tx {
  readonly writes = new Map<string, Write>();
  /** The connection runs one query at a time: concurrent reads of fn queue here. */
  private queue: Promise<unknown> = Promise.resolve();
  constructor(
    private readonly store: PgStore,
    private readonly client: pg.PoolClient,
  ) {}

  private serial<R>(run: () => Promise<R>): Promise<R> {
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Waits for the reads fn started (a function that throws may leave some running). */
  settled(): Promise<unknown> {
    return this.queue;
  }

  async get<T>(space: Space<T>, key: string): Promise<T | undefined> {
    const own = this.writes.get(writeId(space, key));
    if (own) return own.json === null ? undefined : (JSON.parse(own.json) as T);
    return this.serial(() => this.store.getOn(this.client, space, key));
  }
  put<T>(space: Space<T>, key: string, value: T): void {
    if (value === undefined) throw new TypeError('cannot store undefined');
    this.writes.set(writeId(space, key), { space, key, json: JSON.stringify(value) });
  }
  del<T>(space: Space<T>, key: string): void {
    this.writes.set(writeId(space, key), { space, key, json: null });
  }
  list<T>(space: Space<T>, range?: Range) {
    return this.serial(() => this.store.listOn(this.client, space, range));
  }
}

/** The SQL of a range query over one space (parameters: $1 space, then the bounds in order). */
function rangeQuery(s: string, range: Range, after?: Buffer): { text: string; values: unknown[]; name: string } {
  const values: unknown[] = [];
  const cond: string[] = [];
  let shape = '';
  const bound = (op: string, v: Buffer, tag: string) => {
    values.push(v);
    cond.push(`key ${op} $${values.length + 1}`);
    shape += tag;
  };
  const reverse = Boolean(range.reverse);
  if (range.gt !== undefined) bound('>', keyBytes(range.gt), 'a');
  if (range.gte !== undefined) bound('>=', keyBytes(range.gte), 'b');
  if (range.lt !== undefined) bound('<', keyBytes(range.lt), 'c');
  if (range.lte !== undefined) bound('<=', keyBytes(range.lte), 'd');
  if (after) bound(reverse ? '<' : '>', after, 'e');
  let text = `SELECT key, value FROM ${s}.akas_kv WHERE space = $1${cond.map((c) => ` AND ${c}`).join('')} ORDER BY key${reverse ? ' DESC' : ''}`;
  const limit = range.limit !== undefined && range.limit >= 0 ? range.limit : undefined;
  if (limit !== undefined) {
    values.push(limit);
    text += ` LIMIT $${values.length + 1}`;
    shape += 'l';
  }
  return { text, values, name: `akas-list-${shape}${reverse ? 'r' : ''}` };
}

export class PgStore implements Store {
  readonly location: string;
  readonly shared = true;
  readonly schema: string;
  readonly buckets: SharedBuckets;
  /** Connections for transactions. */
  private readonly writers: pg.Pool;
  /** Connections for reads outside transactions, token buckets and blob chunks (synchronous_commit off). */
  private readonly readers: pg.Pool;
  private readonly locks = new KeyLocks();
  private readonly watchers = new Map<string, Set<Watcher>>();
  /** This store instance, in its notifications (its own are announced locally instead). */
  private readonly origin = randomBytes(8).toString('hex');
  private readonly channel: WatchChannel;
  private readonly s: string;
  private active = 0;
  private closed = false;
  private idle: (() => void) | null = null;
  private blobStore?: Promise<PgBlobs>;

  private constructor(
    readonly target: PgTarget,
    private readonly options: PgStoreOptions,
  ) {
    this.location = target.display;
    this.schema = target.schema;
    this.s = target.qschema;
    this.writers = new Pool(poolConfig(target, target.pool, 'akas'));
    this.readers = new Pool(poolConfig(target, Math.max(4, Math.ceil(target.pool / 2)), 'akas-read', { options: '-c synchronous_commit=off' }));
    // An idle connection the server dropped is replaced at the next checkout; not a crash.
    this.writers.on('error', () => undefined);
    this.readers.on('error', () => undefined);
    this.channel = new WatchChannel(target, this.origin, {
      keys: (entries) => {
        for (const [space, key] of entries) this.dispatch(space, key);
      },
      lost: (spaces) => this.lost(spaces),
    });
    const bucketSql = `INSERT INTO ${this.s}.akas_buckets AS b (key, tokens, at, taken)
        VALUES ($1, CASE WHEN $5 AND $2 >= 1 THEN $2 - 1 ELSE $2 END, $4, $5 AND $2 >= 1)
      ON CONFLICT (key) DO UPDATE SET
        taken = $5 AND least($2, b.tokens + greatest(0, $4 - b.at) / 1000.0 * $3) >= 1,
        tokens = least($2, b.tokens + greatest(0, $4 - b.at) / 1000.0 * $3)
          - CASE WHEN $5 AND least($2, b.tokens + greatest(0, $4 - b.at) / 1000.0 * $3) >= 1 THEN 1 ELSE 0 END,
        at = greatest(b.at, $4)
      RETURNING tokens, taken`;
    this.buckets = {
      draw: async (key, burst, refillPerSecond, now, take) => {
        const r = await this.readers.query<{ tokens: number; taken: boolean }>({
          name: 'akas-bucket',
          text: bucketSql,
          values: [key, burst, refillPerSecond, Math.round(now), take],
        });
        return { tokens: r.rows[0].tokens, taken: r.rows[0].taken };
      },
    };
  }

  /** Opens a store on a postgres:// URL: migrates (unless told not to), then listens. */
  static async open(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
    const store = new PgStore(pgTarget(url), options);
    try {
      const client = await store.writers.connect();
      try {
        if (options.migrate === false) await assertCurrent(client, store.schema);
        else await migrate(client, store.schema);
      } finally {
        client.release();
      }
      await store.channel.start();
    } catch (e) {
      await store.end();
      throw e;
    }
    return store;
  }

  async getOn<T>(client: pg.ClientBase | pg.Pool, space: Space<T>, key: string): Promise<T | undefined> {
    const r = await client.query<{ value: string }>({
      name: 'akas-get',
      text: `SELECT value FROM ${this.s}.akas_kv WHERE space = $1 AND key = $2`,
      values: [space.name, keyBytes(key)],
    });
    return r.rows.length ? (JSON.parse(r.rows[0].value) as T) : undefined;
  }

  async listOn<T>(client: pg.ClientBase | pg.Pool, space: Space<T>, range: Range = {}): Promise<Array<[string, T]>> {
    const q = rangeQuery(this.s, range);
    const r = await client.query<{ key: Buffer; value: string }>({ name: q.name, text: q.text, values: [space.name, ...q.values] });
    return r.rows.map((row) => [row.key.toString('utf8'), JSON.parse(row.value) as T]);
  }

  get<T>(space: Space<T>, key: string): Promise<T | undefined> {
    return this.getOn(this.readers, space, key);
  }

  list<T>(space: Space<T>, range: Range = {}): Promise<Array<[string, T]>> {
    return this.listOn(this.readers, space, range);
  }

  /** Pages through the range (keyset pagination): no connection is held between pages. */
  async *iterate<T>(space: Space<T>, range: Range = {}): AsyncIterable<[string, T]> {
    let left = range.limit !== undefined && range.limit >= 0 ? range.limit : Infinity;
    let after: Buffer | undefined;
    while (left > 0) {
      const want = Math.min(PAGE, left);
      const q = rangeQuery(this.s, { ...range, limit: want }, after);
      const r = await this.readers.query<{ key: Buffer; value: string }>({ name: q.name, text: q.text, values: [space.name, ...q.values] });
      for (const row of r.rows) yield [row.key.toString('utf8'), JSON.parse(row.value) as T];
      if (r.rows.length < want) return;
      left -= r.rows.length;
      after = r.rows[r.rows.length - 1].key;
    }
  }

  async transact<R>(lockKeys: string[], fn: (tx: Tx) => Promise<R>, options: TransactOptions = {}): Promise<R> {
    if (this.closed) throw new Error('store is closed');
    const release = await this.locks.acquire(lockKeys);
    this.active++;
    let client: pg.PoolClient | undefined;
    let broken: Error | undefined;
    try {
      client = await this.writers.connect();
      // One round trip: BEGIN, the commit mode, and the advisory locks in sorted order (the
      // ids are integers we computed, safe as literals).
      let begin = 'BEGIN';
      if (options.durable === false) begin += '; SET LOCAL synchronous_commit = off';
      for (const id of sortedLockIds(this.schema, lockKeys)) begin += `; SELECT pg_advisory_xact_lock(${id})`;
      await client.query(begin);
      const tx = new PgTx(this, client);
      let result: R;
      try {
        result = await fn(tx);
        await tx.settled();
        if (tx.writes.size > 0) await this.write(client, tx.writes);
        await client.query('COMMIT');
      } catch (e) {
        await tx.settled();
        await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
        throw e;
      }
      if (tx.writes.size > 0 && this.watchers.size > 0) for (const w of tx.writes.values()) this.dispatch(w.space.name, w.key);
      return result;
    } catch (e) {
      // A connection that failed mid-transaction is not given back to the pool.
      if (!broken && isConnectionError(e)) broken = e as Error;
      throw e;
    } finally {
      client?.release(broken);
      release();
      if (--this.active === 0 && this.idle) this.idle();
    }
  }

  // The batch in one statement: upserts, deletes, and the notifications of its keys (sent
  // by PostgreSQL only if the transaction commits).
  private async write(client: pg.PoolClient, writes: Map<string, Write>) {
    const putSpaces: string[] = [];
    const putKeys: Buffer[] = [];
    const putValues: string[] = [];
    const delSpaces: string[] = [];
    const delKeys: Buffer[] = [];
    const announced: Array<[string, string]> = [];
    for (const w of writes.values()) {
      if (w.json === null) {
        delSpaces.push(w.space.name);
        delKeys.push(keyBytes(w.key));
      } else {
        putSpaces.push(w.space.name);
        putKeys.push(keyBytes(w.key));
        putValues.push(w.json);
      }
      announced.push([w.space.name, w.key]);
    }
    const payloads = this.options.notify === false ? [] : notifyPayloads(this.origin, announced);
    await client.query({
      name: 'akas-write',
      text: `WITH put AS (
          INSERT INTO ${this.s}.akas_kv (space, key, value) SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[])
          ON CONFLICT (space, key) DO UPDATE SET value = excluded.value),
        del AS (
          DELETE FROM ${this.s}.akas_kv WHERE (space, key) IN (SELECT * FROM unnest($4::text[], $5::bytea[])))
        SELECT pg_notify($6, p) FROM unnest($7::text[]) AS p`,
      values: [putSpaces, putKeys, putValues, delSpaces, delKeys, this.target.channel, payloads],
    });
  }

  watch(space: Space<unknown>, listener: (key: string) => void, lost?: () => void): () => void {
    let set = this.watchers.get(space.name);
    if (!set) this.watchers.set(space.name, (set = new Set()));
    const w: Watcher = { listener, lost };
    set.add(w);
    return () => {
      set.delete(w);
      if (set.size === 0 && this.watchers.get(space.name) === set) this.watchers.delete(space.name);
    };
  }

  // A listener that throws must not fail the writer whose batch already committed.
  private dispatch(space: string, key: string) {
    const set = this.watchers.get(space);
    if (!set) return;
    for (const w of set) {
      try {
        w.listener(key);
      } catch {
        // ignored on purpose
      }
    }
  }

  private lost(spaces?: string[]) {
    const sets = spaces ? spaces.map((s) => this.watchers.get(s)).filter((s) => s !== undefined) : [...this.watchers.values()];
    for (const set of sets) {
      for (const w of set) {
        try {
          w.lost?.();
        } catch {
          // ignored on purpose
        }
      }
    }
  }

  /** The notification channel (tests read its state and terminate it). */
  get watchChannel(): WatchChannel {
    return this.channel;
  }

  blobs(): Promise<Blobs> {
    this.blobStore ??= PgBlobs.open(this.target, this.writers, this.readers);
    return this.blobStore;
  }

  /**
   * Runs one SQL statement on a connection of its own, outside any transaction, with `$schema`
   * in the text standing for this store's quoted schema (administration, tests, benchmarks).
   */
  async sql<R extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<R[]> {
    const r = await this.writers.query<R>(text.replaceAll('$schema', this.s), values);
    return r.rows;
  }

  /** Entries per space (counts for `akas store copy`). */
  async counts(): Promise<Map<string, number>> {
    const r = await this.readers.query<{ space: string; n: string }>(`SELECT space, count(*) AS n FROM ${this.s}.akas_kv GROUP BY space`);
    return new Map(r.rows.map((row) => [row.space, Number(row.n)]));
  }

  /** Whether the store holds no entry and no blob (a copy goes only into an empty one). */
  async isEmpty(): Promise<boolean> {
    const r = await this.readers.query<{ any: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.s}.akas_kv) OR EXISTS (SELECT 1 FROM ${this.s}.akas_blobs) AS any`,
    );
    return !r.rows[0].any;
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    if (this.active > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    await (await this.blobStore?.catch(() => undefined))?.close();
    await this.end();
  }

  private async end() {
    await this.channel.close();
    await Promise.all([this.writers.end().catch(() => undefined), this.readers.end().catch(() => undefined)]);
  }
}

/** Errors after which a connection's state is unknown (it must not go back to the pool). */
function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: string })?.code;
  if (typeof code === 'string' && /^(08|57P)/.test(code)) return true;
  return e instanceof Error && /Connection terminated|ECONNRESET|EPIPE|not queryable/i.test(e.message);
}

/** Opens (migrating unless told not to) the PostgreSQL store at a postgres:// URL. */
export function openPgStore(url: string, options?: PgStoreOptions): Promise<PgStore> {
  return PgStore.open(url, options);
}

/** Runs the missing migrations of the database at url, alone (`akas store migrate`). */
export async function migratePg(url: string): Promise<MigrationReport & { location: string }> {
  const target = pgTarget(url);
  const client = new pg.Client(poolConfig(target, 1, 'akas-migrate'));
  await client.connect();
  try {
    return { ...(await migrate(client, target.schema)), location: target.display };
  } finally {
    await client.end();
  }
}
