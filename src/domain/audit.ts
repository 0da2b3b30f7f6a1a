// The node's audit trail in its own log (PROTOCOL 9.3): each recorded judgment and each
// publish, reject or withdrawal is an attestation.event.v1 entry, enqueued in the very
// transaction that made the change.
import type { ProposalRecord } from './records.js';

export const EVENT_KIND = 'attestation.event.v1';

export type AuditEventName = 'judgment.recorded' | 'proposal.published' | 'proposal.rejected' | 'proposal.withdrawn';

/** The body of an attestation.event.v1 entry. */
export function auditEvent(event: AuditEventName, p: Pick<ProposalRecord, 'proposalId' | 'kind'>, at: number, extra: { judgmentId?: string; status?: string } = {}) {
  return { schemaVersion: '1.0.0', event, proposalId: p.proposalId, kind: p.kind, ...extra, at };
}
