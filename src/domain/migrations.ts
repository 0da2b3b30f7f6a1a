// Recorded data migrations: changes to what the node stores that run once, at the first start
// of a node whose data predates them, on any store (LevelDB or PostgreSQL: they go through the
// Store interface, record by record, under the locks every writer of those records takes). Each
// is recorded in the `migrations` space when done, and is idempotent until then: a process
// that dies halfway, or two processes starting on one database, leave the same result.
import { contentSha256Of, STATUS_LIST_EVENT_KIND, tierOf } from '../core/index.js';
import { AGENT_EVENT_KIND, agentEvent } from '../core/standing.js';
import { space } from '../store/index.js';
import type { Ctx } from './context.js';
import { ensureStatusLists, StatusSlotsSpace } from './credentials/status-lists.js';
import { ledgerKey, TIMED_KEYS } from './ledger.js';
import { enqueueLogEntry, LOG_LOCK, LogEntries, LogIndex, seqKey, statusIndexKey, statusVersionRef } from './log/index.js';
import { Agents, agentLock, Ledger, Proposals, proposalLock, type AgentRecord, type LedgerEntry, type ProposalRecord } from './records.js';

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

/** PROTOCOL 8.7: status list versions found by version in the log's index, and version 0 logged where credentials name a list never made. */
export const STATUS_VERSIONS_MIGRATION = 'status-versions-logged';

/**
 * Indexes each status list version's log entry by its version (the `status:` keys the appender
 * writes since), and makes version 0 of a list that credentials name but that was never made
 * (a node whose lists were made on demand, unlogged, until no change had been made).
 */
async function migrateStatusVersions(ctx: Ctx): Promise<number> {
  const prefix = `kind:${STATUS_LIST_EVENT_KIND}:`;
  const refs = await ctx.store.list(LogIndex, { gte: prefix, lt: `${prefix}\uffff` });
  let changed = 0;
  if (refs.length) {
    await ctx.store.transact([LOG_LOCK], async (tx) => {
      for (const [, { seq }] of refs) {
        const entry = await tx.get(LogEntries, seqKey(seq));
        const ref = entry && statusVersionRef(entry);
        if (!ref) continue;
        tx.put(LogIndex, statusIndexKey(ref.purpose, ref.version, seq), { seq });
        changed++;
      }
    });
  }
  const named = await ctx.store.list(StatusSlotsSpace, { limit: 1 });
  if (named.length) await ensureStatusLists(ctx);
  return changed;
}

/** PROTOCOL 3.3: ledger entries keyed by agent and the sequence its record holds, not by time (ledger.ts). */
export const LEDGER_ORDER_MIGRATION = 'ledger-per-agent';

/** Entries the ledger migration re-keys per transaction (a tunable object: tests make it small). */
export const ledgerMigration = { batch: 500 };

/**
 * Numbers every ledger entry still keyed by time, per agent in its old order (the clock's and the
 * writing process's counter: the only order those entries ever had), and keys it by agent and
 * number, the agent record's ledgerSeq advancing with it. A huge ledger is read as a stream, in
 * key order, and re-keyed `ledgerMigration.batch` entries a transaction (holding those agents'
 * locks, the record and its entries changing in one batch): memory holds one batch, and a process
 * that dies leaves whole batches done, oldest first, so the next start numbers the rest after
 * them. Each entry is read again under the lock, so two processes migrating at once (a shared
 * database) number each entry once. An entry whose agent is not stored keeps its old key (the
 * audit names it: the conservation sums do not meet).
 */
export async function migrateLedgerOrder(ctx: Pick<Ctx, 'store'>): Promise<number> {
  let changed = 0;
  let keys: Array<[string, string]> = [];
  const flush = async () => {
    const batch = keys;
    keys = [];
    await ctx.store.transact([...new Set(batch.map(([, tag]) => agentLock(tag)))], async (tx) => {
      const agents = new Map<string, AgentRecord>();
      for (const [key, tag] of batch) {
        const e = await tx.get(Ledger, key);
        const agent = agents.get(tag) ?? (await tx.get(Agents, tag));
        if (!e || !agent) continue; // numbered by another process meanwhile, or an agent not stored
        agents.set(tag, agent);
        const seq = (agent.ledgerSeq ?? 0) + 1;
        agent.ledgerSeq = seq;
        tx.put<LedgerEntry>(Ledger, ledgerKey(tag, seq), { ...e, seq });
        tx.del(Ledger, key);
        changed++;
      }
      for (const [tag, agent] of agents) tx.put(Agents, tag, agent);
    });
  };
  for await (const [key, e] of ctx.store.iterate(Ledger, TIMED_KEYS)) {
    keys.push([key, e.agent]);
    if (keys.length >= ledgerMigration.batch) await flush();
  }
  if (keys.length) await flush();
  return changed;
}

