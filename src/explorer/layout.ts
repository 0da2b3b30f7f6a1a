// The page shell every explorer page shares, and the small pieces pages are built from. A page
// is plain HTML that reads with JavaScript off; the one script (client/main.ts) only adds search
// as you type, live updates and the in-browser verification, finding its work by data-
// attributes. No inline script or style: the explorer's Content-Security-Policy forbids both.
import { html, type Html } from './html.js';
import { nodeStatusWords, type NodeStatus } from './client/status-words.js';

export interface Assets {
  /** URL of the stylesheet (hashed, immutable). */
  css: string;
  /** URL of the page script, or null when the build has none (pages still read without it). */
  js: string | null;
  /** URL of the verifier's browser build, loaded by the page script when something is to be checked. */
  verifier: string | null;
  /** The Subresource Integrity of the stylesheet and the page script, as the build recorded it (the script carries the verifier's). */
  integrity?: { css?: string; js?: string };
}

export type Section = 'home' | 'tree' | 'search' | 'proposals' | 'agents' | 'log' | 'verify';

const NAV: Array<[Section, string, string]> = [
  ['home', '/', 'Home'],
  ['tree', '/explore/tree', 'Knowledge'],
  ['proposals', '/explore/proposals', 'Proposals'],
  ['agents', '/explore/agents', 'Agents'],
  ['log', '/explore/log', 'Log'],
  ['verify', '/explore/verify', 'Verify'],
];

export interface PageOptions {
  title: string;
  section: Section;
  assets: Assets;
  body: Html;
  /** The search box's current query (the search page fills it in). */
  query?: string;
}

