// The credit ledger of PROTOCOL 3.3. Every mint and spend is an append-only entry written in
// the same atomic batch as the agent's new balance, so the two can never disagree after a
// crash. An agent's entries are ordered by a sequence its record holds (ledgerKey), never by a
// clock. checkLedger proves, per agent and in that order, that no balance went below zero, and
// the conservation invariant from the entries alone.
import { newLedgerId, ServiceError } from '../core/index.js';
import type { Store, Tx } from '../store/index.js';
import type { Ctx } from './context.js';
import { Agents, Ledger, type AgentRecord, type LedgerEntry, type LedgerType } from './records.js';

/**
 * The key of an agent's entry number `seq`: an agent's entries sort together, in the order
 * they were made. The sequence is the agent record's (ledgerSeq), taken in the transaction that
 * writes the record under the agent's lock, so it orders them as they happened in whichever
 * process made them; `at` is the maker's clock, which another process's may contradict (a
 * machine behind, a VM after a pause) and two processes may share to the millisecond.
 */
export const ledgerKey = (tag: string, seq: number) => `${tag}:${String(seq).padStart(12, '0')}`;

/** An agent's entry key: its tag and number. */
const SEQUENCED_KEY = /^([^:]+):(\d{12})$/;
/**
 * The key an entry had before the ledger was ordered per agent: `<ms>:<counter of the process>:<id>`,
 * which the clock and a process-local counter ordered. All such keys sort before every agent's
 * (a digit before a tag's letters); the migration re-keys them (migrations.ts).
 */
export const TIMED_KEYS = { lt: ':' } as const;
const TIMED_KEY = /^\d{15}:\d{12}:/;

/**
 * Moves credits for one agent inside a transaction that holds the agent's lock and read the
 * record in it, and writes the agent record back with the entry, numbered next in its sequence.
 * Throws 402 insufficient_balance rather than go below zero.
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
  const seq = (agent.ledgerSeq ?? 0) + 1;
  agent.ledgerSeq = seq;
  const entry: LedgerEntry = { id: newLedgerId(ctx.random), seq, at: ctx.clock.now(), agent: agent.tag, type, amount, reason, ...(ref ? { ref } : {}) };
  tx.put(Ledger, ledgerKey(agent.tag, seq), entry);
  tx.put(Agents, agent.tag, agent);
  return entry;
}

export interface LedgerCheck {
  ok: boolean;
  problems: string[];
  totals: { minted: number; spent: number; slashed: number; balance: number; reserved: number };
}

type Account = { balance: number; reserved: number; last: number };

/** What one entry does to its agent's account and to the totals. */
function apply(acc: Account, e: LedgerEntry, totals: LedgerCheck['totals']) {
  switch (e.type) {
    case 'mint':
      acc.balance += e.amount;
      totals.minted += e.amount;
      break;
    case 'spend':
      acc.balance -= e.amount;
      totals.spent += e.amount;
      break;
    case 'reserve':
      acc.balance -= e.amount;
      acc.reserved += e.amount;
      break;
    case 'refund':
      acc.reserved -= e.amount;
      acc.balance += e.amount;
      break;
    case 'slash':
      acc.reserved -= e.amount;
      totals.slashed += e.amount;
      break;
  }
}

/**
 * The ledger's audit (`akas log check`, `akas store copy`). Per agent, its entries walked in
 * the order of its sequence: numbered 1, 2, 3... with none missing and each where its number
 * says, never below zero after any of them, and adding up to the agent record's balance and
 * reservedBalance, the record's ledgerSeq naming the last. And the conservation invariant of
 * PROTOCOL 3.3: Σ balance + Σ reservedBalance = Σ minted − Σ spent − Σ slashed.
 *
 * Entries still keyed by time (a store the migration has not run on, or cut short) come after
 * the agent's numbered ones, in their old order: the migration numbers an agent's entries
 * oldest first, so those it has not reached yet are the agent's latest.
 */
export async function checkLedger(store: Store): Promise<LedgerCheck> {
  const accounts = new Map<string, Account>();
  const totals = { minted: 0, spent: 0, slashed: 0, balance: 0, reserved: 0 };
  const problems: string[] = [];
  const accountOf = (tag: string) => {
    let acc = accounts.get(tag);
    if (!acc) accounts.set(tag, (acc = { balance: 0, reserved: 0, last: 0 }));
    return acc;
  };
  const walk = (acc: Account, e: LedgerEntry, where: string) => {
    apply(acc, e, totals);
    if (acc.balance < 0 || acc.reserved < 0) problems.push(`${e.agent} went negative at ${where} (${e.type} ${e.amount})`);
  };
  for await (const [key, e] of store.iterate(Ledger, { gte: TIMED_KEYS.lt })) {
    const m = SEQUENCED_KEY.exec(key);
    if (!m) {
      problems.push(`ledger key ${key} names no agent's entry`);
      continue;
    }
    const [tag, seq] = [m[1], Number(m[2])];
    const acc = accountOf(tag);
    if (e.agent !== tag) problems.push(`entry ${key} moves credits of ${e.agent}, not of ${tag}`);
    if (e.seq !== seq) problems.push(`entry ${key} says it is entry ${e.seq ?? '(none)'} of ${e.agent}: it was moved`);
    if (seq !== acc.last + 1) problems.push(`${tag}: entry ${seq} follows entry ${acc.last} (${seq > acc.last + 1 ? 'entries missing' : 'out of order'})`);
    acc.last = seq;
    walk(acc, e, `entry ${seq}`);
  }
  for await (const [key, e] of store.iterate(Ledger, TIMED_KEYS)) {
    if (!TIMED_KEY.test(key)) problems.push(`ledger key ${key} names no agent's entry`);
    else walk(accountOf(e.agent), e, `entry ${e.id} (not yet numbered)`);
  }
  for await (const [tag, a] of store.iterate(Agents)) {
    totals.balance += a.balance;
    totals.reserved += a.reservedBalance;
    const acc = accounts.get(tag) ?? { balance: 0, reserved: 0, last: 0 };
    if (acc.balance !== a.balance) problems.push(`${tag}: balance ${a.balance}, ledger says ${acc.balance}`);
    if (acc.reserved !== a.reservedBalance) problems.push(`${tag}: reservedBalance ${a.reservedBalance}, ledger says ${acc.reserved}`);
    if ((a.ledgerSeq ?? 0) !== acc.last) problems.push(`${tag}: the record's ledger sequence is at ${a.ledgerSeq ?? 0}, its last entry is ${acc.last}`);
    if (a.balance < 0 || a.reservedBalance < 0) problems.push(`${tag} is negative`);
  }
  if (totals.balance + totals.reserved !== totals.minted - totals.spent - totals.slashed) {
    problems.push(`Σbalance + Σreserved = ${totals.balance + totals.reserved}, Σminted − Σspent − Σslashed = ${totals.minted - totals.spent - totals.slashed}`);
  }
  return { ok: problems.length === 0, problems, totals };
}