/** PROTOCOL 8.9: the calibration and reputation of agents from before they were logged, logged once. */
export const AGENT_EVENTS_MIGRATION = 'agent-events-logged';

/**
 * Logs, for each agent calibrated or caught on a decoy before agent events were logged, one
 * `agent.calibrated` entry with its kept score and the time of its last attempt, and one
 * `agent.decoy-failed` entry with its count and ban (each with `loggedBy: migration`): without them a standing
 * recomputed from the log would read such an agent uncalibrated and clear. An agent whose log
 * already holds an event of that kind (it acted since) is left as it is. Entries are queued in
 * batches, each holding its agents' locks, and appended by the log as any other.
 */
export async function migrateAgentEvents(ctx: Ctx): Promise<number> {
  const alreadyLogged = await agentsWithEvents(ctx);
  let changed = 0;
  let tags: string[] = [];
  const flush = async () => {
    const batch = tags;
    tags = [];
    await ctx.store.transact(batch.map(agentLock), async (tx) => {
      for (const tag of batch) {
        const a = await tx.get(Agents, tag);
        if (!a) continue;
        const at = a.calibration.lastAttemptAt ?? a.createdAt;
        if (a.calibration.score !== null && !alreadyLogged.has(`agent.calibrated:${tag}`)) {
          const score = a.calibration.score;
          const body = agentEvent('agent.calibrated', at, { attemptScore: score, intelligenceScore: score, tier: tierOf(score), loggedBy: 'migration' });
          enqueueLogEntry(tx, ctx, { kind: AGENT_EVENT_KIND, tier: 'event', agent: tag, body });
          changed++;
        }
        if (a.decoyFailed > 0 && !alreadyLogged.has(`agent.decoy-failed:${tag}`)) {
          const body = agentEvent('agent.decoy-failed', at, { decoyFailed: a.decoyFailed, bannedUntil: a.bannedUntil, loggedBy: 'migration' });
          enqueueLogEntry(tx, ctx, { kind: AGENT_EVENT_KIND, tier: 'event', agent: tag, body });
          changed++;
        }
      }
    });
  };
  for await (const [tag, a] of ctx.store.iterate(Agents)) {
    if (a.calibration.score === null && !(a.decoyFailed > 0)) continue;
    tags.push(tag);
    if (tags.length >= BATCH) await flush();
  }
  if (tags.length) await flush();
  return changed;
}

/** `EVENT:TAG` for each agent event the log holds (its kind's index, then each entry). */
async function agentsWithEvents(ctx: Ctx): Promise<Set<string>> {
  const out = new Set<string>();
  for (const [, { seq }] of await ctx.store.list(LogIndex, { gte: `kind:${AGENT_EVENT_KIND}:`, lt: `kind:${AGENT_EVENT_KIND}:\uffff` })) {
    const e = await ctx.store.get(LogEntries, seqKey(seq));
    const event = (e?.body as { event?: unknown } | undefined)?.event;
    if (e?.agent && typeof event === 'string') out.add(`${event}:${e.agent}`);
  }
  return out;
}

const MIGRATIONS: Array<[string, (ctx: Ctx) => Promise<number>]> = [
  [CONTENT_SHA256_MIGRATION, migrateContentSha256],
  [STATUS_VERSIONS_MIGRATION, migrateStatusVersions],
  [LEDGER_ORDER_MIGRATION, migrateLedgerOrder],
  [AGENT_EVENTS_MIGRATION, migrateAgentEvents],
];

/** Runs every migration not yet recorded, in order; answers the names of those it ran. */
export async function runMigrations(ctx: Ctx): Promise<string[]> {
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
