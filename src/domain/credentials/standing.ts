// Standing credentials (PROTOCOL 8.9): an agent's tier, calibration, judgments, proposals and
// reputation as the node's signed word, every figure computed from the log's entries up to a
// checkpoint (src/core/standing.ts), so a verifier recomputes it from the same entries. Each
// standing has entries in the node's status lists like a judgment credential: a newer standing
// supersedes the older (its revocation bit set, a status-list version logged), and a ban revokes
// the agent's standing at once.
import { didKeyFromPublicKey, ServiceError } from '../../core/index.js';
import { standingCredential, standingFigures, standingUrn, type EntryFacts, type StandingFigures } from '../../core/standing.js';
import type { LogEntry } from '../../core/log-entry.js';
import type { Ctx } from '../context.js';
import type { TransparencyLog } from '../log/index.js';
import { Agents, Proposals } from '../records.js';
import { issueNodeCredential, StandingHeads, Standings, type StandingRecord } from './credentials.js';
import { didWebOf } from '../../core/did-web.js';
import { changeStatus, claimSlots, statusOrigin, drawStatusSlots, ensureStatusLists, slotLocks, slotsFree, credentialStatusOf } from './status-lists.js';

export const STANDING_ID = /^stn_[0-9a-f]{16}$/;
/** A standing is issued afresh when the one kept has less than this left of its validity. */
const RENEW_BEFORE_MS = 24 * 60 * 60 * 1000;
/** Entries read per page of the log's index. */
const PAGE = 1000;

/** The standing id an operator's ID names: the id itself, or the credential's id (urn:akas:standing:stn_...). */
export function standingIdOf(id: string): string | undefined {
  if (STANDING_ID.test(id)) return id;
  const m = /^urn:akas:standing:(stn_[0-9a-f]{16})$/.exec(id);
  return m ? m[1] : undefined;
}

// Every entry under an index prefix, below `size`.
async function indexed(log: TransparencyLog, prefix: string, size: number): Promise<LogEntry[]> {
  const out: LogEntry[] = [];
  let after: number | undefined;
  for (;;) {
    const page = await log.byIndex(prefix, PAGE, after);
    for (const e of page) if (e.seq < size) out.push(e);
    if (page.length < PAGE || page[page.length - 1].seq >= size) return out;
    after = page[page.length - 1].seq;
  }
}

/**
 * The entries the figures of `tag` read, below `size`: the agent's own (its index in the log),
 * and the decisions on the proposals it judged. The figures read no other entry, so this subset
 * gives what the whole log gives (PROTOCOL 8.9).
 */
export async function standingEntries(log: TransparencyLog, tag: string, size: number): Promise<EntryFacts[]> {
  const own = await indexed(log, `agent:${tag}:`, size);
  const judged = new Set<string>();
  for (const e of own) if (e.body.event === 'judgment.recorded' && typeof e.body.proposalId === 'string') judged.add(e.body.proposalId);
  const decisions: LogEntry[] = [];
  for (const proposalId of judged) {
    for (const e of await indexed(log, `proposal:${proposalId}:`, size)) {
      if (e.agent !== tag && (e.body.event === 'proposal.published' || e.body.event === 'proposal.rejected')) decisions.push(e);
    }
  }
  return [...own, ...decisions];
}

const sameFigures = (a: unknown, b: StandingFigures & { window: unknown }) => {
  const { window: _w, ...figures } = b;
  const subject = a as Record<string, unknown>;
  return Object.keys(figures).every((k) => JSON.stringify(subject[k]) === JSON.stringify((figures as Record<string, unknown>)[k]));
};

// One issue at a time per agent in this process; the store's head check settles the rest.
const inFlight = new Map<string, Promise<StandingRecord>>();

/**
 * The agent's standing now: the one kept when its figures are still those of the log and it is
 * neither revoked nor near its end, else a new one that supersedes it. A banned agent's new
 * standing is revoked as it is issued: it says so, and it does not verify.
 */
export function currentStanding(ctx: Ctx, log: TransparencyLog, tag: string): Promise<StandingRecord> {
  let p = inFlight.get(tag);
  if (!p) {
    p = issueStanding(ctx, log, tag).finally(() => inFlight.delete(tag));
    inFlight.set(tag, p);
  }
  return p;
}

