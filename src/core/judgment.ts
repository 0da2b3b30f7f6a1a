// The judge signature of PROTOCOL 7.2 (L2), in one place: the node verifies, the CLI signs and
// the offline verifier checks the very same JCS bytes.
import type { ProposalKind } from './kinds.js';
import { canonicalize } from './jcs.js';

export interface ScoreDimensions {
  accuracy: number;
  clarity: number;
  compression: number;
  sources: number;
}

/** The object a judge signs. */
export interface JudgmentSigningPayload {
  type: 'akas.judgment.v1';
  kind: ProposalKind;
  proposalId: string;
  judge: string;
  scores: ScoreDimensions;
  rationale: string;
}

/** Builds the signed object (only the four score dimensions, whatever else `scores` holds). */
export function judgmentSigningPayload(f: { kind: ProposalKind; proposalId: string; judge: string; scores: ScoreDimensions; rationale: string }): JudgmentSigningPayload {
  return {
    type: 'akas.judgment.v1',
    kind: f.kind,
    proposalId: f.proposalId,
    judge: f.judge,
    scores: { accuracy: f.scores.accuracy, clarity: f.scores.clarity, compression: f.scores.compression, sources: f.scores.sources },
    rationale: f.rationale,
  };
}

/** The exact string that is signed: the JCS form of judgmentSigningPayload, as UTF-8. */
export const judgmentSigningString = (f: Parameters<typeof judgmentSigningPayload>[0]) => canonicalize(judgmentSigningPayload(f));

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
export const credentialUrl = (kind: ProposalKind, proposalId: string, judgmentId: string) =>
  `/api/credentials/judgment/${kind}/${proposalId}/${judgmentId}`;
