// The database schema of the PostgreSQL store and its forward-only migrations. A version
// table records each migration applied; a process runs the missing ones at start (or
// `akas store migrate` does, alone), all in one transaction under an advisory lock, so two
// processes starting together never both migrate. A database at a version this code does
// not know (written by a newer akas) is refused, never downgraded. Indexes that must be built
// without locking writers out (CREATE INDEX CONCURRENTLY, which cannot run in a transaction)
// are a migration's online steps: run after its transaction commits, still under the lock,
// one statement each, and at every later run until they stand valid (a build that failed
// leaves an invalid index, which is dropped and built again).
//
// Layout (bench/postgres.ts measured the choices):
// - akas_kv: every Space in one table keyed by (space, key). Keys are bytea: their UTF-8
//   bytes, so ranges and order are byte order, as LevelDB's (a text key would also need
//   COLLATE "C", and PostgreSQL text cannot hold the U+0000 some keys use as a separator).
//   Values are the JSON text, as written: jsonb measured slower on writes and scans and
//   bigger, reorders object keys, and refuses \u0000 in strings. One table measured within
//   a few percent of a table per space, with no table to create at run time.
// - akas_buckets: the token buckets, UNLOGGED (no WAL: a crash may forget them, as LevelDB's
//   write-behind does).
// - akas_blobs and akas_blob_chunks: content-store bytes as bytea chunks of 1 MiB, stored
//   uncompressed (STORAGE EXTERNAL: the bytes are mostly incompressible, and a range read
//   fetches only the slices it needs).
// - akas_search and akas_search_words (version 2): the text index (search.ts), a weighted
//   tsvector per document under GIN, and the indexed words under pg_trgm's GIN, for typos;
//   (version 3) the tsvector's title words alone (ts_filter, weight A) under a GIN index of
//   their own, so a query reads its title matches without reading every match.
import type { ClientBase } from 'pg';
import { lockId } from './connect.js';

/** An index a migration builds online (CREATE INDEX CONCURRENTLY), given the quoted schema and pg_trgm's quoted schema. */
export interface OnlineIndex {
  name: string;
  /** The column list and method after `ON table`, e.g. `USING gin (tsv)`. */
  table: string;
  using: (trgm: string) => string;
}

export interface Migration {
  version: number;
  description: string;
  /** Extensions the migration creates first (contrib modules; see PG_TRGM_HELP). */
  extensions?: string[];
  /** The DDL, given the quoted schema name. */
  sql: (s: string) => string;
  /** Indexes built after the transaction, without blocking writes. */
  online?: OnlineIndex[];
}

