// Home: who this node is (issuer DID and key history, log key, origin), what it holds, its
// latest checkpoint, and the decisions and attestations it records, as they happen.
import type { LogEntry } from '../../core/index.js';
import type { StoredCheckpoint } from '../../domain/log/index.js';
import type { ProposalRow } from '../data.js';
import { html } from '../html.js';
import { agentLink, badge, code, entryLink, facts, hash, page, proposalLink, time, verifyState, type Assets } from '../layout.js';
import { entryCredential, entrySummary, type Statuses } from './entries.js';

export interface HomeData {
  origin: string;
  descriptor: {
    version: { node: string };
    issuer: { did: string; history: Array<{ did: string; validFrom: number; validUntil: number | null }>; rotations: unknown[] };
    log: { origin: string; verifierKey: string };
    hmac: { signingKeyIds: string[]; current: string | null };
  };
  counts: { nodes: number; pending: number; agents: number; entries: number; at: number };
  checkpoint: StoredCheckpoint | null;
  decisions: Array<ProposalRow & { decision: string; entryId: string }>;
  entries: LogEntry[];
  /** The node's status records of the credentials the entries name. */
  statuses?: Statuses;
}

export function homePage(d: HomeData, assets: Assets): string {
  const body = html`
<h1>akas node <small class="muted">${d.origin}</small></h1>
<p class="lede">A node of the Agent Knowledge and Attestation Service: published knowledge, the judgments behind it, and an append-only log \
anyone can check. Every signature and proof on these pages is checked in your browser with the keys pinned below.</p>
<div class="pin" data-pin-status><p class="muted">With JavaScript, this page pins the issuer and the log key the first time you visit, and \
warns when they change.</p></div>
<section aria-labelledby="counts"><h2 id="counts">What it holds</h2>
<ul class="counts">
<li><a href="/explore/tree"><strong>${d.counts.nodes}</strong> published nodes</a></li>
<li><a href="/explore/proposals"><strong>${d.counts.pending}</strong> pending proposals</a></li>
<li><a href="/explore/agents"><strong>${d.counts.agents}</strong> ranked agents</a></li>
<li><a href="/explore/log"><strong data-live-count>${d.counts.entries}</strong> log entries</a></li>
</ul>
<p class="muted small">Counted at ${time(d.counts.at)}.</p>
</section>
<section aria-labelledby="dec"><h2 id="dec">Recent decisions</h2>
${
  d.decisions.length
    ? html`<ul class="list">${d.decisions.map(
        (p) =>
          html`<li>${badge(p.decision)} ${badge(p.kind, 'kind')} ${proposalLink(p.proposalId, p.title)} <span \
class="muted">by</span> ${agentLink(p.proposer)} · ${time(p.decidedAt)} · ${entryLink(
            p.entryId,
            'log ' + 'entry',
          )} ${verifyState(html`data-verify-entry="${p.entryId}"`, 'log')}</li>`,
      )}</ul>`
    : html`<p class="muted">No proposal has been decided yet.</p>`
}
<p><a href="/explore/proposals?status=decided">All decisions</a></p>
</section>
<section aria-labelledby="live"><h2 id="live">Attestations as they happen</h2>
<p class="muted small" data-live-status>The newest entries of the log${d.entries.length ? '' : ' (none yet)'}; with JavaScript, new ones \
appear here as the node appends them.</p>
<table class="entries"><caption class="sr">Newest log entries</caption><thead><tr><th scope="col">entry</th><th scope="col">kind</th><th \
scope="col">what</th><th scope="col">agent</th><th scope="col">time</th><th scope="col">in the log</th></tr></thead>
<tbody data-live-log data-from="${d.counts.entries}">
${d.entries.map((e) => entryRow(e, d.statuses))}
</tbody></table>
<p><a href="/explore/log">The whole log</a></p>
</section>
<section aria-labelledby="cp"><h2 id="cp">Latest checkpoint</h2>
${
  d.checkpoint
    ? html`${facts([
        ['Size', d.checkpoint.size],
        ['Root', hash(d.checkpoint.root, 16)],
        ['Signed at', time(d.checkpoint.at)],
        ['Signature', verifyState(html`data-verify-checkpoint="${d.checkpoint.size}"`, 'signature')],
      ])}<pre class="note" data-note="${d.checkpoint.size}">${d.checkpoint.note}</pre>`
    : html`<p class="muted">No checkpoint yet: the log is empty.</p>`
}
</section>
<section aria-labelledby="who"><h2 id="who">Identity and keys</h2>
${facts([
  ['Issuer (current)', code(d.descriptor.issuer.did)],
  ['Log origin', code(d.descriptor.log.origin)],
  ['Log key', code(d.descriptor.log.verifierKey)],
  ['HMAC keys', html`${d.descriptor.hmac.signingKeyIds.map((k) => html`<code>${k}</code> `)}<span class="muted">(only the node can check its HMACs)</span>`],
  ['Version', d.descriptor.version.node],
])}
<details><summary>Issuer key history (${d.descriptor.issuer.history.length} \
key${d.descriptor.issuer.history.length === 1 ? '' : 's'}, ${d.descriptor.issuer.rotations.length} signed \
rotation${d.descriptor.issuer.rotations.length === 1 ? '' : 's'})</summary>
<table><caption class="sr">Issuer keys</caption><thead><tr><th scope="col">did:key</th><th scope="col">valid from</th><th scope="col">valid \
until</th></tr></thead><tbody>
${d.descriptor.issuer.history.map(
  (k) => html`<tr><td>${code(k.did)}</td><td>${time(k.validFrom)}</td>\
<td>${k.validUntil === null ? 'current' : time(k.validUntil)}</td></tr>`,
)}
</tbody></table></details>
</section>`;
  return page({ title: 'Home', section: 'home', assets, body });
}

/** One row of an entries table (also built by the page script for live entries, from the same fields); a judgment's with its credential's status. */
export function entryRow(e: LogEntry, statuses?: Statuses) {
  return html`<tr data-entry="${e.id}"><td>${entryLink(e.id, html`<code>#${e.seq}</code>`)}</td><td>${badge(e.tier, 'tier')} \
<code>${e.kind}</code></td><td>${entrySummary(e)}${entryCredential(e, statuses)}</td><td>${agentLink(e.agent)}</td><td>${time(e.attestedAt)}</td>\
<td>${verifyState(html`data-verify-entry="${e.id}"`, 'log')}</td></tr>`;
}
