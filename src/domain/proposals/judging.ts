// Judging (PROTOCOL 7; ARCHITECTURE 4): the floor, the refusals, per-judge Ed25519
// signatures (L2) paired with the node's HMAC, the judgment credential (L1), weights, the
// decision at requiredJudgments and the settlement of the deposit, all in one atomic
// transaction per judgment.
import {
  canonicalize,
  currentHmac,
  PUBLISH_THRESHOLD,
  weightedComposite,
  hmacSha256Hex,
  judgmentSigningPayload,
  kindOfProposalId,
  newJudgmentId,
  ServiceError,
  sha256Hex,
  tierOf,
  verify,
  type ProposalKind,
} from '../../core/index.js';
import type { Tx } from '../../store/index.js';
import type { Ctx } from '../context.js';
import { Credentials, issueJudgmentCredential } from '../credentials/credentials.js';
import { claimSlots, drawStatusSlots, ensureStatusLists, slotLocks, slotsFree, type StatusSlots } from '../credentials/status-lists.js';
import { moveCredits } from '../ledger.js';
import { auditEvent, enqueueLogEntry, EVENT_KIND } from '../log/index.js';
import { artifactBytesAt, publishToTree, treeLocks } from '../knowledge/tree.js';
import { bannedError, isBanned } from '../identity/reputation.js';
import { PublishedNodes, releasePending } from './proposals.js';
import { detailUrl } from './kinds.js';
import {
  Agents,
  JudgmentIndex,
  Proposals,
  agentLock,
  proposalLock,
  type AgentRecord,
  type JudgmentRecord,
  type JudgmentSigningPayload,
  type ProposalRecord,
  type Scores,
} from '../records.js';

/** The judge floor: calibrated with a score of at least 0.5 (mid). */
export const JUDGE_FLOOR = 0.5;
/** A weighted mean composite at or above this publishes; below rejects (src/core: the verifier recomputes with it). */
export { PUBLISH_THRESHOLD };
export const CREDITS_PER_JUDGMENT = 1;

export interface JudgeInput {
  /** The kind the route serves; null on the unified path, where the id prefix decides. */
  routeKind: ProposalKind | null;
  proposalId: string;
  judge: AgentRecord;
  ip: string;
  scores: Scores;
  rationale: string;
  signature?: string;
  /**
   * The contentSha256 the judge signed (the v2 payload of PROTOCOL 7.2). Absent, the node
   * checks the signature over the v2 payload with the proposal's own hash, then over v1.
   */
  contentSha256?: string;
  dryRun: boolean;
}

export const composite = (s: Scores) => (s.accuracy + s.clarity + s.compression + s.sources) / 4;
export const smoothedAlignment = (a: AgentRecord) => (a.alignment.aligned + 1) / (a.alignment.decided + 1);
export const judgeWeight = (a: AgentRecord) => (1 + 2 * (a.calibration.score ?? 0)) * smoothedAlignment(a);
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * The exact object a judge signs; its JCS string is what goes into Ed25519. With the proposal's
 * contentSha256 it is the v2 payload (the judge signs what it read); without, v1 (PROTOCOL 7.2).
 */
export const signingPayload = (
  kind: ProposalKind,
  proposalId: string,
  judge: string,
  scores: Scores,
  rationale: string,
  contentSha256?: string,
): JudgmentSigningPayload => judgmentSigningPayload({ kind, proposalId, judge, scores, rationale, contentSha256 });

export type JudgeResult =
  | {
      dryRun: true;
      kind: ProposalKind;
      proposalId: string;
      composite: number;
      weight: number;
      creditsAwarded: number;
      tier: string;
      signingPayload: string;
      contentSha256: string;
    }
  | {
      dryRun: false;
      kind: ProposalKind;
      proposalId: string;
      judgment: JudgmentRecord;
      statusChanged: boolean;
      newStatus: ProposalRecord['status'];
      weight: number;
      balance: number;
      depositSettlement?: 'refunded' | 'slashed' | 'none';
    };

function notFound(id: string) {
  return new ServiceError('not_found', `No proposal ${id} of this kind.`);
}

