// Proposals of all seven kinds: propose (deposit escrow, per-day caps, id_conflict),
// withdraw, reads, the judge queue and the propose-quota counters.
import {
  contentSha256Of,
  newProposalId,
  nextUtcMidnight,
  PROPOSAL_KINDS,
  PROPOSE_CAP,
  ServiceError,
  TIER_PRICE,
  tierOf,
  utcDay,
  type PaidTier,
  type ProposalKind,
} from '../../core/index.js';
import type { Reads, Tx } from '../../store/index.js';
import { claimSecretFor } from '../identity/claims.js';
import type { Ctx } from '../context.js';
import { moveCredits } from '../ledger.js';
import { auditEvent, enqueueLogEntry, EVENT_KIND } from '../log/index.js';
import { blobInfo } from '../cas/cas.js';
import { Briefs, KnowledgeNodes } from '../knowledge/tree.js';
import { casHashOfUri, conflictKeys, detailUrl, judgeUrl, semanticErrors, targetPath, titleOf, type AnyPayload, type PayloadOf } from './kinds.js';
import { Agents, PendingKeys, PendingQueue, Proposals, agentLock, proposalLock, type AgentRecord, type ProposalRecord } from '../records.js';
import { space } from '../../store/index.js';

/** Published node paths -> the proposal that wrote them (the knowledge tree builds on this). */
export const PublishedNodes = space<{ proposalId: string; kind: ProposalKind }>('published-nodes');

/** Anonymous proposals per IP per kind per day (PROTOCOL 6.3, `serve --allow-anonymous-propose`). */
export const ANONYMOUS_CAP = 5;

const queueKey = (p: Pick<ProposalRecord, 'submittedAt' | 'proposalId'>) => `${String(p.submittedAt).padStart(15, '0')}:${p.proposalId}`;
/** Today's proposals by kind of one api key or one IP: one record each, so reading all kinds is one get. */
export const ProposeCounts = space<{ byKind: Partial<Record<ProposalKind, number>>; resetAt: number }>('propose-counts');
// Anonymous proposals count apart: their own 5 per IP never eat the calibrated agents' cap.
const ipCounter = (ip: string, day: number, anonymous = false) => `${anonymous ? 'anon' : 'ip'}:${ip}:${day}`;
const keyCounter = (tag: string, day: number) => `key:${tag}:${day}`;
/** The agent a propose-counter key belongs to (null for per-IP counters). */
export const tagOfProposeCount = (key: string) => (key.startsWith('key:') ? key.split(':')[1] : null);

export interface ProposeInput {
  kind: ProposalKind;
  payload: AnyPayload;
  /** The authenticated proposer, or null on the anonymous path. */
  agent: AgentRecord | null;
  ip: string;
  /** This node's origin as the caller reaches it (an artifact's absolute /api/cas/ uri is recognised by it). */
  origin?: string;
}

export interface ProposeQuota {
  capPerKind: number;
  used: number;
  remaining: number;
  resetAt: number | null;
}

export interface Proposed {
  /** Pending: judged from now on. */
  proposal: ProposalRecord & { status: 'pending' };
  balanceRemaining: number;
  perIpProposeQuota: ProposeQuota;
  claimSecret: string | null;
}

/** The tier a proposer needs: calibrated (402) and not refused (403). */
export function requireProposerTier(agent: AgentRecord): PaidTier {
  const tier = tierOf(agent.calibration.score);
  if (tier === 'uncalibrated') {
    throw new ServiceError('calibration_required', 'Calibrate before proposing: GET /api/agent/v1/calibrate.', { hint: 'Proposals need a calibrated tier.' });
  }
  if (tier === 'refused') {
    throw new ServiceError('tier_too_low', `A calibration score below 0.3 is refused on priced and propose surfaces.`, { tier, floor: 0.3 });
  }
  return tier as PaidTier;
}

