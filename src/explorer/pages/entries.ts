// Log entries in lists: a one-line summary of what an entry records; a judgment's entry links
// its credential with the credential's status (issue 47).
import type { LogEntry } from '../../core/index.js';
import { html, type Html } from '../html.js';
import { hash, proposalLink, statusState } from '../layout.js';
import type { NodeStatus } from '../client/status-words.js';

/** The node's status records of the credentials a page shows, by judgment id. */
export type Statuses = Record<string, NodeStatus>;

/** The judgment a judgment.recorded event names, with its credential's URL (PROTOCOL 8.1), or null for any other entry. */
export function judgmentOf(e: Pick<LogEntry, 'kind' | 'body'>): { judgmentId: string; credentialUrl: string } | null {
  const b = e.body as Record<string, unknown>;
  if (e.kind !== 'attestation.event.v1' || b.event !== 'judgment.recorded') return null;
  const { judgmentId, kind, proposalId } = b;
  if (typeof judgmentId !== 'string' || typeof kind !== 'string' || typeof proposalId !== 'string') return null;
  return { judgmentId, credentialUrl: `/api/credentials/judgment/${kind}/${proposalId}/${judgmentId}` };
}

/** The credential of a judgment's entry and its status, or nothing for another entry. */
export function entryCredential(e: LogEntry, statuses: Statuses | undefined): Html {
  const j = judgmentOf(e);
  if (!j) return html``;
  return html`<br><a href="${j.credentialUrl}">credential</a> ${statusState(j.judgmentId, statuses?.[j.judgmentId])}`;
}

/** What an entry says, in a few words (the node's own events name their proposal). */
export function entrySummary(e: LogEntry): Html {
  const b = e.body as Record<string, unknown>;
  if (e.kind === 'attestation.event.v1') {
    const pid = typeof b.proposalId === 'string' ? b.proposalId : null;
    return html`<code>${String(b.event ?? '')}</code> ${pid ? proposalLink(pid) : ''}${b.status ? html` → ${String(b.status)}` : ''}`;
  }
  const subject = typeof b.subjectSha256 === 'string' ? b.subjectSha256 : null;
  const verdict = typeof b.verdict === 'string' ? b.verdict : null;
  return html`${verdict ? html`<strong>${verdict}</strong> ` : ''}${
    subject
      ? html`subject ${hash(subject)}`
      : html`<span \
class="muted">${Object.keys(b).slice(0, 4).join(', ')}</span>`
  }`;
}
