// Knowledge: a node of the published tree as GET /api/knowledge/node/{path} answers it, with its
// breadcrumbs and children, its content by kind (a brief at its three levels, a capability, a
// decision graph drawn and a form to walk it, an artifact with its evals) and its evidence.
import { histogram, decisionGraph, treeShape, type GraphBranch } from '../charts.js';
import { html, safeUrl, type Html } from '../html.js';
import { badge, breadcrumbs, code, facts, hash, nodeLink, page, proposalLink, qs, time, treeUrl, verifyState, type Assets } from '../layout.js';

type Json = Record<string, unknown>;

export interface NodeView {
  path: string;
  title: string;
  spec: string;
  kind: string;
  version: number;
  refinedAt?: string;
  proposalId?: string;
  publishedAt?: number | null;
  children?: string[];
  childrenNextCursor?: string | null;
  briefId?: string;
  brief?: Json;
  manifest?: Json;
  payload?: Json;
  branches?: GraphBranch[];
  sha256Verification?: { status: string; method: string; note: string };
  independentEvals?: Json[];
  evalSummary?: { count: number; distinctRunners: number; byMetric: Record<string, { count: number; mean: number; min: number; max: number }> };
  note?: string;
}

export interface TreeData {
  node: NodeView;
  level: string;
  /** Asked for an earlier version. */
  versionAsked?: number;
  /** Each child with how many children it has (capped). */
  shape: Array<{ path: string; count: number; more: boolean }>;
  /** What is published at each branch target of a decision graph. */
  targets: Record<string, string | null>;
  cursor?: string;
}

const text = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function briefContent(b: Json, level: string, path: string): Html {
  const levels = (b.levels ?? {}) as Json;
  const deep = (levels.deep ?? {}) as Json;
  const tabs = ['tldr', 'core', 'deep'].map((l) => (l === level ? html`<li><a aria-current="true" href="${treeUrl(path)}${qs({ level: l })}">${l}</a></li>` : html`<li><a href="${treeUrl(path)}${qs({ level: l })}">${l}</a></li>`));
  return html`<nav class="tabs" aria-label="Brief level"><ul>${tabs}</ul></nav>
${facts([
  ['Brief', code(String(b.id))],
  ['Domain', text(b.domain)],
  ['Topic', text(b.topic)],
  ['Version', text(b.version)],
  ['Verified by', list(b.verifiedBy).length ? list(b.verifiedBy).map(text).join(', ') : null],
])}
<h3>In short</h3><p class="tldr">${text(levels.tldr)}</p>
${list(levels.core).length ? html`<h3>Core</h3><ol class="core">${list(levels.core).map((c) => html`<li>${text(c)}</li>`)}</ol>` : ''}
${list(b.pitfalls).length ? html`<h3>Pitfalls</h3><ul>${list(b.pitfalls).map((c) => html`<li>${text(c)}</li>`)}</ul>` : ''}
${list(b.heuristics).length ? html`<h3>Heuristics</h3><ul>${list(b.heuristics).map((c) => html`<li>${text(c)}</li>`)}</ul>` : ''}
${list(b.disputes).length ? html`<h3>Disputes</h3><ul>${list(b.disputes).map((d) => html`<li>${text((d as Json).claim)}<ul>${list((d as Json).positions).map((p) => html`<li>${text(p)}</li>`)}</ul></li>`)}</ul>` : ''}
${level === 'deep'
  ? html`${Object.keys((deep.definitions ?? {}) as Json).length ? html`<h3>Definitions</h3><dl class="facts">${Object.entries((deep.definitions ?? {}) as Json).map(([k, v]) => html`<dt>${k}</dt><dd>${text(v)}</dd>`)}</dl>` : ''}
${list(deep.examples).length ? html`<h3>Examples</h3>${list(deep.examples).map((e) => html`<div class="example"><p><strong>Violation:</strong> ${text((e as Json).violation)}</p><p><strong>Fix:</strong> ${text((e as Json).fix)}</p>${(e as Json).note ? html`<p class="muted">${text((e as Json).note)}</p>` : ''}</div>`)}` : ''}
${list(deep.edgeCases).length ? html`<h3>Edge cases</h3><ul>${list(deep.edgeCases).map((c) => html`<li>${text(c)}</li>`)}</ul>` : ''}
${list(deep.sources).length ? html`<h3>Sources</h3><ul>${list(deep.sources).map((s) => { const x = s as Json; return html`<li>${text(x.citation)}${x.author ? html`, ${text(x.author)}` : ''}${x.year ? html` (${text(x.year)})` : ''}${safeUrl(x.url) ? html` <a href="${safeUrl(x.url)}" rel="noopener noreferrer nofollow">${x.url}</a>` : typeof x.url === 'string' ? html` <code>${x.url}</code>` : ''}</li>`; })}</ul>` : ''}`
  : html`<p class="muted">The deep level (definitions, examples, edge cases, sources) is at <a href="${treeUrl(path)}?level=deep">deep</a>.</p>`}
${list(b.related).length ? html`<h3>Related</h3><ul>${list(b.related).map((r) => html`<li>${text(r)}</li>`)}</ul>` : ''}`;
}

