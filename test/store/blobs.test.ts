import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobStore, blobsOf, openTempStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/e2e.js';

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
