// What the node's assembly takes from a store, on both stores (src/node/strategies.ts): the
// strategies it chooses by the store's `shared` keep the promises their interfaces state. Run
// by test/store/level.test.ts and postgres.test.ts beside the Store contract (contract.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/index.js';
import { publishToTree, treeLocks } from '../../src/domain/knowledge/tree.js';
import type { ProposalRecord } from '../../src/domain/records.js';
import { strategiesFor } from '../../src/node/strategies.js';
import type { OpenedStore } from '../../src/store/index.js';
import { samplePayload } from '../fixtures/payloads.js';

export function strategiesContract(name: string, open: () => Promise<{ store: OpenedStore; dispose: () => Promise<void> }>): void {
  describe(`the strategies of a node on ${name}`, () => {
    let handle: { store: OpenedStore; dispose: () => Promise<void> };
    let store: OpenedStore;
    beforeEach(async () => {
      handle = await open();
      store = handle.store;
    });
    afterEach(() => handle.dispose());

    it('draws each bucket atomically: 30 draws at once from a bucket of 10 take 10, and a draw takes all it asks or nothing', async () => {
      const clock = new FakeClock();
      const buckets = strategiesFor(store).buckets(store, clock);
      try {
        const draws = await Promise.all(Array.from({ length: 30 }, () => buckets.draw('ip:1', 10, 1, clock.now(), true)));
        expect(draws.filter((d) => d.taken)).toHaveLength(10);
        clock.advance(3000);
        expect(await buckets.draw('ip:1', 10, 1, clock.now(), 4)).toMatchObject({ taken: false });
        expect(await buckets.draw('ip:1', 10, 1, clock.now(), 3)).toMatchObject({ taken: true, tokens: 0 });
      } finally {
        await buckets.close();
      }
    });

    const capability = (n: number, title: string) =>
      ({
        proposalId: `cprop_${n}`,
        kind: 'capability',
        path: `/tools/t-${n}`,
        payload: { ...samplePayload('capability', n), path: `/tools/t-${n}`, title },
      }) as unknown as ProposalRecord;

    it('searches the published tree: a node found by a misspelt word and by a prefix, its title and its path suggested', async () => {
      const { search: place } = strategiesFor(store);
      for (const p of [capability(1, 'Quaternion interpolator for robot arms'), capability(2, 'Gyroscope drift compensation')])
        await store.transact(treeLocks(p), (tx) => publishToTree(tx, p, 1_767_268_800_000, place));
      const search = place.open(store);
      try {
        await search.settled();
        const paths = async (q: string) => (await search.search(q, { limit: 10 })).items.map((i) => i.path);
        expect(await paths('quaternion')).toEqual(['/tools/t-1']);
        expect(await paths('quaternon')).toEqual(['/tools/t-1']); // one letter missing
        expect(await paths('gyroscpoe drift')).toEqual(['/tools/t-2']); // two letters swapped: two edits in nine letters
        expect(await paths('interp')).toEqual(['/tools/t-1']); // the last word as typed
        expect(await paths('robot gyro')).toEqual([]); // every word required
        expect(await search.suggest('gyro')).toEqual([{ path: '/tools/t-2', title: 'Gyroscope drift compensation', kind: 'leaf-capability' }]);
        expect((await search.suggest('/tools/t-')).map((s) => s.path)).toEqual(['/tools/t-1', '/tools/t-2']);
      } finally {
        await search.close();
      }
    });
  });
}