/** Why an agent may not judge at all (uncalibrated, or below the judge floor), else null. */
export function judgeStanding(agent: AgentRecord): { code: 'calibration_required' | 'tier_too_low'; reason: string } | null {
  const score = agent.calibration.score;
  if (score === null) return { code: 'calibration_required', reason: 'Calibrate before judging: GET /api/agent/v1/calibrate.' };
  if (score < JUDGE_FLOOR) return { code: 'tier_too_low', reason: `Judging needs a calibration score of at least ${JUDGE_FLOOR} (mid); yours is ${score}.` };
  return null;
}

/** Judges a proposal. Every refusal of PROTOCOL 7.5 is a ServiceError; a dry run changes nothing. */
export async function judge(ctx: Ctx, input: JudgeInput): Promise<JudgeResult> {
  const kind = admitJudge(input);
  // The lists a credential names exist, logged, before it names them (PROTOCOL 8.7).
  if (!input.dryRun) await ensureStatusLists(ctx);
  return underJudgingLocks(ctx, input, kind, async (tx, proposal, slots) => {
    const me = await mayJudge(ctx, tx, proposal, input);
    const content = judgedContent(kind, proposal, input);
    if (input.dryRun) return dryRunOf(kind, proposal, me, input);
    const signed = judgeSignature(kind, proposal, me, input);
    const now = ctx.clock.now();
    const judgment = judgmentOf(ctx, me, input, content, signed, now);
    await recordJudgment(ctx, tx, kind, proposal, me, judgment, slots);
    const settlement = await decideWhenComplete(ctx, tx, proposal, me, now);
    tx.put(Proposals, proposal.proposalId, proposal);
    return {
      dryRun: false as const,
      kind,
      proposalId: proposal.proposalId,
      judgment,
      statusChanged: settlement !== undefined,
      newStatus: proposal.status,
      weight: judgment.weight,
      balance: me.balance,
      ...(settlement ? { depositSettlement: settlement } : {}),
    };
  });
}

// Who may judge at all, and which kind the id names, settled before any lock is taken.
function admitJudge(input: JudgeInput): ProposalKind {
  const standing = judgeStanding(input.judge);
  if (standing?.code === 'calibration_required') throw new ServiceError('calibration_required', standing.reason);
  if (standing) throw new ServiceError('tier_too_low', standing.reason, { tier: tierOf(input.judge.calibration.score!), floor: JUDGE_FLOOR });
  const kind = kindOfProposalId(input.proposalId);
  if (!kind || (input.routeKind && input.routeKind !== kind)) throw notFound(input.proposalId);
  return kind;
}

const RETRY = Symbol('retry with more locks');

// Runs `step` on the proposal holding the locks of every record a judgment may change: the
// proposal, the judge, the proposer and every judge already recorded (their alignment changes
// at the decision), its pending keys and its place in the tree. Judgments only join under the
// proposal lock, so if the set grew between the unlocked read and taking the locks, take the
// larger set. The credential's two status-list indexes are drawn first and locked too; one
// another credential holds already is drawn again (PROTOCOL 8.7: unique per list).
async function underJudgingLocks<T>(
  ctx: Ctx,
  input: JudgeInput,
  kind: ProposalKind,
  step: (tx: Tx, proposal: ProposalRecord, slots: StatusSlots) => Promise<T>,
): Promise<T> {
  const { proposalId } = input;
  for (let attempt = 0; ; attempt++) {
    const seen = await ctx.store.get(Proposals, proposalId);
    if (!seen || seen.kind !== kind) throw notFound(proposalId);
    const lockedTags = new Set([input.judge.tag, ...(seen.proposer ? [seen.proposer.tag] : []), ...seen.judgments.map((j) => j.agentTag)]);
    const slots = input.dryRun ? { revocation: 0, suspension: 0 } : drawStatusSlots(ctx);
    const locks = [
      proposalLock(proposalId),
      ...[...lockedTags].map(agentLock),
      ...seen.conflictKeys.map((k) => `pending-key:${k}`),
      ...treeLocks(seen),
      ...(input.dryRun ? [] : slotLocks(slots)),
    ];
    const result = await ctx.store.transact(locks, async (tx) => {
      const proposal = (await tx.get(Proposals, proposalId))!;
      if (proposal.judgments.some((j) => !lockedTags.has(j.agentTag))) return RETRY;
      if (!input.dryRun && !(await slotsFree(tx, slots))) return RETRY;
      return step(tx, proposal, slots);
    });
    if (result !== RETRY) return result;
    if (attempt > 10) throw new Error('judging could not settle its lock set');
  }
}

