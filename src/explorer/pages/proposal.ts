// One proposal: its payload, its judgments (scores, weights, rationale, the judge and tier),
// the decision and how it was computed, the bundle to download, and each judgment's signature,
// credential, status (revoked, suspended: and whether the decision would still hold) and log
// entry checked in the browser. The content (kind, path, title, spec, payload)
// is shown marked with data-content, so that the page script rehashes what the reader sees
// (PROTOCOL 6.10) and holds it against the contentSha256 shown and each judge's v2 signature.
import { histogram } from '../charts.js';
import { html } from '../html.js';
import { agentLink, badge, facts, nodeLink, page, score, statusState, time, verifyState, type Assets } from '../layout.js';
import type { Statuses } from './entries.js';

type Json = Record<string, unknown>;

export interface Judgment {
  judgmentId: string;
  agentTag: string;
  scores: { accuracy: number; clarity: number; compression: number; sources: number };
  composite: number;
  rationale: string;
  receivedAt: number;
  alignment: number;
  weight: number;
  tier: string;
  credentialUrl: string;
  contentSha256?: string;
  contentBoundBy?: 'judge' | 'node';
  attestation?: { nodeMac?: { signingKeyId: string; mac: string } };
}

export interface ProposalDetail {
  proposalId: string;
  kind?: string;
  path: string | null;
  title: string;
  spec?: string;
  status: string;
  submittedAt: number;
  decidedAt: number | null;
  judgmentCount: number;
  requiredJudgments: number;
  proposer: string | null;
  payload: unknown;
  contentSha256?: string;
  contentBinding?: 'log' | 'store';
  deposit?: number;
  outcome: { weightedComposite: number; decision: string; depositSettlement: string } | null;
  judgments?: Judgment[];
}

/** The decision rule of PROTOCOL 7.4 with this proposal's numbers. */
function computation(p: ProposalDetail) {
  const js = p.judgments ?? [];
  if (!js.length) return html`<p class="muted">No judgment yet: ${p.requiredJudgments} distinct judges decide it.</p>`;
  const sw = js.reduce((s, j) => s + j.weight, 0);
  const swc = js.reduce((s, j) => s + j.weight * j.composite, 0);
  const mean = sw > 0 ? swc / sw : 0;
  return html`<p>Each judgment's composite is the mean of its four scores; its weight is (1 + 2 × the judge's calibration score) × the \
judge's smoothed alignment. At ${p.requiredJudgments} judgments the weighted mean composite decides: 0.6 or more publishes.</p>
<p class="calc"><code>(${js.map((j) => `${j.weight.toFixed(3)} × ${j.composite.toFixed(3)}`).join(' + ')}) / \
(${js.map((j) => j.weight.toFixed(3)).join(' + ')}) = ${mean.toFixed(4)}</code>
${
  p.outcome
    ? html` → <strong>${p.outcome.decision}</strong> (the node recorded ${p.outcome.weightedComposite}; \
deposit ${p.outcome.depositSettlement})`
    : html` <span class="muted">(${js.length} of ${p.requiredJudgments} judgments so far)</span>`
}</p>`;
}

