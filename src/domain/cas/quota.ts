// Daily byte quotas of the content store (PROTOCOL 5.1): anonymous uploads count per client IP
// (an IPv6 /64), a calibrated agent's per agent, by tier. Without them one client wrote 200 MiB
// in a second and 20 MiB a second after that, anonymously.
//
// An upload reserves its bytes before a byte is read: the Content-Length it declares, or, sent
// without one, as much as is left (the upload is then cut where the quota ends) and the rest
// is handed back when it ends. A refused or abandoned upload hands back all it reserved. So
// concurrent uploads cannot together pass the quota. Every upload taken counts, the ones whose
// bytes were already stored included (they were received and hashed all the same).
import { isPaidTier, Lru, nextUtcMidnight, ServiceError, tierOf, utcDay, type PaidTier, type Tier } from '../../core/index.js';
import { space } from '../../store/index.js';
import type { Ctx, Strategies } from '../context.js';
import type { AgentRecord } from '../records.js';

/** A calibrated agent's daily quota, as a multiple of the anonymous one, by tier. */
export const CAS_QUOTA_FACTOR: Readonly<Record<PaidTier, number>> = { frontier: 20, strong: 10, mid: 5, weak: 2 };

/** Bytes taken today by one IP or one agent (key `ip:<client>:<day>` or `agent:<tag>:<day>`). */
export const CasQuotaUse = space<{ used: number; resetAt: number }>('cas-quota');

export interface CasQuota {
  scope: 'per-ip-per-day' | 'per-agent-per-day';
  /** Whose bytes: the client IP, or the agent's tag. */
  key: string;
  tier: Tier | null;
  /** Bytes a day. */
  cap: number;
}

const useKey = (q: CasQuota, now: number) => `${q.scope === 'per-ip-per-day' ? 'ip' : 'agent'}:${q.key}:${utcDay(now)}`;
const lockOf = (q: CasQuota) => `cas-quota:${q.scope}:${q.key}`;

/** The quota an upload counts against: a calibrated agent's own, else its client IP's. */
export function casQuotaOf(ctx: Pick<Ctx, 'config'>, ip: string, agent?: AgentRecord): CasQuota {
  const base = ctx.config.casQuotaBytes;
  const tier = agent ? tierOf(agent.calibration.score) : null;
  if (agent && tier && isPaidTier(tier)) return { scope: 'per-agent-per-day', key: agent.tag, tier, cap: base * CAS_QUOTA_FACTOR[tier] };
  return { scope: 'per-ip-per-day', key: ip, tier, cap: base };
}

/** What the quota's functions read: the store, the clock, and how this node counts (Strategies.casQuota). */
export type QuotaCtx = Pick<Ctx, 'store' | 'clock'> & { strategies: Pick<Strategies, 'casQuota'> };

/**
 * How a node counts a day's bytes, chosen where it is assembled: heldCasQuota when it holds its
 * store alone, storedCasQuota when other processes count in the same store.
 */
export interface CasQuotaCounting {
  /** Bytes of the quota-day `key` used so far. */
  used(ctx: Pick<Ctx, 'store' | 'clock'>, key: string, now: number): Promise<number>;
  /**
   * Reserves what `take(used, now)` answers (it throws the 429 when nothing fits), with no other
   * reservation of the quota, in any process, between reading `used` and counting the reserve.
   */
  reserve(ctx: Pick<Ctx, 'store' | 'clock'>, q: CasQuota, take: (used: number, now: number) => number): Promise<Reservation>;
  /** Hands back bytes of a reservation made at reservedAt (nothing, once its day is gone). */
  release(ctx: Pick<Ctx, 'store' | 'clock'>, q: CasQuota, bytes: number, reservedAt: number): Promise<void>;
}

export interface Reservation {
  reserved: number;
  usedBefore: number;
  at: number;
}

