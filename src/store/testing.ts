import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLevelStore, type LevelStore } from './level.js';

/** A fresh store in a new temp folder; `dispose` closes it and removes the folder. */
export async function openTempStore(): Promise<{ store: LevelStore; dir: string; dispose: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'akas-store-'));
  const store = await openLevelStore(dir);
  return {
    store,
    dir,
    dispose: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
