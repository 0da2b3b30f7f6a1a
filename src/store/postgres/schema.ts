// The database schema of the PostgreSQL store and its forward-only migrations. A version
// table records each migration applied; a process runs the missing ones at start (or
// `akas store migrate` does, alone), all in one transaction under an advisory lock, so two
// processes starting together never both migrate. A database at a version this code does
// not know (written by a newer akas) is refused, never downgraded.
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
import type { ClientBase } from 'pg';
import { lockId } from './connect.js';

export interface Migration {
  version: number;
  description: string;
  /** The DDL, given the quoted schema name. */
  sql: (s: string) => string;
}

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
 * Applies the missing migrations in order, in one transaction holding the migration lock
 * (a concurrent start waits, then finds nothing left to do). Refuses a database whose
 * version is newer than this code's.
 */
export async function migrate(client: ClientBase, schema: string): Promise<MigrationReport> {
  const s = `"${schema}"`;
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${lockId(schema, '\u0000akas-migrate')})`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${versionTable(s)} (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const from = await schemaVersion(client, schema);
    if (from > LATEST_VERSION) throw newerError(from);
    const applied: MigrationReport['applied'] = [];
    for (const m of MIGRATIONS) {
      if (m.version <= from) continue;
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
