// The content-sha256 migration (PROTOCOL 6.10, ARCHITECTURE 4): proposals and judgments stored
// before content binding get their contentSha256 computed from what is stored at the first
// start, once (a recorded migration), on LevelDB and on PostgreSQL (vitest.config.ts runs this
// suite on both). Their log events cannot be added after the fact: reports say they are bound
// by the node's store, not by the log.
import { afterEach, describe, expect, it } from 'vitest';
import { contentSha256Of, FakeClock } from '../../src/core/index.js';
import { CONTENT_SHA256_MIGRATION, Migrations } from '../../src/domain/migrations.js';
import { checkProposals } from '../../src/domain/proposals/check.js';
import { PendingQueue, Proposals, proposalLock, type ProposalRecord } from '../../src/domain/records.js';
import { strategiesFor } from '../../src/node/strategies.js';
import { createApp } from '../../src/http/app.js';
import { verifyBundle } from '../../verifier/index.js';
import { testKeys } from '../helpers/app.js';
import { openTestStore, type TestStore } from '../helpers/stores.js';
import { agent, decide } from '../helpers/flows.js';
import { samplePayload } from '../fixtures/payloads.js';

type Json = Record<string, any>;

let opened: TestStore | undefined;
afterEach(async () => {
  await opened?.dispose();
  opened = undefined;
});

/** A node on an existing store (what `akas serve` does at each start). */
async function start(store: TestStore['store'], keys: ReturnType<typeof testKeys>, clock: FakeClock) {
  const app = await createApp({ store, strategies: strategiesFor(store), clock, keys, config: { checkResponses: true } });
  await app.ready();
  return { app, store, clock, keys, dir: '', close: () => app.close() };
}

/** Strips what content binding added from a stored proposal: the record as an earlier node wrote it. */
function asBefore(p: ProposalRecord): Json {
  const { contentSha256: _c, contentBinding: _b, ...rest } = p;
  return { ...rest, judgments: p.judgments.map(({ contentSha256: _j, ...j }) => j) };
}

describe('the content-sha256 migration', () => {
  it('binds proposals and judgments stored before content binding at the first start, once, and says they are bound by the store', async () => {
    opened = await openTestStore();
    const { store } = opened;
    const clock = new FakeClock();
    const keys = testKeys(clock.now());
    let node = await start(store, keys, clock);
    // A decided proposal of the node as it runs, and a pending one written as an earlier
    // version stored it (no log event of content binding behind it).
    const { proposalId: decided } = await decide(node, 'capability', { n: 201 });
    const proposer = await agent(node);
    const legacyId = 'cprop_00000000000000a1';
    const legacyBody = samplePayload('capability', 202);
    const legacy = {
      proposalId: legacyId,
      kind: 'capability',
      status: 'pending',
      submittedAt: clock.now(),
      decidedAt: null,
      proposer: { tag: proposer.tag, publicKey: proposer.signing.publicKey },
      proposerIp: proposer.ip,
      path: legacyBody.path,
      title: legacyBody.title,
      payload: legacyBody,
      requiredJudgments: 3,
      judgments: [],
      deposit: 0,
      billable: false,
      tier: 'strong',
      conflictKeys: [],
      outcome: null,
    };
    await node.app.akas.log.drain();
    await node.close();
    await store.transact([proposalLock(decided), proposalLock(legacyId), 'migration:test'], async (tx) => {
      tx.put(Proposals, decided, asBefore((await tx.get(Proposals, decided))!) as ProposalRecord);
      tx.put(Proposals, legacyId, legacy as unknown as ProposalRecord);
      tx.put(PendingQueue, `${String(legacy.submittedAt).padStart(15, '0')}:${legacyId}`, { kind: 'capability', proposer: proposer.tag });
      tx.del(Migrations, CONTENT_SHA256_MIGRATION);
    });

    node = await start(store, keys, clock);
    const record = await store.get(Migrations, CONTENT_SHA256_MIGRATION);
    expect(record).toMatchObject({ changed: 2 });
    for (const id of [decided, legacyId]) {
      const p = (await store.get(Proposals, id))!;
      expect(p.contentSha256).toBe(contentSha256Of('capability', p.payload));
      expect(p.contentBinding).toBe('store');
      for (const j of p.judgments) expect(j.contentSha256).toBe(p.contentSha256);
    }
    const detail = (await node.app.inject({ url: `/api/knowledge/proposals/${legacyId}` })).json();
    expect(detail).toMatchObject({ contentSha256: contentSha256Of('capability', legacyBody), contentBinding: 'store' });
    const bundle = (await node.app.inject({ url: `/api/knowledge/proposals/${legacyId}/bundle` })).json();
    const report = await verifyBundle(bundle, { issuer: keys.issuer.did });
    expect(report.verified).toBe(true);
    expect(report.checks.find((c) => c.id === 'log.submitted')).toMatchObject({
      valid: null,
      why: expect.stringContaining("bound by the node's store, not by the log"),
    });
    expect(report.binding.submitted).toBe('store');
    // The node's own audit agrees (the decided proposal's events are in the log, as before).
    expect((await checkProposals(store)).problems).toEqual([]);
    await node.close();

    // Recorded: a later start does not run it again.
    clock.advance(60_000);
    node = await start(store, keys, clock);
    expect(await store.get(Migrations, CONTENT_SHA256_MIGRATION)).toEqual(record);
    await node.close();
  });
});