/** What an operator does when pg_trgm cannot be created (docs/ARCHITECTURE.md 7 says the same). */
export const PG_TRGM_HELP =
  "the search index needs PostgreSQL's pg_trgm extension (a contrib module: Debian and Ubuntu ship it with the server package, " +
  'elsewhere install postgresql-contrib), created in the database by a role that may: pg_trgm is a trusted extension, so the ' +
  'database owner or a role with CREATE on the database can run CREATE EXTENSION pg_trgm, or a superuser can run it once ' +
  'before akas starts';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'key-value spaces, token buckets, content-store blobs',
    sql: (s) => `
      CREATE TABLE ${s}.akas_kv (
        space text COLLATE "C" NOT NULL,
        key bytea NOT NULL,
        value text NOT NULL,
        PRIMARY KEY (space, key)
      );
      CREATE UNLOGGED TABLE ${s}.akas_buckets (
        key text COLLATE "C" PRIMARY KEY,
        tokens double precision NOT NULL,
        at bigint NOT NULL,
        -- tokens granted by the last draw, and asked for by it (buckets.ts)
        taken integer NOT NULL,
        asked integer NOT NULL
      );
      CREATE TABLE ${s}.akas_blobs (
        sha256 text COLLATE "C" PRIMARY KEY,
        upload text COLLATE "C" NOT NULL,
        size bigint NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX akas_blobs_upload ON ${s}.akas_blobs (upload);
      CREATE TABLE ${s}.akas_blob_chunks (
        upload text COLLATE "C" NOT NULL,
        off bigint NOT NULL,
        bytes bytea NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (upload, off)
      );
      ALTER TABLE ${s}.akas_blob_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL;
    `,
  },
  {
    version: 2,
    description: 'text index: weighted tsvector under GIN, indexed words under pg_trgm (search and suggest)',
    extensions: ['pg_trgm'],
    sql: (s) => `
      CREATE TABLE ${s}.akas_search (
        id text COLLATE "C" PRIMARY KEY,
        kind text COLLATE "C" NOT NULL,
        title text NOT NULL,
        -- the words of each field, as JSON (a hit's match is read from them)
        fields text NOT NULL,
        tsv tsvector NOT NULL
      );
      CREATE TABLE ${s}.akas_search_words (word text COLLATE "C" PRIMARY KEY);
    `,
    online: [
      { name: 'akas_search_tsv', table: 'akas_search', using: () => 'USING gin (tsv)' },
      { name: 'akas_search_words_trgm', table: 'akas_search_words', using: (trgm) => `USING gin (word ${trgm}.gin_trgm_ops)` },
    ],
  },
  {
    version: 3,
    description: 'text index: the titles (the A-weight words) under GIN, for title matches ranked first and suggest',
    // Nothing but the index: an expression over the tsvector each row already holds, so no backfill.
    sql: () => 'SELECT 1',
    online: [{ name: 'akas_search_title', table: 'akas_search', using: () => "USING gin (ts_filter(tsv, '{a}'))" }],
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** Thrown when the database's schema cannot be used by this code as it is. */
export class SchemaError extends Error {
  override readonly name = 'SchemaError';
}

export interface MigrationReport {
  /** The version found before (0: no akas tables). */
  from: number;
  to: number;
  applied: Array<{ version: number; description: string }>;
  /** Indexes built online by this run. */
  indexes: string[];
}

const versionTable = (s: string) => `${s}.akas_schema_version`;

/** The schema version of the database (0 when akas never ran there). */
export async function schemaVersion(client: ClientBase, schema: string): Promise<number> {
  const exists = await client.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [`"${schema}".akas_schema_version`]);
  if (!exists.rows[0].t) return 0;
  const r = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${versionTable(`"${schema}"`)}`);
  return r.rows[0].v ?? 0;
}

/**
 * Applies the missing migrations in order, in one transaction, then builds their online
 * indexes that do not stand valid yet, all under the migration lock (a session lock: a
 * concurrent start waits, then finds nothing left to do). Refuses a database whose version is
 * newer than this code's. onStep hears each index before it is built (it may take minutes).
 */
export async function migrate(client: ClientBase, schema: string, onStep?: (what: string) => void): Promise<MigrationReport> {
  const s = `"${schema}"`;
  const lock = lockId(schema, '\u0000akas-migrate');
  // Taken by polling, never by waiting in pg_advisory_lock: a statement waiting there holds a
  // snapshot, which the holder's CREATE INDEX CONCURRENTLY waits for (a deadlock).
  while (!(await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${lock}) AS ok`)).rows[0].ok) await new Promise((r) => setTimeout(r, 50));
  try {
    const report = await migrateInTransaction(client, schema);
    const indexes: string[] = [];
    const online = MIGRATIONS.filter((m) => m.version <= report.to).flatMap((m) => m.online ?? []);
    if (online.length) {
      const trgm = await extensionSchema(client, 'pg_trgm');
      for (const ix of online) if (await buildOnline(client, s, schema, ix, trgm, onStep)) indexes.push(ix.name);
    }
    return { ...report, indexes };
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${lock})`).catch(() => undefined);
  }
}

async function migrateInTransaction(client: ClientBase, schema: string): Promise<Omit<MigrationReport, 'indexes'>> {
  const s = `"${schema}"`;
  await client.query('BEGIN');
  try {
    // Created only when missing: an operator may create it for a role that may not create schemas.
    const exists = await client.query('SELECT to_regnamespace($1) AS n', [s]);
    if (!exists.rows[0].n) await client.query(`CREATE SCHEMA ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${versionTable(s)} (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const from = await schemaVersion(client, schema);
    if (from > LATEST_VERSION) throw newerError(from);
    const applied: MigrationReport['applied'] = [];
    for (const m of MIGRATIONS) {
      if (m.version <= from) continue;
      for (const ext of m.extensions ?? []) await createExtension(client, ext);
      await client.query(m.sql(s));
      await client.query(`INSERT INTO ${versionTable(s)} (version, description) VALUES ($1, $2)`, [m.version, m.description]);
      applied.push({ version: m.version, description: m.description });
    }
    await client.query('COMMIT');
    return { from, to: Math.max(from, LATEST_VERSION), applied };
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}

