// The verifiable index on both stores (src/domain/log/lookup.ts, docs/INDEX.md): lookups proven
// against a root the log holds, the map held to one rebuilt from the log's entries from scratch,
// and a map read back at start: caught up when a crash left it behind the log, rebuilt when its
// stored root is not the one its lists give.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  cryptoRandom,
  entryLookupKeys,
  FakeClock,
  freshNodeKeys,
  LOOKUP_ROOT_KIND,
  lookupKeyHash,
  verifyMapProof,
  type LogEntry,
} from '../../../src/core/index.js';
import { naiveMapRoot } from '../../../src/core/lookup.js';
import { TransparencyLog } from '../../../src/domain/log/index.js';
import { LookupHead, LookupIndex, LookupLists } from '../../../src/domain/log/lookup.js';
import type { Store } from '../../../src/store/index.js';
import { openTestStore, type StoreKind } from '../../helpers/stores.js';

describe.each<StoreKind>(['level', 'postgres'])('the verifiable index on %s', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  let clock: FakeClock;
  let log: TransparencyLog;
  let index: LookupIndex;
  const keys = freshNodeKeys(cryptoRandom);

  beforeEach(async () => {
    ({ store, dispose } = await openTestStore(kind));
    clock = new FakeClock();
    log = new TransparencyLog({ store, clock, keys }, { checkpointEveryMs: 0 });
    index = new LookupIndex(log, () => clock.now());
  });
  afterEach(async () => {
    await index.close();
    await log.close();
    await dispose();
  });

  /** Appends n entries about three agents and five artifacts. */
  async function append(n: number, from = 0) {
    const out: LogEntry[] = [];
    for (let i = from; i < from + n; i++) {
      const subjectSha256 = String(i % 5).repeat(64);
      out.push(await log.submit({ kind: 'pipeline.facet.v1', tier: 'pipeline', agent: `ak_agent${i % 3}`, body: { step: `s${i}`, subjectSha256 } }));
    }
    return out;
  }

  /** The root a map computed from scratch gives over the log's first `size` entries. */
  async function naiveRoot(size: number) {
    const lists = new Map<string, number[]>();
    for (const e of await log.entries(0, size)) for (const key of entryLookupKeys(e)) lists.set(key, [...(lists.get(key) ?? []), e.seq]);
    return naiveMapRoot([...lists].map(([key, indices]) => ({ k: lookupKeyHash(key), indices }))).toString('hex');
  }

  it('answers every index of a key with a proof that leads to the root its index.root.v1 entry commits', async () => {
    await append(12);
    const a = await index.lookup('agent:ak_agent1');
    expect(a.found).toBe(true);
    expect(a.indices).toEqual([1, 4, 7, 10]);
    const entry = a.published.entry;
    expect(entry.kind).toBe(LOOKUP_ROOT_KIND);
    expect(entry.body).toEqual({ schemaVersion: '1.0.0', size: 12, root: a.published.root, keys: 8 });
    expect(entry.seq).toBeGreaterThanOrEqual(12);
    const root = Buffer.from(a.published.root, 'hex');
    expect(verifyMapProof(root, lookupKeyHash(a.key), a.indices, Buffer.from(a.proof, 'base64'))).toEqual({ ok: true, found: true });
    expect(a.published.root).toBe(await naiveRoot(12));
  });

  it('proves that nothing mentions a key no entry names', async () => {
    await append(5);
    const a = await index.lookup(`sha256:${'f'.repeat(64)}`);
    expect(a).toMatchObject({ found: false, indices: [] });
    const root = Buffer.from(a.published.root, 'hex');
    expect(verifyMapProof(root, lookupKeyHash(a.key), [], Buffer.from(a.proof, 'base64'))).toEqual({ ok: true, found: false });
  });

  it('appends a new root once the log grew and the newest is a second old, and none for a log that grew only by roots', async () => {
    await append(3);
    const first = await index.lookup('agent:ak_agent0');
    await append(3, 3);
    expect((await index.lookup('agent:ak_agent0')).published.size).toBe(3);
    clock.advance(1000);
    const second = await index.lookup('agent:ak_agent0');
    expect(second.published.size).toBe(first.published.entry.seq + 1 + 3);
    // Entry 3 is the first root: the three appended after it are 4, 5 and 6.
    expect(second.indices).toEqual([0, 4]);
    expect(second.published.root).toBe(await naiveRoot(second.published.size));
    clock.advance(1000);
    const third = await index.lookup('agent:ak_agent0');
    expect(third.published.entry.seq).toBe(second.published.entry.seq);
  });

  it('reads the map back at start and serves the root the log holds, with no new entry', async () => {
    await append(8);
    const before = await index.lookup('agent:ak_agent2');
    await index.close();
    const head = await log.head();
    index = new LookupIndex(log, () => clock.now());
    const after = await index.lookup('agent:ak_agent2');
    expect(after.published.entry.seq).toBe(before.published.entry.seq);
    expect(after.indices).toEqual(before.indices);
    expect((await log.head()).size).toBe(head.size);
  });

  it('catches up at start with the entries a crash left out of the stored map', async () => {
    await append(6);
    await index.lookup('agent:ak_agent0');
    await index.close();
    // Entries appended while no index ran: the stored map is behind the log.
    await append(6, 6);
    index = new LookupIndex(log, () => clock.now());
    await index.ready();
    const a = await index.lookup(`sha256:${'1'.repeat(64)}`);
    expect(a.indices).toEqual([1, 6, 11].map((i) => (i >= 6 ? i + 1 : i)));
    expect(a.published.root).toBe(await naiveRoot(a.published.size));
  });

  it('answers the indices it has not written yet from memory, and writes them ten seconds on', async () => {
    await index.close();
    index = new LookupIndex(log, () => clock.now(), { writeEveryMs: 10_000 });
    await append(4);
    const first = await index.lookup('agent:ak_agent0');
    expect(first.indices).toEqual([0, 3]);
    await append(4, 4);
    clock.advance(1000);
    const second = await index.lookup('agent:ak_agent0');
    // Entry 4 is the first root: the second four are 5 to 8.
    expect(second.indices).toEqual([0, 3, 7]);
    expect(await store.list(LookupLists)).toEqual([]);
    clock.advance(10_000);
    await append(3, 8);
    const third = await index.lookup('agent:ak_agent0');
    // Entry 9 is the second root: the last three are 10 to 12.
    expect(third.indices).toEqual([0, 3, 7, 11]);
    expect((await store.get(LookupHead, 'head'))?.size).toBe(third.published.size);
    expect(third.published.root).toBe(await naiveRoot(third.published.size));
  });

  it('catches up from the log with the items a crash took before they were written', async () => {
    await append(6);
    const before = await index.lookup('agent:ak_agent0');
    // A crash: the index is not closed, and what it held unwritten is gone.
    index = new LookupIndex(log, () => clock.now());
    await index.ready();
    clock.advance(1000);
    await append(3, 6);
    const after = await index.lookup('agent:ak_agent0');
    expect(after.indices.slice(0, before.indices.length)).toEqual(before.indices);
    expect(after.indices.length).toBe(before.indices.length + 1);
    expect(after.published.root).toBe(await naiveRoot(after.published.size));
  });

  it('rebuilds from the log a stored map whose lists do not give its root, never serving that root', async () => {
    await append(9);
    const good = await index.lookup('agent:ak_agent0');
    await index.close();
    // A torn or edited store: one list item gone, the head left as it was.
    const [first] = await store.list(LookupLists, { limit: 1 });
    await store.transact(['lookup'], async (tx) => tx.del(LookupLists, first[0]));
    index = new LookupIndex(log, () => clock.now());
    const a = await index.lookup('agent:ak_agent0');
    expect(a.indices).toEqual(good.indices);
    expect(a.published.root).toBe(await naiveRoot(a.published.size));
    expect((await store.get(LookupHead, 'head'))?.root).toBe(a.published.root);
  });

  it("takes each index once where processes sharing the store cut a key's items at different places", async () => {
    await append(9);
    const good = await index.lookup('agent:ak_agent0');
    expect(good.indices.length).toBeGreaterThan(2);
    await index.close();
    // Another process's items for the same key, cut where its own steps fell: from position 1 on, overlapping ours.
    const khex = lookupKeyHash('agent:ak_agent0').toString('hex');
    const overlapping = `${khex}:${'1'.padStart(10, '0')}`;
    await store.transact(['lookup'], async (tx) => tx.put(LookupLists, overlapping, good.indices.slice(1)));
    index = new LookupIndex(log, () => clock.now());
    const a = await index.lookup('agent:ak_agent0');
    expect(a.indices).toEqual(good.indices);
    expect(a.published.root).toBe(good.published.root);
    // The map read back was taken as it stood (a rebuild would have dropped every item, this one too).
    expect((await store.list(LookupLists)).map(([k]) => k)).toContain(overlapping);
  });
});
