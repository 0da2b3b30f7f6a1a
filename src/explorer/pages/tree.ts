// Knowledge: a node of the published tree as GET /api/knowledge/node/{path} answers it, with its
// breadcrumbs and children, its content by kind (a brief at its three levels, a capability, a
// decision graph drawn and a form to walk it, an artifact with its evals) and its evidence.
// Each served value shown is marked with its place in the node read (data-field, a JSON
// Pointer): the page script fetches the same read, checks it against its evidence with the
// verifier's verifyNode (PROTOCOL 10.7), and holds every marked text against it, so that what
// the reader sees is what was checked.
import { histogram, decisionGraph, treeShape, type GraphBranch } from '../charts.js';
import { html, safeUrl, type Html } from '../html.js';
import { badge, breadcrumbs, code, entryLink, facts, hash, nodeLink, page, proposalLink, qs, time, treeUrl, verifyState, type Assets } from '../layout.js';

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
  evidence?: Json;
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
  /** The API read this page shows (its URL): the page script fetches and checks the same one. */
  read: string;
}

const text = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const ptr = (...parts: Array<string | number>) => parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * A served value shown on the page, marked with its JSON Pointer in the node read (no leading
 * slash): its text is the value (a string) or its JSON. Nothing is marked when nothing was served.
 */
function field(at: string, v: unknown, shown: unknown = text(v)): Html {
  if (v === undefined || v === null) return html``;
  return html`<span data-field="${at}">${shown}</span>`;
}

function briefContent(b: Json, level: string, path: string): Html {
  const levels = (b.levels ?? {}) as Json;
  const deep = (levels.deep ?? {}) as Json;
  const f = (v: unknown, ...at: Array<string | number>) => field(ptr('brief', ...at), v);
  const d = (v: unknown, ...at: Array<string | number>) => field(ptr('brief', 'levels', 'deep', ...at), v);
  const tabs = ['tldr', 'core', 'deep'].map((l) =>
    l === level
      ? html`<li><a aria-current="true" href="${treeUrl(path)}${qs({ level: l })}">${l}</a></li>`
      : html`<li><a href="${treeUrl(path)}${qs({ level: l })}">${l}</a></li>`,
  );
  return html`<nav class="tabs" aria-label="Brief level"><ul>${tabs}</ul></nav>
${facts([
  ['Brief', html`<code class="wrap">${f(b.id, 'id')}</code>`],
  ['Domain', f(b.domain, 'domain')],
  ['Topic', f(b.topic, 'topic')],
  ['Version', f(b.version, 'version')],
  ['Verified by', list(b.verifiedBy).length ? list(b.verifiedBy).map((v, i) => html`${i ? ', ' : ''}${f(v, 'verifiedBy', i)}`) : null],
])}
<h3>In short</h3><p class="tldr">${f(levels.tldr, 'levels', 'tldr')}</p>
${list(levels.core).length ? html`<h3>Core</h3><ol class="core">${list(levels.core).map((c, i) => html`<li>${f(c, 'levels', 'core', i)}</li>`)}</ol>` : ''}
${list(b.pitfalls).length ? html`<h3>Pitfalls</h3><ul>${list(b.pitfalls).map((c, i) => html`<li>${f(c, 'pitfalls', i)}</li>`)}</ul>` : ''}
${list(b.heuristics).length ? html`<h3>Heuristics</h3><ul>${list(b.heuristics).map((c, i) => html`<li>${f(c, 'heuristics', i)}</li>`)}</ul>` : ''}
${
  list(b.disputes).length
    ? html`<h3>Disputes</h3><ul>${list(b.disputes).map((x, i) => {
        const positions = list((x as Json).positions).map((p, j) => html`<li>${f(p, 'disputes', i, 'positions', j)}</li>`);
        return html`<li>${f((x as Json).claim, 'disputes', i, 'claim')}<ul>${positions}</ul></li>`;
      })}</ul>`
    : ''
}
${
  level === 'deep'
    ? html`${
        Object.keys((deep.definitions ?? {}) as Json).length
          ? html`<h3>Definitions</h3><dl \
class="facts">${Object.entries((deep.definitions ?? {}) as Json).map(([k, v]) => html`<dt>${k}</dt><dd>${d(v, 'definitions', k)}</dd>`)}</dl>`
          : ''
      }
${
  list(deep.examples).length
    ? html`<h3>Examples</h3>${list(deep.examples).map(
        (e, i) => html`<div class="example">\
<p><strong>Violation:</strong> ${d((e as Json).violation, 'examples', i, 'violation')}</p>\
<p><strong>Fix:</strong> ${d((e as Json).fix, 'examples', i, 'fix')}</p>${
          (e as Json).note
            ? html`<p \
class="muted">${d((e as Json).note, 'examples', i, 'note')}</p>`
            : ''
        }</div>`,
      )}`
    : ''
}
${list(deep.edgeCases).length ? html`<h3>Edge cases</h3><ul>${list(deep.edgeCases).map((c, i) => html`<li>${d(c, 'edgeCases', i)}</li>`)}</ul>` : ''}
${
  list(deep.sources).length
    ? html`<h3>Sources</h3><ul>${list(deep.sources).map((s, i) => {
        const x = s as Json;
        const author = x.author ? html`, ${d(x.author, 'sources', i, 'author')}` : '';
        const year = x.year ? html` (${d(x.year, 'sources', i, 'year')})` : '';
        const url = safeUrl(x.url)
          ? html` <a href="${safeUrl(x.url)}" rel="noopener noreferrer nofollow">${d(x.url, 'sources', i, 'url')}</a>`
          : typeof x.url === 'string'
            ? html` <code>${d(x.url, 'sources', i, 'url')}</code>`
            : '';
        return html`<li>${d(x.citation, 'sources', i, 'citation')}${author}${year}${url}</li>`;
      })}</ul>`
    : ''
}`
    : html`<p class="muted">The deep level (definitions, examples, edge cases, sources) is at <a href="${treeUrl(path)}?level=deep">deep</a>.</p>`
}
${list(b.related).length ? html`<h3>Related</h3><ul>${list(b.related).map((r, i) => html`<li>${f(r, 'related', i)}</li>`)}</ul>` : ''}`;
}

