// The PostgreSQL implementation of Store (node-postgres), for several `akas serve` processes
// sharing one database. It passes the same contract as LevelDB (test/store/contract.ts).
//
// - transact(lockKeys, fn) is one database transaction (READ COMMITTED) that first takes a
//   transaction-scoped advisory lock per lock key, in sorted order, so it serializes with
//   every writer of those keys in every process and never deadlocks. Inside the process the
//   same keys are taken first in memory (KeyLocks): a process sends at most one waiter per
//   key to the database, and a transaction holds database locks only once it holds all of
//   its own. Reads inside the transaction go to the database on its connection (the first
//   one together with BEGIN and the locks: PgTx); writes are buffered and sent as one
//   statement with the pg_notify of their keys, in the same round trip as COMMIT.
//   Durable transactions commit with synchronous_commit on (PostgreSQL's own group commit
//   shares the WAL flush); non-durable ones with it off. Nothing resolves before COMMIT did.
// - Reads outside transactions use a second pool, so a transaction waiting for a lock can
//   never starve a read its holder needs; search uses a third, whose statements carry a
//   timeout, so a costly search can never starve a token bucket's draw or /healthz (PROTOCOL 10.6).
// - watch: the keys a batch wrote are announced locally right after COMMIT, and to other
//   processes through NOTIFY (watch.ts, with the staleness bound).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { StorageHealth, storageCause } from '../health.js';
import { KeyLocks } from '../locks.js';
import type { Blobs, Range, SharedBuckets, SharedStore, Space, TextDoc, TextIndex, TransactOptions, Tx } from '../types.js';
import { PgBlobs } from './blobs.js';
import { PgBuckets } from './buckets.js';
import { ownPools, pgTarget, poolConfig, sortedLockIds, type PgPoolSource, type PgTarget } from './connect.js';
import { assertCurrent, extensionSchema, migrate, type MigrationReport } from './schema.js';
import { indexBatch, PgText } from './search.js';
import { notifyPayloads, WatchChannel } from './watch.js';

/** Rows an iteration reads per query. */
const PAGE = 512;

export interface PgStoreOptions {
  /** Run the missing migrations at open (default true); false refuses a schema that is behind. */
  migrate?: boolean;
  /** Announce committed keys to other processes (default true; a bulk copy into an idle database turns it off). */
  notify?: boolean;
  /** Where the pools come from (default: the store's own, ended at close). */
  pools?: PgPoolSource;
}

interface Write {
  space: Space<unknown>;
  key: string;
  json: string | null;
}

type Watcher = { listener: (key: string) => void; lost?: () => void };

const writeId = (space: Space<unknown>, key: string) => `${space.name}\u0000${key}`;
const keyBytes = (key: string) => Buffer.from(key, 'utf8');

/**
 * One transaction. Nothing is sent before fn first reads: that read goes out in one round
 * trip with BEGIN and the advisory locks, and the batch goes out with COMMIT (with BEGIN and
 * the locks too, when fn read nothing). The process's own locks are held for all of fn, so
 * in the process nothing changes; in the database the locks are held from the first read,
 * which no other process can tell from fn having started then. A transaction that neither
 * reads nor writes sends nothing at all.
 */
export class PgTx implements Tx {
  readonly writes = new Map<string, Write>();
  /** Text index rows (search.ts), by document id: written in the same batch. */
  readonly indexed = new Map<string, TextDoc | null>();
  /** The connection runs one query at a time: concurrent reads of fn queue here. */
  private queue: Promise<unknown> = Promise.resolve();
  private client: pg.PoolClient | null = null;
  /** BEGIN (and the locks) went out. */
  private begun = false;
  /** Set when the connection failed: it is not given back to the pool. */
  broken?: Error;
  constructor(
    private readonly store: PgStore,
    /** BEGIN, the commit mode and the advisory locks, as one simple query. */
    private readonly begin: string,
    private readonly connect: () => Promise<pg.PoolClient>,
  ) {}

  // A read: the first one carries BEGIN and the locks (its values inlined as literals, as a
  // simple query with several statements takes no parameters); the others are prepared.
  private read<R extends pg.QueryResultRow>(query: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    return this.serial(async () => {
      const client = (this.client ??= await this.checkout());
      if (this.begun) return client.query<R>(query);
      this.begun = true;
      const results = (await client.query(`${this.begin}; ${inline(query.text, query.values ?? [])}`)) as unknown as Array<pg.QueryResult<R>>;
      return results[results.length - 1];
    });
  }