// PROTOCOL 7.5's refusals that depend on the proposal and the judge as they are under the
// lock; answers the judge's record as stored.
async function mayJudge(ctx: Ctx, tx: Tx, proposal: ProposalRecord, input: JudgeInput): Promise<AgentRecord> {
  const judgeTag = input.judge.tag;
  if (proposal.status !== 'pending') {
    throw new ServiceError('already_decided', `The proposal is already ${proposal.status}.`, { status: proposal.status });
  }
  if (proposal.proposer?.tag === judgeTag) throw new ServiceError('self_judge', 'You cannot judge your own proposal.');
  if (proposal.judgments.some((j) => j.agentTag === judgeTag)) {
    throw new ServiceError('already_judged', 'You have already judged this proposal.');
  }
  if (ctx.config.sameIpCollusionCheck) {
    // PROTOCOL 7.5: another judge on the same IP. The proposer's IP is not counted: the
    // self_judge rule covers the proposer.
    if (proposal.judgments.some((j) => j.ip === input.ip)) {
      throw new ServiceError('same_ip_collusion', 'Another agent on your IP already judged this proposal.', {
        hint: 'A single-operator node can run `akas serve --allow-same-ip`.',
      });
    }
  }
  const me = (await tx.get(Agents, judgeTag))!;
  if (isBanned(me, ctx.clock.now())) throw bannedError(me);
  return me;
}

// PROTOCOL 7.2: the judge signs the content it read (v2). A v2 judgment of other content is
// refused, naming both hashes; answers the proposal's content hash.
function judgedContent(kind: ProposalKind, proposal: ProposalRecord, input: JudgeInput): string {
  const content = proposal.contentSha256;
  if (input.contentSha256 !== undefined && input.contentSha256 !== content) {
    throw new ServiceError(
      'content_mismatch',
      `You signed content ${input.contentSha256}, but this proposal's content is ${content}: fetch it again and judge what it holds.`,
      {
        field: 'contentSha256',
        contentSha256: content,
        signedContentSha256: input.contentSha256,
        detailUrl: detailUrl(kind, proposal.proposalId),
      },
    );
  }
  return content;
}

// What the judge is asked to sign now: the v2 payload, bound to the proposal's content.
const v2Payload = (kind: ProposalKind, proposal: ProposalRecord, me: AgentRecord, input: JudgeInput) =>
  signingPayload(kind, proposal.proposalId, me.tag, input.scores, input.rationale, proposal.contentSha256);

// A dry run answers what the judgment would be and what to sign, changing nothing.
function dryRunOf(kind: ProposalKind, proposal: ProposalRecord, me: AgentRecord, input: JudgeInput): JudgeResult {
  return {
    dryRun: true as const,
    kind,
    proposalId: proposal.proposalId,
    composite: round6(composite(input.scores)),
    weight: round6(judgeWeight(me)),
    creditsAwarded: CREDITS_PER_JUDGMENT,
    tier: tierOf(me.calibration.score),
    signingPayload: canonicalize(v2Payload(kind, proposal, me, input)),
    contentSha256: proposal.contentSha256,
  };
}

/** A judge's signature as verified: the payload it holds over, and that payload's JCS text. */
interface SignedPayload {
  payload: JudgmentSigningPayload;
  signed: string;
  signature: string;
}