/**
 * CREATE EXTENSION IF NOT EXISTS, under a lock of the whole database (two schemas migrating at
 * once would both try to create it); a missing module or a missing privilege is a SchemaError
 * that says what to do.
 */
async function createExtension(client: ClientBase, name: string) {
  await client.query(`SELECT pg_advisory_xact_lock(${lockId('', `\u0000akas-extension-${name}`)})`);
  await client.query('SAVEPOINT akas_extension');
  try {
    await client.query(`CREATE EXTENSION IF NOT EXISTS ${name}`);
  } catch (e) {
    await client.query('ROLLBACK TO SAVEPOINT akas_extension');
    throw new SchemaError(`cannot create the ${name} extension (${(e as Error).message}): ${PG_TRGM_HELP}`);
  }
}

/** The quoted schema an extension lives in (its functions and operators are named through it); fails closed when it is missing. */
export async function extensionSchema(client: Pick<ClientBase, 'query'>, name: string): Promise<string> {
  const r = await client.query<{ nspname: string }>('SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = $1', [
    name,
  ]);
  if (!r.rows.length) throw new SchemaError(`the ${name} extension is missing from the database: ${PG_TRGM_HELP}`);
  return `"${r.rows[0].nspname.replace(/"/g, '""')}"`;
}

/** Builds one online index unless it stands valid; an invalid one (a build that failed) is dropped first. Answers whether it built. */
async function buildOnline(client: ClientBase, s: string, schema: string, ix: OnlineIndex, trgm: string, onStep?: (what: string) => void) {
  const r = await client.query<{ valid: boolean }>('SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)', [
    `"${schema}".${ix.name}`,
  ]);
  if (r.rows[0]?.valid) return false;
  if (r.rows.length) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${s}.${ix.name}`);
  onStep?.(`building index ${ix.name}`);
  // On an empty table (a new database) the plain build is instant, where CONCURRENTLY would
  // wait for every transaction under way in the whole database.
  const empty = (await client.query<{ empty: boolean }>(`SELECT NOT EXISTS (SELECT 1 FROM ${s}.${ix.table}) AS empty`)).rows[0].empty;
  await client.query(`CREATE INDEX ${empty ? '' : 'CONCURRENTLY '}${ix.name} ON ${s}.${ix.table} ${ix.using(trgm)}`);
  return true;
}

/** Refuses to run on a schema that is missing migrations (when the caller asked not to migrate) or is newer. */
export async function assertCurrent(client: ClientBase, schema: string): Promise<void> {
  const v = await schemaVersion(client, schema);
  if (v > LATEST_VERSION) throw newerError(v);
  if (v < LATEST_VERSION) {
    throw new SchemaError(
      `the database schema is at version ${v}; this akas needs ${LATEST_VERSION}: run \`akas store migrate --store URL\` (or start akas serve, which migrates)`,
    );
  }
}

function newerError(v: number) {
  return new SchemaError(`the database schema is at version ${v}, newer than this akas knows (${LATEST_VERSION}): upgrade akas; migrations only go forward`);
}
