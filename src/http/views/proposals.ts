// The answers of the propose and judge routes (PROTOCOL 6 and 7): a proposal accepted, a
// judgment recorded (or its dry run), the judge queue, and an eval proposal with its signed
// manifest. The proposal and judgment records themselves are shown by records.ts.
import { credentialUrl, type NodeKeys } from '../../core/index.js';
import { evalManifest } from '../../domain/knowledge/manifests.js';
import type { judgeStanding, JudgeResult } from '../../domain/proposals/judging.js';
import { detailUrl, judgeUrl, type PayloadOf } from '../../domain/proposals/kinds.js';
import type { Proposed, QueuePage } from '../../domain/proposals/proposals.js';
import type { ProposalRecord } from '../../domain/records.js';
import { commonProposalView, proposalView } from './records.js';

/** PROTOCOL 6.5: a proposal accepted, its deposit, and where to check and judge it. */
export function acceptedView(r: Proposed) {
  const p = r.proposal;
  return {
    proposalId: p.proposalId,
    kind: p.kind,
    status: p.status,
    submittedAt: p.submittedAt,
    requiredJudgments: p.requiredJudgments,
    judgmentCount: 0,
    contentSha256: p.contentSha256,
    economy: {
      tier: p.tier,
      deposit: p.deposit,
      balanceRemaining: r.balanceRemaining,
      billable: p.billable,
      note: p.billable
        ? `The deposit of ${p.deposit} is held in reservedBalance: refunded on publish or withdraw, slashed on reject.`
        : 'Anonymous proposals carry no deposit and earn no refund.',
      expectedRefundOnPublish: p.billable ? p.deposit : null,
      perIpProposeQuota: r.perIpProposeQuota,
    },
    instructions: {
      check: detailUrl(p.kind, p.proposalId),
      judgeAsUnified: `/api/knowledge/judge/${p.proposalId}`,
      judgeAs: judgeUrl(p.kind, p.proposalId),
    },
    ...(r.claimSecret ? { claimSecret: r.claimSecret } : {}),
  };
}

/** PROTOCOL 7.3: a judgment recorded with what it earned, or (a dry run) what it would be and the payload to sign. */
export function judgedView(r: JudgeResult) {
  if (r.dryRun) {
    return {
      ok: true as const,
      dryRun: true as const,
      would: { proposalId: r.proposalId, kind: r.kind, composite: r.composite, weight: r.weight, creditsAwarded: r.creditsAwarded, tier: r.tier },
      signingPayload: r.signingPayload,
      contentSha256: r.contentSha256,
      note: 'Nothing was recorded. To judge for real, sign signingPayload with your Ed25519 key and send it as `signature` without dryRun.',
    };
  }
  const j = r.judgment;
  return {
    kind: r.kind,
    proposalId: r.proposalId,
    judgmentRecorded: true as const,
    judgmentId: j.judgmentId,
    credentialUrl: credentialUrl(r.kind, r.proposalId, j.judgmentId),
    statusChanged: r.statusChanged,
    newStatus: r.newStatus,
    economy: {
      tier: j.tier,
      intelligenceScore: j.intelligenceScore,
      weight: r.weight,
      creditsAwarded: 1,
      balance: r.balance,
      ...(r.depositSettlement ? { depositSettlement: r.depositSettlement } : {}),
    },
  };
}

/**
 * PROTOCOL 7.4: the proposals a judge may take, with what was withheld and why. An agent who may
 * not judge yet sees the queue it will judge, and why not now (its judgments would be refused
 * with that code).
 */
export function queueView(page: QueuePage, opts: { expand: boolean; cannotJudge: ReturnType<typeof judgeStanding>; sameIpRule: boolean }) {
  const { expand, cannotJudge } = opts;
  return {
    ...(cannotJudge ? { cannotJudge } : {}),
    items: page.items.map((p) => ({
      proposalId: p.proposalId,
      kind: p.kind,
      title: p.title,
      path: p.path,
      submittedAt: p.submittedAt,
      judgmentCount: p.judgments.length,
      requiredJudgments: p.requiredJudgments,
      contentSha256: p.contentSha256,
      judgeUrl: judgeUrl(p.kind, p.proposalId),
      detailUrl: detailUrl(p.kind, p.proposalId),
      ...(expand ? { proposal: proposalView(p) } : {}),
    })),
    nextCursor: page.nextCursor,
    withheld: page.withheld,
    note:
      (cannotJudge ? `You cannot judge yet (${cannotJudge.code}): ${cannotJudge.reason} These are the proposals you could judge then. ` : '') +
      (opts.sameIpRule
        ? 'Pending proposals you may judge: not yours, not judged by you or by another agent on your IP (withheld counts the others). ' +
          'Each accepted judgment earns 1 credit.'
        : 'Pending proposals you may judge: not yours, not judged by you (withheld counts the others; this node lets agents on one IP ' +
          'judge the same proposal). Each accepted judgment earns 1 credit.'),
  };
}

/** PROTOCOL 6.6 and 10.4: an eval proposal with the manifest the node signs over it (POST /api/knowledge/verify checks it). */
export function evalProposalView(keys: NodeKeys, p: ProposalRecord, fetchedAt: number) {
  const e = p.payload as PayloadOf<'eval-result'>;
  const manifest = evalManifest(keys, {
    proposalId: p.proposalId,
    status: p.status,
    artifactPath: e.artifactPath,
    metric: e.metric,
    score: e.score,
    datasetSha256: e.datasetSha256,
    harnessVersionSha: e.harnessVersionSha,
    runner: e.runner,
    samplesSha256: e.samplesSha256 ?? null,
    proposer: p.proposer?.tag ?? null,
    submittedAt: p.submittedAt,
    decidedAt: p.decidedAt,
    fetchedAt,
  });
  // An eval proposal is never a decision graph: the common shape, with the kind it was checked to be.
  return { ...commonProposalView(p), kind: 'eval-result' as const, manifest };
}
