// The Store contract on the LevelDB implementation (src/store/level.ts).
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openLevelStore, openTempStore, space, type LevelStore } from '../../src/store/index.js';
import { storeContract } from './contract.js';
import { strategiesContract } from './contract-node.js';

/** A fresh LevelStore in a temp folder; reopen closes it and opens the same folder again. */
async function openLevel() {
  const temp = await openTempStore();
  let current: LevelStore = temp.store;
  return {
    store: temp.store,
    dir: temp.dir,
    reopen: async () => {
      await current.close();
      current = await openLevelStore(temp.dir);
      return current;
    },
    dispose: async () => {
      await current.close();
      await temp.dispose();
    },
  };
}

storeContract('LevelStore (level@10)', openLevel);
strategiesContract('LevelDB', openLevel);

describe('LevelStore', () => {
  it('lives in the folder it was opened on, and dispose removes it', async () => {
    const handle = await openLevel();
    expect(handle.store.location).toBe(handle.dir);
    expect(existsSync(handle.dir)).toBe(true);
    await handle.dispose();
    expect(existsSync(handle.dir)).toBe(false);
  });

  it('keeps values of a space declared uncached out of its read cache, in and out of transactions', async () => {
    const handle = await openLevel();
    const Cached = space<string>('level-cached');
    const Raw = space<string>('level-uncached', { cached: false });
    try {
      const store = handle.store as LevelStore;
      await store.transact(['k'], async (tx) => {
        tx.put(Cached, 'k', 'committed');
        tx.put(Raw, 'k', 'committed');
      });
      expect(await store.get(Cached, 'k')).toBe('committed');
      expect(await store.get(Raw, 'k')).toBe('committed');
      // Beneath the store (the same bytes a sublevel write puts there): the cached space still
      // answers its cached text, the uncached one reads LevelDB every time.
      const db = (store as unknown as { db: { put(k: string, v: string): Promise<void> } }).db;
      await db.put('!level-cached!k', JSON.stringify('beneath'));
      await db.put('!level-uncached!k', JSON.stringify('beneath'));
      expect(await store.get(Cached, 'k')).toBe('committed');
      expect(await store.get(Raw, 'k')).toBe('beneath');
      expect(await store.transact(['k'], async (tx) => tx.get(Raw, 'k'))).toBe('beneath');
    } finally {
      await handle.dispose();
    }
  });

  it('closes more than once without error', async () => {
    const handle = await openLevel();
    await handle.store.close();
    await handle.store.close();
    await handle.dispose();
  });
});

