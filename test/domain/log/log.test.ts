// src/domain/log on a real LevelDB store: the outbox and the appender, the chain, the
// tree's stored subtrees, checkpoints, proofs, and the node's own audit catching every kind
// of tampering with the stored entries.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  cryptoRandom,
  entryHash,
  entryLeaf,
  FakeClock,
  formatCheckpoint,
  freshNodeKeys,
  GENESIS_PREV_HASH,
  hmacSha256Hex,
  leafHash,
  openNote,
  parseCheckpoint,
  rootAt,
  signNote,
  verifyConsistency,
  type NodeKeys,
} from '../../../src/core/index.js';
import { verifyInclusion } from '../../../src/core/merkle.js';
import { checkLog, enqueueLogEntry, LogCheckpoints, LogEntries, LogHead, seqKey, storeNodes, TransparencyLog } from '../../../src/domain/log/index.js';
import { openTempStore, type Store } from '../../../src/store/index.js';

let store: Store;
let dispose: () => Promise<void>;
let keys: NodeKeys;
let clock: FakeClock;
let log: TransparencyLog;

beforeEach(async () => {
  ({ store, dispose } = await openTempStore());
  keys = freshNodeKeys(cryptoRandom);
  clock = new FakeClock();
  log = new TransparencyLog({ store, clock, keys }, { checkpointEveryMs: 0 });
});
afterEach(async () => {
  await log.close();
  await dispose();
});

const ctx = () => ({ clock, random: cryptoRandom });

/** Enqueues n items (each in its own transaction, as writers do) and waits for them in the log. */
async function append(n: number, kind = 'pipeline.facet.v1') {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    clock.advance(1);
    ids.push(
      await store.transact([`w:${i}`], async (tx) =>
        enqueueLogEntry(tx, ctx(), { kind, tier: 'pipeline', agent: `ak_agent${i % 3}00`, body: { step: `s${i}`, subjectSha256: 'a'.repeat(64) } }),
      ),
    );
  }
  return Promise.all(ids.map((id) => log.appended(id)));
}

describe('the transparency log', () => {
  it('appends submitted items and outbox items in one chain, answering each once its batch is on disk', async () => {
    const outbox = append(5);
    const direct = Array.from({ length: 7 }, (_, i) =>
      log.submit({ kind: 'review.attestation.v1', tier: 'review', agent: 'ak_direct000', body: { reviewId: `r${i}` } }),
    );
    const entries = [...(await outbox), ...(await Promise.all(direct))].sort((a, b) => a.seq - b.seq);
    expect(entries.map((e) => e.seq)).toEqual([...Array(12).keys()]);
    for (let i = 1; i < 12; i++) expect(entries[i].prevHash).toBe(entries[i - 1].hash);
    // Each answered entry is the stored one (not an echo): the chain and the audit hold.
    for (const e of await Promise.all(direct)) expect(await store.get(LogEntries, seqKey(e.seq))).toEqual(e);
    expect((await Promise.all(direct)).every((e) => e.ticket === undefined)).toBe(true);
    expect((await checkLog(store, keys)).problems).toEqual([]);
  });

  it('refuses a submission once closed, and fails the submissions of a batch that could not be written', async () => {
    await log.close();
    await expect(log.submit({ kind: 'review.attestation.v1', tier: 'review', agent: null, body: {} })).rejects.toThrow(/closed/);
    log = new TransparencyLog({ store, clock, keys }, { checkpointEveryMs: 0 });
    const original = store.transact.bind(store);
    store.transact = (async () => {
      throw new Error('disk full');
    }) as typeof store.transact;
    await expect(log.submit({ kind: 'review.attestation.v1', tier: 'review', agent: null, body: {} })).rejects.toThrow('disk full');
    store.transact = original;
    expect((await log.head()).size).toBe(0);
    const ok = await log.submit({ kind: 'review.attestation.v1', tier: 'review', agent: null, body: {} });
    expect(ok.seq).toBe(0);
  });

  it('chains entries by hash, in the order they were appended, each exactly once', async () => {
    const entries = await append(25);
    expect(entries.map((e) => e.seq)).toEqual([...Array(25).keys()]);
    expect(entries[0].prevHash).toBe(GENESIS_PREV_HASH);
    for (let i = 1; i < 25; i++) expect(entries[i].prevHash).toBe(entries[i - 1].hash);
    expect(await log.head()).toEqual({ size: 25, lastHash: entries[24].hash });
    expect(entries.every((e) => e.signingKeyId === keys.hmac[0].signingKeyId && /^[0-9a-f]{64}$/.test(e.mac))).toBe(true);
  });

  it('drains what many concurrent writers enqueue, in batches, losing none', async () => {
    const ids = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        store.transact([`c:${i}`], async (tx) => enqueueLogEntry(tx, ctx(), { kind: 'k', tier: 'event', agent: null, body: { i } })),
      ),
    );
    const entries = await Promise.all(ids.map((id) => log.appended(id)));
    expect(new Set(entries.map((e) => e.seq)).size).toBe(300);
    expect((await log.head()).size).toBe(300);
  });

  it('signs checkpoints that commit to every entry, with proofs for every size', async () => {
    const entries = await append(40);
    const cp = await log.checkpoint();
    expect(cp.size).toBe(40);
    const opened = openNote(cp.note, [keys.log.verifierKey]);
    expect(opened.ok).toBe(true);
    const parsed = parseCheckpoint(opened.text!)!;
    expect(parsed).toMatchObject({ origin: keys.log.origin, size: 40 });
    for (const size of [1, 7, 16, 40]) {
      const root = await rootAt(size, storeNodes(store));
      for (let i = 0; i < size; i++) expect(verifyInclusion(i, size, leafHash(entryLeaf(entries[i])), await log.inclusion(i, size), root)).toBe(true);
      if (size < 40) expect(verifyConsistency(size, 40, await log.consistency(size, 40), root, parsed.rootHash)).toBe(true);
    }
    // A second call with nothing new answers the same checkpoint.
    expect((await log.checkpoint()).note).toBe(cp.note);
  });

  it('has a checkpoint of the empty log, and refuses proofs beyond its size', async () => {
    const empty = await log.checkpoint();
    expect(empty.size).toBe(0);
    await append(3);
    await expect(log.inclusion(3, 3)).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(log.consistency(2, 4)).rejects.toMatchObject({ code: 'validation_failed' });
    expect((await log.checkpoint()).size).toBe(3);
  });
});

