// The contract every Store implementation passes (src/store/types.ts), in the manner of
// abstract-level's compliance suite: LevelDB today (test/store/level.test.ts), PostgreSQL
// later, each calling storeContract with a factory for a fresh, empty store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { space, type OpenedStore, type Range } from '../../src/store/index.js';

/** A fresh, empty store, plus what the suite needs to restart and remove it. */
export interface StoreHandle {
  store: OpenedStore;
  /** Closes the current store and opens the same data again (a restart); answers the new store. */
  reopen: () => Promise<OpenedStore>;
  /** Closes whichever store is current and removes its data. */
  dispose: () => Promise<void>;
}

interface Doc {
  n: number;
  tags?: string[];
  nested?: { deep: { value: string | null } };
}

const A = space<Doc>('contract-a');
const B = space<Doc>('contract-b');
// Names that share a prefix with A: a prefix-based implementation must still keep them apart.
const A_DASH = space<Doc>('contract-a-b');
const AB = space<Doc>('contract-ab');
const COUNTERS = space<number>('contract-counters');

// One turn of the event loop: lets every other pending transaction run, so a missing lock
// would show as a lost update (this is ordering, not timing).
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

const pad = (i: number) => String(i).padStart(2, '0');

/** Runs the Store contract against `open`, which answers a fresh, empty store each call. */
export function storeContract(name: string, open: () => Promise<StoreHandle>): void {
  describe(`Store contract: ${name}`, () => {
    let handle: StoreHandle;
    let store: OpenedStore;

    beforeEach(async () => {
      handle = await open();
      store = handle.store;
    });
    afterEach(async () => {
      await handle.dispose();
    });

    const put = (sp: typeof A, key: string, value: Doc) => store.transact([key], async (tx) => tx.put(sp, key, value));
    const increment = (key: string, options?: { durable?: boolean }) =>
      store.transact(
        [`counter:${key}`],
        async (tx) => {
          const n = (await tx.get(COUNTERS, key)) ?? 0;
          await turn();
          tx.put(COUNTERS, key, n + 1);
        },
        options,
      );

    describe('get, put and del', () => {
      it('answers undefined for a key never written', async () => {
        expect(await store.get(A, 'nothing')).toBeUndefined();
      });

      it('reads back what a transaction put, as an equal value', async () => {
        const value: Doc = { n: 1.5, tags: ['x', 'é€😂', ''], nested: { deep: { value: null } } };
        await put(A, 'k', value);
        expect(await store.get(A, 'k')).toEqual(value);
      });

      it('holds numbers, strings, booleans and arrays as values', async () => {
        const any = space<unknown>('contract-any');
        const values: unknown[] = [0, -1, 3.25, 'text', '', true, false, [1, 'two', { three: 3 }], { a: [] }];
        await store.transact(['any'], async (tx) => {
          for (const [i, v] of values.entries()) tx.put(any, `v${i}`, v);
        });
        for (const [i, v] of values.entries()) expect(await store.get(any, `v${i}`)).toEqual(v);
      });

      it('keeps keys with separators and non-ASCII characters apart', async () => {
        const keys = ['a!b', 'a/b', 'a:b', 'a b', 'a\u00ffb', 'é', '😂', 'a'];
        await store.transact(keys, async (tx) => {
          for (const [i, k] of keys.entries()) tx.put(A, k, { n: i });
        });
        for (const [i, k] of keys.entries()) expect(await store.get(A, k)).toEqual({ n: i });
        expect((await store.list(A)).map(([k]) => k).sort()).toEqual([...keys].sort());
      });

      it('forgets what a transaction deleted, and deleting a missing key is no error', async () => {
        await put(A, 'k', { n: 1 });
        await store.transact(['k'], async (tx) => {
          tx.del(A, 'k');
          tx.del(A, 'never-written');
        });
        expect(await store.get(A, 'k')).toBeUndefined();
        expect(await store.list(A)).toEqual([]);
      });

      it('keeps the last of several writes to one key', async () => {
        await store.transact(['k'], async (tx) => {
          tx.put(A, 'k', { n: 1 });
          tx.put(A, 'k', { n: 2 });
          tx.del(A, 'k');
          tx.put(A, 'k', { n: 3 });
        });
        expect(await store.get(A, 'k')).toEqual({ n: 3 });
      });

      it('answers what the transaction function returned', async () => {
        expect(await store.transact(['k'], async () => ({ ok: 42 }))).toEqual({ ok: 42 });
        expect(await store.transact([], async () => 'no locks, no writes')).toBe('no locks, no writes');
      });
    });

    describe('a space the read cache keeps nothing of (cached: false)', () => {
      const Raw = space<string>('contract-uncached', { cached: false });

      it('reads, lists, watches and survives a reopen like any other space', async () => {
        const seen: string[] = [];
        store.watch(Raw, (key) => seen.push(key));
        await store.transact(['u'], async (tx) => {
          expect(await tx.get(Raw, 'a')).toBeUndefined();
          tx.put(Raw, 'a', 'first');
          tx.put(Raw, 'b', 'second');
          expect(await tx.get(Raw, 'a')).toBe('first');
        });
        expect(seen.sort()).toEqual(['a', 'b']);
        expect(await store.get(Raw, 'a')).toBe('first');
        await store.transact(['u'], async (tx) => {
          expect(await tx.get(Raw, 'b')).toBe('second');
          tx.put(Raw, 'a', 'again');
          tx.del(Raw, 'b');
          expect(await tx.get(Raw, 'b')).toBeUndefined();
        });
        expect(await store.get(Raw, 'a')).toBe('again');
        expect(await store.list(Raw)).toEqual([['a', 'again']]);
        store = await handle.reopen();
        expect(await store.get(Raw, 'a')).toBe('again');
        expect(await store.get(Raw, 'b')).toBeUndefined();
        // In a fresh store's transaction too (its first read of the space).
        expect(await store.transact(['u'], async (tx) => tx.get(Raw, 'a'))).toBe('again');
      });
    });

    describe('inside a transaction', () => {
      it('reads its own writes and deletes before they commit', async () => {
        await put(A, 'old', { n: 0 });
        await store.transact(['old', 'new'], async (tx) => {
          tx.put(A, 'new', { n: 1 });
          expect(await tx.get(A, 'new')).toEqual({ n: 1 });
          tx.del(A, 'old');
          expect(await tx.get(A, 'old')).toBeUndefined();
          tx.put(A, 'old', { n: 2 });
          expect(await tx.get(A, 'old')).toEqual({ n: 2 });
          expect(await tx.get(A, 'untouched')).toBeUndefined();
        });
      });

      it('reads committed data it has not written', async () => {
        await put(A, 'k', { n: 7 });
        await store.transact(['k'], async (tx) => expect(await tx.get(A, 'k')).toEqual({ n: 7 }));
      });

      it('keeps its writes invisible to other readers until it commits', async () => {
        await store.transact(['k'], async (tx) => {
          tx.put(A, 'k', { n: 1 });
          await turn();
          expect(await store.get(A, 'k')).toBeUndefined();
          expect(await store.list(A)).toEqual([]);
        });
        expect(await store.get(A, 'k')).toEqual({ n: 1 });
      });

      it('lists committed entries in key order', async () => {
        await store.transact(['x'], async (tx) => {
          for (const [i, k] of ['c', 'a', 'b'].entries()) tx.put(A, k, { n: i });
        });
        const listed = await store.transact(['y'], async (tx) => tx.list(A, { gte: 'b' }));
        expect(listed).toEqual([
          ['b', { n: 2 }],
          ['c', { n: 0 }],
        ]);
      });
    });

    describe('when the transaction function throws', () => {
      beforeEach(async () => {
        await store.transact(['k1', 'k3'], async (tx) => {
          tx.put(A, 'k1', { n: 1 });
          tx.put(A, 'k3', { n: 3 });
        });
      });

      it('rejects with the same error and writes nothing', async () => {
        const boom = new Error('boom');
        const attempt = store.transact(['k1', 'k2', 'k3'], async (tx) => {
          tx.put(A, 'k1', { n: 100 });
          tx.put(A, 'k2', { n: 200 });
          tx.put(B, 'k2', { n: 200 });
          tx.del(A, 'k3');
          await turn();
          throw boom;
        });
        await expect(attempt).rejects.toBe(boom);
        expect(await store.list(A)).toEqual([
          ['k1', { n: 1 }],
          ['k3', { n: 3 }],
        ]);
        expect(await store.list(B)).toEqual([]);
      });

      it('releases its locks, so the next transaction on those keys runs', async () => {
        await expect(store.transact(['k1'], async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
        await put(A, 'k1', { n: 11 });
        expect(await store.get(A, 'k1')).toEqual({ n: 11 });
      });
    });

    describe('watch', () => {
      it('tells a watcher each key a committed batch wrote or deleted, and nothing of a failed one', async () => {
        const seen: string[] = [];
        const stop = store.watch(A, (key) => seen.push(key));
        await store.transact(['w'], async (tx) => {
          tx.put(A, 'w1', { n: 1 });
          tx.put(B, 'other-space', { n: 1 });
        });
        await store.transact(['w'], async (tx) => tx.del(A, 'w1'));
        await store
          .transact(['w'], async (tx) => {
            tx.put(A, 'never', { n: 1 });
            throw new Error('abort');
          })
          .catch(() => undefined);
        expect(seen).toEqual(['w1', 'w1']);
        stop();
        await store.transact(['w'], async (tx) => tx.put(A, 'w2', { n: 2 }));
        expect(seen).toEqual(['w1', 'w1']);
      });
    });

    describe('atomicity', () => {
      it('commits a multi-key batch across spaces all together', async () => {
        await store.transact(['batch'], async (tx) => {
          for (let i = 0; i < 100; i++) {
            tx.put(A, `k${pad(i)}`, { n: i });
            tx.put(B, `k${pad(i)}`, { n: -i });
          }
        });
        expect(await store.list(A)).toHaveLength(100);
        expect(await store.list(B)).toHaveLength(100);
      });

      it('never shows a reader part of a batch', async () => {
        const SIZE = 500;
        let done = false;
        const seen = new Set<number>();
        const reader = (async () => {
          do {
            seen.add((await store.list(A)).length);
            await turn();
          } while (!done);
          seen.add((await store.list(A)).length);
        })();
        await store.transact(['batch'], async (tx) => {
          await turn();
          for (let i = 0; i < SIZE; i++) tx.put(A, `k${String(i).padStart(3, '0')}`, { n: i });
        });
        done = true;
        await reader;
        expect([...seen].every((n) => n === 0 || n === SIZE)).toBe(true);
        expect(seen.has(SIZE)).toBe(true);
      });
    });

    describe('list and iterate', () => {
      const keys = Array.from({ length: 20 }, (_, i) => `k${pad(i)}`);

      beforeEach(async () => {
        // Written in a scrambled order, read back in key order.
        const scrambled = keys.map((_, i) => keys[(i * 7) % keys.length]);
        await store.transact(['fill'], async (tx) => {
          for (const k of scrambled) tx.put(A, k, { n: Number(k.slice(1)) });
          tx.put(B, 'k05', { n: -5 });
          tx.put(A_DASH, 'k00', { n: -1 });
          tx.put(AB, 'k00', { n: -2 });
        });
      });

      const cases: Array<[string, Range, string[]]> = [
        ['everything', {}, keys],
        ['gt', { gt: 'k15' }, keys.slice(16)],
        ['gte', { gte: 'k15' }, keys.slice(15)],
        ['lt', { lt: 'k03' }, keys.slice(0, 3)],
        ['lte', { lte: 'k03' }, keys.slice(0, 4)],
        ['gte and lt', { gte: 'k05', lt: 'k08' }, ['k05', 'k06', 'k07']],
        ['gt and lte', { gt: 'k05', lte: 'k08' }, ['k06', 'k07', 'k08']],
        ['a prefix range', { gte: 'k1', lt: 'k2' }, keys.slice(10)],
        ['reverse', { reverse: true }, [...keys].reverse()],
        ['limit', { limit: 3 }, ['k00', 'k01', 'k02']],
        ['reverse with limit', { reverse: true, limit: 2 }, ['k19', 'k18']],
        ['a bounded reverse range with limit', { gt: 'k05', lt: 'k12', reverse: true, limit: 3 }, ['k11', 'k10', 'k09']],
        ['bounds between keys', { gt: 'k055', lt: 'k075' }, ['k06', 'k07']],
        ['an empty range', { gt: 'k19' }, []],
        ['bounds that cross', { gte: 'k10', lt: 'k05' }, []],
      ];

      it.each(cases)('lists %s in key order', async (_label, range, expected) => {
        const entries = await store.list(A, range);
        expect(entries.map(([k]) => k)).toEqual(expected);
        for (const [k, v] of entries) expect(v).toEqual({ n: Number(k.slice(1)) });
      });

      it.each(cases)('iterates %s exactly as list does', async (_label, range, expected) => {
        const seen: string[] = [];
        for await (const [k, v] of store.iterate(A, range)) {
          expect(v).toEqual({ n: Number(k.slice(1)) });
          seen.push(k);
        }
        expect(seen).toEqual(expected);
      });

      it('lets an iteration stop early and the store go on', async () => {
        const seen: string[] = [];
        for await (const [k] of store.iterate(A)) {
          seen.push(k);
          if (seen.length === 2) break;
        }
        expect(seen).toEqual(['k00', 'k01']);
        await put(A, 'k99', { n: 99 });
        expect(await store.get(A, 'k99')).toEqual({ n: 99 });
      });

      // What a migration that re-keys a space as it reads it relies on (domain/migrations.ts), past
      // PostgreSQL's page of 512: each key once and in order, every entry there throughout yielded.
      it('yields each key once, in order, while the entries yielded are deleted and others written', async () => {
        const many = Array.from({ length: 1200 }, (_, i) => `m${String(i).padStart(4, '0')}`);
        await store.transact(['fill'], async (tx) => {
          for (const k of many) tx.put(A, k, { n: 0 });
        });
        const seen: string[] = [];
        for await (const [k] of store.iterate(A, { gte: 'm' })) {
          seen.push(k);
          if (seen.length % 100 === 0)
            await store.transact(['fill'], async (tx) => {
              for (const gone of seen.slice(-100)) tx.del(A, gone);
              tx.put(A, `${k}x`, { n: 1 }); // behind where the iteration is: yielding it would break the order
            });
        }
        expect(seen).toEqual(many);
      });
    });

    describe('members', () => {
      it('says whether other processes share it, accepts writes when fresh, and answers one blob store', async () => {
        expect(typeof store.shared).toBe('boolean');
        expect(store.health.status()).toMatchObject({ ok: true });
        const blobs = await store.blobs();
        expect(await store.blobs()).toBe(blobs);
        expect(await blobs.audit()).toEqual({ acknowledged: 0, stored: 0, unindexed: 0, problems: [] });
      });
    });

    describe('spaces', () => {
      it('keep the same key apart in different spaces', async () => {
        await store.transact(['k'], async (tx) => {
          tx.put(A, 'k', { n: 1 });
          tx.put(B, 'k', { n: 2 });
          tx.put(A_DASH, 'k', { n: 3 });
          tx.put(AB, 'k', { n: 4 });
        });
        expect(await store.get(A, 'k')).toEqual({ n: 1 });
        expect(await store.get(B, 'k')).toEqual({ n: 2 });
        expect(await store.get(A_DASH, 'k')).toEqual({ n: 3 });
        expect(await store.get(AB, 'k')).toEqual({ n: 4 });
      });

      it('list and delete only within their own space, even when names share a prefix', async () => {
        await store.transact(['k'], async (tx) => {
          tx.put(A, 'k', { n: 1 });
          tx.put(A_DASH, 'k', { n: 3 });
          tx.put(A_DASH, 'z', { n: 5 });
          tx.put(AB, 'k', { n: 4 });
        });
        expect(await store.list(A)).toEqual([['k', { n: 1 }]]);
        expect((await store.list(A_DASH)).map(([k]) => k)).toEqual(['k', 'z']);
        await store.transact(['k'], async (tx) => tx.del(A, 'k'));
        expect(await store.get(A_DASH, 'k')).toEqual({ n: 3 });
        expect(await store.get(AB, 'k')).toEqual({ n: 4 });
        expect(await store.list(B)).toEqual([]);
      });
    });

    describe('values are copies', () => {
      beforeEach(async () => {
        await put(A, 'k', { n: 1, tags: ['a'] });
      });

      it('so mutating what get answered changes nothing stored', async () => {
        const got = (await store.get(A, 'k'))!;
        got.n = 999;
        got.tags!.push('mutated');
        expect(await store.get(A, 'k')).toEqual({ n: 1, tags: ['a'] });
      });

      it('so mutating what list and iterate answered changes nothing stored', async () => {
        (await store.list(A))[0][1].tags!.push('mutated');
        for await (const [, v] of store.iterate(A)) v.n = 999;
        expect(await store.get(A, 'k')).toEqual({ n: 1, tags: ['a'] });
      });

      it('so mutating an object after putting it changes nothing committed', async () => {
        await store.transact(['k'], async (tx) => {
          const value: Doc = { n: 2, tags: ['b'] };
          tx.put(A, 'k', value);
          value.n = 999;
          value.tags!.push('mutated');
          expect(await tx.get(A, 'k')).toEqual({ n: 2, tags: ['b'] });
        });
        expect(await store.get(A, 'k')).toEqual({ n: 2, tags: ['b'] });
      });

      it("so mutating what tx.get answered changes neither the transaction's view nor the store", async () => {
        await store.transact(['k'], async (tx) => {
          (await tx.get(A, 'k'))!.n = 999;
          expect(await tx.get(A, 'k')).toEqual({ n: 1, tags: ['a'] });
          tx.put(A, 'k', { n: 2 });
          (await tx.get(A, 'k'))!.n = 999;
          expect(await tx.get(A, 'k')).toEqual({ n: 2 });
        });
        expect(await store.get(A, 'k')).toEqual({ n: 2 });
      });
    });

    describe('locks', () => {
      it('serialize 200 concurrent read-modify-writes of one counter: it ends at exactly 200', async () => {
        await Promise.all(Array.from({ length: 200 }, () => increment('c')));
        expect(await store.get(COUNTERS, 'c')).toBe(200);
      });

      it('serialize durable and non-durable writers of one key alike', async () => {
        await Promise.all(Array.from({ length: 100 }, (_, i) => increment('c', { durable: i % 2 === 0 })));
        expect(await store.get(COUNTERS, 'c')).toBe(100);
      });

      it('let transactions on disjoint keys run at the same time', async () => {
        // The first holds 'a' until the second (holding 'b') has started: if the second waited
        // for the first, neither would ever finish.
        let started!: () => void;
        const secondStarted = new Promise<void>((resolve) => (started = resolve));
        const first = store.transact(['a'], async (tx) => {
          await secondStarted;
          tx.put(A, 'a', { n: 1 });
        });
        const second = store.transact(['b'], async (tx) => {
          started();
          tx.put(A, 'b', { n: 2 });
        });
        await Promise.all([first, second]);
        expect((await store.list(A)).map(([k]) => k)).toEqual(['a', 'b']);
      });

      it('never deadlock on overlapping lock sets taken in different orders', async () => {
        const names = ['w', 'x', 'y', 'z'];
        const expected: Record<string, number> = { w: 0, x: 0, y: 0, z: 0 };
        const jobs = Array.from({ length: 120 }, (_, i) => {
          // A different subset in a different order each time, with a duplicate now and then.
          const subset = names.filter((_, j) => ((i + 1) >> j) & 1 || j === i % 4);
          const order = i % 2 ? [...subset].reverse() : subset;
          const lockKeys = i % 5 === 0 ? [...order, order[0]] : order;
          for (const k of subset) expected[k]++;
          return store.transact(
            lockKeys.map((k) => `counter:${k}`),
            async (tx) => {
              const current = await Promise.all(subset.map(async (k) => (await tx.get(COUNTERS, k)) ?? 0));
              await turn();
              for (const [j, k] of subset.entries()) tx.put(COUNTERS, k, current[j] + 1);
            },
          );
        });
        await Promise.all(jobs);
        for (const k of names) expect(await store.get(COUNTERS, k)).toBe(expected[k]);
      });
    });

    describe('durability', () => {
      it('keeps committed data across a close and reopen', async () => {
        await store.transact(['k'], async (tx) => {
          tx.put(A, 'k', { n: 1, nested: { deep: { value: 'v' } } });
          tx.put(B, 'k', { n: 2 });
          tx.put(COUNTERS, 'c', 5);
        });
        store = await handle.reopen();
        expect(await store.get(A, 'k')).toEqual({ n: 1, nested: { deep: { value: 'v' } } });
        expect(await store.get(B, 'k')).toEqual({ n: 2 });
        expect(await store.get(COUNTERS, 'c')).toBe(5);
      });

      it('keeps a delete across a reopen', async () => {
        await put(A, 'k', { n: 1 });
        await store.transact(['k'], async (tx) => tx.del(A, 'k'));
        store = await handle.reopen();
        expect(await store.get(A, 'k')).toBeUndefined();
      });

      it('keeps non-durable writes across a clean close', async () => {
        await store.transact(['k'], async (tx) => tx.put(A, 'k', { n: 1 }), { durable: false });
        store = await handle.reopen();
        expect(await store.get(A, 'k')).toEqual({ n: 1 });
      });

      it('resolves every one of many concurrent durable transactions, with all their data (group commit)', async () => {
        const results = await Promise.all([
          ...Array.from({ length: 300 }, (_, i) =>
            store.transact([`k${i}`], async (tx) => {
              tx.put(A, `k${String(i).padStart(3, '0')}`, { n: i });
              return i;
            }),
          ),
          ...Array.from({ length: 100 }, () => increment('shared').then(() => -1)),
        ]);
        expect(results.filter((r) => r >= 0)).toHaveLength(300);
        const check = async () => {
          const entries = await store.list(A);
          expect(entries).toHaveLength(300);
          entries.forEach(([k, v], i) => {
            expect(k).toBe(`k${String(i).padStart(3, '0')}`);
            expect(v).toEqual({ n: i });
          });
          expect(await store.get(COUNTERS, 'shared')).toBe(100);
        };
        await check();
        store = await handle.reopen();
        await check();
      });

      it('goes on taking transactions after a reopen', async () => {
        store = await handle.reopen();
        await Promise.all(Array.from({ length: 20 }, () => increment('c')));
        expect(await store.get(COUNTERS, 'c')).toBe(20);
      });
    });
  });
}
