// What the node keeps about its clients, and for how long (README "Running a public node"):
// the per-day counters keyed by client IP or agent (registrations, proposals, content-store
// bytes) are dropped once their day is over, and traversals once they are older than the
// node keeps them. Run at start and every hour (http/app.ts), like the idempotency sweep.
import type { Space, Store } from '../store/index.js';
import { CasQuotaUse } from './cas/quota.js';
import type { Ctx } from './context.js';
import { ProposeCounts } from './proposals/proposals.js';
import { Counters } from './records.js';
import { Traversals, traversalKeyBefore } from './knowledge/traversal.js';

/** Deletes keys in chunks, each re-checked under its lock (a key rewritten since the scan stays). */
async function dropAll<T>(store: Store, space: Space<T>, keys: string[], stillExpired: (v: T) => boolean) {
  for (let i = 0; i < keys.length; i += 500) {
    const chunk = keys.slice(i, i + 500);
    await store.transact(
      chunk.map((k) => `retention:${space.name}:${k}`),
      async (tx) => {
        for (const k of chunk) {
          const v = await tx.get(space, k);
          if (v !== undefined && stillExpired(v)) tx.del(space, k);
        }
      },
      { durable: false },
    );
  }
}

/** Drops the daily counters of past days and the traversals past their time; answers how many went. */
export async function sweepExpired(ctx: Pick<Ctx, 'store' | 'clock' | 'config'>): Promise<{ counters: number; traversals: number }> {
  const now = ctx.clock.now();
  let counters = 0;
  // Daily counters carry the midnight they reset at; the pool counters (resetAt 0) are for life.
  for (const space of [Counters, ProposeCounts, CasQuotaUse] as Array<Space<{ resetAt: number }>>) {
    const gone: string[] = [];
    for await (const [k, v] of ctx.store.iterate(space)) if (v.resetAt !== 0 && v.resetAt <= now) gone.push(k);
    await dropAll(ctx.store, space, gone, (v) => v.resetAt !== 0 && v.resetAt <= ctx.clock.now());
    counters += gone.length;
  }
  // Traversal ids begin with their second: the expired ones sort first.
  const ttl = ctx.config.traversalTtlMs;
  const old: string[] = [];
  for await (const [k, t] of ctx.store.iterate(Traversals, { lt: traversalKeyBefore(now - ttl + 1000) })) if (t.at + ttl <= now) old.push(k);
  await dropAll(ctx.store, Traversals, old, (t) => t.at + ttl <= ctx.clock.now());
  return { counters, traversals: old.length };
}
