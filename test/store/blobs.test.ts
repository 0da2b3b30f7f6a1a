import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buffer, text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobFiles, BlobStore, blobLock, blobsOf, INLINE_BLOB_BYTES, InlineBlobs, openTempStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/e2e.js';
import { bindReadOnly } from '../helpers/faults.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

let dir: string;
let blobs: BlobStore;
beforeEach(async () => {
  dir = tempDir('akas-blobs-');
  blobs = await BlobStore.open(dir);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const temps = () => readdirSync(join(dir, 'blobs', 'tmp'));

async function store(bytes: Buffer, spill?: number) {
  const up = blobs.begin(spill);
  try {
    for (let i = 0; i < bytes.length; i += 1000) await up.write(bytes.subarray(i, i + 1000));
    const created = await up.place();
    return { sha: up.sha256(), created };
  } finally {
    await up.discard();
  }
}

describe('BlobStore', () => {
  it("writes a blob under its sha256 in git's fan-out layout, read-only, with no temp file left", async () => {
    const bytes = randomBytes(5000);
    const { sha, created } = await store(bytes);
    expect(sha).toBe(sha256(bytes));
    expect(created).toBe(true);
    const path = join(dir, 'blobs', sha.slice(0, 2), sha.slice(2));
    expect(blobs.pathOf(sha)).toBe(path);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o444);
    expect(temps()).toEqual([]);
    expect(await blobs.size(sha)).toBe(5000);
  });

  it('spills to a temp file past spillBytes and keeps memory uploads off the disk', async () => {
    const small = blobs.begin(100);
    await small.write(Buffer.alloc(100, 1));
    expect(small.inMemory).toBe(true);
    expect(temps()).toEqual([]);
    await small.write(Buffer.alloc(1, 1));
    expect(small.inMemory).toBe(false);
    expect(temps()).toHaveLength(1);
    await small.discard();
    expect(temps()).toEqual([]);
    expect(await blobs.size(small.sha256())).toBeUndefined();
  });

  it('writes an upload announced as larger than spillBytes to disk from its first byte, and cleans up a refused one', async () => {
    const bytes = randomBytes(3000);
    const up = blobs.begin(1000, bytes.length);
    expect(up.inMemory).toBe(false);
    await up.write(bytes.subarray(0, 10));
    expect(temps()).toHaveLength(1);
    await up.write(bytes.subarray(10));
    expect(await up.place()).toBe(true);
    await up.discard();
    expect(readFileSync(blobs.pathOf(sha256(bytes))).equals(bytes)).toBe(true);
    expect(temps()).toEqual([]);

    // Refused before a single byte arrived: the temp file opened up front is removed.
    const refused = blobs.begin(1000, 5000);
    await refused.discard();
    expect(temps()).toEqual([]);
  });

  it('does not overwrite an existing blob unless asked (place answers false)', async () => {
    const bytes = randomBytes(3000);
    await store(bytes);
    const path = blobs.pathOf(sha256(bytes));
    const ino = statSync(path).ino;
    for (const spill of [10, 1_000_000]) {
      const again = await store(bytes, spill);
      expect(again.created).toBe(false);
      expect(statSync(path).ino).toBe(ino);
    }
    const up = blobs.begin(10);
    await up.write(bytes);
    expect(await up.place(false)).toBe(false);
    expect(await up.place(true)).toBe(true);
    await up.discard();
    expect(statSync(path).ino).not.toBe(ino);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(temps()).toEqual([]);
  });

  it('leaves nothing under a valid name when an upload stops midway, and a restart clears its temp files', async () => {
    const up = blobs.begin(10);
    await up.write(randomBytes(5000));
    // The process "dies" here: no place(), no discard().
    expect(temps()).toHaveLength(1);
    writeFileSync(join(dir, 'blobs', 'tmp', 'stale.tmp'), 'half a blob');
    const reopened = await BlobStore.open(dir);
    expect(temps()).toEqual([]);
    const all: string[] = [];
    for await (const sha of reopened.list()) all.push(sha);
    expect(all).toEqual([]);
  });

  it('opens a stored blob to hash it, read it whole, or stream a byte range', async () => {
    const bytes = Buffer.from('0123456789abcdefghij');
    const { sha } = await store(bytes);
    const a = (await blobs.open(sha))!;
    expect(a.size).toBe(20);
    expect(await a.sha256()).toBe(sha);
    expect((await a.readAll()).equals(bytes)).toBe(true);
    expect(await text(a.stream(10, 14))).toBe('abcde');
    expect(await blobs.open('00'.repeat(32))).toBeUndefined();
  });

  it('lists stored blobs', async () => {
    const x = await store(Buffer.from('x'));
    const y = await store(Buffer.from('y'));
    const all: string[] = [];
    for await (const sha of blobs.list()) all.push(sha);
    expect(all.sort()).toEqual([x.sha, y.sha].sort());
  });

  it('is opened once per Store, beside its data', async () => {
    const { store: s, dir: d, dispose } = await openTempStore();
    try {
      const b1 = await blobsOf(s);
      expect(b1).toBe(await blobsOf(s));
      expect(b1).toBeInstanceOf(BlobStore);
      expect((b1 as BlobStore).root).toBe(join(d, 'blobs'));
      expect(existsSync(join(d, 'blobs', 'tmp'))).toBe(true);
    } finally {
      await dispose();
    }
  });
});

describe('BlobStore on a folder that turns read-only', () => {
  // Node's recursive mkdir reports EROFS on a directory it has to create as ENOENT: a new
  // shard directory on a read-only folder must still read as the storage failing.
  it('answers a new shard directory refused by a read-only folder as storage_unavailable (read_only), not as a bug', async (ctx) => {
    const handle = await openTempStore();
    try {
      const files = await BlobStore.open(handle.dir, { store: handle.store, inlineBytes: 0 });
      const bytes = randomBytes(3000);
      const up = files.begin(100, bytes.length); // announced large: its temp file is made now
      await up.write(bytes);
      const undo = await bindReadOnly(join(handle.dir, 'blobs'));
      if ('skip' in undo) {
        await up.discard();
        return ctx.skip();
      }
      try {
        const refused = await up.place().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(refused).toMatchObject({ code: 'storage_unavailable', status: 503, extra: { storage: { cause: 'read_only', where: 'blobs' } } });
        expect(handle.store.health?.status()).toMatchObject({ ok: false, cause: 'read_only' });
      } finally {
        await up.discard();
        await undo();
      }
    } finally {
      await handle.dispose();
    }
  });
});

describe('BlobStore with small blobs inline in its store', () => {
  let handle: Awaited<ReturnType<typeof openTempStore>>;
  let inline: BlobStore;
  beforeEach(async () => {
    handle = await openTempStore();
    inline = await BlobStore.open(handle.dir, { store: handle.store });
  });
  afterEach(async () => {
    await handle.dispose();
  });

  const fileOf = (sha: string) => join(handle.dir, 'blobs', sha.slice(0, 2), sha.slice(2));
  const files = () => readdirSync(join(handle.dir, 'blobs')).filter((n) => n !== 'tmp');
  const tmp = () => readdirSync(join(handle.dir, 'blobs', 'tmp'));

  async function place(into: BlobStore, bytes: Buffer, overwrite = false) {
    const up = into.begin();
    try {
      for (let i = 0; i < bytes.length; i += 16 * 1024) await up.write(bytes.subarray(i, i + 16 * 1024));
      return { sha: up.sha256(), cheap: up.cheapPlace, created: await up.place(overwrite) };
    } finally {
      await up.discard();
    }
  }

  /** The hash and the bytes of a stored blob, read the way a reader reads them (and closed). */
  async function read(from: BlobStore, sha: string) {
    const blob = (await from.open(sha))!;
    try {
      return { sha: await blob.sha256(), bytes: await blob.readAll() };
    } finally {
      await blob.close();
    }
  }

  async function listed(from: BlobStore = inline) {
    const all: string[] = [];
    for await (const sha of from.list()) all.push(sha);
    return all.sort();
  }

  it('stores a blob of exactly the threshold as a store value, and one byte more as a file', async () => {
    expect(inline.inlineBytes).toBe(INLINE_BLOB_BYTES);
    const at = randomBytes(INLINE_BLOB_BYTES);
    const over = randomBytes(INLINE_BLOB_BYTES + 1);
    const a = await place(inline, at);
    expect(a).toMatchObject({ sha: sha256(at), cheap: true, created: true });
    expect(await handle.store.get(InlineBlobs, a.sha)).toBe(at.toString('base64'));
    expect(existsSync(fileOf(a.sha))).toBe(false);

    const o = await place(inline, over);
    expect(o).toMatchObject({ sha: sha256(over), cheap: false, created: true });
    expect(await handle.store.get(InlineBlobs, o.sha)).toBeUndefined();
    expect(readFileSync(fileOf(o.sha)).equals(over)).toBe(true);
    expect(tmp()).toEqual([]);

    for (const [sha, bytes] of [
      [a.sha, at],
      [o.sha, over],
    ] as const) {
      expect(await inline.size(sha)).toBe(bytes.length);
      const blob = (await inline.open(sha))!;
      expect(blob.size).toBe(bytes.length);
      expect(await blob.sha256()).toBe(sha);
      expect((await blob.readAll()).equals(bytes)).toBe(true);
      expect((await buffer(blob.stream(100, 199))).equals(bytes.subarray(100, 200))).toBe(true);
      await blob.close();
    }
    expect(await listed()).toEqual([a.sha, o.sha].sort());
  });

  it('reads an inline blob of any length back whole and in ranges (base64 padding included)', async () => {
    for (const n of [1, 2, 3, 4, 5, 1000]) {
      const bytes = randomBytes(n);
      const { sha } = await place(inline, bytes);
      expect(await inline.size(sha)).toBe(n);
      const blob = (await inline.open(sha))!;
      expect((await blob.readAll()).equals(bytes)).toBe(true);
      expect((await buffer(blob.stream(n - 1, n - 1))).equals(bytes.subarray(n - 1))).toBe(true);
    }
  });

  it('creates an inline blob once (place answers false when stored), and replaces it on overwrite', async () => {
    const bytes = randomBytes(3000);
    const writes: string[] = [];
    handle.store.watch(InlineBlobs, (sha) => writes.push(sha));
    expect((await place(inline, bytes)).created).toBe(true);
    expect((await place(inline, bytes)).created).toBe(false);
    expect(writes).toHaveLength(1);
    const sha = sha256(bytes);
    // Concurrent creations of the same bytes: exactly one creates it.
    const other = randomBytes(2000);
    const results = await Promise.all(Array.from({ length: 8 }, () => place(inline, other)));
    expect(results.filter((r) => r.created)).toHaveLength(1);

    await handle.store.transact([blobLock(sha)], async (tx) => tx.put(InlineBlobs, sha, Buffer.from('damaged').toString('base64')));
    expect((await read(inline, sha)).sha).not.toBe(sha);
    expect((await place(inline, bytes, true)).created).toBe(true);
    expect((await read(inline, sha)).sha).toBe(sha);
  });

  it('finds, lists once and repairs small blobs written as files before blobs went inline', async () => {
    // The data folder of a node of before: every blob a file, whatever its size.
    await handle.dispose();
    handle = await openTempStore();
    const old = await BlobStore.open(handle.dir);
    const small = randomBytes(500);
    const { sha } = await place(old, small);
    expect(existsSync(fileOf(sha))).toBe(true);

    // Opened with inline blobs: the folder had files, so files of any size are looked for.
    const now = await BlobStore.open(handle.dir, { store: handle.store });
    expect(await handle.store.get(BlobFiles, 'sizes')).toEqual({ allAbove: 0 });
    expect(await now.size(sha)).toBe(500);
    expect((await read(now, sha)).bytes.equals(small)).toBe(true);
    expect(await place(now, small)).toMatchObject({ cheap: true, created: false });
    expect(await handle.store.get(InlineBlobs, sha)).toBeUndefined();
    expect(await listed(now)).toEqual([sha]);

    // Damaged, then repaired: the good bytes go inline and the damaged file goes away.
    chmodSync(fileOf(sha), 0o644);
    writeFileSync(fileOf(sha), Buffer.from('rot'));
    expect((await read(now, sha)).sha).not.toBe(sha);
    expect((await place(now, small, true)).created).toBe(true);
    expect(existsSync(fileOf(sha))).toBe(false);
    expect(await handle.store.get(InlineBlobs, sha)).toBe(small.toString('base64'));
    expect(await listed(now)).toEqual([sha]);
  });

  it('records that a fresh folder holds no small file, and never raises what it recorded', async () => {
    expect(files()).toEqual([]);
    expect(await handle.store.get(BlobFiles, 'sizes')).toEqual({ allAbove: INLINE_BLOB_BYTES });
    // A file, written now, holds more than the threshold; a later open keeps the record.
    await place(inline, randomBytes(INLINE_BLOB_BYTES + 1));
    expect(files()).toHaveLength(1);
    await BlobStore.open(handle.dir, { store: handle.store });
    expect(await handle.store.get(BlobFiles, 'sizes')).toEqual({ allAbove: INLINE_BLOB_BYTES });
    // A lower threshold lowers it (files are written from that size on); a higher one keeps it.
    await BlobStore.open(handle.dir, { store: handle.store, inlineBytes: 1000 });
    expect(await handle.store.get(BlobFiles, 'sizes')).toEqual({ allAbove: 1000 });
    const raised = await BlobStore.open(handle.dir, { store: handle.store, inlineBytes: 4000 });
    expect(await handle.store.get(BlobFiles, 'sizes')).toEqual({ allAbove: 1000 });
    // A file of 2000 bytes written under the lower threshold is still found as stored.
    const lower = await BlobStore.open(handle.dir, { store: handle.store, inlineBytes: 1000 });
    const mid = randomBytes(2000);
    const { sha } = await place(lower, mid);
    expect(existsSync(fileOf(sha))).toBe(true);
    expect(await place(raised, mid)).toMatchObject({ cheap: true, created: false });
    expect(await handle.store.get(InlineBlobs, sha)).toBeUndefined();
  });

  it('reads a stored value that is no longer the JSON it was written as as a damaged blob, and repairs it', async () => {
    const bytes = randomBytes(700);
    const { sha } = await place(inline, bytes);
    // Damage beneath the store: the value's text itself (sublevel keys are !space!key).
    const db = (handle.store as unknown as { db: { put(k: string, v: string): Promise<void> } }).db;
    await db.put(`!${InlineBlobs.name}!${sha}`, '"not base64 any more');
    expect(await inline.size(sha)).toBe(0);
    expect((await read(inline, sha)).sha).not.toBe(sha);
    expect(await place(inline, bytes)).toMatchObject({ created: false });
    expect((await place(inline, bytes, true)).created).toBe(true);
    expect((await read(inline, sha)).bytes.equals(bytes)).toBe(true);
  });

  it('goes inline only while the upload is in memory (a small spill size writes files)', async () => {
    const up = inline.begin(100);
    await up.write(randomBytes(200));
    expect(up.inMemory).toBe(false);
    expect(up.cheapPlace).toBe(false);
    expect(await up.place()).toBe(true);
    await up.discard();
    expect(existsSync(fileOf(up.sha256()))).toBe(true);
  });

  it('is what a Store without blobs of its own gets from blobsOf', async () => {
    const b = (await blobsOf(handle.store)) as BlobStore;
    expect(b.inlineBytes).toBe(INLINE_BLOB_BYTES);
  });
});
