// The Store contract on the PostgreSQL implementation (src/store/postgres), against a real
// server, plus what only a shared store has: two stores on one database standing for two
// processes (locks, notifications and their staleness bound, token buckets), migrations,
// and blobs in the database.
import { createHash, randomBytes } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { space, type Store } from '../../src/store/index.js';
import { LATEST_VERSION, migratePg, openPgStore, type PgStore, WATCH_BOUND_MS, CHUNK_BYTES } from '../../src/store/postgres/index.js';
import type { PgBlobs } from '../../src/store/postgres/blobs.js';
import { pgTarget } from '../../src/store/postgres/connect.js';
import { storeContract } from './contract.js';
import { strategiesContract } from './contract-node.js';
import { describePg, dropSchema, freshSchemaUrl, openTestPgStore } from '../helpers/postgres.js';

const A = space<{ n: number }>('pg-a');
const COUNTERS = space<number>('pg-counters');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Polls until check() is true; fails after `within` ms (the documented bound, for the watch tests). */
async function until(check: () => boolean | Promise<boolean>, within: number, what: string) {
  const deadline = Date.now() + within;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${within} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describePg('PgStore', () => {
  storeContract('PgStore (pg 8, PostgreSQL 15)', async () => {
    const handle = await openTestPgStore();
    return { store: handle.store, reopen: handle.reopen, dispose: handle.dispose };
  });
  strategiesContract('PostgreSQL', () => openTestPgStore());

  describe('two stores on one database (two processes)', () => {
    let url: string;
    let one: PgStore;
    let two: PgStore;
    beforeEach(async () => {
      url = freshSchemaUrl();
      [one, two] = [await openPgStore(url), await openPgStore(url)];
    });
    afterEach(async () => {
      await one.close();
      await dropSchema(two);
      await two.close();
    });

    const increment = (store: Store, key: string) =>
      store.transact([`counter:${key}`], async (tx) => {
        const n = (await tx.get(COUNTERS, key)) ?? 0;
        await new Promise((r) => setImmediate(r));
        tx.put(COUNTERS, key, n + 1);
      });

    it('serialize writers of one key across both: 200 increments split between them end at 200', async () => {
      await Promise.all(Array.from({ length: 200 }, (_, i) => increment(i % 2 ? one : two, 'c')));
      expect(await one.get(COUNTERS, 'c')).toBe(200);
    });

    it("tell each store's watchers the keys the other committed, each once, and their own at once", async () => {
      const seenByTwo: string[] = [];
      const seenByOne: string[] = [];
      two.watch(A, (k) => seenByTwo.push(k));
      one.watch(A, (k) => seenByOne.push(k));
      await one.transact(['w'], async (tx) => {
        tx.put(A, 'from-one', { n: 1 });
        tx.put(COUNTERS, 'other-space', 1);
      });
      expect(seenByOne).toEqual(['from-one']);
      await until(() => seenByTwo.length > 0, WATCH_BOUND_MS, 'the other store hears of the commit');
      await two.transact(['w'], async (tx) => tx.del(A, 'from-one'));
      expect(seenByTwo).toEqual(['from-one', 'from-one']);
      await until(() => seenByOne.length === 2, WATCH_BOUND_MS, 'the first store hears of the delete');
      // A failed transaction announces nothing, anywhere.
      await one
        .transact(['w'], async (tx) => {
          tx.put(A, 'never', { n: 0 });
          throw new Error('abort');
        })
        .catch(() => undefined);
      await two.transact(['w'], async (tx) => tx.put(A, 'marker', { n: 2 }));
      await until(() => seenByOne.includes('marker'), WATCH_BOUND_MS, 'the marker after the failed one');
      expect(seenByOne).toEqual(['from-one', 'from-one', 'marker']);
      expect(seenByTwo).toEqual(['from-one', 'from-one', 'marker']);
    });

    it('announce a batch too big for one notification in several, and keys with separators and U+0000 intact', async () => {
      const seen = new Set<string>();
      two.watch(A, (k) => seen.add(k));
      const keys = Array.from({ length: 3000 }, (_, i) => `k\u0000${i}:é/${'x'.repeat(i % 40)}`);
      await one.transact(['big'], async (tx) => {
        for (const [i, k] of keys.entries()) tx.put(A, k, { n: i });
      });
      await until(() => seen.size === keys.length, WATCH_BOUND_MS, 'every key of the batch');
      expect([...seen].sort()).toEqual([...keys].sort());
      expect(await two.get(A, keys[7])).toEqual({ n: 7 });
    });

    it('tell the watchers of a space to drop everything when a key is too long to announce', async () => {
      let lost = 0;
      const seen: string[] = [];
      two.watch(
        A,
        (k) => seen.push(k),
        () => lost++,
      );
      await one.transact(['long'], async (tx) => tx.put(A, 'y'.repeat(9000), { n: 1 }));
      await until(() => lost > 0, WATCH_BOUND_MS, 'lost for the long key');
      expect(seen).toEqual([]);
    });

    it('call `lost` within the bound when the notification channel dies, then hear commits again', async () => {
      let lost = 0;
      const seen: string[] = [];
      two.watch(
        A,
        (k) => seen.push(k),
        () => lost++,
      );
      const pid = await two.watchChannel.backendPid();
      expect(pid).toBeTypeOf('number');
      await one.sql('SELECT pg_terminate_backend($1)', [pid]);
      await until(() => lost > 0, WATCH_BOUND_MS, 'lost after the channel died');
      await until(() => two.watchChannel.live, 10 * WATCH_BOUND_MS, 'the channel reconnects');
      const losses = two.watchChannel.losses;
      expect(losses).toBeGreaterThan(0);
      await one.transact(['w'], async (tx) => tx.put(A, 'after', { n: 1 }));
      await until(() => seen.includes('after'), WATCH_BOUND_MS, 'a commit after the reconnect');
    });

    it('draw token buckets as one: a burst split between them is limited as one', async () => {
      const draws = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? one : two).buckets.draw('ip:1', 10, 1, 1_000, true)));
      expect(draws.filter((d) => d.taken)).toHaveLength(10);
      // Refills with time (the caller's clock), never beyond the burst.
      expect((await one.buckets.draw('ip:1', 10, 1, 3_000, true)).taken).toBe(true);
      expect((await two.buckets.draw('ip:1', 10, 1, 3_000, true)).taken).toBe(true);
      expect((await two.buckets.draw('ip:1', 10, 1, 3_000, true)).taken).toBe(false);
      const peek = await one.buckets.draw('ip:1', 10, 1, 1_000_000, false);
      expect(peek).toEqual({ tokens: 10, taken: false });
      // A clock behind the last draw refills nothing.
      await one.buckets.draw('ip:2', 2, 1, 5_000, true);
      await one.buckets.draw('ip:2', 2, 1, 5_000, true);
      expect((await two.buckets.draw('ip:2', 2, 1, 1_000, true)).taken).toBe(false);
    });

    it('take a draw of several tokens (a costly search) all or none, and give back what no draw could use', async () => {
      expect(await one.buckets.draw('ip:3', 10, 1, 1_000, 8)).toEqual({ tokens: 2, taken: true });
      // In one statement: a draw of 4 finds 2 and takes none; the draw of 1 behind it takes one.
      const [four, single] = await Promise.all([one.buckets.draw('ip:3', 10, 1, 1_000, 4), one.buckets.draw('ip:3', 10, 1, 1_000, true)]);
      expect([four.taken, single.taken]).toEqual([false, true]);
      expect(await two.buckets.draw('ip:3', 10, 1, 1_000, false)).toEqual({ tokens: 1, taken: false });
    });
  });

  describe('values and keys written as SQL literals', () => {
    it('round-trip quotes, backslashes and statement breakers exactly, and run none of them', async () => {
      const handle = await openTestPgStore();
      const nasty = ["'", "''", '\\', "\\'", "E'x'", '$$', "'); DROP TABLE akas_kv; --", '\\x00ff', '";\n', '\u2028\u0001', 'é€😂'];
      const Any = space<unknown>('pg-literals');
      await handle.store.transact(['lit'], async (tx) => {
        for (const [i, v] of nasty.entries()) tx.put(Any, `${v}:${i}`, { v, nested: [v, { [v]: v }] });
      });
      for (const [i, v] of nasty.entries()) expect(await handle.store.get(Any, `${v}:${i}`)).toEqual({ v, nested: [v, { [v]: v }] });
      expect((await handle.store.list(Any)).map(([k]) => k).sort()).toEqual(nasty.map((v, i) => `${v}:${i}`).sort());
      await handle.store.transact(['lit'], async (tx) => {
        for (const [i, v] of nasty.entries()) tx.del(Any, `${v}:${i}`);
      });
      expect(await handle.store.list(Any)).toEqual([]);
      await handle.dispose();
    });
  });

  describe('migrations', () => {
    it('create the schema once, record each version, and skip what is applied', async () => {
      const url = freshSchemaUrl();
      const first = await migratePg(url);
      expect(first).toMatchObject({ from: 0, to: LATEST_VERSION });
      expect(first.applied.map((m) => m.version)).toEqual(Array.from({ length: LATEST_VERSION }, (_, i) => i + 1));
      // The location is the URL without a password and without our connection counts.
      expect(first.location).toBe(url.replace('&readers=2', ''));
      const again = await migratePg(url);
      // A store at the latest version builds nothing again (every start runs this).
      expect(again).toMatchObject({ from: LATEST_VERSION, to: LATEST_VERSION, applied: [], indexes: [] });
      const store = await openPgStore(url, { migrate: false });
      const rows = await store.sql<{ version: number }>('SELECT version FROM $schema.akas_schema_version ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(first.applied.map((m) => m.version));
      await dropSchema(store);
      await store.close();
    });

    it('let two processes that start together on an empty database both run, migrating once', async () => {
      const url = freshSchemaUrl();
      const [a, b] = await Promise.all([openPgStore(url), openPgStore(url)]);
      const rows = await a.sql<{ n: string }>('SELECT count(*) AS n FROM $schema.akas_schema_version');
      expect(Number(rows[0].n)).toBe(LATEST_VERSION);
      await a.close();
      await dropSchema(b);
      await b.close();
    });

    it('refuse a schema that is behind when told not to migrate, and one newer than the code', async () => {
      const url = freshSchemaUrl();
      await expect(openPgStore(url, { migrate: false })).rejects.toThrow(/version 0.*akas store migrate/);
      const store = await openPgStore(url);
      await store.sql('INSERT INTO $schema.akas_schema_version (version, description) VALUES ($1, $2)', [LATEST_VERSION + 1, 'from the future']);
      await expect(openPgStore(url)).rejects.toThrow(/newer than this akas knows.*only go forward/);
      await expect(migratePg(url)).rejects.toThrow(/newer than this akas knows/);
      await dropSchema(store);
      await store.close();
    });

    it('refuse a URL that is not postgres:// or names a bad schema, without echoing the password', async () => {
      await expect(openPgStore('mysql://u:hunter2@h/db')).rejects.toThrow(/not a postgres:\/\/ URL: mysql:\/\/u:\*\*\*@h\/db/);
      await expect(openPgStore('postgres://u:hunter2@127.0.0.1:1/db?schema=Bad-Name')).rejects.toThrow(/lowercase identifier/);
      await expect(openPgStore('postgres://u:hunter2@127.0.0.1:1/db?readers=0')).rejects.toThrow(/readers must be a whole number from 1 to 200, got 0/);
      await expect(openPgStore('postgres://u:hunter2@127.0.0.1:1/db?pool=1')).rejects.toThrow(/pool must be a whole number from 2 to 200/);
      await expect(openPgStore('postgres://u:hunter2@127.0.0.1:1/db?search=0')).rejects.toThrow(/search must be a whole number from 1 to 200, got 0/);
      await expect(openPgStore('postgres://u:hunter2@127.0.0.1:1/db?searchTimeout=0')).rejects.toThrow(/searchTimeout must be a whole number of milliseconds/);
    });

    it('read the connection counts from the URL and keep them from the driver and from messages', () => {
      expect(pgTarget('postgres://u:pw@h/db')).toMatchObject({ pool: 10, readers: 5, search: 4, searchTimeout: 1500 });
      expect(pgTarget('postgres://u:pw@h/db?pool=2')).toMatchObject({ pool: 2, readers: 4 });
      const t = pgTarget('postgres://u:pw@h/db?pool=20&readers=2&schema=s1&search=3&searchTimeout=800');
      expect(t).toMatchObject({ pool: 20, readers: 2, schema: 's1', search: 3, searchTimeout: 800 });
      expect(t.connectionString).toBe('postgres://u:pw@h/db');
      expect(t.display).toBe('postgres://u@h/db?schema=s1');
    });
  });

  describe('blobs in the database', () => {
    let handle: Awaited<ReturnType<typeof openTestPgStore>>;
    let blobs: PgBlobs;
    beforeEach(async () => {
      handle = await openTestPgStore();
      blobs = (await handle.store.blobs()) as PgBlobs;
    });
    afterEach(async () => {
      await handle.dispose();
    });

    const chunkRows = async () =>
      await handle.store.sql<{ upload: string; off: string; n: number }>(
        'SELECT upload, off::text, length(bytes) AS n FROM $schema.akas_blob_chunks ORDER BY upload, off',
      );

    async function put(bytes: Buffer, piece = 64 * 1024, expected?: number) {
      const up = blobs.begin(undefined, expected);
      try {
        for (let i = 0; i < bytes.length; i += piece) await up.write(bytes.subarray(i, i + piece));
        return { sha: up.sha256(), created: await up.place() };
      } finally {
        await up.discard();
      }
    }

    it('store a blob as 1 MiB chunks under one upload, and read it back whole, hashed and in ranges', async () => {
      const bytes = randomBytes(2 * CHUNK_BYTES + 12345);
      const { sha, created } = await put(bytes);
      expect(created).toBe(true);
      expect(sha).toBe(sha256(bytes));
      const rows = await chunkRows();
      expect(rows.map((r) => [Number(r.off), r.n])).toEqual([
        [0, CHUNK_BYTES],
        [CHUNK_BYTES, CHUNK_BYTES],
        [2 * CHUNK_BYTES, 12345],
      ]);
      expect(await blobs.size(sha)).toBe(bytes.length);
      const reader = (await blobs.open(sha))!;
      expect(await reader.sha256()).toBe(sha);
      expect((await reader.readAll()).equals(bytes)).toBe(true);
      for (const [start, end] of [
        [0, bytes.length - 1],
        [5, 9],
        [CHUNK_BYTES - 3, CHUNK_BYTES + 2],
        [CHUNK_BYTES, 2 * CHUNK_BYTES - 1],
        [bytes.length - 1, bytes.length - 1],
      ]) {
        expect((await buffer(reader.stream(start, end))).equals(bytes.subarray(start, end + 1))).toBe(true);
      }
      expect([...(await collect(blobs.list()))]).toEqual([sha]);
    });

    it('place a blob of one chunk held in memory with one statement, and open it with one query', async () => {
      const bytes = randomBytes(CHUNK_BYTES);
      const writes = vi.spyOn(blobs.writers, 'query');
      const reads = vi.spyOn(blobs.readers, 'query');
      try {
        const up = blobs.begin();
        for (let i = 0; i < bytes.length; i += 64 * 1024) up.write(bytes.subarray(i, i + 64 * 1024));
        const sha = up.sha256();
        expect(up.cheapPlace).toBe(true);
        expect(await up.place()).toBe(true);
        await up.discard();
        expect(writes).toHaveBeenCalledTimes(1);
        expect(reads).toHaveBeenCalledTimes(0);
        expect((await chunkRows()).map((r) => [Number(r.off), r.n])).toEqual([[0, CHUNK_BYTES]]);
        writes.mockClear();
        reads.mockClear();
        const reader = (await blobs.open(sha))!;
        expect(await reader.sha256()).toBe(sha);
        expect((await reader.readAll()).equals(bytes)).toBe(true);
        expect((await buffer(reader.stream(CHUNK_BYTES - 10, CHUNK_BYTES - 1))).equals(bytes.subarray(CHUNK_BYTES - 10))).toBe(true);
        expect(reads).toHaveBeenCalledTimes(1);
        expect(writes).toHaveBeenCalledTimes(0);
      } finally {
        writes.mockRestore();
        reads.mockRestore();
      }
    });

    it('refuse a one-statement placement of bytes already stored without writing anything, keeping them for a repair', async () => {
      const bytes = randomBytes(5000);
      const { sha } = await put(bytes);
      const before = await chunkRows();
      const up = blobs.begin();
      up.write(bytes);
      up.sha256();
      expect(up.cheapPlace).toBe(true);
      expect(await up.place(false)).toBe(false);
      expect(await chunkRows()).toEqual(before);
      expect(await up.place(true)).toBe(true);
      await up.discard();
      const after = await chunkRows();
      expect(after).toHaveLength(1);
      expect(after[0].upload).not.toBe(before[0].upload);
      expect(await (await blobs.open(sha))!.sha256()).toBe(sha);
    });

    it('keep a small upload in memory until placed, and write nothing for one discarded', async () => {
      const up = blobs.begin();
      up.write(Buffer.from('small'));
      expect(up.inMemory).toBe(true);
      up.sha256();
      await up.discard();
      expect(await chunkRows()).toEqual([]);
    });

    it('answer false for bytes already stored, keep the first copy, and leave no chunk of the second', async () => {
      const bytes = randomBytes(3 * 1024 * 1024);
      const first = await put(bytes);
      const second = await put(bytes, 100_000, bytes.length);
      expect(second).toEqual({ sha: first.sha, created: false });
      expect(new Set((await chunkRows()).map((r) => r.upload)).size).toBe(1);
    });

    it('replace a damaged copy on overwrite, and drop its chunks in the same transaction', async () => {
      const bytes = randomBytes(1500);
      const { sha } = await put(bytes);
      await handle.store.sql(`UPDATE $schema.akas_blob_chunks SET bytes = overlay(bytes placing '\\x00'::bytea from 1 for 1)`);
      expect(await (await blobs.open(sha))!.sha256()).not.toBe(sha);
      const up = blobs.begin();
      up.write(bytes);
      expect(await up.place(true)).toBe(true);
      await up.discard();
      expect(await (await blobs.open(sha))!.sha256()).toBe(sha);
      expect(await chunkRows()).toHaveLength(1);
    });

    it('sweep chunks of abandoned uploads, never those of a stored blob', async () => {
      const kept = await put(randomBytes(2 * CHUNK_BYTES));
      const abandoned = blobs.begin(undefined, 3 * CHUNK_BYTES);
      await abandoned.write(randomBytes(CHUNK_BYTES + 10)); // a crash: never placed, never discarded
      expect(await chunkRows()).toHaveLength(3);
      expect(await blobs.sweep('1 hour')).toBe(0); // too recent: may be in progress
      expect(await blobs.sweep('0 seconds')).toBe(1);
      expect(await chunkRows()).toHaveLength(2);
      expect(await (await blobs.open(kept.sha))!.sha256()).toBe(kept.sha);
    });

    it('serve from one store a blob another store on the same database wrote', async () => {
      const other = await openPgStore(handle.url);
      const bytes = randomBytes(CHUNK_BYTES + 1);
      const { sha } = await put(bytes);
      const reader = (await (await other.blobs()).open(sha))!;
      expect((await buffer(reader.stream())).equals(bytes)).toBe(true);
      await other.close();
    });
  });
});

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