/** A proposal with the node's status records of its judgments' credentials (what the page says without JavaScript). */
export function proposalPage(p: ProposalDetail, kind: string, assets: Assets, statuses: Statuses = {}): string {
  const js = p.judgments ?? [];
  const dims = ['accuracy', 'clarity', 'compression', 'sources'] as const;
  const body = html`<p class="muted small"><a href="/explore/proposals">Proposals</a> / <code>${p.proposalId}</code></p>
<h1><span data-content="title">${p.title}</span> <span data-content="kind">${badge(kind, 'kind')}</span> ${badge(p.status)}</h1>
${facts([
  ['Proposal', html`<code>${p.proposalId}</code>`],
  ['Path', p.path ? html`<span data-content="path">${p.status === 'published' ? nodeLink(p.path) : html`<code>${p.path}</code>`}</span>` : null],
  [
    'Content',
    p.contentSha256
      ? html`<code class="wrap" data-content-sha256>${p.contentSha256}</code><br><span class="muted small">contentSha256: the sha256 of the \
JCS of the kind, path, title, spec and payload shown on this page; ${
          p.contentBinding === 'store'
            ? 'stored before content binding: bound ' + "by the node's store, not by the log"
            : 'bound by the log (its proposal.submitted event)'
        }</span>\
<br>${verifyState(html`data-verify-content="${p.proposalId}"`, 'content shown is content judged')}`
      : null,
  ],
  ['Proposer', agentLink(p.proposer)],
  ['Submitted', time(p.submittedAt)],
  ['Decided', p.decidedAt ? time(p.decidedAt) : 'pending'],
  ['Deposit', p.deposit ?? null],
  ['Judgments', `${p.judgmentCount} of ${p.requiredJudgments}`],
  [
    'Bundle',
    html`<a href="/api/knowledge/proposals/${p.proposalId}/bundle" download="${p.proposalId}.bundle.json">${p.proposalId}.bundle.json</a> \
<span class="muted small">(check it offline: akas verify bundle, or drop it on <a href="/explore/verify">Verify</a>)</span>`,
  ],
  ['Checked here', js.length ? verifyState(html`data-verify-bundle="${p.proposalId}"`, 'bundle') : null],
  ['Log entries', verifyState(html`data-verify-lookup="proposal:${p.proposalId}"`, 'every entry of this proposal (the verifiable index)')],
])}
<section aria-labelledby="decision"><h2 id="decision">Decision</h2>${computation(p)}
${js.length ? html`<p>${verifyState(html`data-verify-standing="${p.proposalId}"`, 'judgments revoked or suspended since')}</p>` : ''}</section>
<section aria-labelledby="judgments"><h2 id="judgments">Judgments</h2>
${
  js.length
    ? html`<div class="charts">${[
        html`<figure>${histogram(
          js.map((j) => j.composite),
          'Composite scores',
        )}<figcaption>Composites</figcaption></figure>`,
        ...dims.map(
          (dim) =>
            html`<figure>${histogram(
              js.map((j) => j.scores[dim]),
              `${dim} scores`,
            )}<figcaption>${dim}</figcaption></figure>`,
        ),
      ]}</div>
<table class="judgments"><caption class="sr">Judgments</caption><thead><tr><th scope="col">judge</th><th scope="col">scores</th><th \
scope="col">composite</th><th scope="col">weight</th><th scope="col">rationale</th><th scope="col">checked in your browser</th></tr></thead><tbody>
${js.map(
  // data-judged-*: the texts the judge signed (judge, scores, rationale) and the composite made
  // of them, which the page script holds against the signed payload (data-verify-shown).
  (j) => html`<tr data-judgment="${j.judgmentId}"><td><span data-judged-by>${agentLink(j.agentTag)}</span>\
<br>${badge(j.tier, 'tier')}<br>${time(j.receivedAt)}</td>
<td><dl class="scores">${dims.map((dim) => html`<dt>${dim}</dt><dd data-judged-score="${dim}">${score(j.scores[dim])}</dd>`)}</dl></td>
<td data-judged-composite>${score(j.composite)}</td><td>${j.weight.toFixed(3)}<br><span class="muted small">alignment ${j.alignment.toFixed(3)}</span></td>
${j.rationale ? html`<td data-judged-rationale>${j.rationale}</td>` : html`<td><span class="muted">none</span></td>`}
<td><ul class="checks"><li>${verifyState(html`data-verify-shown="${j.judgmentId}"`, 'judge, scores and rationale shown')}</li>\
<li>${verifyState(html`data-check="L2" data-subject="${j.judgmentId}"`, "judge's signature")}</li><li>${verifyState(
    html`data-check="L1" \
data-subject="${j.judgmentId}"`,
    html`<a href="${j.credentialUrl}">credential</a>`,
  )}</li><li>${statusState(j.judgmentId, statuses[j.judgmentId] ?? {})}</li><li>${verifyState(
    html`data-check="L3" \
data-subject="${j.judgmentId}"`,
    'log entry',
  )}</li><li>${verifyState(html`data-verify-judged="${j.judgmentId}"`, 'content judged')}</li>\
<li><span class="v" data-state="node"><span class="v-label">node HMAC:</span> needs the node (only it holds the key)</span></li></ul></td></tr>`,
)}
</tbody></table>`
    : html`<p class="muted">No judgment yet.</p>`
}
</section>
<section aria-labelledby="payload"><h2 id="payload">What was proposed</h2>
${p.spec !== undefined ? html`<p data-content="spec">${p.spec}</p>` : ''}
<pre class="json" data-content="payload">${JSON.stringify(p.payload, null, 2)}</pre>
<p class="muted small">Your browser hashes the title, path, kind${p.spec !== undefined ? ', spec' : ''} and payload shown here, as the node \
and the judges do (contentSha256, PROTOCOL 6.10), and checks that each judge who signed a content hash signed this one.</p>
<p class="muted small">The same as JSON: <a href="/api/knowledge/proposals/${p.proposalId}">/api/knowledge/proposals/${p.proposalId}</a></p>
</section>`;
  return page({ title: p.title, section: 'proposals', assets, body });
}

export type { Json };