  /** Commits: the batch (if any) and COMMIT in one round trip, with BEGIN and the locks if no read sent them. */
  async commit(batch: () => string) {
    await this.settled();
    const writing = this.writes.size > 0 || this.indexed.size > 0;
    if (!this.begun && !writing) return;
    const client = (this.client ??= await this.checkout());
    const text = `${this.begun ? '' : `${this.begin}; `}${writing ? `${batch()}; ` : ''}COMMIT`;
    this.begun = true;
    await client.query(text);
  }

  async rollback() {
    await this.settled();
    if (!this.begun || !this.client) return;
    await this.client.query('ROLLBACK').catch((e: Error) => (this.broken = e));
  }

  /**
   * A connection for this transaction. The pool listens for errors only on idle connections:
   * one the server drops while fn runs between statements (a server stopped) would emit an
   * error nobody hears, and end the process. Heard here, it marks the connection broken.
   */
  private async checkout(): Promise<pg.PoolClient> {
    const client = await this.connect();
    client.on('error', this.onClientError);
    return client;
  }

  private readonly onClientError = (e: Error) => {
    this.broken ??= e;
  };

  release() {
    this.client?.removeListener('error', this.onClientError);
    this.client?.release(this.broken);
    this.client = null;
  }

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
    const r = await this.read<{ value: string }>(this.store.getQuery(space, key));
    return r.rows.length ? (JSON.parse(r.rows[0].value) as T) : undefined;
  }
  put<T>(space: Space<T>, key: string, value: T): void {
    if (value === undefined) throw new TypeError('cannot store undefined');
    this.writes.set(writeId(space, key), { space, key, json: JSON.stringify(value) });
  }
  del<T>(space: Space<T>, key: string): void {
    this.writes.set(writeId(space, key), { space, key, json: null });
  }
  /** A text index row put in this batch (PgText.write: the index's contract is on TextIndex). */
  index(id: string, doc: TextDoc | null): void {
    this.indexed.set(id, doc);
  }
  async list<T>(space: Space<T>, range: Range = {}): Promise<Array<[string, T]>> {
    const r = await this.read<{ key: Buffer; value: string }>(this.store.listQuery(space, range));
    return r.rows.map((row) => [row.key.toString('utf8'), JSON.parse(row.value) as T]);
  }
}

/** A parameterized statement with its $n replaced by literals (strings, Buffers as bytea, integers). */
function inline(text: string, values: unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const v = values[Number(n) - 1];
    if (Buffer.isBuffer(v)) return `E'\\\\x${v.toString('hex')}'::bytea`;
    if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
    if (typeof v === 'string') return literal(v);
    throw new TypeError(`cannot inline ${typeof v}`);
  });
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

export class PgStore implements SharedStore {
  readonly location: string;
  readonly shared = true as const;
  readonly schema: string;
  readonly buckets: SharedBuckets;
  readonly text: TextIndex;
  /** The quoted schema of pg_trgm (found at open). */
  private trgm = '';
  private readonly pools: PgPoolSource;
  /** Connections for transactions. */
  private readonly writers: pg.Pool;
  /** Connections for reads outside transactions, token buckets and blob chunks (synchronous_commit off). */
  private readonly readers: pg.Pool;
  /** Connections for the text index's statements, each under the target's statement timeout. */
  private readonly searchers: pg.Pool;
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
  /**
   * A statement that failed because the database is gone, full or read-only makes the store
   * say so (/healthz) and answer 503 storage_unavailable, never a 500 and never a 200 for a
   * COMMIT that did not return; the next durable commit, or a probe every second, clears it.
   */
  readonly health = new StorageHealth(() => this.probe());

