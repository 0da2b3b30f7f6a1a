// The node's own audit of its proposals (`akas log check`, `akas serve --check`, and the
// crash and fuzz tests): what every write path of PROTOCOL 6 and 7 promises, checked from the
// stored records alone. A crash or a bug that leaves half a write behind shows up here.
import { contentSha256Of, JUDGMENT_V2 } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import { EVENT_KIND, LogEntries, LogOutbox } from '../log/index.js';
import { JudgmentIndex, Ledger, PendingKeys, PendingQueue, Proposals, type LedgerEntry, type ProposalRecord } from '../records.js';

type EventBody = Record<string, unknown>;

/**
 * The node's events about each proposal: appended to the log, or waiting in its outbox (a crash
 * leaves them there, committed). On a live node an item may move from the outbox to the log
 * between the two reads: the outbox is read first, and an entry replaces the item of its ticket.
 */
async function eventsByProposal(store: Store): Promise<Map<string, EventBody[]>> {
  // Only the node's events, and only what contentProblems reads of them: a log of millions of
  // entries is audited in bounded memory per proposal.
  const slim = (kind: string, body: EventBody): EventBody | undefined =>
    kind === EVENT_KIND && typeof body.proposalId === 'string'
      ? {
          proposalId: body.proposalId,
          event: body.event,
          kind: body.kind,
          judgmentId: body.judgmentId,
          contentSha256: body.contentSha256,
          path: body.path,
          proposer: body.proposer,
          judgments: Array.isArray(body.judgments) ? (body.judgments as Array<{ judgmentId: unknown }>).map((j) => ({ judgmentId: j?.judgmentId })) : undefined,
          weightedComposite: body.weightedComposite,
        }
      : undefined;
  const byTicket = new Map<string, EventBody>();
  for await (const [ticket, item] of store.iterate(LogOutbox)) {
    const body = slim(item.kind, item.body);
    if (body) byTicket.set(ticket, body);
  }
  for await (const [key, e] of store.iterate(LogEntries)) {
    const body = slim(e.kind, e.body);
    if (body) byTicket.set(e.ticket ?? `seq:${key}`, body);
  }
  const events = new Map<string, EventBody[]>();
  for (const body of byTicket.values()) {
    const id = body.proposalId as string;
    const list = events.get(id);
    if (list) list.push(body);
    else events.set(id, [body]);
  }
  return events;
}

/**
 * Content binding (PROTOCOL 6.10), from the store and the log: the stored contentSha256 still
 * hashes the stored content; every judgment names it (and a v2 one signed it); a proposal bound
 * by the log has its one proposal.submitted event with that hash, kind, path and proposer; each
 * judgment has its judgment.recorded event; every event that names a content names this one; a
 * decision's event counted exactly the stored judgments, in order, with the stored outcome.
 */
function contentProblems(p: ProposalRecord, events: EventBody[]): string[] {
  const problems: string[] = [];
  let hash: string | undefined;
  try {
    hash = contentSha256Of(p.kind, p.payload);
  } catch {
    problems.push('its stored content cannot be hashed');
  }
  if (typeof p.contentSha256 !== 'string') problems.push('it has no contentSha256 (the content-sha256 migration did not run)');
  else if (hash !== undefined && hash !== p.contentSha256)
    problems.push(`its content hashes to ${hash}, not the stored contentSha256 ${p.contentSha256}: the store was changed`);
  for (const j of p.judgments) {
    if (j.contentSha256 !== p.contentSha256) problems.push(`judgment ${j.judgmentId} is bound to content ${String(j.contentSha256)}`);
    const signed = j.signature.payload; // public: what the judge signed
    if (signed.type === JUDGMENT_V2 && signed.contentSha256 !== p.contentSha256)
      problems.push(`judgment ${j.judgmentId} signed content ${signed.contentSha256}`);
    if (events.filter((e) => e.event === 'judgment.recorded' && e.judgmentId === j.judgmentId).length !== 1)
      problems.push(`judgment ${j.judgmentId} has no single judgment.recorded event`);
  }
  for (const e of events)
    if (e.contentSha256 !== undefined && e.contentSha256 !== p.contentSha256)
      problems.push(`its ${String(e.event)} event names content ${String(e.contentSha256)}`);
  const submitted = events.filter((e) => e.event === 'proposal.submitted');
  if (p.contentBinding === 'log') {
    if (submitted.length !== 1) problems.push(`${submitted.length} proposal.submitted events (expected 1)`);
    else if (submitted[0].kind !== p.kind || submitted[0].path !== p.path || submitted[0].proposer !== (p.proposer?.tag ?? null))
      problems.push('its proposal.submitted event names another kind, path or proposer');
  }
  if (p.status === 'published' || p.status === 'rejected') {
    const decision = events.filter((e) => e.event === `proposal.${p.status}`);
    if (decision.length !== 1) problems.push(`${decision.length} proposal.${p.status} events (expected 1)`);
    else if (decision[0].path !== undefined && decision[0].path !== (p.path ?? null))
      problems.push(`its decision event published at ${String(decision[0].path)}, the proposal is at ${String(p.path)}`);
    if (decision.length === 1 && Array.isArray(decision[0].judgments)) {
      const counted = (decision[0].judgments as Array<{ judgmentId: string }>).map((j) => j.judgmentId).join();
      if (counted !== p.judgments.map((j) => j.judgmentId).join()) problems.push('its decision event counted other judgments than those stored');
      if (decision[0].weightedComposite !== p.outcome?.weightedComposite)
        problems.push(`its decision event logged ${String(decision[0].weightedComposite)}, the outcome says ${String(p.outcome?.weightedComposite)}`);
    }
  }
  return problems;
}

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
 * pending indexes hold it if and only if it is pending; and its content is bound as PROTOCOL
 * 6.10 says (contentProblems).
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
  const events = await eventsByProposal(store);

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
    if (escrowed && reserves[0] && (reserves[0].amount !== p.deposit || reserves[0].agent !== p.proposer?.tag))
      say("its reservation is not the proposer's deposit");
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
    for (const problem of contentProblems(p, events.get(id) ?? [])) say(problem);
    if (enough()) {
      problems.push(`stopped after ${count} proposals`);
      break;
    }
  }
  return { ok: problems.length === 0, proposals: count, problems };
}