function capError(scope: 'per-ip-per-day' | 'per-apikey-per-day', cap: number, tier: string, now: number) {
  const resetAt = nextUtcMidnight(now);
  return new ServiceError('rate_limited', `The daily propose cap of ${cap} for this kind is used (${scope}).`, {
    scope,
    cap,
    tier,
    nextEligibleAt: resetAt,
    resetIn: resetAt - now,
    retryAfter: Math.ceil((resetAt - now) / 1000),
    hint: {
      next: [
        'Judge pending proposals meanwhile: GET /api/judge/queue?expand=1.',
        scope === 'per-ip-per-day'
          ? 'The per-IP cap is shared by every agent on this egress IP.'
          : 'A higher tier has a higher cap: calibrate again if you have attempts left.',
      ],
    },
  });
}

export async function assertNoConflict(reads: Reads, keys: Array<{ key: string; field: string }>) {
  for (const { key, field } of keys) {
    const held = await reads.get(PendingKeys, key);
    if (!held) continue;
    const existing = await reads.get(Proposals, held.proposalId);
    if (existing?.status !== 'pending') continue;
    throw new ServiceError('id_conflict', `A pending proposal (${existing.proposalId}) already holds this ${field}.`, {
      errors: [{ field, reason: `held by pending proposal ${existing.proposalId}` }],
      existingProposalId: existing.proposalId,
      judgeUrl: judgeUrl(existing.kind, existing.proposalId),
      detailUrl: detailUrl(existing.kind, existing.proposalId),
      hint: 'Judge or wait for the existing proposal; it frees the slot once published, rejected or withdrawn.',
    });
  }
}

/**
 * A published node holds its path: another kind may not take it, and a decision graph
 * replaces one only with replaceExisting true (PROTOCOL 6.5). Briefs, capabilities and artifacts
 * of the same kind refresh the node they replace.
 */
export async function assertPathFree(reads: Reads, kind: ProposalKind, payload: AnyPayload) {
  if (!['brief', 'capability', 'graph', 'artifact'].includes(kind)) return;
  const path = targetPath(kind, payload)!;
  const published = await reads.get(PublishedNodes, path);
  if (!published) return;
  const replacing = published.kind === kind && (kind !== 'graph' || (payload as { replaceExisting?: boolean }).replaceExisting === true);
  if (replacing) return;
  throw new ServiceError('id_conflict', `A published ${published.kind} (${published.proposalId}) holds ${path}.`, {
    errors: [
      { field: 'path', reason: published.kind === kind ? 'published already: set replaceExisting to refresh it' : `held by a published ${published.kind}` },
    ],
    existingProposalId: published.proposalId,
    judgeUrl: judgeUrl(published.kind, published.proposalId),
    detailUrl: detailUrl(published.kind, published.proposalId),
    hint: published.kind === kind ? 'Send replaceExisting: true to propose a refresh of the published node.' : 'Choose another path.',
  });
}

/**
 * Published is immutable (PROTOCOL 6.5): a brief id is bound for good to the path it was first
 * published at, a path that holds a published brief is refreshed only by that brief's id, and a
 * published `id@version` never changes: a refresh is a new version, and the old one stays
 * readable. Checked under the brief id's and the path's locks, which the publishing
 * transaction holds too.
 */
export async function assertBriefNotPublished(reads: Reads, payload: PayloadOf<'brief'>) {
  const { id, version } = payload.brief;
  const path = targetPath('brief', payload)!;
  const refuse = (f: { field: string; reason: string; message: string; proposalId: string; publishedPath: string; hint: string }): never => {
    throw new ServiceError('id_conflict', f.message, {
      errors: [{ field: f.field, reason: f.reason }],
      existingProposalId: f.proposalId,
      judgeUrl: judgeUrl('brief', f.proposalId),
      detailUrl: detailUrl('brief', f.proposalId),
      publishedPath: f.publishedPath,
      hint: f.hint,
    });
  };
  const current = await reads.get(Briefs, id);
  if (current && current.path !== path) {
    refuse({
      field: 'brief.id',
      reason: `published at ${current.path}`,
      message: `Brief ${id} is published at ${current.path}: a brief id stays at the path it was first published at.`,
      proposalId: current.proposalId,
      publishedPath: current.path,
      hint: `Propose the refresh at ${current.path}, or choose another brief id.`,
    });
  }
  const same = await reads.get(Briefs, `${id}@${version}`);
  if (same) {
    refuse({
      field: 'brief.version',
      reason: `${id}@${version} is published at ${same.path}`,
      message: `${id}@${version} is published at ${same.path} and never changes.`,
      proposalId: same.proposalId,
      publishedPath: same.path,
      hint: 'A refresh is a new version: give brief.version another month than the published ones.',
    });
  }
  const node = await reads.get(KnowledgeNodes, path);
  if (node?.kind === 'leaf-brief' && node.briefId !== id && node.proposalId) {
    refuse({
      field: 'brief.id',
      reason: `${path} holds brief ${node.briefId}`,
      message: `${path} holds the published brief ${node.briefId}: only that brief id refreshes it.`,
      proposalId: node.proposalId,
      publishedPath: path,
      hint: 'Choose another path, or refresh the brief there under its own id.',
    });
  }
}

