// The checker's reading of a history (issue 49, 3): invokes paired with their completions into
// operations, and the checks that need the history alone: an idempotent replay gives the first
// answer, buckets and daily quotas hold across processes. test/chaos/checker.ts runs them.
import { canonicalize } from '../../src/core/index.js';
import type { Completion, HistoryEvent, NodeName, OpName, RecordedAnswer, ReplayInvoke, RunLimits } from './types.js';

/** One operation: its invoke and its completion (none when the run ended first: unknown, as info). */
export interface Op {
  f: OpName;
  client: number;
  node: NodeName;
  type: Completion;
  /** When it was invoked and when it completed (ms since the run started; Infinity: never). */
  start: number;
  end: number;
  /**
   * The history lines of its invoke and its completion (Infinity: none). The history is written
   * as things happen, so the lines order operations in real time where their times, to a tenth
   * of a millisecond, may tie: precedes() reads them.
   */
  invoked: number;
  done: number;
  /** What was asked (the invoke's value), and what came back (the completion's). */
  asked: Record<string, unknown>;
  got: Record<string, unknown>;
  error?: string;
  ip?: string;
  agent?: string;
  /** The history lines (i) of the invoke and the completion, as evidence. */
  lines: number[];
}

/**
 * Pairs each invoke with the next completion of the same client, f and node (a client is
 * sequential). A completion without an invoke (a nemesis action, a crash: one info line) is an
 * operation of its own, from its value's `start` when it says one.
 */
export function operations(history: readonly HistoryEvent[]): Op[] {
  const open = new Map<string, Op[]>();
  const ops: Op[] = [];
  for (const e of history) {
    const key = `${e.client}\u0000${e.f}\u0000${e.node}`;
    if (e.type === 'invoke') {
      const op: Op = {
        f: e.f,
        client: e.client,
        node: e.node,
        type: 'info',
        start: e.time,
        end: Infinity,
        invoked: e.i,
        done: Infinity,
        asked: e.value ?? {},
        got: {},
        lines: [e.i],
      };
      if (e.ip !== undefined) op.ip = e.ip;
      if (e.agent !== undefined) op.agent = e.agent;
      ops.push(op);
      const list = open.get(key);
      if (list) list.push(op);
      else open.set(key, [op]);
      continue;
    }
    const op = open.get(key)?.shift();
    if (op) {
      op.type = e.type;
      op.end = e.time;
      op.done = e.i;
      op.got = e.value ?? {};
      if (e.error !== undefined) op.error = e.error;
      op.lines.push(e.i);
    } else {
      const start = typeof e.value?.start === 'number' ? e.value.start : e.time;
      const op: Op = {
        f: e.f,
        client: e.client,
        node: e.node,
        type: e.type,
        start,
        end: e.time,
        invoked: e.i,
        done: e.i,
        asked: {},
        got: e.value ?? {},
        lines: [e.i],
      };
      if (e.error !== undefined) op.error = e.error;
      ops.push(op);
    }
  }
  return ops;
}

/** Whether a was answered before b was sent (the history's lines say: real time). */
export const precedes = (a: Pick<Op, 'done'>, b: Pick<Op, 'invoked'>) => a.done < b.invoked;