/** Today's use of a quota (GET /api/agent/v1/quota). */
export async function casQuotaStatus(ctx: QuotaCtx, q: CasQuota) {
  const now = ctx.clock.now();
  const used = await ctx.strategies.casQuota.used(ctx, useKey(q, now), now);
  return { scope: q.scope, cap: q.cap, used, remaining: Math.max(0, q.cap - used), resetAt: nextUtcMidnight(now) };
}

/** The 429 of a quota used up (PROTOCOL 1.4's problem body, with the quota's figures). */
export function casQuotaError(q: CasQuota, used: number, requested: number, now: number) {
  const resetAt = nextUtcMidnight(now);
  const mib = (n: number) => `${Math.round((n / 1048576) * 10) / 10} MiB`;
  return new ServiceError(
    'rate_limited',
    `This upload of ${mib(requested)} would pass the content-store quota of ${mib(q.cap)} a day (${q.scope}); ` +
      `${mib(Math.max(0, q.cap - used))} are left today.`,
    {
      scope: q.scope,
      cap: q.cap,
      used,
      requested,
      remaining: Math.max(0, q.cap - used),
      unit: 'bytes',
      tier: q.tier,
      resetAt,
      nextEligibleAt: resetAt,
      resetIn: resetAt - now,
      retryAfter: Math.ceil((resetAt - now) / 1000),
      hint:
        q.scope === 'per-ip-per-day'
          ? 'Anonymous uploads share a daily quota per IP. Upload as a calibrated agent (Authorization: Bearer) for a larger quota of your ' +
            'own, or wait for the reset.'
          : 'Your tier sets your daily quota (GET /api/agent/v1/quota shows it). Wait for the reset.',
    },
  );
}

/**
 * Today's counts, held in memory by a node that is its store's only process (heldCasQuota, on an
 * embedded store): one client's uploads then never wait for each other's store commits (32
 * uploads in flight from one IP ran one reservation per commit: 1,763 uploads/s against 6,812
 * before the quota). Each change is written behind, not awaited and not synced, as the store
 * transaction it was. On a store several processes share, every change is a transaction
 * (storedCasQuota).
 *
 * At most heldCounts.max clients are held (about 100 bytes each): past that the one idle
 * longest is dropped, and read again from the store when it comes back, once the writes behind
 * it have landed, so a dropped count is never read stale. (A tunable object, read when a day's
 * counts start: tests make it small.)
 */
export const heldCounts = { max: 100_000 };

type Count = { used: number; resetAt: number };
interface HeldCounts {
  day: number;
  counts: Lru<Count>;
  loading: Map<string, Promise<Count>>;
  /** The last write behind of each key still in flight. */
  writing: Map<string, Promise<void>>;
}
const held = new WeakMap<object, HeldCounts>();

function heldOf(ctx: Pick<Ctx, 'store'>, day: number): HeldCounts {
  let h = held.get(ctx.store);
  // A new day: yesterday's counts are done with (the store's copies expire with retention.ts).
  if (!h || h.day !== day) held.set(ctx.store, (h = { day, counts: new Lru(heldCounts.max), loading: new Map(), writing: h?.writing ?? new Map() }));
  return h;
}

async function heldCount(ctx: Pick<Ctx, 'store' | 'clock'>, key: string, now: number) {
  const h = heldOf(ctx, utcDay(now));
  const known = h.counts.get(key);
  if (known) return known;
  let loading = h.loading.get(key);
  if (!loading) {
    const written = h.writing.get(key) ?? Promise.resolve();
    loading = written
      .then(() => ctx.store.get(CasQuotaUse, key))
      .then(
        (stored) => {
          const entry = h.counts.get(key) ?? { used: stored?.used ?? 0, resetAt: nextUtcMidnight(now) };
          h.counts.set(key, entry);
          h.loading.delete(key);
          return entry;
        },
        (e: unknown) => {
          h.loading.delete(key); // a read that failed is tried again by the next upload
          throw e;
        },
      );
    h.loading.set(key, loading);
  }
  return loading;
}

