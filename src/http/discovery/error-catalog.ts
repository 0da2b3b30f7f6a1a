// GET /errors (PROTOCOL 11.3): every code the node answers, from the one registry
// (src/core/errors.ts), with its status, what it means and what to do. Each entry has the
// `type` URI problem+json bodies carry (<origin>/errors#<code>): the id of its row in the page.
import { STATUS_CODES } from 'node:http';
import { ERROR_CODES, type ErrorCode } from '../../core/index.js';
import { escapeHtml, inlineHtml, page } from './html.js';

export interface CatalogEntry {
  code: ErrorCode;
  status: number;
  title: string;
  type: string;
  meaning: string;
  action: string;
}

export const errorTypeUri = (origin: string, code: ErrorCode) => `${origin}/errors#${code}`;

export function errorCatalog(origin: string) {
  const codes: CatalogEntry[] = (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => ({
    code,
    status: ERROR_CODES[code].status,
    title: STATUS_CODES[ERROR_CODES[code].status] ?? 'Error',
    type: errorTypeUri(origin, code),
    meaning: ERROR_CODES[code].doc,
    action: ERROR_CODES[code].action,
  }));
  return {
    url: `${origin}/errors`,
    envelope:
      'Every refusal is JSON: {error, code, hint?, field?, errors[]?, recovery?} plus the facts of the refusal. A 401 adds orientation{}; a ' +
      '429 is application/problem+json with type, title, status, detail, instance and retryAfter.',
    codes,
  };
}

export function errorCatalogPage(origin: string): string {
  const catalog = errorCatalog(origin);
  const rows = catalog.codes
    .map(
      (e) =>
        `<tr id="${e.code}"><td><a href="#${e.code}"><code>${e.code}</code></a></td><td>${e.status} ${escapeHtml(e.title)}</td><td>` +
        `${inlineHtml(e.meaning)}</td><td>${inlineHtml(e.action)}</td></tr>`,
    )
    .join('\n');
  return page(
    'akas error codes',
    `<h1>Error codes</h1>
<p>${inlineHtml(catalog.envelope)} The same catalog as JSON: <code>GET /errors</code> with <code>Accept: application/json</code>.</p>
<table><thead><tr><th>code</th><th>status</th><th>meaning</th><th>what to do</th></tr></thead><tbody>
${rows}
</tbody></table>`,
  );
}