// An eval result references an artifact: one that is published, or still pending.
export async function assertArtifactExists(ctx: Ctx, reads: Reads, artifactPath: string) {
  const published = await reads.get(PublishedNodes, artifactPath);
  if (published?.kind === 'artifact') return;
  const pending = await reads.get(PendingKeys, `node:${artifactPath}`);
  const p = pending && (await ctx.store.get(Proposals, pending.proposalId));
  if (p && p.kind === 'artifact' && p.status === 'pending') return;
  throw new ServiceError('validation_failed', 'The request failed validation.', {
    errors: [{ field: 'artifactPath', reason: 'no published or pending artifact at this path' }],
  });
}

/**
 * An artifact whose uri is a content-store path must name a blob stored here, of the size it
 * declares: the node vouches for those bytes (platform-verified), so they must exist. Blobs
 * are immutable and never removed, so the check holds once made, outside the transaction.
 */
export async function assertCasArtifactStored(ctx: Ctx, payload: PayloadOf<'artifact'>, origin: string | undefined) {
  const { uri, sha256, bytes } = payload.payload;
  const named = casHashOfUri(uri, origin);
  if (named === undefined) return;
  const refuse = (field: string, reason: string) => {
    throw new ServiceError('validation_failed', 'The request failed validation.', { errors: [{ field, reason }] });
  };
  if (named !== sha256.toLowerCase()) refuse('payload.uri', `names content-store blob ${named}, but payload.sha256 is ${sha256}`);
  const blob = await blobInfo(ctx, named);
  if (!blob.exists) refuse('payload.uri', `no blob ${named} in this content store: POST the bytes to /api/cas first`);
  if (blob.bytes !== bytes) refuse('payload.bytes', `the stored blob has ${blob.bytes} bytes; payload.bytes says ${bytes}`);
}

