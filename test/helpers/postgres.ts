// PostgreSQL for tests: the cluster the global setup started (test/setup/postgres.ts), a schema
// per store (fresh, or emptied after an earlier test: openTestPgStore), and a loud refusal
// when there is no server: PostgreSQL tests fail in CI (CI=true) and are skipped with a
// warning elsewhere, never silently.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, inject, it } from 'vitest';
import { pgTarget } from '../../src/store/postgres/connect.js';
import { openPgStore, type PgPoolSource, type PgStore, type PgStoreOptions } from '../../src/store/postgres/index.js';

/** The cluster's URL, or undefined (after saying why) when there is none. */
export function pgUrl(): string | undefined {
  const url = inject('pgUrl');
  return url || undefined;
}

/**
 * The URL of a new, empty schema in the test cluster (a store there migrates it at open). Two
 * connections for reads, where a node opens at least four: each connection costs the server
 * about 30 ms of CPU here, and the tests' stores opened 600 of them for reads alone.
 */
export function freshSchemaUrl(prefix = 't'): string {
  const url = pgUrl();
  if (!url) throw new Error(`no PostgreSQL test cluster: ${inject('pgError')}`);
  return `${url}?schema=${prefix}_${randomBytes(6).toString('hex')}&readers=2`;
}

/** Drops the schema of a store URL (with everything in it). */
export async function dropSchema(store: PgStore) {
  await store.sql(`DROP SCHEMA IF EXISTS $schema CASCADE`);
}

// One plain connection per cluster for this process's housekeeping (emptying and dropping
// schemas), kept between tests rather than opened for each: its socket does not hold the
// worker open, and a connection the server dropped (a fault test restarts the cluster) is
// replaced on the next use.
const admins = new Map<string, Promise<pg.Client | undefined>>();

function adminClient(connectionString: string): Promise<pg.Client | undefined> {
  let client = admins.get(connectionString);
  if (!client) {
    const c = new pg.Client({ connectionString, application_name: 'akas-test-admin' });
    const forget = () => {
      if (admins.get(connectionString) === client) admins.delete(connectionString);
    };
    c.on('error', forget);
    c.on('end', forget);
    client = c.connect().then(
      () => {
        (c as unknown as { connection: { stream: { unref(): void } } }).connection.stream.unref();
        return c;
      },
      () => {
        forget();
        return undefined;
      },
    );
    admins.set(connectionString, client);
  }
  return client;
}

/** Runs fn on this process's admin connection to the cluster of a store URL; undefined when the cluster cannot be reached (a fault test stopped it). */
async function withClient<T>(url: string, fn: (client: pg.Client, qschema: string) => Promise<T>): Promise<T | undefined> {
  const target = pgTarget(url);
  for (let attempt = 0; ; attempt++) {
    const pending = adminClient(target.connectionString);
    const client = await pending;
    if (!client) return undefined;
    try {
      return await fn(client, target.qschema);
    } catch (e) {
      // The connection may have died under the query (a fault test restarts the cluster), which
      // its events can tell only later: drop it and try once more on a new one. An error of
      // the query itself comes back the same (each is idempotent) and is thrown.
      if (admins.get(target.connectionString) === pending) admins.delete(target.connectionString);
      void client.end().catch(() => undefined);
      if (attempt > 0) throw e;
    }
  }
}