/** A whole page: head, header with navigation and search, main content, footer. */
export function page(o: PageOptions): string {
  return (
    '<!doctype html>\n' +
    html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · akas explorer</title>
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${o.assets.css}"${sri(o.assets.integrity?.css)}>
${o.assets.js ? html`<script type="module" src="${o.assets.js}"${sri(o.assets.integrity?.js)}></script>` : ''}
</head><body data-verifier="${o.assets.verifier ?? ''}">
<a class="skip" href="#main">Skip to content</a>
<header class="top"><nav aria-label="Sections"><a class="brand" href="/">akas</a><ul>
${NAV.map(([id, href, label]) => html`<li><a href="${href}"${id === o.section ? html` aria-current="page"` : ''}>${label}</a></li>`)}
</ul></nav>
<form class="search" role="search" action="/explore/search" method="get"><label for="q" class="sr">Search the knowledge tree</label><input \
id="q" name="q" type="search" placeholder="Search knowledge" autocomplete="off" value="${o.query ?? ''}" maxlength="200" \
data-live-search><button type="submit">Search</button><div class="suggest" id="suggest" hidden></div></form>
</header>
<main id="main" tabindex="-1">
${o.body}
</main>
<footer><p>Served by this akas node. Checks marked <span class="v" data-state="ok">verified</span> are computed in your browser by the \
verifier's own build, with the keys this page pinned; what only the node can check (its HMACs) is said so, never shown as verified. <a \
href="/explore/verify">Verify a file</a> · <a href="/agent-docs">Agent docs</a> · <a href="/openapi.json">API</a></p></footer>
</body></html>`.value
  );
}

/** A Subresource Integrity attribute (the browser refuses a file of other bytes), or nothing. */
const sri = (integrity: string | undefined): Html => (integrity ? html` integrity="${integrity}"` : html``);

/** An ISO 8601 time (UTC, to the second) in a <time> element; a dash for none. */
export function time(ms: number | null | undefined): Html {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms <= 0) return html`<span class="muted">—</span>`;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')}Z</time>`;
}

/** A long hash shown short, the whole of it in the title and for copying. */
export function hash(h: string | null | undefined, keep = 12): Html {
  if (!h) return html`<span class="muted">—</span>`;
  return html`<code class="hash" title="${h}">${h.length > keep + 1 ? `${h.slice(0, keep)}…` : h}</code>`;
}

/** A whole value in code, wrapping anywhere (keys, DIDs, notes). */
export const code = (s: string): Html => html`<code class="wrap">${s}</code>`;

export const agentLink = (tag: string | null | undefined): Html =>
  tag ? html`<a href="/explore/agents/${tag}"><code>${tag}</code></a>` : html`<span class="muted">anonymous</span>`;

export const proposalLink = (id: string, text?: string): Html => html`<a href="/explore/proposals/${id}">${text ?? html`<code>${id}</code>`}</a>`;

export const entryLink = (id: string, text?: unknown): Html => html`<a href="/explore/log/${id}">${text ?? html`<code>${id}</code>`}</a>`;

/** The explorer URL of a tree path. */
export const treeUrl = (path: string) => (path === '/' ? '/explore/tree' : `/explore/tree${path}`);

export const nodeLink = (path: string, text?: unknown): Html => html`<a href="${treeUrl(path)}">${text ?? html`<code>${path}</code>`}</a>`;

/** A kind or status as a small label. */
export const badge = (text: string, kind = text): Html => html`<span class="badge b-${kind.replace(/[^a-z0-9-]/gi, '')}">${text}</span>`;

/**
 * A verification state the page script fills in. Without the script it says where the check
 * runs instead, never that something holds.
 */
export function verifyState(attrs: Html, label: unknown = 'verify'): Html {
  return html`<span class="v" data-state="off" ${attrs} aria-live="polite"><span class="v-label">${label}:</span> <span \
class="v-text">checked in your browser (needs JavaScript) or offline with akas verify</span></span>`;
}

/**
 * A judgment credential's status (issue 47), checked by the page script in the lists the node
 * serves. Without the script it says what the node recorded and that it is not checked, never
 * that it holds; with no record given, where the check runs.
 */
export function statusState(judgmentId: string, node: NodeStatus | undefined): Html {
  const said = node ? nodeStatusWords(node) : undefined;
  const text = said
    ? `${said.text}: the node's word, not checked here (your browser checks it with JavaScript; offline: akas verify credential --status)`
    : 'checked in your browser (needs JavaScript) or offline with akas verify credential --status';
  return html`<span class="v" data-state="off" data-verify-status="${judgmentId}" aria-live="polite"><span class="v-label">status:</span> <span \
class="v-text">${text}</span></span>`;
}

/** Breadcrumbs of a tree path: root, each ancestor, the node itself (not a link). */
export function breadcrumbs(path: string): Html {
  const parts = path.split('/').filter(Boolean);
  const crumbs = [html`<li><a href="/explore/tree">root</a></li>`];
  parts.forEach((p, i) => {
    const at = '/' + parts.slice(0, i + 1).join('/');
    crumbs.push(i === parts.length - 1 ? html`<li aria-current="page">${p}</li>` : html`<li><a href="${treeUrl(at)}">${p}</a></li>`);
  });
  return html`<nav aria-label="Breadcrumb" class="crumbs"><ol>${crumbs}</ol></nav>`;
}

/** A definition list of label/value pairs (values that are null or undefined are left out). */
export function facts(rows: Array<[string, unknown]>): Html {
  return html`<dl class="facts">${rows.filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

/** Links to the previous and next pages of a list. */
export function pager(prev: string | null, next: string | null): Html {
  if (!prev && !next) return html``;
  return html`<nav class="pager" aria-label="Pages">${prev ? html`<a href="${prev}" rel="prev">← newer</a>` : ''}${
    next
      ? html`<a \
href="${next}" rel="next">older →</a>`
      : ''
  }</nav>`;
}

/** A query string from parameters, leaving out empty ones. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** A score in [0, 1] as a number and a small bar (SVG: the CSP allows no style attribute). */
export function score(x: number | null | undefined): Html {
  if (typeof x !== 'number') return html`<span class="muted">—</span>`;
  const w = Math.round(Math.max(0, Math.min(1, x)) * 60);
  return html`<span class="score"><svg width="60" height="8" aria-hidden="true" focusable="false"><rect width="60" height="8" rx="2" \
class="track"></rect><rect width="${w}" height="8" rx="2" class="fill"></rect></svg> ${x.toFixed(2)}</span>`;
}