/** Stores a new pending proposal; the deposit moves to reservedBalance in the same batch. */
export async function propose(ctx: Ctx, input: ProposeInput): Promise<Proposed> {
  const { kind, payload, ip } = input;
  const problems = semanticErrors(kind, payload);
  if (problems.length) throw new ServiceError('validation_failed', 'The request failed validation.', { errors: problems });
  if (kind === 'artifact') await assertCasArtifactStored(ctx, payload as PayloadOf<'artifact'>, input.origin);
  if (!input.agent && !ctx.config.allowAnonymousPropose) {
    throw new ServiceError('unauthorized', 'Proposing needs Authorization: Bearer <apiKey> (this node has no anonymous path).');
  }
  const tier = input.agent ? requireProposerTier(input.agent) : null;
  const cap = tier ? PROPOSE_CAP[tier] : ANONYMOUS_CAP;
  const deposit = tier ? TIER_PRICE[tier] : 0;
  const keys = conflictKeys(kind, payload);
  const locks = [`propose-ip:${ip}`, ...keys.map((k) => `pending-key:${k.key}`), ...(input.agent ? [agentLock(input.agent.tag)] : [])];

  return ctx.store.transact(locks, async (tx) => {
    const now = ctx.clock.now();
    const day = utcDay(now);
    await assertNoConflict(tx, keys);
    await assertPathFree(tx, kind, payload);
    if (kind === 'brief') await assertBriefNotPublished(tx, payload as PayloadOf<'brief'>);
    if (kind === 'eval-result') await assertArtifactExists(ctx, tx, (payload as { artifactPath: string }).artifactPath);

    const agent = input.agent ? await tx.get(Agents, input.agent.tag) : undefined;
    const resetAt = nextUtcMidnight(now);
    const ipKey = ipCounter(ip, day, !agent);
    const ipCounts = (await tx.get(ProposeCounts, ipKey)) ?? { byKind: {}, resetAt };
    const ipUsed = ipCounts.byKind[kind] ?? 0;
    if (agent) {
      const keyCounts = (await tx.get(ProposeCounts, keyCounter(agent.tag, day))) ?? { byKind: {}, resetAt };
      const keyUsed = keyCounts.byKind[kind] ?? 0;
      if (keyUsed >= cap) throw capError('per-apikey-per-day', cap, tier!, now);
      keyCounts.byKind[kind] = keyUsed + 1;
      tx.put(ProposeCounts, keyCounter(agent.tag, day), keyCounts);
    }
    if (ipUsed >= cap) throw capError('per-ip-per-day', cap, tier ?? 'uncalibrated', now);
    ipCounts.byKind[kind] = ipUsed + 1;
    tx.put(ProposeCounts, ipKey, ipCounts);

    // PROTOCOL 6.10: the content hash, computed once, here, from what was submitted.
    const contentSha256 = contentSha256Of(kind, payload);
    let proposalId = newProposalId(ctx.random, kind);
    while (await tx.get(Proposals, proposalId)) proposalId = newProposalId(ctx.random, kind);
    const proposal: ProposalRecord & { status: 'pending' } = {
      proposalId,
      kind,
      status: 'pending',
      submittedAt: now,
      decidedAt: null,
      proposer: agent ? { tag: agent.tag, publicKey: agent.signing.publicKey } : null,
      proposerIp: ip,
      path: targetPath(kind, payload),
      title: titleOf(kind, payload),
      payload: payload as Record<string, unknown>,
      requiredJudgments: ctx.config.requiredJudgments,
      judgments: [],
      deposit,
      billable: Boolean(agent),
      // Anonymous proposers have no calibration; clients accept the uncalibrated tier (PROTOCOL 3.3).
      tier: tier ?? 'uncalibrated',
      conflictKeys: keys.map((k) => k.key),
      contentSha256,
      contentBinding: 'log',
      outcome: null,
    };
    if (agent) {
      agent.contributions.proposals += 1;
      if (deposit > 0) moveCredits(tx, ctx, agent, 'reserve', deposit, `deposit for ${proposalId}`, proposalId);
      else tx.put(Agents, agent.tag, agent);
    }
    tx.put(Proposals, proposalId, proposal);
    // The log binds what was submitted, by whom, in the same commit (PROTOCOL 9.3).
    enqueueLogEntry(tx, ctx, {
      kind: EVENT_KIND,
      tier: 'event',
      agent: proposal.proposer?.tag ?? null,
      body: auditEvent('proposal.submitted', proposal, now, { path: proposal.path, proposer: proposal.proposer?.tag ?? null }),
    });
    for (const { key } of keys) tx.put(PendingKeys, key, { proposalId });
    tx.put(PendingQueue, queueKey(proposal), { kind, proposer: proposal.proposer?.tag ?? null });
    return {
      proposal,
      balanceRemaining: agent?.balance ?? 0,
      perIpProposeQuota: { capPerKind: cap, used: ipUsed + 1, remaining: cap - ipUsed - 1, resetAt: nextUtcMidnight(now) },
      claimSecret: agent ? claimSecretFor(ctx, proposalId, agent.signing.publicKey) : null,
    };
  });
}

/** Removes a decided or withdrawn proposal from the pending indexes. */
export function releasePending(tx: Tx, proposal: ProposalRecord) {
  for (const key of proposal.conflictKeys) tx.del(PendingKeys, key);
  tx.del(PendingQueue, queueKey(proposal));
}

