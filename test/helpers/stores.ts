// The store the HTTP suites run on: LevelDB by default, PostgreSQL when AKAS_TEST_STORE is
// `postgres` (the `postgres` project of vitest.config.ts runs identity, proposals and CAS so).
// What a suite checks beneath the API (the bytes a blob is stored as, secrets at rest) goes
// through the helpers here, one implementation per store.
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blobLock, InlineBlobs, openTempStore, type OpenedStore, type Store } from '../../src/store/index.js';
import type { PgStore } from '../../src/store/postgres/index.js';
import { openTestPgStore } from './postgres.js';

export type StoreKind = 'level' | 'postgres';

/** The store this run of the suites is on. */
export const TEST_STORE: StoreKind = process.env.AKAS_TEST_STORE === 'postgres' ? 'postgres' : 'level';

export interface TestStore {
  store: OpenedStore;
  /** The data folder (LevelDB) or the database URL (PostgreSQL). */
  dir: string;
  /** Closes the store and removes its data. */
  dispose: () => Promise<void>;
}

/** A fresh, empty store of this run's kind. */
export async function openTestStore(kind: StoreKind = TEST_STORE): Promise<TestStore> {
  if (kind === 'postgres') {
    const handle = await openTestPgStore();
    return { store: handle.store, dir: handle.url, dispose: handle.dispose };
  }
  return openTempStore();
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/**
 * Every byte the store holds at rest, as stored: the files of the data folder, or every row
 * of the database's akas tables (keys as their bytes, values as their text).
 */
export async function bytesAtRest(store: Store, dir: string): Promise<Buffer[]> {
  if (!store.shared) return filesUnder(dir).map((f) => readFileSync(f));
  const pg = store as PgStore;
  const kv = await pg.sql<{ space: string; key: Buffer; value: string }>('SELECT space, key, value FROM $schema.akas_kv');
  const chunks = await pg.sql<{ bytes: Buffer }>('SELECT bytes FROM $schema.akas_blob_chunks');
  const other = await pg.sql<{ row: string }>(
    'SELECT t::text AS row FROM $schema.akas_buckets t UNION ALL SELECT t::text FROM $schema.akas_blobs t UNION ALL SELECT t::text FROM ' +
      '$schema.akas_schema_version t',
  );
  return [
    ...kv.map((r) => Buffer.concat([Buffer.from(r.space), r.key, Buffer.from(r.value)])),
    ...chunks.map((c) => c.bytes),
    ...other.map((r) => Buffer.from(r.row)),
  ];
}

/** Access to stored blobs beneath the blob API: what tests check, and the damage they play. */
export interface BlobBackdoor {
  /** The stored bytes of a blob, as stored (no hash check), or undefined. */
  bytes(sha: string): Promise<Buffer | undefined>;
  /** Changes whenever the stored copy of the blob is written again. */
  stamp(sha: string): Promise<string>;
  /** Flips one byte of a stored blob in place (bit rot). */
  corrupt(sha: string, at: number): Promise<void>;
  /** Uploads holding bytes outside any stored blob (temp files; chunks no blob names). */
  pending(): Promise<number>;
  /** Where a stored blob lives: 'inline' (a LevelDB value), 'file', or 'chunks:N' (PostgreSQL). */
  where(sha: string): Promise<string>;
}

export function blobBackdoor(node: { store: Store; dir: string }): BlobBackdoor {
  if (node.store.shared) {
    const pg = node.store as PgStore;
    return {
      bytes: async (sha) => {
        const rows = await pg.sql<{ bytes: Buffer }>(
          'SELECT c.bytes FROM $schema.akas_blob_chunks c JOIN $schema.akas_blobs b ON b.upload = c.upload WHERE b.sha256 = $1 ORDER BY c.off',
          [sha],
        );
        return rows.length ? Buffer.concat(rows.map((r) => r.bytes)) : undefined;
      },
      stamp: async (sha) => {
        const rows = await pg.sql<{ upload: string; stored_at: Date; chunks: string }>(
          'SELECT upload, stored_at, (SELECT count(*) FROM $schema.akas_blob_chunks c WHERE c.upload = b.upload) AS chunks FROM ' +
            '$schema.akas_blobs b WHERE sha256 = $1',
          [sha],
        );
        return JSON.stringify(rows);
      },
      corrupt: async (sha, at) => {
        await pg.sql(
          `UPDATE $schema.akas_blob_chunks c SET bytes = set_byte(c.bytes, ($2 - c.off)::int, get_byte(c.bytes, ($2 - c.off)::int) # 255)
           FROM $schema.akas_blobs b WHERE b.sha256 = $1 AND c.upload = b.upload AND c.off <= $2 AND $2 < c.off + length(c.bytes)`,
          [sha, at],
        );
      },
      pending: async () => {
        const rows = await pg.sql<{ n: string }>(
          'SELECT count(DISTINCT upload) AS n FROM $schema.akas_blob_chunks c WHERE NOT EXISTS (SELECT 1 FROM $schema.akas_blobs b WHERE b.upload = c.upload)',
        );
        return Number(rows[0].n);
      },
      where: async (sha) => {
        const rows = await pg.sql<{ n: string }>(
          'SELECT count(*) AS n FROM $schema.akas_blob_chunks c JOIN $schema.akas_blobs b ON b.upload = c.upload WHERE b.sha256 = $1',
          [sha],
        );
        return `chunks:${rows[0].n}`;
      },
    };
  }
  // LevelDB: small blobs are store values (base64), larger ones files.
  const path = (sha: string) => join(node.dir, 'blobs', sha.slice(0, 2), sha.slice(2));
  const isFile = (sha: string) => existsSync(path(sha));
  const inline = async (sha: string) => {
    const b64 = await node.store.get(InlineBlobs, sha);
    return b64 === undefined ? undefined : Buffer.from(b64, 'base64');
  };
  return {
    bytes: async (sha) => (isFile(sha) ? readFileSync(path(sha)) : inline(sha)),
    stamp: async (sha) => {
      if (isFile(sha)) {
        const st = statSync(path(sha));
        return `file ${st.ino}:${st.mtimeMs}`;
      }
      if ((await inline(sha)) === undefined) throw new Error(`no blob ${sha}`);
      return `inline, written ${inlineWrites(node.store).get(sha) ?? 0} times since first stamped`;
    },
    corrupt: async (sha, at) => {
      if (isFile(sha)) {
        chmodSync(path(sha), 0o644);
        const bytes = readFileSync(path(sha));
        bytes[at] ^= 0xff;
        writeFileSync(path(sha), bytes);
        return;
      }
      const bytes = (await inline(sha))!;
      bytes[at] ^= 0xff;
      await node.store.transact([blobLock(sha)], async (tx) => tx.put(InlineBlobs, sha, bytes.toString('base64')));
    },
    pending: async () => readdirSync(join(node.dir, 'blobs', 'tmp')).length,
    where: async (sha) => {
      const inStore = (await inline(sha)) !== undefined;
      if (inStore === isFile(sha)) throw new Error(`blob ${sha}: ${inStore ? 'both inline and a file' : 'nowhere'}`);
      return inStore ? 'inline' : 'file';
    },
  };
}

const writesSeen = new WeakMap<Store, Map<string, number>>();

/** Writes of each inline blob seen by a watch of the store, from the first call on. */
function inlineWrites(store: Store): Map<string, number> {
  let counts = writesSeen.get(store);
  if (!counts) {
    const seen = new Map<string, number>();
    store.watch(InlineBlobs, (sha) => seen.set(sha, (seen.get(sha) ?? 0) + 1));
    writesSeen.set(store, (counts = seen));
  }
  return counts;
}
