// The Store contract on the LevelDB implementation (src/store/level.ts).
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openLevelStore, openTempStore, type Store } from '../../src/store/index.js';
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

  it('closes more than once without error', async () => {
    const handle = await openLevel();
    await handle.store.close();
    await handle.store.close();
    await handle.dispose();
  });
});