function capabilityContent(p: Json): Html {
  const recipe = p.recipe;
  const f = (v: unknown, ...at: Array<string | number>) => field(ptr('payload', ...at), v);
  return html`${facts([
    ['Trigger', f(p.trigger, 'trigger')],
    ['Alternative', f(p.alternative, 'alternative')],
    ['Cost', f(p.cost, 'cost')],
    ['When not', f(p.whenNot, 'whenNot')],
  ])}<h3>Recipe</h3>${
    Array.isArray(recipe)
      ? html`<ol>${recipe.map((s, i) => html`<li>${f(s, 'recipe', i)}</li>`)}</ol>`
      : html`<p \
class="pre">${f(recipe, 'recipe')}</p>`
  }`;
}

function decisionContent(n: NodeView, targets: Record<string, string | null>): Html {
  const p = n.payload ?? {};
  const inputs = list(p.inputsRequired).map(String);
  const branches = (n.branches ?? []).map((b) => ({ ...b, toKind: targets[b.to] ?? null }));
  const served = list(p.branches) as Json[];
  const f = (v: unknown, shown: unknown, ...at: Array<string | number>) => field(ptr('payload', ...at), v, shown);
  return html`<p class="question"><strong>${f(p.question, text(p.question), 'question')}</strong></p>
<figure>${decisionGraph(text(p.question), branches)}<figcaption>The branches of this decision and where each leads; the table below says \
the same.</figcaption></figure>
<table><caption>Branches</caption><thead><tr><th scope="col">branch</th><th scope="col">condition (JSON Logic)</th><th scope="col">leads \
to</th><th scope="col">prior</th></tr></thead><tbody>
${branches.map((b, i) => {
  const condition = typeof b.condition === 'boolean' ? String(b.condition) : JSON.stringify(b.condition);
  const to = f(served[i]?.to, b.toKind ? nodeLink(b.to) : html`<code>${b.to}</code>`, 'branches', i, 'to');
  const prior = served[i]?.priors !== undefined ? f(served[i].priors, text(served[i].priors), 'branches', i, 'priors') : (b.priors ?? '—');
  const cells = html`<td><code class="wrap">${f(served[i]?.condition, condition, 'branches', i, 'condition')}</code></td>\
<td>${to} ${b.toKind ? badge(b.toKind, 'kind') : ''}</td>`;
  return html`<tr><td>${f(served[i]?.id, html`<code>${b.id}</code>`, 'branches', i, 'id')}</td>${cells}<td>${prior}</td></tr>`;
})}
</tbody></table>
<h3 id="traverse">Walk it</h3>
<form class="traverse" action="/explore/traverse" method="post">
<input type="hidden" name="path" value="${n.path}">
${
  inputs.length
    ? inputs.map(
        (name, i) => html`<p><label for="in-${name}">${f(list(p.inputsRequired)[i], name, 'inputsRequired', i)}</label>\
 <input id="in-${name}" name="in.${name}" required maxlength="500"> <span class="muted small">a number, true or false, or \
text</span></p>`,
      )
    : html`<p class="muted">This graph reads no input.</p>`
}
<p><button type="submit">Traverse</button> <span class="muted small">The node walks every branch whose condition holds (POST \
/api/knowledge/dg/traverse).</span></p>
</form>`;
}

