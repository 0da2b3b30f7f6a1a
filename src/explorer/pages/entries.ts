// Log entries in lists: a one-line summary of what an entry records.
import type { LogEntry } from '../../core/index.js';
import { html, type Html } from '../html.js';
import { hash, proposalLink } from '../layout.js';

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