function capabilityContent(p: Json): Html {
  const recipe = p.recipe;
  return html`${facts([
    ['Trigger', text(p.trigger)],
    ['Alternative', text(p.alternative)],
    ['Cost', text(p.cost)],
    ['When not', text(p.whenNot)],
  ])}<h3>Recipe</h3>${Array.isArray(recipe) ? html`<ol>${recipe.map((s) => html`<li>${text(s)}</li>`)}</ol>` : html`<p class="pre">${text(recipe)}</p>`}`;
}

function decisionContent(n: NodeView, targets: Record<string, string | null>): Html {
  const p = n.payload ?? {};
  const inputs = list(p.inputsRequired).map(String);
  const branches = (n.branches ?? []).map((b) => ({ ...b, toKind: targets[b.to] ?? null }));
  return html`<p class="question"><strong>${text(p.question)}</strong></p>
<figure>${decisionGraph(text(p.question), branches)}<figcaption>The branches of this decision and where each leads; the table below says the same.</figcaption></figure>
<table><caption>Branches</caption><thead><tr><th scope="col">branch</th><th scope="col">condition (JSON Logic)</th><th scope="col">leads to</th><th scope="col">prior</th></tr></thead><tbody>
${branches.map((b) => html`<tr><td><code>${b.id}</code></td><td><code class="wrap">${typeof b.condition === 'boolean' ? String(b.condition) : JSON.stringify(b.condition)}</code></td><td>${b.toKind ? nodeLink(b.to) : html`<code>${b.to}</code>`} ${b.toKind ? badge(b.toKind, 'kind') : ''}</td><td>${b.priors ?? '—'}</td></tr>`)}
</tbody></table>
<h3 id="traverse">Walk it</h3>
<form class="traverse" action="/explore/traverse" method="post">
<input type="hidden" name="path" value="${n.path}">
${inputs.length ? inputs.map((name) => html`<p><label for="in-${name}">${name}</label> <input id="in-${name}" name="in.${name}" required maxlength="500"> <span class="muted small">a number, true or false, or text</span></p>`) : html`<p class="muted">This graph reads no input.</p>`}
<p><button type="submit">Traverse</button> <span class="muted small">The node walks every branch whose condition holds (POST /api/knowledge/dg/traverse).</span></p>
</form>`;
}

function artifactContent(n: NodeView): Html {
  const p = n.payload ?? {};
  const prov = (p.provenance ?? {}) as Json;
  const v = n.sha256Verification;
  const evals = n.independentEvals ?? [];
  const summary = n.evalSummary;
  return html`${facts([
    ['URI', typeof p.uri === 'string' && p.uri.startsWith('/api/cas/') ? html`<a href="${p.uri}">${p.uri}</a>` : code(text(p.uri))],
    ['Media type', text(p.mediaType)],
    ['sha256', code(text(p.sha256))],
    ['Bytes', text(p.bytes)],
    ['Kind', text(p.artifactKind)],
    ['Trained by', text(prov.trainedBy)],
    ['On', text(prov.on)],
    ['Framework', text(prov.framework)],
    ['License', text(prov.license)],
    ['Created', typeof prov.createdAt === 'number' ? time(prov.createdAt) : null],
    ["Proposer's metrics", Object.entries((prov.metrics ?? {}) as Json).map(([k, x]) => html`<code>${k}</code> ${text(x)} `)],
  ])}
${v ? html`<p class="sha">${badge(v.status)} ${v.note} <span class="muted small">(${v.method})</span></p>` : ''}
<h3>Independent evals</h3>
${evals.length
  ? html`<table><caption class="sr">Independent evals</caption><thead><tr><th scope="col">metric</th><th scope="col">score</th><th scope="col">runner</th><th scope="col">dataset</th><th scope="col">proposal</th><th scope="col">published</th></tr></thead><tbody>
${evals.map((e) => html`<tr><td><code>${text(e.metric)}</code></td><td>${text(e.score)}</td><td>${text(e.runner)}</td><td>${hash(text(e.datasetSha256))}</td><td>${proposalLink(text(e.proposalId))}</td><td>${time(e.publishedAt as number)}</td></tr>`)}
</tbody></table>
${summary ? html`<p>${summary.count} eval${summary.count === 1 ? '' : 's'} by ${summary.distinctRunners} runner${summary.distinctRunners === 1 ? '' : 's'}: ${Object.entries(summary.byMetric).map(([m, s]) => html`<code>${m}</code> mean ${s.mean} (min ${s.min}, max ${s.max}) `)}</p>` : ''}
${evals.every((e) => typeof e.score === 'number' && e.score >= 0 && e.score <= 1) ? html`<figure>${histogram(evals.map((e) => e.score as number), 'Eval scores')}<figcaption>Eval scores</figcaption></figure>` : ''}`
  : html`<p class="muted">No independent eval of these bytes yet.</p>`}`;
}

