// The Store contract on the LevelDB implementation (src/store/level.ts).
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openLevelStore, openTempStore, space, type LevelStore, type Store } from '../../src/store/index.js';
import { storeContract } from './contract.js';

/** A fresh LevelStore in a temp folder; reopen closes it and opens the same folder again. */
async function openLevel() {
  const temp = await openTempStore();
  let current: Store = temp.store;
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