  private constructor(
    readonly target: PgTarget,
    private readonly options: PgStoreOptions,
  ) {
    this.location = target.display;
    this.schema = target.schema;
    this.s = target.qschema;
    this.pools = options.pools ?? ownPools;
    this.writers = this.pools.pool(target, 'writers', poolConfig(target, target.pool, 'akas'));
    this.readers = this.pools.pool(target, 'readers', poolConfig(target, target.readers, 'akas-read', { options: '-c synchronous_commit=off' }));
    this.searchers = this.pools.pool(
      target,
      'search',
      poolConfig(target, target.search, 'akas-search', {
        // pg_trgm's similarity threshold for the text index's typo candidates (search.ts): 0.2
        // keeps a word two edits from a long one, which 0.3, the default, can miss. No
        // synchronized scans: the text index's pages past the ranked matches are in storage
        // order, which must hold from page to page. A statement past the timeout is cancelled
        // by the server (57014: search.ts answers 503 search_busy); a lock wait counts too.
        options:
          `-c pg_trgm.similarity_threshold=0.2 -c synchronize_seqscans=off -c statement_timeout=${target.searchTimeout} ` +
          '-c default_transaction_read_only=on',
      }),
    );
    this.channel = new WatchChannel(target, this.origin, this.pools, {
      keys: (entries) => {
        for (const [space, key] of entries) this.dispatch(space, key);
      },
      lost: (spaces) => this.lost(spaces),
    });
    this.buckets = new PgBuckets(this.readers, this.s, (e) => this.failure(e));
    this.text = new PgText(
      this.searchers,
      this.s,
      () => this.trgm,
      (e) => this.failure(e),
    );
  }

  /** Opens a store on a postgres:// URL: migrates (unless told not to), then listens. */
  static async open(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
    const store = new PgStore(pgTarget(url), options);
    try {
      const client = await store.writers.connect();
      // After a failure the connection's state is unknown (a lock, a transaction): it is closed, never given back.
      let failed: Error | undefined;
      try {
        if (options.migrate === false) await assertCurrent(client, store.schema);
        else await migrate(client, store.schema);
        store.trgm = await extensionSchema(client, 'pg_trgm');
      } catch (e) {
        failed = e as Error;
        throw e;
      } finally {
        client.release(failed);
      }
      await store.channel.start();
    } catch (e) {
      await store.end();
      throw e;
    }
    return store;
  }

  getQuery(space: Space<unknown>, key: string): pg.QueryConfig {
    return { name: 'akas-get', text: `SELECT value FROM ${this.s}.akas_kv WHERE space = $1 AND key = $2`, values: [space.name, keyBytes(key)] };
  }

  listQuery(space: Space<unknown>, range: Range): pg.QueryConfig {
    const q = rangeQuery(this.s, range);
    return { name: q.name, text: q.text, values: [space.name, ...q.values] };
  }

  /** A statement's failure: the database's (gone, full, read-only) becomes the store's 503. */
  private failure(e: unknown): unknown {
    if (this.closed || !storageCause(e) || (e as { name?: string }).name === 'ServiceError') return e;
    return this.health.fail(e, 'database');
  }

  private async probe() {
    // A durable write, as a transaction would make one (a SELECT alone passes on a full disk).
    await this.writers.query(
      `INSERT INTO ${this.s}.akas_kv (space, key, value) VALUES ('store-probe', '\\x00'::bytea, $1) ON CONFLICT (space, key) DO UPDATE SET ` +
        `value = excluded.value`,
      [String(Date.now())],
    );
  }

  async get<T>(space: Space<T>, key: string): Promise<T | undefined> {
    const r = await this.readers.query<{ value: string }>(this.getQuery(space, key)).catch((e) => Promise.reject(this.failure(e)));
    return r.rows.length ? (JSON.parse(r.rows[0].value) as T) : undefined;
  }

  async list<T>(space: Space<T>, range: Range = {}): Promise<Array<[string, T]>> {
    const r = await this.readers.query<{ key: Buffer; value: string }>(this.listQuery(space, range)).catch((e) => Promise.reject(this.failure(e)));
    return r.rows.map((row) => [row.key.toString('utf8'), JSON.parse(row.value) as T]);
  }

