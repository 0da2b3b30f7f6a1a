// What a search may cost one caller (PROTOCOL 1.4, 10.6), on either store. A typo lookup is the
// costly part of a query: the kit bounds a query's lookups (search-index.ts: its first 4 words
// of 5 letters or more), and this side charges them and keeps one caller's searches from
// filling the index's queue:
// - a query draws a token more for each word it looks up for typos after the first (3 at most),
//   from the bucket its request drew from: one-word searches cost what any request does, and a
//   burst of the costliest queries is a quarter as long;
// - a caller has at most SEARCHES_PER_CALLER searches running in this process; the others wait
//   their turn in the caller's own queue (which its token bucket bounds), so one address's
//   burst holds two of the search pool's connections (PostgreSQL) or two places in the index
//   thread's queue (MiniSearch), never all of them, and another caller's search starts at once.
import type { FastifyRequest } from 'fastify';
import { typoLookups } from '../domain/knowledge/search.js';
import { bucketOf } from './caller.js';
import type { TokenBuckets } from './rate-limit.js';

/** Searches (and suggests) one caller has running at once in a process. */
export const SEARCHES_PER_CALLER = 2;

/** The tokens a search query draws beyond the request's one: one per typo lookup after the first. */
export const searchSurcharge = (q: string): number => Math.max(0, typoLookups(q) - 1);

/** Draws a costly query's surcharge from the caller's bucket (429 rate_limited when it lacks them: all or none). */
export async function chargeSearch(buckets: TokenBuckets, request: FastifyRequest, q: string): Promise<void> {
  const extra = searchSurcharge(q);
  if (extra === 0) return;
  const { key, scope } = bucketOf(request.caller);
  await buckets.take(key, scope, `This search looked up ${extra + 1} words for typos: it drew ${extra} tokens more (PROTOCOL 1.4).`, extra);
}

/** At most `perCaller` calls running per key; the others wait, in order, for one of the key's own to end. */
export class CallerGate {
  private readonly callers = new Map<string, { running: number; waiting: Array<() => void> }>();

  constructor(private readonly perCaller = SEARCHES_PER_CALLER) {}

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let c = this.callers.get(key);
    if (!c) this.callers.set(key, (c = { running: 0, waiting: [] }));
    const caller = c;
    if (caller.running < this.perCaller) caller.running++;
    // Its place is handed over by a call of the same key that ends (running stays as it was).
    else await new Promise<void>((resolve) => caller.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = caller.waiting.shift();
      if (next) next();
      else if (--caller.running === 0) this.callers.delete(key);
    }
  }

  /** Calls running and waiting for a key (tests). */
  load(key: string): { running: number; waiting: number } {
    const c = this.callers.get(key);
    return { running: c?.running ?? 0, waiting: c?.waiting.length ?? 0 };
  }
}