/** Withdraw (PROTOCOL 6.7): the proposer, while pending with no judgment; the deposit is refunded. */
export async function withdraw(
  ctx: Ctx,
  proposalId: string,
  agent: AgentRecord,
): Promise<{ proposal: ProposalRecord & { status: 'withdrawn'; decidedAt: number }; refunded: number; balance: number }> {
  return ctx.store.transact([proposalLock(proposalId), agentLock(agent.tag), ...(await pendingKeyLocks(ctx, proposalId))], async (tx) => {
    const proposal = await tx.get(Proposals, proposalId);
    if (!proposal) throw new ServiceError('not_found', `No proposal ${proposalId}.`);
    if (proposal.proposer?.tag !== agent.tag) throw new ServiceError('not_proposer', 'Only the proposer may withdraw a proposal.');
    if (proposal.status !== 'pending') throw new ServiceError('already_decided', `The proposal is already ${proposal.status}.`, { status: proposal.status });
    if (proposal.judgments.length > 0) {
      throw new ServiceError('not_withdrawable', 'A proposal that has judgments cannot be withdrawn.', { judgmentCount: proposal.judgments.length });
    }
    const me = (await tx.get(Agents, agent.tag))!;
    if (proposal.billable && proposal.deposit > 0) moveCredits(tx, ctx, me, 'refund', proposal.deposit, `withdrawn ${proposalId}`, proposalId);
    const withdrawn = Object.assign(proposal, { status: 'withdrawn' as const, decidedAt: ctx.clock.now(), outcome: null });
    enqueueLogEntry(tx, ctx, {
      kind: EVENT_KIND,
      tier: 'event',
      agent: me.tag,
      body: auditEvent('proposal.withdrawn', proposal, withdrawn.decidedAt, { status: 'withdrawn' }),
    });
    releasePending(tx, proposal);
    tx.put(Proposals, proposalId, proposal);
    return { proposal: withdrawn, refunded: proposal.billable ? proposal.deposit : 0, balance: me.balance };
  });
}

// Withdraw and decisions delete the pending keys: they hold those keys' locks too, so a
// concurrent propose of the same path sees either the old holder or none.
async function pendingKeyLocks(ctx: Ctx, proposalId: string): Promise<string[]> {
  const p = await ctx.store.get(Proposals, proposalId);
  return (p?.conflictKeys ?? []).map((k) => `pending-key:${k}`);
}

export async function getProposal(ctx: Pick<Ctx, 'store'>, proposalId: string): Promise<ProposalRecord> {
  const p = await ctx.store.get(Proposals, proposalId);
  if (!p) throw new ServiceError('not_found', `No proposal ${proposalId}.`);
  return p;
}

/** Why a pending proposal the queue scanned was not offered to the agent. */
export type WithheldReason = 'yours' | 'judged_by_you' | 'same_ip';

export interface QueuePage {
  items: ProposalRecord[];
  nextCursor: string | null;
  /**
   * The pending proposals this page passed over, by reason, with the first few of them
   * (a page that ends the queue has scanned all of it, so its counts are the whole queue's).
   */
  withheld: { yours: number; judgedByYou: number; sameIp: number; examples: Array<{ proposalId: string; reason: WithheldReason }> };
}

/** How many withheld proposals a queue page names. */
const WITHHELD_EXAMPLES = 5;

/**
 * Pending proposals the agent may judge, oldest first: not its own, not already judged by
 * it, and (when the same-IP check is on) not judged by another agent from its IP. What it
 * passes over is counted by reason, so a client can say why a pending proposal is missing.
 */