function artifactContent(n: NodeView): Html {
  const p = n.payload ?? {};
  const prov = (p.provenance ?? {}) as Json;
  const v = n.sha256Verification;
  const evals = n.independentEvals ?? [];
  const summary = n.evalSummary;
  const f = (v: unknown, ...at: Array<string | number>) => field(ptr('payload', ...at), v);
  return html`${facts([
    [
      'URI',
      typeof p.uri === 'string' && p.uri.startsWith('/api/cas/')
        ? html`<a href="${p.uri}">${f(p.uri, 'uri')}</a>`
        : html`<code class="wrap">${f(p.uri, 'uri')}</code>`,
    ],
    ['Media type', f(p.mediaType, 'mediaType')],
    ['sha256', html`<code class="wrap">${f(p.sha256, 'sha256')}</code>`],
    [
      'Log entries',
      typeof p.sha256 === 'string' && /^[0-9a-f]{64}$/.test(p.sha256)
        ? verifyState(html`data-verify-lookup="sha256:${p.sha256}"`, 'every entry about these bytes (the verifiable index)')
        : null,
    ],
    ['Bytes', f(p.bytes, 'bytes')],
    ['Kind', f(p.artifactKind, 'artifactKind')],
    ['Trained by', f(prov.trainedBy, 'provenance', 'trainedBy')],
    ['On', f(prov.on, 'provenance', 'on')],
    ['Framework', f(prov.framework, 'provenance', 'framework')],
    ['License', f(prov.license, 'provenance', 'license')],
    ['Created', typeof prov.createdAt === 'number' ? time(prov.createdAt) : null],
    ["Proposer's metrics", Object.entries((prov.metrics ?? {}) as Json).map(([k, x]) => html`<code>${k}</code> ${f(x, 'provenance', 'metrics', k)} `)],
  ])}
${v ? html`<p class="sha">${badge(v.status)} ${v.note} <span class="muted small">(${v.method})</span></p>` : ''}
<h3>Independent evals</h3>
<p>${verifyState(html`data-verify-evals="${n.path}"`, 'every eval the log records of these bytes, as recorded')}</p>
${
  evals.length
    ? html`<table><caption class="sr">Independent evals</caption><thead><tr><th scope="col">metric</th><th scope="col">score</th><th \
scope="col">runner</th><th scope="col">dataset</th><th scope="col">proposal</th><th scope="col">published</th></tr></thead><tbody>
${evals.map((e, i) => {
  // Each row names its eval, and its served values are marked: the page script holds both to the read it checks.
  const g = (v: unknown, name: string) => field(ptr('independentEvals', i, name), v);
  return html`<tr data-eval="${text(e.proposalId)}"><td><code>${g(e.metric, 'metric')}</code></td><td>${g(e.score, 'score')}</td>\
<td>${g(e.runner, 'runner')}</td><td>${hash(text(e.datasetSha256))}</td><td>${proposalLink(text(e.proposalId))}</td>\
<td>${time(e.publishedAt as number)}</td></tr>`;
})}
</tbody></table>
${
  summary
    ? html`<p>${summary.count} eval${summary.count === 1 ? '' : 's'} by ${summary.distinctRunners} \
runner${summary.distinctRunners === 1 ? '' : 's'}: ${Object.entries(summary.byMetric).map(
        ([m, s]) => html`<code>${m}</code> mean ${s.mean} \
(min ${s.min}, max ${s.max}) `,
      )}</p>`
    : ''
}
${
  evals.every((e) => typeof e.score === 'number' && e.score >= 0 && e.score <= 1)
    ? html`<figure>${histogram(
        evals.map((e) => e.score as number),
        'Eval scores',
      )}<figcaption>Eval scores</figcaption></figure>`
    : ''
}`
    : html`<p class="muted">No independent eval of these bytes yet.</p>`
}`;
}

