// Search: GET /api/knowledge/search's hits with their matches highlighted, filtered by kind.
import { html, type Html } from '../html.js';
import { badge, page, qs, treeUrl, type Assets } from '../layout.js';

export interface SearchData {
  q: string;
  kind?: string;
  result: {
    items: Array<{ path: string; kind: string; title: string; score: number; match: Record<string, string[]> }>;
    total: number;
    nextCursor: string | null;
  } | null;
  cursor?: string;
}

export const NODE_KINDS = ['leaf-brief', 'leaf-capability', 'leaf-decision', 'leaf-artifact', 'branch'];

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Text with every occurrence of the words (case-insensitive, at a word start) marked; every piece escaped. */
export function highlight(text: string, words: string[]): Html {
  const ws = [...new Set(words.filter((w) => w.length > 1))].sort((a, b) => b.length - a.length);
  if (!ws.length) return html`${text}`;
  const re = new RegExp(`(${ws.map(escapeRe).join('|')})`, 'giu');
  return html`${text.split(re).map((part, i) => (i % 2 ? html`<mark>${part}</mark>` : part))}`;
}

export function searchPage(d: SearchData, assets: Assets): string {
  const kinds = html`<nav class="filters" aria-label="Kind"><ul>${[undefined, ...NODE_KINDS].map(
    (k) => html`<li><a \
href="/explore/search${qs({ q: d.q, kind: k })}"${k === d.kind ? html` aria-current="true"` : ''}>${k ?? 'all kinds'}</a></li>`,
  )}</ul></nav>`;
  const r = d.result;
  const offset = d.cursor ? Number(d.cursor) : 0;
  const body = html`<h1>Search</h1>
<form class="bigsearch" role="search" action="/explore/search" method="get"><label for="q2">Words to find</label> <input id="q2" name="q" \
type="search" value="${d.q}" maxlength="200" data-live-search><input type="hidden" name="kind" value="${d.kind ?? ''}"> <button \
type="submit">Search</button></form>
${d.q ? kinds : ''}
${
  !d.q
    ? html`<p class="muted">Search titles, paths, specs and briefs (typos tolerated, the last word as a prefix).</p>`
    : r?.items.length
      ? html`<p>${r.total} match${r.total === 1 ? '' : 'es'} for <strong>${d.q}</strong>${d.kind ? html` among ${d.kind}` : ''}.</p>
<ol class="hits" start="${offset + 1}">${r.items.map((h) => {
          const words = Object.values(h.match).flat();
          return html`<li><a href="${treeUrl(h.path)}">${highlight(h.title, words)}</a> ${badge(h.kind, 'kind')}<br><code \
class="small">${highlight(h.path, words)}</code> <span \
class="muted small">matched ${Object.entries(h.match).map(([field, ws]) => matchedIn(field, ws))}</span></li>`;
        })}</ol>
${r.nextCursor ? html`<p><a rel="next" href="/explore/search${qs({ q: d.q, kind: d.kind, cursor: r.nextCursor })}">More results →</a></p>` : ''}`
      : html`<p>No match for <strong>${d.q}</strong>${d.kind ? html` among ${d.kind}` : ''}.</p>`
}`;
  return page({ title: d.q ? `Search: ${d.q}` : 'Search', section: 'search', assets, body, query: d.q });
}

/** The words of a hit found in one field, marked: `<mark>w</mark> in title; `. */
const matchedIn = (field: string, words: string[]) => html`${words.map((w) => html`<mark>${w}</mark> `)}in ${field}; `;
