// The node's own audit of its proposals (`akas log check`, `akas serve --check`, and the
// crash and fuzz tests): what every write path of PROTOCOL 6 and 7 promises, checked from the
// stored records alone. A crash or a bug that leaves half a write behind shows up here.
import type { Store } from '../store/index.js';
import { JudgmentIndex, Ledger, PendingKeys, PendingQueue, Proposals, type LedgerEntry } from './records.js';

export interface ProposalCheck {
  ok: boolean;
  proposals: number;
  problems: string[];
}

/**
 * For every proposal: its judgments are distinct judges and at most requiredJudgments; its
 * status agrees with them (pending below the quorum, decided exactly at it with an outcome
 * that names the status, withdrawn without any); each judgment is indexed and paid exactly
 * once; its deposit was reserved once and settled at most once, as the status says; the
 * pending indexes hold it if and only if it is pending.
 */
export async function checkProposals(store: Store): Promise<ProposalCheck> {
  const problems: string[] = [];
  // Ledger entries that name a proposal (deposits and judgment awards).
  const byRef = new Map<string, LedgerEntry[]>();
  for await (const [, e] of store.iterate(Ledger)) {
    if (!e.ref) continue;
    const list = byRef.get(e.ref);
    if (list) list.push(e);
    else byRef.set(e.ref, [e]);
  }
  const queued = new Set<string>();
  for await (const [key] of store.iterate(PendingQueue)) queued.add(key.slice(key.indexOf(':') + 1));
  const heldKeys = new Map<string, string>();
  for await (const [key, v] of store.iterate(PendingKeys)) heldKeys.set(key, v.proposalId);

  let count = 0;
  const enough = () => problems.length >= 50;
  for await (const [id, p] of store.iterate(Proposals)) {
    count += 1;
    const say = (what: string) => problems.push(`${id} (${p.status}): ${what}`);
    const n = p.judgments.length;
    const judges = new Set(p.judgments.map((j) => j.agentTag));
    if (judges.size !== n) say('the same agent judged it twice');
    if (n > p.requiredJudgments) say(`${n} judgments, more than the ${p.requiredJudgments} required`);
    switch (p.status) {
      case 'pending':
        if (n >= p.requiredJudgments) say(`${n} judgments reached the quorum but it is still pending`);
        if (p.outcome) say('pending with an outcome');
        break;
      case 'published':
      case 'rejected':
        if (n !== p.requiredJudgments) say(`decided with ${n} judgments, not the ${p.requiredJudgments} required`);
        if (p.outcome?.decision !== p.status) say(`its outcome says ${p.outcome?.decision ?? 'nothing'}`);
        if (p.decidedAt === null) say('decided without decidedAt');
        break;
      case 'withdrawn':
        if (n > 0) say(`withdrawn with ${n} judgments`);
        break;
    }
    for (const j of p.judgments) {
      const at = await store.get(JudgmentIndex, j.judgmentId);
      if (at?.proposalId !== id) say(`judgment ${j.judgmentId} is not indexed to it`);
    }

    const entries = byRef.get(id) ?? [];
    const of = (type: LedgerEntry['type']) => entries.filter((e) => e.type === type);
    const awards = of('mint');
    if (awards.length !== n) say(`${awards.length} judgment awards in the ledger for ${n} judgments`);
    const reserves = of('reserve');
    const settled = [...of('refund'), ...of('slash')];
    const escrowed = p.billable && p.deposit > 0;
    if (reserves.length !== (escrowed ? 1 : 0)) say(`${reserves.length} deposit reservations (expected ${escrowed ? 1 : 0})`);
    if (escrowed && reserves[0] && (reserves[0].amount !== p.deposit || reserves[0].agent !== p.proposer?.tag)) say('its reservation is not the proposer\'s deposit');
    const expected = !escrowed || p.status === 'pending' ? [] : p.status === 'rejected' ? ['slash'] : ['refund'];
    const got = settled.map((e) => e.type);
    if (got.join() !== expected.join()) say(`deposit settled as [${got.join(', ')}], expected [${expected.join(', ')}]`);

    const isPending = p.status === 'pending';
    if (queued.has(id) !== isPending) say(isPending ? 'missing from the judge queue' : 'still in the judge queue');
    for (const key of p.conflictKeys) {
      const holder = heldKeys.get(key);
      if (isPending && holder !== id) say(`does not hold its conflict key ${key}`);
      if (!isPending && holder === id) say(`still holds the conflict key ${key}`);
    }
    if (enough()) {
      problems.push(`stopped after ${count} proposals`);
      break;
    }
  }
  return { ok: problems.length === 0, proposals: count, problems };
}
