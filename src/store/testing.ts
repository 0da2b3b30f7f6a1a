import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLevelStore } from './level.js';
import type { Store } from './types.js';

/** A fresh store in a new temp folder; `dispose` closes it and removes the folder. */
export async function openTempStore(): Promise<{ store: Store; dir: string; dispose: () => Promise<void> }> {
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