describe("the node's own audit (checkLog)", () => {
  beforeEach(async () => {
    await append(30);
    await log.checkpoint();
    await append(5);
    await log.checkpoint();
  });

  it('passes an untouched log', async () => {
    expect(await checkLog(store, keys)).toEqual({ ok: true, entries: 35, checkpoints: 2, problems: [] });
  });

  it('passes a log whose first checkpoint is of the empty log, and checks that one too', async () => {
    const empty = await openTempStore();
    const first = new TransparencyLog({ store: empty.store, clock: new FakeClock(), keys }, { checkpointEveryMs: 0 });
    expect((await first.checkpoint()).size).toBe(0);
    await empty.store.transact(['x'], async (tx) =>
      enqueueLogEntry(tx, { clock: new FakeClock(), random: cryptoRandom }, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { step: 'a' } }),
    );
    await first.drain();
    await first.checkpoint();
    expect(await checkLog(empty.store, keys)).toEqual({ ok: true, entries: 1, checkpoints: 2, problems: [] });
    await empty.store.transact(['x'], async (tx) => {
      const cp = (await tx.get(LogCheckpoints, seqKey(0)))!;
      tx.put(LogCheckpoints, seqKey(0), { ...cp, note: cp.note.replace(/\n0\n/, '\n1\n') });
    });
    expect((await checkLog(empty.store, keys)).problems.join('\n')).toMatch(/checkpoint of size 0/);
    await first.close();
    await empty.dispose();
  });

  const edit = (seq: number, change: (e: Record<string, any>) => void) =>
    store.transact(['x'], async (tx) => {
      const e = (await tx.get(LogEntries, seqKey(seq)))!;
      change(e as unknown as Record<string, unknown>);
      tx.put(LogEntries, seqKey(seq), e);
    });

  it('catches an edited entry', async () => {
    await edit(12, (e) => (e.body.step = 'changed'));
    const r = await checkLog(store, keys);
    expect(r.ok).toBe(false);
    expect(r.problems.join('\n')).toMatch(/entry 12 .* was edited/);
  });

  it('catches an edited entry whose hash and MAC were recomputed, through the tree and the checkpoints', async () => {
    await edit(3, (e) => {
      e.body.step = 'forged';
      e.hash = entryHash(e as never);
      e.mac = hmacSha256Hex(keys.hmac[0].key, e.hash);
    });
    const r = await checkLog(store, keys);
    expect(r.problems.join('\n')).toMatch(/does not link|tree node .* differs/);
  });

  it('catches a removed entry', async () => {
    await store.transact(['x'], async (tx) => tx.del(LogEntries, seqKey(20)));
    expect((await checkLog(store, keys)).problems.join('\n')).toMatch(/removed or moved/);
  });

  it('catches two entries swapped', async () => {
    await store.transact(['x'], async (tx) => {
      const a = (await tx.get(LogEntries, seqKey(7)))!;
      const b = (await tx.get(LogEntries, seqKey(8)))!;
      tx.put(LogEntries, seqKey(7), b);
      tx.put(LogEntries, seqKey(8), a);
    });
    expect((await checkLog(store, keys)).ok).toBe(false);
  });

  it('catches a checkpoint signed over another tree, and one the entries no longer reach', async () => {
    const [[key, cp]] = await store.list(LogCheckpoints, { limit: 1 });
    const forged = signNote(formatCheckpoint({ origin: keys.log.origin, size: cp.size, rootHash: Buffer.alloc(32, 1) }), keys.log.origin, keys.log.privateKey);
    await store.transact(['x'], async (tx) => tx.put(LogCheckpoints, key, { ...cp, note: forged }));
    expect((await checkLog(store, keys)).problems.join('\n')).toMatch(/signs a root the entries do not give/);
    await store.transact(['x'], async (tx) => {
      tx.del(LogEntries, seqKey(34));
      tx.put(LogHead, 'head', { size: 34, lastHash: (await tx.get(LogEntries, seqKey(33)))!.hash });
    });
    expect((await checkLog(store, keys)).problems.join('\n')).toMatch(/beyond the 34 entries stored/);
  });
});
