// A walk of a decision graph (GET /api/knowledge/dg/traversals/{id}): every step, the branches
// that held, the leaves reached, forks and dead ends.
import { html } from '../html.js';
import { badge, facts, hash, nodeLink, page, time, type Assets } from '../layout.js';

export interface TraversalData {
  traversalId: string;
  path: string;
  inputs?: Record<string, unknown>;
  inputsSha256: string;
  complete: boolean;
  stopped?: { reason: string; at: string; depth: number; limit: number };
  steps: Array<{ path: string; question: string; depth: number; branches: Array<{ id: string; holds: boolean; to: string }> }>;
  leaves: Array<{ to: string; depth: number; via: Array<{ path: string; branch: string }>; node?: { path: string; kind: string; title: string } }>;
  forks: number;
  deadEnds: string[];
  at: number;
}

export function traversalPage(t: TraversalData, assets: Assets): string {
  const body = html`<p class="muted small">${nodeLink(t.path)} / traversal</p>
<h1>Walk of ${t.path}</h1>
${facts([
  ['Traversal', html`<code>${t.traversalId}</code>`],
  ['Inputs', t.inputs ? html`<code class="wrap">${JSON.stringify(t.inputs)}</code>` : html`kept by the node as their sha256 only: ${hash(t.inputsSha256, 16)}`],
  ['Complete', t.complete ? 'yes' : html`no: stopped (${t.stopped?.reason}) at ${t.stopped?.at}`],
  ['Forks', t.forks],
  ['Walked', time(t.at)],
])}
<h2>Leaves reached</h2>
${t.leaves.length ? html`<ol>${t.leaves.map(leafItem)}</ol>` : html`<p class="muted">No branch led anywhere.</p>`}
${t.deadEnds.length ? html`<p>Dead ends (no branch held): ${t.deadEnds.map((p) => html`<code>${p}</code> `)}</p>` : ''}
<h2>Steps</h2>
<ol>${t.steps.map(
    (s) => html`<li><strong>${s.question}</strong> <span class="muted small">${s.path}, depth ${s.depth}</span>\
<ul>${s.branches.map(
      (b) => html`<li>${b.holds ? badge('holds', 'published') : badge('does not hold', 'rejected')} <code>${b.id}</code> → \
<code>${b.to}</code></li>`,
    )}</ul></li>`,
  )}</ol>
<p><a href="/explore/tree${t.path}#traverse">Walk it again</a> · <span class="muted small">as JSON: <a \
href="/api/knowledge/dg/traversals/${t.traversalId}">/api/knowledge/dg/traversals/${t.traversalId}</a></span></p>`;
  return page({ title: `Walk of ${t.path}`, section: 'tree', assets, body });
}

/** A leaf the walk reached: the node (or the path it names) and the branches that led there. */
function leafItem(l: TraversalData['leaves'][number]) {
  const target = l.node ? html`${nodeLink(l.node.path, l.node.title)} ${badge(l.node.kind, 'kind')}` : html`<code>${l.to}</code>`;
  return html`<li>${target} <span class="muted small">via ${l.via.map((v) => html`${v.path} (${v.branch}) `)}</span></li>`;
}
