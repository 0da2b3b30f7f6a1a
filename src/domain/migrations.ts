// Recorded data migrations: changes to what the node stores that run once, at the first start
// of a node whose data predates them, on any store (LevelDB or PostgreSQL: they go through the
// Store interface, record by record, under the locks every writer of those records takes). Each
// is recorded in the `migrations` space when done, and is idempotent until then: a process
// that dies halfway, or two processes starting on one database, leave the same result.
import { contentSha256Of } from '../core/index.js';
import { space } from '../store/index.js';
import type { Ctx } from './context.js';
import { Proposals, proposalLock, type ProposalRecord } from './records.js';

export interface MigrationRecord {
  at: number;
  /** Records the migration changed. */
  changed: number;
}

export const Migrations = space<MigrationRecord>('migrations');

/** PROTOCOL 6.10: contentSha256 for proposals and judgments stored before content binding. */
export const CONTENT_SHA256_MIGRATION = 'content-sha256';

const BATCH = 100;

// A proposal stored before content binding: no hash, or a judgment without one.
const needsContent = (p: ProposalRecord) =>
  typeof p.contentSha256 !== 'string' || !p.contentBinding || p.judgments.some((j) => typeof j.contentSha256 !== 'string');

/**
 * Computes the contentSha256 of every proposal stored before content binding from the body it
 * stores (the body as submitted, never changed since), marks it bound by the store (no
 * proposal.submitted event can be added after the fact), and binds each of its judgments to it.
 */
async function migrateContentSha256(ctx: Pick<Ctx, 'store'>): Promise<number> {
  let changed = 0;
  let ids: string[] = [];
  const flush = async () => {
    const batch = ids;
    ids = [];
    await ctx.store.transact(batch.map(proposalLock), async (tx) => {
      for (const id of batch) {
        const p = await tx.get(Proposals, id);
        if (!p || !needsContent(p)) continue;
        const hash = typeof p.contentSha256 === 'string' ? p.contentSha256 : contentSha256Of(p.kind, p.payload);
        p.contentSha256 = hash;
        p.contentBinding ??= 'store';
        for (const j of p.judgments) j.contentSha256 ??= hash;
        tx.put(Proposals, id, p);
        changed++;
      }
    });
  };
  for await (const [id, p] of ctx.store.iterate(Proposals)) {
    if (!needsContent(p)) continue;
    ids.push(id);
    if (ids.length >= BATCH) await flush();
  }
  if (ids.length) await flush();
  return changed;
}

const MIGRATIONS: Array<[string, (ctx: Pick<Ctx, 'store'>) => Promise<number>]> = [[CONTENT_SHA256_MIGRATION, migrateContentSha256]];

/** Runs every migration not yet recorded, in order; answers the names of those it ran. */
export async function runMigrations(ctx: Pick<Ctx, 'store' | 'clock'>): Promise<string[]> {
  const ran: string[] = [];
  for (const [name, migrate] of MIGRATIONS) {
    if (await ctx.store.get(Migrations, name)) continue;
    const changed = await migrate(ctx);
    await ctx.store.transact([`migration:${name}`], async (tx) => {
      if (!(await tx.get(Migrations, name))) tx.put(Migrations, name, { at: ctx.clock.now(), changed });
    });
    ran.push(name);
  }
  return ran;
}