/** A violation found: the check that found it names it. */
export interface Found {
  message: string;
  evidence: unknown;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The limits of PROTOCOL 1.4 and 14 where the run gave none. */
export function limitsOf(l: RunLimits = {}) {
  return {
    burst: l.burst ?? 120,
    refillPerSecond: l.refillPerSecond ?? 2,
    registrationCap: l.registrationCap ?? 20,
    casQuotaBytes: (l.casQuotaMiB ?? 100) * 1024 * 1024,
    maxSkewMs: l.maxSkewMs ?? 0,
  };
}

/**
 * idempotent-replay (PROTOCOL 1.5): a key sent again to another process with the same request
 * within 24 hours answers the first answer verbatim: the same status and the same body. Only
 * 2xx answers are kept, so a replay of a refused request promises nothing; a replay that got
 * no answer (a refused connection) or an unknown one (info: a 5xx, a timeout) says nothing either.
 */
export function checkReplays(ops: readonly Op[]): { found: Found[]; detail: string } {
  const found: Found[] = [];
  let compared = 0;
  for (const op of ops) {
    if (op.f !== 'replay' || op.type === 'info' || typeof op.got.status !== 'number') continue;
    const asked = op.asked as Partial<ReplayInvoke>;
    const first = asked.firstAnswer;
    if (!first || typeof first.status !== 'number' || first.status < 200 || first.status > 299) continue;
    compared++;
    const again = op.got as Partial<RecordedAnswer>;
    const same = again.status === first.status && canonicalize(again.body ?? null) === canonicalize(first.body ?? null);
    if (!same) {
      found.push({
        message:
          `key ${str(asked.idempotencyKey)} replayed to ${op.node} answered ${again.status}, ` +
          `not the first answer (${first.status} from ${str(asked.firstNode)})`,
        evidence: { lines: op.lines, idempotencyKey: asked.idempotencyKey, firstNode: asked.firstNode, node: op.node, first, replay: again },
      });
    }
  }
  return { found, detail: `${compared} replays of a 2xx answer compared with it` };
}

/** Tiers' daily proposal caps per kind (PROTOCOL 3.3, 14) and content-store multipliers (5.1). */
const PROPOSE_CAP: Record<string, number> = { frontier: 200, strong: 80, mid: 40, weak: 20 };
const CAS_MULTIPLIER: Record<string, number> = { frontier: 20, strong: 10, mid: 5, weak: 2 };
const TOP_TIER = 'frontier';

/** What the history tells of each agent's calibration: the history lines from which it was surely and maybe calibrated, and the tiers it was answered. */
function calibrations(ops: readonly Op[]) {
  const of = new Map<string, { sureFrom: number; maybeFrom: number; tiers: Set<string> }>();
  for (const op of ops) {
    if (op.f !== 'calibrate') continue;
    const tag = str(op.got.tag) ?? op.agent;
    if (!tag) continue;
    const c = of.get(tag) ?? { sureFrom: Infinity, maybeFrom: Infinity, tiers: new Set<string>() };
    c.maybeFrom = Math.min(c.maybeFrom, op.invoked);
    if (op.type === 'ok') c.sureFrom = Math.min(c.sureFrom, op.done);
    const tier = str(op.got.tier);
    if (tier) c.tiers.add(tier);
    else if (op.type !== 'fail') c.tiers.add(TOP_TIER); // an answer unknown: any tier may have been given
    of.set(tag, c);
  }
  return of;
}

/**
 * The bucket an operation surely drew from (PROTOCOL 1.4: a calibrated agent's own, else its
 * IP's), or undefined when the history cannot tell (no ip; the agent's calibration in flight).
 */
function bucketOf(op: Op, cal: ReturnType<typeof calibrations>): string | undefined {
  if (op.ip === undefined) return undefined;
  if (op.agent === undefined) return `ip:${op.ip}`;
  const c = cal.get(op.agent);
  if (c && c.sureFrom < op.invoked) return `agent:${op.agent}`;
  if (!c || op.done < c.maybeFrom) return `ip:${op.ip}`;
  return undefined;
}

/**
 * Whose content-store quota an upload surely counted against (PROTOCOL 5.1): a calibrated
 * agent's own (every tier it was ever answered one of the four; a refused agent counts as
 * anonymous), else its IP's; undefined when the history cannot tell.
 */
function casQuotaOf(op: Op, cal: ReturnType<typeof calibrations>): string | undefined {
  const key = bucketOf(op, cal);
  if (!key?.startsWith('agent:')) return key;
  return [...(cal.get(op.agent!)?.tiers ?? [])].every((t) => t in CAS_MULTIPLIER) ? key : undefined;
}

/** Operations that reach no token bucket: the nemesis, a crash, and the operator's revoke (the CLI on the database). */
const NO_BUCKET = new Set<OpName>(['nemesis', 'crash', 'revoke']);

/**
 * buckets-bounded (PROTOCOL 1.4), the bound checked: for every bucket key and every window
 * [a, b] from one operation's invoke to another's completion, the 2xx answers to requests sent
 * and answered inside it number at most
 *     burst + refill/s × (b − a)/1000 + burst × (1 + the immediate PostgreSQL restarts overlapping it).
 * The first two terms are one bucket's most (full at a, refilled since); the third allows one
 * refill across processes (a process whose clock runs ahead refills the shared bucket by its
 * skew at most once, capped at a burst) and a full bucket after each crash recovery, which
 * empties the UNLOGGED bucket table. 2xx answers only: each drew a token for certain.
 */
export function checkBuckets(ops: readonly Op[], limits: ReturnType<typeof limitsOf>): { found: Found[]; detail: string } {
  const cal = calibrations(ops);
  const restarts = ops.filter((o) => o.f === 'nemesis' && o.got.fault === 'pg-restart-immediate' && !o.error);
  const byKey = new Map<string, Op[]>();
  for (const op of ops) {
    if (op.type !== 'ok' || NO_BUCKET.has(op.f) || !Number.isFinite(op.end)) continue;
    const key = bucketOf(op, cal);
    if (!key) continue;
    const list = byKey.get(key);
    if (list) list.push(op);
    else byKey.set(key, [op]);
  }
  const found: Found[] = [];
  let counted = 0;
  for (const [key, list] of byKey) {
    counted += list.length;
    const least = (from: number, to: number) => 2 * limits.burst + (limits.refillPerSecond * (to - from)) / 1000;
    const worst = worstWindow(list, (from, to) => least(from, to) + limits.burst * restarts.filter((r) => r.start <= to && r.end >= from).length, least);
    if (worst) {
      found.push({
        message: `bucket ${key}: ${worst.count} requests answered 2xx within ${Math.round(worst.to - worst.from)} ms, over the bound ${worst.bound.toFixed(1)}`,
        evidence: { key, ...worst, burst: limits.burst, refillPerSecond: limits.refillPerSecond },
      });
    }
  }
  return { found, detail: `${counted} 2xx answers over ${byKey.size} buckets within burst + refill × window + one burst (+ one per crash recovery)` };
}

/**
 * The window where the count is furthest over its bound, or undefined when none is over: every
 * window from an invoke to a completion, O(n²) per bucket. `least` is a bound no window's is
 * below (without crash recoveries), so the full bound is computed only where it might be passed.
 */
function worstWindow(list: readonly Op[], bound: (from: number, to: number) => number, least: (from: number, to: number) => number) {
  const byEnd = [...list].sort((x, y) => x.end - y.end);
  const starts = [...new Set(list.map((o) => o.start))].sort((x, y) => x - y);
  let worst: { from: number; to: number; count: number; bound: number } | undefined;
  for (const from of starts) {
    let count = 0;
    for (const op of byEnd) {
      if (op.start < from) continue;
      count++;
      if (count <= least(from, op.end)) continue;
      const b = bound(from, op.end);
      if (count > b && (!worst || count - b > worst.count - worst.bound)) worst = { from, to: op.end, count, bound: b };
    }
  }
  if (!worst) return undefined;
  const { from, to } = worst;
  return {
    ...worst,
    lines: byEnd
      .filter((o) => o.start >= from && o.end <= to)
      .slice(0, 20)
      .map((o) => o.lines[0]),
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC day an operation surely fell in by any process's clock (skew included), or undefined near a midnight. */
function dayOf(op: Op, startedAt: number, skew: number): number | undefined {
  const first = Math.floor((startedAt + op.start - skew) / DAY_MS);
  const last = Math.floor((startedAt + op.end + skew) / DAY_MS);
  return first === last ? first : undefined;
}

/**
 * quotas-bounded (PROTOCOL 14, 2.1, 5.1, 6.4), per UTC day by the nodes' clocks (an operation
 * within the run's clock skew of a midnight is not counted), acknowledged operations only:
 * registrations per IP ≤ the registration cap; proposals per kind per agent ≤ the cap of the
 * highest tier the agent was answered (3.3; frontier when a calibration's answer is unknown);
 * content-store bytes per calibrated agent ≤ the quota × its highest tier's multiple, per IP
 * for the others. A daily quota has no refill within its day, so the bound is the cap itself.
 */
export function checkQuotas(ops: readonly Op[], limits: ReturnType<typeof limitsOf>, startedAt: number): { found: Found[]; detail: string } {
  const cal = calibrations(ops);
  const counts = new Map<string, { used: number; cap: number; lines: number[] }>();
  const count = (key: string, amount: number, cap: number, op: Op) => {
    const c = counts.get(key) ?? { used: 0, cap, lines: [] };
    c.used += amount;
    c.cap = Math.max(c.cap, cap);
    if (c.lines.length < 20) c.lines.push(op.lines[0]);
    counts.set(key, c);
  };
  const topOf = (tag: string, table: Record<string, number>) => Math.max(0, ...[...(cal.get(tag)?.tiers ?? [TOP_TIER])].map((t) => table[t] ?? 0));
  let counted = 0;
  for (const op of ops) {
    if (op.type !== 'ok') continue;
    const day = dayOf(op, startedAt, limits.maxSkewMs);
    if (day === undefined) continue;
    if (op.f === 'register' && op.ip !== undefined) {
      count(`registrations ip:${op.ip} day ${day}`, 1, limits.registrationCap, op);
      counted++;
    } else if (op.f === 'propose') {
      const tag = op.agent ?? str(op.got.tag);
      const kind = str(op.got.kind) ?? str(op.asked.kind);
      if (!tag || !kind) continue;
      count(`proposals ${kind} agent:${tag} day ${day}`, 1, topOf(tag, PROPOSE_CAP), op);
      counted++;
    } else if (op.f === 'cas-put' && typeof op.got.bytes === 'number') {
      const key = casQuotaOf(op, cal);
      if (!key) continue;
      const cap = key.startsWith('agent:') ? limits.casQuotaBytes * topOf(key.slice(6), CAS_MULTIPLIER) : limits.casQuotaBytes;
      count(`cas bytes ${key} day ${day}`, op.got.bytes, cap, op);
      counted++;
    }
  }
  const found: Found[] = [];
  for (const [key, c] of counts) {
    if (c.used > c.cap) found.push({ message: `${key}: ${c.used} acknowledged, over the cap ${c.cap}`, evidence: { key, ...c } });
  }
  return { found, detail: `${counted} acknowledged registrations, proposals and uploads within their daily caps` };
}