/** The evidence of a read (PROTOCOL 10.7) as facts, and the state the page script fills in with verifyNode's verdict. */
function evidenceFacts(n: NodeView, read: string): Array<[string, unknown]> {
  const ev = n.evidence;
  const check: [string, unknown] = ['Checked here', verifyState(html`data-verify-node="${read}"`, 'what is served is what was judged')];
  if (!ev) return [['Content', html`<span class="muted">no evidence served with this read</span>`], check];
  const pub = (ev.publication ?? null) as Json | null;
  const inclusion = (pub?.inclusion ?? {}) as Json;
  const sig = (n.manifest?.nodeSignature ?? null) as Json | null;
  return [
    ['Publishing proposal', ev.proposalId !== n.proposalId ? proposalLink(text(ev.proposalId)) : null],
    [
      'Content',
      html`<code class="wrap" data-evidence="contentSha256">${text(ev.contentSha256)}</code><br><span class="muted small">contentSha256 of \
the ${text(ev.kind)} proposal that published it; ${
        ev.contentBinding === 'store' ? "stored before content binding: bound by the node's " + 'store, not by the log' : 'bound by the log'
      }</span>`,
    ],
    [
      'Publication',
      pub
        ? html`${entryLink(text(pub.id))} (<code>proposal.published</code>), leaf ${text(inclusion.index)} of a tree of ${text(inclusion.size)}
<details><summary>Inclusion proof and signed checkpoint</summary><ol class="proof">${list(inclusion.proof).map(
            (h) => html`<li><code \
class="wrap">${text(h)}</code></li>`,
          )}</ol><pre class="note">${text(pub.checkpoint)}</pre></details>`
        : html`<span class="muted">not in the log yet (the appender adds it shortly)</span>`,
    ],
    [
      'Manifest signature',
      sig ? html`Ed25519 by <code class="wrap">${text(sig.issuer)}</code><br><code class="wrap small">${text(sig.signature)}</code>` : null,
    ],
    check,
  ];
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
<h1>${field('title', n.title)} ${badge(n.kind, 'kind')}</h1>
${n.spec ? html`<p class="lede">${field('spec', n.spec)}</p>` : ''}
<p class="muted small">${field('path', n.path)} · version ${n.version}${
    d.versionAsked
      ? html` (an earlier version; <a \
href="${treeUrl(n.path)}">the current one</a>)`
      : ''
  }${
    n.version > 1 && !d.versionAsked
      ? html` · \
earlier: ${Array.from({ length: Math.min(n.version - 1, 10) }, (_, i) => n.version - 1 - i).map(
          (v) => html`<a \
href="${treeUrl(n.path)}${qs({ version: v })}">v${v}</a> `,
        )}`
      : ''
  }${n.refinedAt ? html` · spec sharpened ${n.refinedAt}` : ''}</p>
${content}
${
  children.length
    ? html`<section aria-labelledby="children"><h2 id="children">Children</h2>
${
  d.shape.length > 1
    ? html`<figure>${treeShape(n.path, d.shape)}<figcaption>The shape of the tree below: each child and how many children \
it has.</figcaption></figure>`
    : ''
}
<ul class="children">${children.map((c) => html`<li>${nodeLink(c)}</li>`)}</ul>
${n.childrenNextCursor ? html`<p><a href="${treeUrl(n.path)}${qs({ cursor: n.childrenNextCursor })}" rel="next">More children →</a></p>` : ''}</section>`
    : n.kind === 'branch'
      ? html`<p class="muted">Nothing is published under this branch yet.</p>`
      : ''
}
${
  n.proposalId
    ? html`<section aria-labelledby="evidence"><h2 id="evidence">Evidence</h2>
${facts([
  ['Published by', proposalLink(n.proposalId)],
  ['Published', time(n.publishedAt ?? null)],
  ...evidenceFacts(n, d.read),
  ['Judgments', verifyState(html`data-verify-bundle="${n.proposalId}"`, 'judges, credentials, log')],
  [
    'Manifest',
    n.manifest
      ? html`${code(`HMAC-SHA256 ${text(n.manifest.signingKeyId)}: ${text(n.manifest.signature)}`)} <span class="v" data-state="node">needs \
the node: an HMAC only the node can check (akas verify manifest asks it)</span>`
      : null,
  ],
])}
<p class="muted small">What is served here is checked in your browser against its evidence, as <code>akas verify node</code> checks a saved \
read: the content shown hashes to the contentSha256 of the proposal that published it (or, for a brief cut to a level, to its manifest, \
which the node signed), the publication event is in the log under a checkpoint signed by the log key this browser pinned, and every text on \
this page is the text checked. The judgments are checked against the proposal's bundle (<a \
href="/api/knowledge/proposals/${n.proposalId}/bundle">download it</a>): each judge's signature, each credential under the pinned issuer, \
each judgment's entry in the log under the pinned log key.</p>
<div data-node-checks></div>
</section>`
    : ''
}
<p class="muted small">The same as JSON: <a \
href="/api/knowledge/node${n.path === '/' ? '' : n.path}">/api/knowledge/node${n.path === '/' ? '' : n.path}</a></p>`;
  return page({ title: n.path === '/' ? 'Knowledge' : n.title, section: 'tree', assets, body });
}