/** Writes a held count behind: the value it holds when the write runs, so the last write carries the last count. */
function writeBehind(ctx: Pick<Ctx, 'store'>, q: CasQuota, key: string, entry: Count, h: HeldCounts) {
  const write = ctx.store
    .transact([lockOf(q)], async (tx) => tx.put(CasQuotaUse, key, { used: entry.used, resetAt: entry.resetAt }), { durable: false })
    .then(
      () => undefined,
      () => undefined, // the store refuses writes (full disk): the upload itself is refused then
    );
  h.writing.set(key, write);
  void write.then(() => {
    if (h.writing.get(key) === write) h.writing.delete(key);
  });
}

/** The counts held in this process, the truth when it holds the store alone. */
export const heldCasQuota: CasQuotaCounting = {
  async used(ctx, key, now) {
    return (await heldCount(ctx, key, now)).used;
  },
  async reserve(ctx, q, take) {
    const now = ctx.clock.now();
    const key = useKey(q, now);
    const entry = await heldCount(ctx, key, now);
    // No await between the check and the count: concurrent uploads cannot pass the quota together.
    const used = entry.used;
    const reserve = take(used, now);
    entry.used = used + reserve;
    writeBehind(ctx, q, key, entry, heldOf(ctx, utcDay(now)));
    return { reserved: reserve, usedBefore: used, at: now };
  },
  async release(ctx, q, bytes, reservedAt) {
    const h = held.get(ctx.store);
    if (!h || h.day !== utcDay(reservedAt)) return; // a reservation of a day gone by
    // Dropped from memory meanwhile (many clients): read again, then handed back.
    const key = useKey(q, reservedAt);
    const entry = await heldCount(ctx, key, reservedAt);
    entry.used = Math.max(0, entry.used - bytes);
    writeBehind(ctx, q, key, entry, h);
  },
};

/**
 * The counts in the store, every change one transaction under the quota's lock: what every
 * process counting in the store sees at once. Not synced: a quota is not a write the caller is
 * promised, and a crash may forget a few reservations.
 */
export const storedCasQuota: CasQuotaCounting = {
  async used(ctx, key) {
    return (await ctx.store.get(CasQuotaUse, key))?.used ?? 0;
  },
  reserve(ctx, q, take) {
    return ctx.store.transact(
      [lockOf(q)],
      async (tx) => {
        const now = ctx.clock.now();
        const key = useKey(q, now);
        const used = (await tx.get(CasQuotaUse, key))?.used ?? 0;
        const reserve = take(used, now);
        tx.put(CasQuotaUse, key, { used: used + reserve, resetAt: nextUtcMidnight(now) });
        return { reserved: reserve, usedBefore: used, at: now };
      },
      { durable: false },
    );
  },
  async release(ctx, q, bytes, reservedAt) {
    const key = useKey(q, reservedAt);
    await ctx.store.transact(
      [lockOf(q)],
      async (tx) => {
        const e = await tx.get(CasQuotaUse, key);
        if (e) tx.put(CasQuotaUse, key, { ...e, used: Math.max(0, e.used - bytes) });
      },
      { durable: false },
    );
  },
};

/**
 * Reserves bytes of today's quota for one upload: `declared` (its Content-Length), or without
 * one what is left (at most `max`). Answers what was reserved and what was used before; throws
 * the 429 when the declared bytes do not fit, or nothing is left.
 */
export function reserveCasQuota(ctx: QuotaCtx, q: CasQuota, declared: number | undefined, max: number): Promise<Reservation> {
  return ctx.strategies.casQuota.reserve(ctx, q, (used, now) => {
    const left = Math.max(0, q.cap - used);
    const reserve = declared ?? Math.min(max, left);
    if (reserve > left || left === 0) throw casQuotaError(q, used, declared ?? 1, now);
    return reserve;
  });
}

/** Hands back the part of a reservation an upload did not use (all of it, when it was refused). */
export async function releaseCasQuota(ctx: QuotaCtx, q: CasQuota, bytes: number, reservedAt: number): Promise<void> {
  if (bytes <= 0) return;
  await ctx.strategies.casQuota.release(ctx, q, bytes, reservedAt);
}
