// Where a PostgreSQL store lives: a postgres:// URL, plus settings of ours carried in its
// query string and removed before the driver sees it: `schema` (the PostgreSQL schema that
// holds the tables, default public; tests give every store its own), `pool` (connections
// for transactions, default 10), `readers` (connections for reads outside transactions,
// default half of `pool` and at least 4), `search` (connections for search, default 4) and
// `searchTimeout` (the statement timeout of search, in ms, default SEARCH_TIMEOUT_MS).
import { createHash } from 'node:crypto';
import pg, { type PoolConfig } from 'pg';
import { isPostgresUrl, redact } from './url.js';

export interface PgTarget {
  /** What the driver gets: the URL without our settings. */
  connectionString: string;
  /** The PostgreSQL schema holding the tables (a plain lowercase identifier). */
  schema: string;
  /** The schema as a quoted identifier, ready for SQL text. */
  qschema: string;
  /** Connections for transactions. */
  pool: number;
  /** Connections for reads outside transactions, token buckets and blob chunks. */
  readers: number;
  /** Connections for search (the text index), apart from the readers: a costly search never waits for, nor holds up, a token bucket or /healthz. */
  search: number;
  /** The statement timeout of search statements, in ms. */
  searchTimeout: number;
  /** The URL without its password (logs, messages, Store.location). */
  display: string;
  /** The LISTEN/NOTIFY channel of this store (one per schema). */
  channel: string;
}

/**
 * The default statement timeout of a search statement (PROTOCOL 10.6, 14): past it the search
 * answers 503 search_busy. The heaviest query of the bench's mix at 1,000,000 nodes (a prefix
 * of few letters: its GIN bitmap) took up to 1 s on a loaded machine; a typo lookup takes milliseconds.
 */
export const SEARCH_TIMEOUT_MS = 1500;

/** Parses a postgres:// URL (throws a plain Error naming what is wrong). */
export function pgTarget(url: string): PgTarget {
  if (!isPostgresUrl(url)) throw new Error(`not a postgres:// URL: ${redact(url)}`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`not a valid URL: ${redact(url)}`);
  }
  const schema = u.searchParams.get('schema') ?? 'public';
  if (!/^[a-z_][a-z0-9_]{0,39}$/.test(schema))
    throw new Error(`schema must be a lowercase identifier of at most 40 characters ([a-z_][a-z0-9_]*), got ${schema}`);
  const poolParam = u.searchParams.get('pool');
  const pool = poolParam === null ? 10 : Number(poolParam);
  if (!Number.isInteger(pool) || pool < 2 || pool > 200) throw new Error(`pool must be a whole number from 2 to 200, got ${poolParam}`);
  const readersParam = u.searchParams.get('readers');
  const readers = readersParam === null ? Math.max(4, Math.ceil(pool / 2)) : Number(readersParam);
  if (!Number.isInteger(readers) || readers < 1 || readers > 200) throw new Error(`readers must be a whole number from 1 to 200, got ${readersParam}`);
  const searchParam = u.searchParams.get('search');
  const search = searchParam === null ? 4 : Number(searchParam);
  if (!Number.isInteger(search) || search < 1 || search > 200) throw new Error(`search must be a whole number from 1 to 200, got ${searchParam}`);
  const timeoutParam = u.searchParams.get('searchTimeout');
  const searchTimeout = timeoutParam === null ? SEARCH_TIMEOUT_MS : Number(timeoutParam);
  if (!Number.isInteger(searchTimeout) || searchTimeout < 10 || searchTimeout > 600_000)
    throw new Error(`searchTimeout must be a whole number of milliseconds from 10 to 600000, got ${timeoutParam}`);
  for (const ours of ['schema', 'pool', 'readers', 'search', 'searchTimeout']) u.searchParams.delete(ours);
  const connectionString = u.toString();
  u.password = '';
  if (schema !== 'public') u.searchParams.set('schema', schema);
  return { connectionString, schema, qschema: `"${schema}"`, pool, readers, search, searchTimeout, display: u.toString(), channel: `akas:${schema}` };
}

/** Driver settings for one pool of a target. */
export function poolConfig(t: PgTarget, max: number, applicationName: string, extra: Partial<PoolConfig> = {}): PoolConfig {
  return { connectionString: t.connectionString, max, application_name: applicationName, idleTimeoutMillis: 30_000, ...extra };
}

/**
 * A store's pools: writers take transactions, readers the reads outside them (token buckets
 * and /healthz among them), search the text index's statements, and listen is its
 * notification channel's one connection.
 */
export type PgPoolRole = 'writers' | 'readers' | 'search' | 'listen';

/**
 * Where a store's pools come from, and where they go when it closes. By default a store owns
 * them: made at open, ended at close. A source may instead keep them for the next store of the
 * same target and schema (the tests do: each new connection costs the server about 30 ms of
 * CPU here, and warms its catalog caches again), so a store must leave nothing on a connection
 * but what the next store of that schema would put there itself: it runs the same statements
 * under the same names, holds no session lock past its close, and listens no more.
 */
export interface PgPoolSource {
  /** Whether a released pool serves a later store (then a store cleans a connection before it gives it back). */
  readonly keeps: boolean;
  pool(target: PgTarget, role: PgPoolRole, config: PoolConfig): pg.Pool;
  release(pool: pg.Pool): Promise<void>;
}

/** The default source: a store's own pools, ended when it closes. */
export const ownPools: PgPoolSource = {
  keeps: false,
  pool: (_target, _role, config) => {
    const pool = new pg.Pool(config);
    // An idle connection the server dropped is replaced at the next checkout; not a crash.
    pool.on('error', () => undefined);
    return pool;
  },
  release: (pool) => pool.end(),
};

/**
 * The advisory lock id of a lock key: 64 bits of sha256 over the schema and the key (two
 * schemas in one database never contend). A collision only makes two keys share a lock.
 */
export function lockId(schema: string, key: string): bigint {
  return createHash('sha256').update(`${schema}\u0000${key}`).digest().readBigInt64BE(0);
}

/** The lock ids of a transaction, deduplicated and sorted: every transaction takes them in one order. */
export function sortedLockIds(schema: string, keys: string[]): bigint[] {
  const ids = [...new Set(keys.map((k) => lockId(schema, k)))];
  return ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