// The judge's Ed25519 signature, over the v2 payload with this proposal's hash; a signature
// sent without a hash is tried over v1 too (PROTOCOL 7.2: bound to the content by the node only).
function judgeSignature(kind: ProposalKind, proposal: ProposalRecord, me: AgentRecord, input: JudgeInput): SignedPayload {
  const payload = v2Payload(kind, proposal, me, input);
  const signed = canonicalize(payload);
  const refusal = { field: 'signature', signingPayload: signed, contentSha256: proposal.contentSha256, publicKey: me.signing.publicKey };
  if (!input.signature) {
    throw new ServiceError(
      'signature_required',
      'Sign signingPayload (its UTF-8 bytes) with your Ed25519 key and send the hex signature as `signature`.',
      refusal,
    );
  }
  if (verify(me.signing.publicKey, signed, input.signature)) return { payload, signed, signature: input.signature };
  const v1 = input.contentSha256 === undefined ? signingPayload(kind, proposal.proposalId, me.tag, input.scores, input.rationale) : undefined;
  if (!v1 || !verify(me.signing.publicKey, canonicalize(v1), input.signature)) {
    throw new ServiceError('invalid_signature', 'The signature does not verify against your current public key over signingPayload.', refusal);
  }
  return { payload: v1, signed: canonicalize(v1), signature: input.signature };
}

// The judgment as stored: the judge's signature (L2) paired with the node's HMAC over the same
// bytes, and the weight and standing the judge had when it arrived.
function judgmentOf(ctx: Ctx, me: AgentRecord, input: JudgeInput, content: string, { payload, signed, signature }: SignedPayload, now: number): JudgmentRecord {
  const hmac = currentHmac(ctx.keys);
  return {
    judgmentId: newJudgmentId(ctx.random),
    agentTag: me.tag,
    scores: payload.scores,
    composite: round6(composite(input.scores)),
    rationale: input.rationale,
    receivedAt: now,
    alignment: round6(smoothedAlignment(me)),
    weight: round6(judgeWeight(me)),
    tier: tierOf(me.calibration.score),
    intelligenceScore: me.calibration.score!,
    ip: input.ip,
    contentSha256: content,
    signature: { algorithm: 'Ed25519', publicKey: me.signing.publicKey, signature, payload },
    attestation: {
      type: 'akas.judgment.attestation.v1',
      payloadSha256: sha256Hex(signed),
      judgeSignature: { algorithm: 'Ed25519', publicKey: me.signing.publicKey, signature },
      nodeMac: { algorithm: 'HMAC-SHA256', signingKeyId: hmac.signingKeyId, mac: hmacSha256Hex(hmac.key, signed) },
      attestedAt: now,
    },
  };
}

// Everything a judgment writes lands in the transaction's one batch: its credential (L1), the
// judgment on the proposal, the judge's credit and count, its index entry and its log event (L3).
async function recordJudgment(
  ctx: Ctx,
  tx: Tx,
  kind: ProposalKind,
  proposal: ProposalRecord,
  me: AgentRecord,
  judgment: JudgmentRecord,
  slots: StatusSlots,
): Promise<void> {
  const { proposalId } = proposal;
  // L1: the credential is issued and stored in the same batch as the judgment it attests, with
  // its entries in the status lists (PROTOCOL 8.7).
  const status = claimSlots(tx, ctx, slots, judgment.judgmentId);
  tx.put(Credentials, judgment.judgmentId, await issueJudgmentCredential(ctx.keys, kind, proposalId, judgment, status));
  proposal.judgments.push(judgment);
  me.contributions.judgments += 1;
  moveCredits(tx, ctx, me, 'mint', CREDITS_PER_JUDGMENT, `judgment ${judgment.judgmentId}`, proposalId);
  tx.put(JudgmentIndex, judgment.judgmentId, { proposalId, kind });
  // The log (L3) records the judgment in the same commit (PROTOCOL 9.3).
  enqueueLogEntry(tx, ctx, {
    kind: EVENT_KIND,
    tier: 'event',
    agent: me.tag,
    body: auditEvent('judgment.recorded', proposal, judgment.receivedAt, { judgmentId: judgment.judgmentId }),
  });
}

