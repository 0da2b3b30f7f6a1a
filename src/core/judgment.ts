// The judge signature of PROTOCOL 7.2 (L2), in one place: the node verifies, the CLI signs and
// the offline verifier checks the very same JCS bytes (v2 with the content hash, v1 without).
import type { ProposalKind } from './kinds.js';
import { canonicalize } from './jcs.js';

export interface ScoreDimensions {
  accuracy: number;
  clarity: number;
  compression: number;
  sources: number;
}

/**
 * The object a judge signs: `akas.judgment.v2` binds the judgment to the content the judge read
 * (its contentSha256, PROTOCOL 6.10); `akas.judgment.v1` (the first payload, still accepted: PROTOCOL 7.2) does
 * not, and such a judgment is bound to the content by the node's word only.
 */
export type JudgmentSigningPayload =
  | { type: 'akas.judgment.v1'; kind: ProposalKind; proposalId: string; judge: string; scores: ScoreDimensions; rationale: string }
  | { type: 'akas.judgment.v2'; kind: ProposalKind; proposalId: string; judge: string; scores: ScoreDimensions; rationale: string; contentSha256: string };

export const JUDGMENT_V1 = 'akas.judgment.v1';
export const JUDGMENT_V2 = 'akas.judgment.v2';

export interface JudgmentFields {
  kind: ProposalKind;
  proposalId: string;
  judge: string;
  scores: ScoreDimensions;
  rationale: string;
  /** The content the judge read: given, the v2 payload; absent, the v1 payload. */
  contentSha256?: string;
}

/** Builds the signed object (only the four score dimensions, whatever else `scores` holds): v2 with a contentSha256, else v1. */
export function judgmentSigningPayload(f: JudgmentFields): JudgmentSigningPayload {
  const base = {
    kind: f.kind,
    proposalId: f.proposalId,
    judge: f.judge,
    scores: { accuracy: f.scores.accuracy, clarity: f.scores.clarity, compression: f.scores.compression, sources: f.scores.sources },
    rationale: f.rationale,
  };
  return f.contentSha256 === undefined ? { type: JUDGMENT_V1, ...base } : { type: JUDGMENT_V2, ...base, contentSha256: f.contentSha256 };
}

/** The exact string that is signed: the JCS form of judgmentSigningPayload, as UTF-8. */
export const judgmentSigningString = (f: JudgmentFields) => canonicalize(judgmentSigningPayload(f));

/**
 * The decision rule of PROTOCOL 7.4 that is the same on every node: at requiredJudgments
 * judgments (a node's setting, 3 by default), a weighted mean composite at or above this
 * publishes. The node applies it; the offline verifier recomputes decisions with it.
 */
export const PUBLISH_THRESHOLD = 0.6;

/** Rounding of composites, weights and the weighted composite (6 decimals), as the node stores them. */
export const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** The composite of a judgment: the mean of its four scores, rounded as stored. */
export const compositeOf = (s: ScoreDimensions) => round6((s.accuracy + s.clarity + s.compression + s.sources) / 4);

/**
 * The weighted mean composite of judgments in the order they were recorded (0 when no judgment
 * weighs anything), not rounded: the one formula the node decides with (against
 * PUBLISH_THRESHOLD) and a verifier recomputes with. The node shows it rounded (round6).
 */
export function weightedComposite(judgments: Array<{ weight: number; composite: number }>): number {
  const total = judgments.reduce((s, j) => s + j.weight, 0);
  return total > 0 ? judgments.reduce((s, j) => s + j.weight * j.composite, 0) / total : 0;
}

/** Propose and judge paths per kind (PROTOCOL 6.1). */
export const KIND_ROUTES: Record<ProposalKind, { propose: string; judge: string }> = {
  brief: { propose: '/api/knowledge/propose', judge: '/api/knowledge/judge' },
  capability: { propose: '/api/knowledge/cap/propose', judge: '/api/knowledge/cap/judge-proposal' },
  graph: { propose: '/api/knowledge/dg/propose', judge: '/api/knowledge/dg/judge-proposal' },
  artifact: { propose: '/api/knowledge/artifact/propose', judge: '/api/knowledge/artifact/judge-proposal' },
  'tree-expansion': { propose: '/api/knowledge/tree/propose', judge: '/api/knowledge/tree/judge' },
  'spec-sharpening': { propose: '/api/knowledge/specs/propose', judge: '/api/knowledge/specs/judge' },
  'eval-result': { propose: '/api/knowledge/eval/propose', judge: '/api/knowledge/eval/judge-proposal' },
};

export const judgeUrl = (kind: ProposalKind, id: string) => `${KIND_ROUTES[kind].judge}/${id}`;
export const detailUrl = (kind: ProposalKind, id: string) =>
  kind === 'eval-result' ? `/api/knowledge/eval/proposals/${id}` : `/api/knowledge/proposals/${id}`;
/** The L1 credential of a judgment (issued by the credentials layer). */
export const credentialUrl = (kind: ProposalKind, proposalId: string, judgmentId: string) => `/api/credentials/judgment/${kind}/${proposalId}/${judgmentId}`;