describe('LevelStore when its disk fails (health.ts)', () => {
  const Things = space<{ i: number; pad: string }>('fault-things');
  const pad = 'x'.repeat(2000);
  const key = (i: number) => String(i).padStart(6, '0');

  it('closes to writes at the first failed write (503 storage_unavailable), keeps reading, and resumes after a probe, losing nothing it ' +
    'acknowledged', async (ctx) => {
    const { mountSmallFs, fillDisk } = await import('../helpers/faults.js');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const root = mkdtempSync(join(tmpdir(), 'akas-store-full-'));
    const fs = await mountSmallFs(join(root, 'mnt'), 4);
    if ('skip' in fs) {
      rmSync(root, { recursive: true, force: true });
      console.warn(`full-disk store test skipped: ${fs.skip}`);
      return ctx.skip();
    }
    const dir = join(fs.dir, 'data');
    let store = await openLevelStore(dir);
    const acked: number[] = [];
    const put = (i: number) => store.transact([key(i)], async (tx) => tx.put(Things, key(i), { i, pad })).then(() => void acked.push(i));
    try {
      for (let i = 0; i < 50; i++) await put(i);
      const ballast = fillDisk(fs.dir);
      let refused: unknown;
      for (let i = 50; i < 5000 && !refused; i++) await put(i).catch((e) => (refused = e));
      expect(refused).toMatchObject({ code: 'storage_unavailable', status: 503, extra: { storage: { cause: 'disk_full' } } });
      expect(store.health?.status()).toMatchObject({ ok: false, cause: 'disk_full', where: 'store' });
      // Every later write is refused, even one that would fit; reads go on.
      await expect(put(9999)).rejects.toMatchObject({ code: 'storage_unavailable' });
      expect(await store.get(Things, key(0))).toEqual({ i: 0, pad });
      expect(await store.health!.tryProbe()).toBe(false);

      rmSync(ballast);
      expect(await store.health!.tryProbe()).toBe(true);
      expect(store.health?.status()).toEqual({ ok: true });
      // The writes a LevelDB log written on after a failure lost at the next open.
      for (let i = 10_000; i < 10_100; i++) await put(i);
      await store.close();
      store = await openLevelStore(dir);
      const missing = [];
      for (const i of acked) if ((await store.get(Things, key(i)))?.i !== i) missing.push(i);
      expect(missing).toEqual([]);
      expect((store as LevelStore).incidents).toEqual([]);
    } finally {
      await store.close();
      await fs.unmount();
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);

  it('records what LevelDB dropped of its write-ahead log at an open (records after a broken one), for the audit', async () => {
    const { readdirSync, readFileSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { checkRecords } = await import('../../src/domain/records-check.js');
    const handle = await openLevel();
    for (let i = 0; i < 100; i++) await handle.store.transact([key(i)], async (tx) => tx.put(Things, key(i), { i, pad }));
    await handle.store.close();
    // What a write that failed half-way leaves: bytes missing in the middle, records written after them.
    const log = join(handle.dir, 'level', readdirSync(join(handle.dir, 'level')).find((f) => f.endsWith('.log'))!);
    const bytes = readFileSync(log);
    writeFileSync(log, Buffer.concat([bytes.subarray(0, 50_000), bytes.subarray(51_000)]));
    const reopened = (await handle.reopen()) as LevelStore;
    expect(reopened.incidents.length).toBeGreaterThan(0);
    expect(reopened.incidents[0]).toMatchObject({
      file: expect.stringMatching(/\.log$/),
      bytes: expect.any(Number),
      reason: expect.stringMatching(/checksum|length/),
    });
    const lost = [];
    for (let i = 0; i < 100; i++) if (!(await reopened.get(Things, key(i)))) lost.push(i);
    expect(lost.length).toBeGreaterThan(0);
    // Kept in the store: an audit run at any later open still reports it.
    const later = await handle.reopen();
    const check = await checkRecords(later);
    expect(check.ok).toBe(false);
    expect(check.incidents).toBe(reopened.incidents.length);
    expect(check.problems[0]).toMatch(/dropped \d+ bytes of its write-ahead log .* writes acknowledged before then may be lost/);
    await handle.dispose();
  });

  it("reads the lines of LevelDB's info log in which recovery dropped bytes", async () => {
    const { walDrops } = await import('../../src/store/index.js');
    const log = [
      '2026/11/25-16:04:17.227968 7fb4977fe6c0 Recovering log #3',
      '2026/11/25-16:04:17.229480 7fb4977fe6c0 (ignoring error) /data/level/000003.log: dropping 5506 bytes; Corruption: checksum mismatch',
      '2026/11/25-16:04:17.229713 7fb4977fe6c0 Level-0 table #5: started',
    ].join('\n');
    expect(walDrops(log, 7)).toEqual([{ at: 7, file: '000003.log', bytes: 5506, reason: 'Corruption: checksum mismatch' }]);
    expect(walDrops('2026/11/25-16:16:22.193913 7f50017be6c0 Recovering log #6\n', 7)).toEqual([]);
  });

  it('goes on reading across the reopen a probe makes: an iteration resumes after its last key, reads wait', async () => {
    const handle = await openLevel();
    const store = handle.store as LevelStore;
    for (let i = 0; i < 300; i++) await store.transact([key(i)], async (tx) => tx.put(Things, key(i), { i, pad: '' }));
    const seen: number[] = [];
    for await (const [, v] of store.iterate(Things)) {
      seen.push(v.i);
      if (v.i === 100) {
        // A failure (as a write would report it), then the probe: the database is closed and opened again.
        store.health!.fail(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
        await expect(store.transact(['x'], async (tx) => tx.put(Things, 'x', { i: -1, pad: '' }))).rejects.toMatchObject({ code: 'storage_unavailable' });
        const [probed, read] = await Promise.all([store.health!.tryProbe(), store.get(Things, key(7))]);
        expect(probed).toBe(true);
        expect(read).toEqual({ i: 7, pad: '' });
      }
    }
    expect(seen).toEqual(Array.from({ length: 300 }, (_, i) => i));
    const back: number[] = [];
    for await (const [, v] of store.iterate(Things, { reverse: true, limit: 5 })) back.push(v.i);
    expect(back).toEqual([299, 298, 297, 296, 295]);
    await handle.dispose();
  });

  it('names a folder another store holds instead of opening it twice', async () => {
    const handle = await openLevel();
    await expect(openLevelStore(handle.dir)).rejects.toMatchObject({
      name: 'StoreInUseError',
      message: expect.stringContaining(`the data folder ${handle.dir} is in use by another akas process`),
    });
    await handle.dispose();
  });
});
