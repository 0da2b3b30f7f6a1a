// Proposals: pending ones (newest first) and decided ones (latest decision first), by kind.
import { PROPOSAL_KINDS } from '../../core/index.js';
import type { Page, ProposalRow } from '../data.js';
import { html } from '../html.js';
import { agentLink, badge, nodeLink, page, pager, proposalLink, qs, score, time, type Assets } from '../layout.js';

export interface ProposalsData {
  status: 'pending' | 'decided';
  kind?: string;
  list: Page<ProposalRow & { decision?: string }>;
  /** Whether this is not the first page. */
  paged: boolean;
}

export function proposalsPage(d: ProposalsData, assets: Assets): string {
  const tab = (s: 'pending' | 'decided', label: string) =>
    html`<li><a href="/explore/proposals${qs({ status: s, kind: d.kind })}"${s === d.status ? html` aria-current="true"` : ''}>${label}</a></li>`;
  const kinds = html`<nav class="filters" aria-label="Kind"><ul>${[undefined, ...PROPOSAL_KINDS].map(
    (k) => html`<li><a \
href="/explore/proposals${qs({ status: d.status, kind: k })}"${k === d.kind ? html` aria-current="true"` : ''}>${k ?? 'all kinds'}</a></li>`,
  )}</ul></nav>`;
  const body = html`<h1>Proposals</h1>
<nav class="tabs" aria-label="Status"><ul>${tab('pending', 'Pending')}${tab('decided', 'Decided')}</ul></nav>
${kinds}
${
  d.list.items.length
    ? html`<table><caption class="sr">${d.status} proposals</caption><thead><tr><th scope="col">proposal</th><th scope="col">kind</th><th \
scope="col">path</th><th scope="col">proposer</th><th scope="col">judgments</th>${
        d.status === 'decided'
          ? html`<th \
scope="col">decision</th><th scope="col">weighted composite</th><th scope="col">decided</th>`
          : html`<th scope="col">submitted</th>`
      }</tr></thead><tbody>
${d.list.items.map(
  (p) =>
    html`<tr><td>${proposalLink(p.proposalId, p.title)}<br><code class="small">${p.proposalId}</code></td><td>${badge(p.kind, 'kind')}</td>\
<td>${p.path ? (p.status === 'published' ? nodeLink(p.path) : html`<code>${p.path}</code>`) : '—'}</td><td>${agentLink(p.proposer)}</td>\
<td>${p.judgments} / ${p.required}</td>${
      d.status === 'decided'
        ? html`<td>${badge(p.decision ?? p.status)}</td>\
<td>${score(p.composite)}</td><td>${time(p.decidedAt)}</td>`
        : html`<td>${time(p.submittedAt)}</td>`
    }</tr>`,
)}
</tbody></table>`
    : html`<p class="muted">No ${d.status} proposal${d.kind ? html` of kind ${d.kind}` : ''}${d.paged ? ' further back' : ''}.</p>`
}
${pager(
  d.paged ? `/explore/proposals${qs({ status: d.status, kind: d.kind })}` : null,
  d.list.next ? `/explore/proposals` + `${qs({ status: d.status, kind: d.kind, before: d.list.next })}` : null,
)}`;
  return page({ title: 'Proposals', section: 'proposals', assets, body });
}