// The judgment that completes requiredJudgments decides the proposal (PROTOCOL 7.4), writing
// every judge and the proposer it touched; answers the deposit's settlement then, else undefined.
async function decideWhenComplete(
  ctx: Ctx,
  tx: Tx,
  proposal: ProposalRecord,
  me: AgentRecord,
  now: number,
): Promise<'refunded' | 'slashed' | 'none' | undefined> {
  if (proposal.judgments.length < proposal.requiredJudgments) return undefined;
  const agents = new Map<string, AgentRecord>([[me.tag, me]]);
  const load = async (tag: string) => {
    let a = agents.get(tag);
    if (!a) {
      a = (await tx.get(Agents, tag))!;
      agents.set(tag, a);
    }
    return a;
  };
  const settlement = await decide(ctx, tx, proposal, load, now);
  for (const a of agents.values()) tx.put(Agents, a.tag, a);
  return settlement;
}

/**
 * What an eval's publication names besides the proposal (PROTOCOL 9.3): the artifact it evaluates
 * and the bytes the tree attaches it to (the same read publishToTree makes in this transaction),
 * so the verifiable index files it under `path:` and `sha256:` of that artifact (9.10) and a read
 * of the artifact can be held against every eval the log records of its bytes (10.7).
 */
async function evalTarget(tx: Tx, proposal: ProposalRecord): Promise<{ artifactPath: string; artifactSha256?: string }> {
  const { artifactPath } = proposal.payload as { artifactPath: string };
  const sha256 = await artifactBytesAt(tx, artifactPath);
  return { artifactPath, ...(sha256 ? { artifactSha256: sha256 } : {}) };
}

// The decision rule of PROTOCOL 7.4: the weighted mean composite of the judgments decides;
// each judge's alignment learns whether it agreed; the deposit is refunded or slashed.
async function decide(
  ctx: Ctx,
  tx: Tx,
  proposal: ProposalRecord,
  load: (tag: string) => Promise<AgentRecord>,
  now: number,
): Promise<'refunded' | 'slashed' | 'none'> {
  const weighted = weightedComposite(proposal.judgments);
  const published = weighted >= PUBLISH_THRESHOLD;
  proposal.status = published ? 'published' : 'rejected';
  proposal.decidedAt = now;
  for (const j of proposal.judgments) {
    const a = await load(j.agentTag);
    a.alignment.decided += 1;
    if (j.composite >= PUBLISH_THRESHOLD === published) a.alignment.aligned += 1;
  }
  let settlement: 'refunded' | 'slashed' | 'none' = 'none';
  if (proposal.proposer) {
    const proposer = await load(proposal.proposer.tag);
    if (published) proposer.contributions.published += 1;
    if (proposal.billable && proposal.deposit > 0) {
      settlement = published ? 'refunded' : 'slashed';
      moveCredits(tx, ctx, proposer, published ? 'refund' : 'slash', proposal.deposit, `${proposal.status} ${proposal.proposalId}`, proposal.proposalId);
    }
  }
  proposal.outcome = { weightedComposite: round6(weighted), decision: proposal.status as 'published' | 'rejected', depositSettlement: settlement };
  // The decision event carries what it was computed from (PROTOCOL 7.4): anyone holding the
  // judgments can recompute it with no node.
  enqueueLogEntry(tx, ctx, {
    kind: EVENT_KIND,
    tier: 'event',
    agent: proposal.proposer?.tag ?? null,
    body: auditEvent(published ? 'proposal.published' : 'proposal.rejected', proposal, now, {
      status: proposal.status,
      // Where it publishes: a reader of a node cut to a level below deep (which cannot rehash
      // the content) checks the path served against this.
      path: proposal.path ?? null,
      judgments: proposal.judgments.map((j) => ({ judgmentId: j.judgmentId, weight: j.weight, composite: j.composite })),
      weightedComposite: proposal.outcome.weightedComposite,
      rule: { requiredJudgments: proposal.requiredJudgments, publishThreshold: PUBLISH_THRESHOLD },
      ...(published && proposal.kind === 'eval-result' ? await evalTarget(tx, proposal) : {}),
    }),
  });
  releasePending(tx, proposal);
  if (published && proposal.path && proposal.kind !== 'tree-expansion' && proposal.kind !== 'spec-sharpening') {
    tx.put(PublishedNodes, proposal.path, { proposalId: proposal.proposalId, kind: proposal.kind });
  }
  // The tree (PROTOCOL 10.1) changes in the same write as the status.
  if (published) await publishToTree(tx, proposal, now, ctx.strategies.search);
  return settlement;
}
