// The node's audit trail in its own log (PROTOCOL 9.3): each proposal submitted, each recorded
// judgment and each publish, reject or withdrawal is an attestation.event.v1 entry, enqueued in
// the very transaction that made the change. Since content binding (PROTOCOL 6.10) the bodies
// carry the proposal's contentSha256, and a decision carries what it was computed from.
import type { ProposalRecord } from '../records.js';

export const EVENT_KIND = 'attestation.event.v1';
/** The schema version of the bodies written now: 1.1.0 added proposal.submitted and the content fields. */
export const EVENT_SCHEMA_VERSION = '1.1.0';

export type AuditEventName = 'proposal.submitted' | 'judgment.recorded' | 'proposal.published' | 'proposal.rejected' | 'proposal.withdrawn';

/** What a decision event carries so that anyone can recompute the decision (PROTOCOL 7.4). */
export interface DecisionFacts {
  judgments: Array<{ judgmentId: string; weight: number; composite: number }>;
  weightedComposite: number;
  rule: { requiredJudgments: number; publishThreshold: number };
}

export interface AuditExtra extends Partial<DecisionFacts> {
  judgmentId?: string;
  status?: string;
  path?: string | null;
  proposer?: string | null;
  /** An eval's publication: the artifact it evaluates and the bytes it was published against (PROTOCOL 9.3), so the index files it under both (9.10). */
  artifactPath?: string;
  artifactSha256?: string;
}

/** The body of an attestation.event.v1 entry. */
export function auditEvent(event: AuditEventName, p: Pick<ProposalRecord, 'proposalId' | 'kind' | 'contentSha256'>, at: number, extra: AuditExtra = {}) {
  return { schemaVersion: EVENT_SCHEMA_VERSION, event, proposalId: p.proposalId, kind: p.kind, contentSha256: p.contentSha256, ...extra, at };
}