/** Drops the schema of a store URL with one plain connection (opening a store for it cost as much as the test's own store). */
export async function dropSchemaAt(url: string) {
  await forgetPools(url);
  await withClient(url, (client, s) => client.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`));
}

// The pools of the test stores (writers, readers and the notification channel's one connection),
// kept from one store of a schema to the next (an emptied schema goes to the next test: below).
// A new connection costs the server about 30 ms of CPU here, and a fresh one warms its catalog
// caches again, which the suites on PostgreSQL paid four or five times a test: keeping them took
// the postgres project from 630 sessions to 28, and from 94 s of CPU to 38. A store leaves
// nothing on its connections that the next store of the same schema would not put there itself
// (src/store/postgres/connect.ts, PgPoolSource). Idle ones hold no process open, and close after
// the pool's idle timeout.
const keptPools = new Map<string, pg.Pool>();

const poolsOf = (target: { connectionString: string; schema: string }) => `${target.connectionString}\u0000${target.schema}\u0000`;

// The channel's pool holds one connection: two helper stores open on one schema at once would
// wait for it forever. No test does (reopen closes first); stores that stand for two processes
// on one schema open their own pools (openPgStore without this source).
const keepPools: PgPoolSource = {
  keeps: true,
  pool(target, role, config) {
    const key = `${poolsOf(target)}${role}\u0000${JSON.stringify(config)}`;
    let pool = keptPools.get(key);
    if (!pool) {
      pool = new pg.Pool({ ...config, allowExitOnIdle: true });
      pool.on('error', () => undefined);
      keptPools.set(key, pool);
    }
    return pool;
  },
  release: async () => undefined,
};

/** Ends the kept pools of a store URL's schema (it is being dropped). */
async function forgetPools(url: string) {
  const prefix = poolsOf(pgTarget(url));
  const ending: Array<Promise<void>> = [];
  for (const [key, pool] of keptPools) {
    if (!key.startsWith(prefix)) continue;
    keptPools.delete(key);
    ending.push(pool.end().catch(() => undefined));
  }
  await Promise.all(ending);
}

// Schemas a test is done with, emptied, for the next test of this process. Creating a schema
// and dropping it again (the migrations' tables and indexes) cost PostgreSQL about 150 ms of
// CPU a test, more than the test itself on many suites; emptying one costs a few ms. A schema
// goes back only as the migrations left it: the tables and valid indexes of the first fresh
// one, at the latest version (a test that dropped or broke a table has its schema dropped).
const spareSchemas: string[] = [];
let migratedShape: string | undefined;

const SHAPE_SQL = `SELECT (SELECT max(version) FROM $s.akas_schema_version)::text || ':' ||
  (SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = $1) || ':' ||
  (SELECT string_agg(c.relname || CASE WHEN i.indisvalid THEN '' ELSE '!' END, ',' ORDER BY c.relname)
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1) AS shape`;

/** The version, tables and indexes of a store's schema, as one text. */
async function shapeOf(client: pg.Client, url: string, s: string): Promise<string> {
  const r = await client.query<{ shape: string | null }>(SHAPE_SQL.replace('$s', s), [pgTarget(url).schema]);
  return r.rows[0].shape ?? '';
}

/** Empties a schema the migrations made and puts it back for the next test, else drops it. */
async function recycle(url: string) {
  const kept = await withClient(url, async (client, s) => {
    const shape = await shapeOf(client, url, s).catch(() => '');
    if (!shape || shape !== migratedShape) return false;
    await client.query(
      ['akas_kv', 'akas_buckets', 'akas_blobs', 'akas_blob_chunks', 'akas_search', 'akas_search_words'].map((t) => `DELETE FROM ${s}.${t}`).join(';'),
    );
    return true;
  });
  if (kept) spareSchemas.push(url);
  else if (kept === false) await dropSchemaAt(url);
}

/** A PgStore on a fresh schema (or an emptied one); dispose closes it (and any reopened one) and empties or drops the schema. */
export async function openTestPgStore(options?: PgStoreOptions) {
  // Only a store opened as a node opens it (migrating) may take an emptied schema.
  const reuse = options === undefined || options.migrate !== false;
  const url = (reuse && spareSchemas.pop()) || freshSchemaUrl();
  const opts: PgStoreOptions = { pools: keepPools, ...options };
  let current = await openPgStore(url, opts);
  if (migratedShape === undefined) migratedShape = (await withClient(url, (client, s) => shapeOf(client, url, s))) ?? undefined;
  return {
    url,
    get store() {
      return current;
    },
    reopen: async () => {
      await current.close();
      current = await openPgStore(url, opts);
      return current;
    },
    dispose: async () => {
      await current.close();
      await recycle(url);
    },
  };
}

/**
 * describe() for suites that need PostgreSQL. Without a server: in CI a failing test that
 * says why; elsewhere a warning on stderr and the suite skipped under a name that says why.
 */
export function describePg(name: string, body: () => void) {
  if (pgUrl()) return describe(name, body);
  const why = `PostgreSQL tests cannot run: ${inject('pgError') || 'no cluster'}`;
  if (process.env.CI === 'true' || process.env.CI === '1') {
    describe(name, () =>
      it('needs a PostgreSQL server', () => {
        throw new Error(why);
      }),
    );
  } else {
    console.error(`\n!!! ${why}\n!!! SKIPPED: ${name} (in CI this fails)\n`);
    describe.skip(`${name} [SKIPPED: ${why}]`, body);
  }
}
