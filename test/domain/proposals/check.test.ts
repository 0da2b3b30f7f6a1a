// checkProposals: the node's own audit of its proposals holds on what the routes write, and
// names each kind of damage a half-finished write could leave.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkProposals } from '../../../src/domain/proposals/check.js';
import { Ledger, PendingKeys, PendingQueue, Proposals, type ProposalRecord } from '../../../src/domain/records.js';
import { samplePayload } from '../../fixtures/payloads.js';
import { testNode, type TestNode } from '../../helpers/app.js';
import { agent, decide, proposeAs } from '../../helpers/flows.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
});
afterEach(async () => node.close());

/** Rewrites one stored proposal. */
async function edit(id: string, change: (p: ProposalRecord) => void) {
  await node.store.transact(['test'], async (tx) => {
    const p = (await tx.get(Proposals, id))!;
    change(p);
    tx.put(Proposals, id, p);
  });
}

describe('checkProposals', () => {
  it('holds for published, rejected and pending proposals written by the routes', async () => {
    await decide(node, 'capability', { n: 1 });
    await decide(node, 'graph', { n: 1, outcome: 'rejected' });
    expect((await proposeAs(node, await agent(node), 'artifact', samplePayload('artifact', 1))).statusCode).toBe(200);
    expect(await checkProposals(node.store)).toEqual({ ok: true, proposals: 3, problems: [] });
  });

  it('names a decision without its quorum, a pending proposal past it, and a repeated judge', async () => {
    const { proposalId } = await decide(node, 'capability');
    await edit(proposalId, (p) => p.judgments.pop());
    expect((await checkProposals(node.store)).problems.join('\n')).toMatch(/decided with 2 judgments, not the 3 required/);
    await edit(proposalId, (p) => {
      p.judgments.push({ ...p.judgments[0] });
      p.status = 'pending';
    });
    const problems = (await checkProposals(node.store)).problems.join('\n');
    expect(problems).toMatch(/the same agent judged it twice/);
    expect(problems).toMatch(/reached the quorum but it is still pending/);
    expect(problems).toMatch(/missing from the judge queue/);
  });

  it('names an escrow settled twice or never, and a judgment paid twice', async () => {
    const { proposalId } = await decide(node, 'capability');
    const entries = (await node.store.list(Ledger)).filter(([, e]) => e.ref === proposalId);
    const refund = entries.find(([, e]) => e.type === 'refund')!;
    const award = entries.find(([, e]) => e.type === 'mint')!;
    await node.store.transact(['test'], async (tx) => {
      tx.put(Ledger, `${refund[0]}:again`, refund[1]);
      tx.put(Ledger, `${award[0]}:again`, award[1]);
    });
    const problems = (await checkProposals(node.store)).problems.join('\n');
    expect(problems).toMatch(/deposit settled as \[refund, refund\], expected \[refund\]/);
    expect(problems).toMatch(/4 judgment awards in the ledger for 3 judgments/);
    await node.store.transact(['test'], async (tx) => {
      for (const [k] of entries.filter(([, e]) => e.type === 'refund')) tx.del(Ledger, k);
      tx.del(Ledger, `${refund[0]}:again`);
    });
    expect((await checkProposals(node.store)).problems.join('\n')).toMatch(/deposit settled as \[\], expected \[refund\]/);
  });

  it('names pending indexes left behind by a decision', async () => {
    const { proposalId } = await decide(node, 'capability');
    const p = (await node.store.get(Proposals, proposalId))!;
    await node.store.transact(['test'], async (tx) => {
      tx.put(PendingQueue, `${p.submittedAt}:${proposalId}`, { kind: p.kind, proposer: null });
      tx.put(PendingKeys, p.conflictKeys[0], { proposalId });
    });
    const problems = (await checkProposals(node.store)).problems.join('\n');
    expect(problems).toMatch(/still in the judge queue/);
    expect(problems).toMatch(/still holds the conflict key/);
  });
});