  /** Pages through the range (keyset pagination): no connection is held between pages. */
  async *iterate<T>(space: Space<T>, range: Range = {}): AsyncIterable<[string, T]> {
    let left = range.limit !== undefined && range.limit >= 0 ? range.limit : Infinity;
    let after: Buffer | undefined;
    while (left > 0) {
      const want = Math.min(PAGE, left);
      const q = rangeQuery(this.s, { ...range, limit: want }, after);
      const r = await this.readers
        .query<{ key: Buffer; value: string }>({ name: q.name, text: q.text, values: [space.name, ...q.values] })
        .catch((e) => Promise.reject(this.failure(e)));
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
    // BEGIN, the commit mode, and the advisory locks in sorted order (the ids are integers we
    // computed, safe as literals): sent with the first read, or with the commit (PgTx).
    let begin = 'BEGIN';
    if (options.durable === false) begin += '; SET LOCAL synchronous_commit = off';
    for (const id of sortedLockIds(this.schema, lockKeys)) begin += `; SELECT pg_advisory_xact_lock(${id})`;
    const tx = new PgTx(this, begin, () => this.writers.connect());
    try {
      let result: R;
      try {
        result = await fn(tx);
        await tx.commit(() => this.batchSql(tx.writes, tx.indexed));
      } catch (e) {
        await tx.rollback();
        throw e;
      }
      if (tx.writes.size > 0 && this.watchers.size > 0) for (const w of tx.writes.values()) this.dispatch(w.space.name, w.key);
      if (tx.writes.size > 0 && options.durable !== false && this.health.failed) this.health.recovered();
      return result;
    } catch (e) {
      // A connection that failed mid-transaction is not given back to the pool.
      if (!tx.broken && isConnectionError(e)) tx.broken = e as Error;
      // A COMMIT that failed, or never returned, is a 503: the write may or may not have landed.
      throw this.failure(e);
    } finally {
      tx.release();
      release();
      if (--this.active === 0 && this.idle) this.idle();
    }
  }

  // The batch as one statement: upserts, deletes, and the notifications of its keys (sent
  // by PostgreSQL only if the transaction commits). Its values are inlined as literals, not
  // bound as parameters, so that COMMIT can follow in the same simple query: keys as bytea hex,
  // texts through `literal` (every quote and backslash doubled: nothing can end the string).
  private batchSql(writes: Map<string, Write>, indexed: Map<string, TextDoc | null>): string {
    const puts: string[] = [];
    const dels: string[] = [];
    const announced: Array<[string, string]> = [];
    for (const w of writes.values()) {
      const row = `${literal(w.space.name)}, E'\\\\x${keyBytes(w.key).toString('hex')}'::bytea`;
      if (w.json === null) dels.push(`(${row})`);
      else puts.push(`(${row}, ${literal(w.json)})`);
      announced.push([w.space.name, w.key]);
    }
    const parts: string[] = [];
    if (puts.length)
      parts.push(
        `put AS (INSERT INTO ${this.s}.akas_kv (space, key, value) VALUES ${puts.join(', ')} ON CONFLICT (space, key) DO UPDATE SET value = excluded.value)`,
      );
    if (dels.length) parts.push(`del AS (DELETE FROM ${this.s}.akas_kv WHERE (space, key) IN (${dels.join(', ')}))`);
    parts.push(...indexBatch(this.s, indexed));
    const payloads = this.options.notify === false ? [] : notifyPayloads(this.origin, announced);
    const channel = literal(this.target.channel);
    const select = payloads.length ? payloads.map((p) => `pg_notify(${channel}, ${literal(p)})`).join(', ') : '1';
    return `WITH ${parts.join(', ')} SELECT ${select}`;
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
    this.blobStore ??= PgBlobs.open(this.target, this.writers, this.readers, this.health);
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
    this.health.close();
    if (this.active > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    await (await this.blobStore?.catch(() => undefined))?.close();
    await this.end();
  }

  private async end() {
    await this.channel.close();
    await Promise.all([this.writers, this.readers, this.searchers].map((pool) => this.pools.release(pool).catch(() => undefined)));
  }
}

/**
 * A text as an SQL string literal: E'...' with every backslash and single quote doubled, so
 * the text can neither end the literal nor escape from it. (JSON text, space names and our
 * payloads hold no NUL, which PostgreSQL text cannot hold at all.)
 */
export function literal(text: string): string {
  return `E'${text.replace(/[\\']/g, (c) => c + c)}'`;
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

/** Runs the missing migrations of the database at url, alone (`akas store migrate`); onStep hears each long step. */
export async function migratePg(url: string, onStep?: (what: string) => void): Promise<MigrationReport & { location: string }> {
  const target = pgTarget(url);
  const client = new pg.Client(poolConfig(target, 1, 'akas-migrate'));
  await client.connect();
  try {
    return { ...(await migrate(client, target.schema, onStep)), location: target.display };
  } finally {
    await client.end();
  }
}