async function issueStanding(ctx: Ctx, log: TransparencyLog, tag: string): Promise<StandingRecord> {
  const agent = await ctx.store.get(Agents, tag);
  if (!agent) throw new ServiceError('not_found', `No agent ${tag}.`);
  // Entries already committed but not yet appended are counted too: the checkpoint covers them.
  await log.drain();
  const cp = await log.checkpoint();
  const now = ctx.clock.now();
  const { figures, window } = standingFigures(tag, await standingEntries(log, tag, cp.size), cp.size, now);
  const headId = await ctx.store.get(StandingHeads, tag);
  const head = headId ? await ctx.store.get(Standings, headId) : undefined;
  const issuer = ctx.config.issuerDidWeb ? didWebOf(statusOrigin(ctx)) : ctx.keys.issuer.did;
  if (head && head.credential.issuer === issuer && (await reusable(ctx, head, { ...figures, window }, agent.signing.publicKey, now))) return head;
  await ensureStatusLists(ctx);
  const standingId = `stn_${ctx.random(8).toString('hex')}`;
  const didWeb = ctx.config.issuerDidWeb ? issuer : undefined;
  let record: StandingRecord | undefined;
  for (let attempt = 0; !record; attempt++) {
    if (attempt > 10) throw new Error('a standing could not draw free status-list slots');
    const slots = drawStatusSlots(ctx);
    record = await ctx.store.transact([`standing:${tag}`, ...slotLocks(slots)], async (tx) => {
      if (!(await slotsFree(tx, slots))) return undefined;
      const status = claimSlots(tx, ctx, slots, standingId);
      const unsigned = standingCredential({
        issuer: didWeb ?? ctx.keys.issuer.did,
        standingId,
        at: now,
        agent: { tag, did: didKeyFromPublicKey(agent.signing.publicKey), publicKey: agent.signing.publicKey },
        figures,
        window,
        checkpoint: { size: cp.size, rootHash: cp.root, note: cp.note },
      });
      const credential = await issueNodeCredential(ctx.keys, { ...unsigned, credentialStatus: status }, now, didWeb);
      const r: StandingRecord = { standingId, tag, issuedAt: now, credential };
      tx.put(Standings, standingId, r);
      tx.put(StandingHeads, tag, standingId);
      return r;
    });
  }
  // Superseded, or banned: one version of the revocation list for the bits that flip (PROTOCOL 8.7).
  const banned = figures.reputation.status === 'banned';
  const ids = [...(head ? [head.standingId] : []), ...(banned ? [standingId] : [])];
  if (ids.length) {
    const reason = banned ? `the agent ${tag} is banned (PROTOCOL 3.4)` : `superseded by ${standingUrn(standingId)}`;
    await changeStatus(ctx, { action: 'revoke', reason, ids });
  }
  return record;
}

// The kept standing still says what the log says, for the agent's current key, is not revoked, and has a day or more left.
async function reusable(ctx: Ctx, head: StandingRecord, now: StandingFigures & { window: unknown }, publicKey: string, at: number) {
  const subject = head.credential.credentialSubject;
  if (subject.publicKey !== publicKey || !sameFigures(subject, now)) return false;
  const until = Date.parse(String(head.credential.validUntil));
  if (!(until - at > RENEW_BEFORE_MS)) return false;
  // A banned agent's standing that says so stays the answer, revoked: asking again makes no new one (nor a status-list version).
  if (now.reputation.status === 'banned') return true;
  const status = await credentialStatusOf(ctx, head.standingId);
  return !status.revocation?.set && !status.suspension?.set;
}

/** Revokes the agent's newest standing (a ban, PROTOCOL 3.4 and 8.9); nothing when it has none or it is revoked already. */
export async function revokeStanding(ctx: Ctx, tag: string, reason: string): Promise<void> {
  const headId = await ctx.store.get(StandingHeads, tag);
  if (headId) await changeStatus(ctx, { action: 'revoke', reason, ids: [headId] });
}

/** The agent's published capabilities (its `proposal.published` events of kind capability, PROTOCOL 9.3), as a card's skills read them. */
export async function publishedCapabilities(ctx: Ctx, log: TransparencyLog, tag: string) {
  const head = await log.head();
  const out: Array<{ proposalId: string; path: string; title: string; spec?: string }> = [];
  for (const e of await indexed(log, `agent:${tag}:`, head.size)) {
    if (e.body.event !== 'proposal.published' || e.body.kind !== 'capability' || typeof e.body.proposalId !== 'string') continue;
    const p = await ctx.store.get(Proposals, e.body.proposalId);
    if (p?.path) out.push({ proposalId: p.proposalId, path: p.path, title: p.title, spec: typeof p.payload.spec === 'string' ? p.payload.spec : undefined });
  }
  return out;
}
