// The checker's ledger checks (issue 49, 3; PROTOCOL 3.3, 6.4): the credit ledger is no route
// of the node, so these read it from the shared store (src/store), as `akas log check` does.
import { Ledger, Proposals, type LedgerEntry } from '../../src/domain/records.js';
import type { Store } from '../../src/store/index.js';
import { precedes, type Found, type Op } from './checker-history.js';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** An entry and where the agent's order puts it. */
interface Placed {
  entry: LedgerEntry;
  key: string;
  /** Its place among the agent's entries. */
  place: number;
}

/**
 * Each agent's entries in the ledger's order for that agent: by the number each carries in the
 * agent's sequence (`seq`, taken from the agent record: src/domain/ledger.ts); entries not yet
 * numbered (a store the migration has not reached) after them, in the store's key order.
 */
export async function ledgerByAgent(store: Store): Promise<Map<string, Placed[]>> {
  const by = new Map<string, Placed[]>();
  for await (const [key, entry] of store.iterate(Ledger)) {
    const list = by.get(entry.agent) ?? [];
    list.push({ entry, key, place: 0 });
    by.set(entry.agent, list);
  }
  for (const list of by.values()) {
    list.sort((a, b) => (a.entry.seq ?? Infinity) - (b.entry.seq ?? Infinity));
    for (const [i, p] of list.entries()) p.place = i;
  }
  return by;
}

/** The ledger entry an acknowledged operation made, as (agent, type, ref): a deposit, its refund, a judgment's award. */
function entryOf(op: Op, proposers: Map<string, string>): { agent: string; type: LedgerEntry['type']; ref: string } | undefined {
  const id = str(op.got.proposalId);
  if (op.type !== 'ok' || !id) return undefined;
  if (op.f === 'propose') {
    const tag = str(op.got.tag) ?? op.agent;
    return tag ? { agent: tag, type: 'reserve', ref: id } : undefined;
  }
  if (op.f === 'withdraw') {
    const tag = proposers.get(id);
    return tag ? { agent: tag, type: 'refund', ref: id } : undefined;
  }
  if (op.f === 'judge') {
    const tag = str(op.got.tag) ?? op.agent;
    return tag ? { agent: tag, type: 'mint', ref: id } : undefined;
  }
  return undefined;
}

/**
 * ledger-causal-order: each agent's entries are in causal order. When the history shows one
 * acknowledged operation answered before another was sent, and both moved the same agent's
 * credits (a deposit, a withdrawal's refund, a judgment's award), the first one's entry comes
 * first in the agent's order (its sequence: src/domain/ledger.ts); and each agent's numbered
 * entries run 1, 2, 3... with no gap and no repeat.
 */
export async function checkCausalOrder(ops: readonly Op[], store: Store): Promise<{ found: Found[]; detail: string }> {
  const found: Found[] = [];
  const by = await ledgerByAgent(store);
  const proposers = new Map<string, string>();
  for (const op of ops)
    if (op.f === 'propose' && op.type === 'ok' && str(op.got.proposalId)) proposers.set(op.got.proposalId as string, str(op.got.tag) ?? op.agent ?? '');
  const placed = new Map<string, Array<{ op: Op; at: Placed }>>();
  for (const op of ops) {
    const want = entryOf(op, proposers);
    if (!want) continue;
    const at = by.get(want.agent)?.find((p) => p.entry.type === want.type && p.entry.ref === want.ref);
    if (!at) continue; // a deposit of 0, an award not paid: deposits-settled-once and the node's audit say so
    const list = placed.get(want.agent) ?? [];
    list.push({ op, at });
    placed.set(want.agent, list);
  }
  let pairs = 0;
  for (const [agent, list] of placed) {
    for (const a of list) {
      for (const b of list) {
        if (!precedes(a.op, b.op)) continue;
        pairs++;
        if (a.at.place > b.at.place) {
          found.push({
            message:
              `agent ${agent}: the ${b.at.entry.type} of ${b.op.f} (history line ${b.op.lines[0]}) comes before ` +
              `the ${a.at.entry.type} of ${a.op.f} answered before it was sent (line ${a.op.lines.at(-1)})`,
            evidence: { agent, first: { lines: a.op.lines, entry: a.at.entry, key: a.at.key }, later: { lines: b.op.lines, entry: b.at.entry, key: b.at.key } },
          });
        }
      }
    }
  }
  let sequenced = 0;
  for (const [tag, list] of by) {
    const seqs = list.map((p) => p.entry.seq);
    if (!seqs.length || !seqs.every((s) => s !== undefined)) continue;
    sequenced++;
    const gap = seqs.findIndex((s, i) => s !== i + 1);
    if (gap >= 0)
      found.push({ message: `agent ${tag}: its ledger sequence runs ${seqs.slice(0, gap + 1).join(', ')}: a gap or a repeat`, evidence: { agent: tag, seqs } });
  }
  return { found, detail: `${pairs} ordered pairs of acknowledged credit moves; ${sequenced} agents' ledger sequences` };
}

/**
 * deposits-settled-once (PROTOCOL 6.4): every proposal with a deposit has exactly one
 * reservation, of the deposit, by its proposer; a pending one none settled; a published or
 * withdrawn one exactly one refund and no slash; a rejected one exactly one slash and no
 * refund, each of the deposit; and the node's own audit finds nothing about deposits.
 */
export async function checkDeposits(store: Store, auditProblems: readonly string[]): Promise<{ found: Found[]; detail: string }> {
  const found: Found[] = [];
  const byRef = new Map<string, LedgerEntry[]>();
  for await (const [, e] of store.iterate(Ledger)) {
    if (!e.ref) continue;
    const list = byRef.get(e.ref);
    if (list) list.push(e);
    else byRef.set(e.ref, [e]);
  }
  let escrowed = 0;
  for await (const [id, p] of store.iterate(Proposals)) {
    if (!p.billable || p.deposit <= 0) continue;
    escrowed++;
    const entries = byRef.get(id) ?? [];
    const of = (t: LedgerEntry['type']) => entries.filter((e) => e.type === t);
    const evidence = { proposalId: id, status: p.status, deposit: p.deposit, proposer: p.proposer?.tag, entries };
    const reserves = of('reserve');
    if (reserves.length !== 1 || reserves[0].amount !== p.deposit || reserves[0].agent !== p.proposer?.tag)
      found.push({ message: `proposal ${id}: ${reserves.length} reservations of its deposit (expected one of ${p.deposit} by its proposer)`, evidence });
    const want = p.status === 'pending' ? [] : p.status === 'rejected' ? ['slash'] : ['refund'];
    const settled = [...of('refund'), ...of('slash')];
    if (settled.map((e) => e.type).join() !== want.join() || settled.some((e) => e.amount !== p.deposit))
      found.push({
        message:
          `proposal ${id} (${p.status}): its deposit settled as [${settled.map((e) => `${e.type} ${e.amount}`).join(', ')}], ` +
          `expected [${want.join(', ')}]`,
        evidence,
      });
  }
  for (const problem of auditProblems) found.push({ message: `akas log check: ${problem}`, evidence: { problem } });
  return { found, detail: `${escrowed} deposits, each reserved once and settled at most once` };
}