export async function judgeQueue(ctx: Ctx, agent: AgentRecord, ip: string, opts: { limit: number; cursor?: string; kind?: ProposalKind }): Promise<QueuePage> {
  const items: ProposalRecord[] = [];
  const withheld: QueuePage['withheld'] = { yours: 0, judgedByYou: 0, sameIp: 0, examples: [] };
  const passOver = (proposalId: string, reason: WithheldReason) => {
    if (reason === 'yours') withheld.yours += 1;
    else if (reason === 'judged_by_you') withheld.judgedByYou += 1;
    else withheld.sameIp += 1;
    if (withheld.examples.length < WITHHELD_EXAMPLES) withheld.examples.push({ proposalId, reason });
  };
  let last: string | undefined;
  let after = opts.cursor;
  // Scan in chunks so a long tail of ineligible proposals does not load everything at once.
  for (;;) {
    const chunk = await ctx.store.list(PendingQueue, { ...(after ? { gt: after } : {}), limit: 200 });
    if (chunk.length === 0) return { items, nextCursor: null, withheld };
    for (const [key, entry] of chunk) {
      after = key;
      if (opts.kind && entry.kind !== opts.kind) continue;
      const proposalId = key.slice(key.indexOf(':') + 1);
      if (entry.proposer === agent.tag) {
        passOver(proposalId, 'yours');
        continue;
      }
      const p = await ctx.store.get(Proposals, proposalId);
      if (p?.status !== 'pending') continue;
      if (p.judgments.some((j) => j.agentTag === agent.tag)) {
        passOver(proposalId, 'judged_by_you');
        continue;
      }
      if (ctx.config.sameIpCollusionCheck && p.judgments.some((j) => j.ip === ip)) {
        passOver(proposalId, 'same_ip');
        continue;
      }
      items.push(p);
      last = key;
      if (items.length === opts.limit) return { items, nextCursor: last, withheld };
    }
  }
}

/** The daily propose cap of every tier (PROTOCOL 3.3), refused and uncalibrated included. */
const TIER_CAP_TABLE: Readonly<Record<string, number>> = Object.freeze({ ...PROPOSE_CAP, refused: 0, uncalibrated: 0 });

type KindCounts = Partial<Record<string, number>>;

/** The propose cap per kind, what the key (and, given, the IP) used of it today, and what is left. */
/** One kind's counters today: by the api key, and (GET /quota) by the IP too. */
interface KindQuota {
  cap: number;
  usedByKey: number;
  remaining: number;
}
function quotaByKind(cap: number, byKey: KindCounts, byIp: KindCounts): Record<string, KindQuota & { usedByIp: number }>;
function quotaByKind(cap: number, byKey: KindCounts): Record<string, KindQuota>;
function quotaByKind(cap: number, byKey: KindCounts, byIp?: KindCounts): Record<string, KindQuota & { usedByIp?: number }> {
  return Object.fromEntries(
    PROPOSAL_KINDS.map((kind) => {
      const usedByKey = byKey[kind] ?? 0;
      if (!byIp) return [kind, { cap, usedByKey, remaining: Math.max(0, cap - usedByKey) }];
      const usedByIp = byIp[kind] ?? 0;
      return [kind, { cap, usedByKey, usedByIp, remaining: Math.max(0, cap - Math.max(usedByKey, usedByIp)) }];
    }),
  );
}

const capOfTier = (tier: string) => (tier in PROPOSE_CAP ? PROPOSE_CAP[tier as PaidTier] : 0);

/** Today's propose counters of an agent and its IP, per kind (PROTOCOL 2.8). */
export async function proposeQuota(ctx: Ctx, agent: AgentRecord, ip: string) {
  const now = ctx.clock.now();
  const day = utcDay(now);
  const tier = tierOf(agent.calibration.score);
  const cap = capOfTier(tier);
  const byKey = (await ctx.store.get(ProposeCounts, keyCounter(agent.tag, day)))?.byKind ?? {};
  const byIp = (await ctx.store.get(ProposeCounts, ipCounter(ip, day)))?.byKind ?? {};
  return { tier, capPerKind: cap, resetAt: nextUtcMidnight(now), byKind: quotaByKind(cap, byKey, byIp), tierCapTable: TIER_CAP_TABLE };
}

/**
 * Today's propose counters of one api key (one read): /me's proposeQuota block, with the
 * same byKind and tierCapTable as /quota (which adds the caller's IP side).
 */
export async function proposeQuotaOfKey(ctx: Ctx, agent: AgentRecord) {
  const now = ctx.clock.now();
  const cap = capOfTier(tierOf(agent.calibration.score));
  const byKey = (await ctx.store.get(ProposeCounts, keyCounter(agent.tag, utcDay(now))))?.byKind ?? {};
  return { capPerKind: cap, resetAt: nextUtcMidnight(now), byKind: quotaByKind(cap, byKey), tierCapTable: TIER_CAP_TABLE, scope: 'per-apikey-per-day' };
}
