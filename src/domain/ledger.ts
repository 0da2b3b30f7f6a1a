// The credit ledger of PROTOCOL 3.3. Every mint and spend is an append-only entry written in
// the same atomic batch as the agent's new balance, so the two can never disagree after a
// crash. checkLedger proves the conservation invariant from the entries alone.
import { newLedgerId, ServiceError } from '../core/index.js';
import type { Store, Tx } from '../store/index.js';
import type { Ctx } from './context.js';
import { Agents, Ledger, type AgentRecord, type LedgerEntry, type LedgerType } from './records.js';

// Entries of one agent are written under its lock, so a process-wide sequence taken at write
// time orders them causally even when the clock does not move (fake clocks, same millisecond).
let sequence = 0;

/**
 * Moves credits for one agent inside a transaction that holds the agent's lock, and writes
 * the agent record back. Throws 402 insufficient_balance rather than go below zero.
 */
export function moveCredits(
  tx: Tx,
  ctx: Pick<Ctx, 'clock' | 'random'>,
  agent: AgentRecord,
  type: LedgerType,
  amount: number,
  reason: string,
  ref?: string,
): LedgerEntry {
  if (!Number.isInteger(amount) || amount < 0) throw new Error(`ledger amounts are non-negative integers, got ${amount}`);
  switch (type) {
    case 'mint':
      agent.balance += amount;
      break;
    case 'spend':
    case 'reserve':
      if (agent.balance < amount) {
        throw new ServiceError('insufficient_balance', `This needs ${amount} credits; the balance is ${agent.balance}.`, {
          required: amount,
          balance: agent.balance,
          hint: 'Earn credits by judging pending proposals (GET /api/judge/queue) or answer challenges.',
        });
      }
      agent.balance -= amount;
      if (type === 'reserve') agent.reservedBalance += amount;
      break;
    case 'refund':
    case 'slash':
      if (agent.reservedBalance < amount) throw new Error(`cannot ${type} ${amount}: only ${agent.reservedBalance} reserved`);
      agent.reservedBalance -= amount;
      if (type === 'refund') agent.balance += amount;
      break;
  }
  const at = ctx.clock.now();
  const entry: LedgerEntry = { id: newLedgerId(ctx.random), at, agent: agent.tag, type, amount, reason, ...(ref ? { ref } : {}) };
  tx.put(Ledger, `${String(at).padStart(15, '0')}:${String(sequence++).padStart(12, '0')}:${entry.id}`, entry);
  tx.put(Agents, agent.tag, agent);
  return entry;
}

export interface LedgerCheck {
  ok: boolean;
  problems: string[];
  totals: { minted: number; spent: number; slashed: number; balance: number; reserved: number };
}

/**
 * The conservation invariant: Σ balance + Σ reservedBalance = Σ minted − Σ spent − Σ slashed,
 * and per agent, its balance and reservedBalance equal what its own entries add up to.
 */
export async function checkLedger(store: Store): Promise<LedgerCheck> {
  const perAgent = new Map<string, { balance: number; reserved: number }>();
  const totals = { minted: 0, spent: 0, slashed: 0, balance: 0, reserved: 0 };
  const problems: string[] = [];
  for await (const [, e] of store.iterate(Ledger)) {
    const acc = perAgent.get(e.agent) ?? { balance: 0, reserved: 0 };
    if (e.type === 'mint') {
      acc.balance += e.amount;
      totals.minted += e.amount;
    }
    if (e.type === 'spend') {
      acc.balance -= e.amount;
      totals.spent += e.amount;
    }
    if (e.type === 'reserve') {
      acc.balance -= e.amount;
      acc.reserved += e.amount;
    }
    if (e.type === 'refund') {
      acc.reserved -= e.amount;
      acc.balance += e.amount;
    }
    if (e.type === 'slash') {
      acc.reserved -= e.amount;
      totals.slashed += e.amount;
    }
    if (acc.balance < 0 || acc.reserved < 0) problems.push(`${e.agent} went negative at entry ${e.id}`);
    perAgent.set(e.agent, acc);
  }
  for await (const [tag, a] of store.iterate(Agents)) {
    totals.balance += a.balance;
    totals.reserved += a.reservedBalance;
    const acc = perAgent.get(tag) ?? { balance: 0, reserved: 0 };
    if (acc.balance !== a.balance) problems.push(`${tag}: balance ${a.balance}, ledger says ${acc.balance}`);
    if (acc.reserved !== a.reservedBalance) problems.push(`${tag}: reservedBalance ${a.reservedBalance}, ledger says ${acc.reserved}`);
    if (a.balance < 0 || a.reservedBalance < 0) problems.push(`${tag} is negative`);
  }
  if (totals.balance + totals.reserved !== totals.minted - totals.spent - totals.slashed) {
    problems.push(`Σbalance + Σreserved = ${totals.balance + totals.reserved}, Σminted − Σspent − Σslashed = ${totals.minted - totals.spent - totals.slashed}`);
  }
  return { ok: problems.length === 0, problems, totals };
}