export function treePage(d: TreeData, assets: Assets): string {
  const n = d.node;
  const content =
    n.kind === 'leaf-brief' && n.brief
      ? briefContent(n.brief, d.level, n.path)
      : n.kind === 'leaf-capability'
        ? capabilityContent(n.payload ?? {})
        : n.kind === 'leaf-decision'
          ? decisionContent(n, d.targets)
          : n.kind === 'leaf-artifact'
            ? artifactContent(n)
            : html``;
  const children = n.children ?? [];
  const body = html`
${breadcrumbs(n.path)}
<h1>${n.title} ${badge(n.kind, 'kind')}</h1>
${n.spec ? html`<p class="lede">${n.spec}</p>` : ''}
<p class="muted small">${n.path} · version ${n.version}${d.versionAsked ? html` (an earlier version; <a href="${treeUrl(n.path)}">the current one</a>)` : ''}${n.version > 1 && !d.versionAsked ? html` · earlier: ${Array.from({ length: Math.min(n.version - 1, 10) }, (_, i) => n.version - 1 - i).map((v) => html`<a href="${treeUrl(n.path)}${qs({ version: v })}">v${v}</a> `)}` : ''}${n.refinedAt ? html` · spec sharpened ${n.refinedAt}` : ''}</p>
${content}
${children.length
  ? html`<section aria-labelledby="children"><h2 id="children">Children</h2>
${d.shape.length > 1 ? html`<figure>${treeShape(n.path, d.shape)}<figcaption>The shape of the tree below: each child and how many children it has.</figcaption></figure>` : ''}
<ul class="children">${children.map((c) => html`<li>${nodeLink(c)}</li>`)}</ul>
${n.childrenNextCursor ? html`<p><a href="${treeUrl(n.path)}${qs({ cursor: n.childrenNextCursor })}" rel="next">More children →</a></p>` : ''}</section>`
  : n.kind === 'branch'
    ? html`<p class="muted">Nothing is published under this branch yet.</p>`
    : ''}
${n.proposalId
  ? html`<section aria-labelledby="evidence"><h2 id="evidence">Evidence</h2>
${facts([
  ['Published by', proposalLink(n.proposalId)],
  ['Published', time(n.publishedAt ?? null)],
  ['Judgments', verifyState(html`data-verify-bundle="${n.proposalId}"`, 'judges, credentials, log')],
  ['Manifest', n.manifest ? html`${code(`HMAC-SHA256 ${text(n.manifest.signingKeyId)}: ${text(n.manifest.signature)}`)} <span class="v" data-state="node">needs the node: an HMAC only the node can check (akas verify manifest asks it)</span>` : null],
])}
<p class="muted small">The judgments are checked against the proposal's bundle (<a href="/api/knowledge/proposals/${n.proposalId}/bundle">download it</a>): each judge's signature, each credential under the pinned issuer, each judgment's entry in the log under the pinned log key.</p>
</section>`
  : ''}
<p class="muted small">The same as JSON: <a href="/api/knowledge/node${n.path === '/' ? '' : n.path}">/api/knowledge/node${n.path === '/' ? '' : n.path}</a></p>`;
  return page({ title: n.path === '/' ? 'Knowledge' : n.title, section: 'tree', assets, body });
}
