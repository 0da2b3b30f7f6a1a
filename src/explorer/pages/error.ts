// A refusal or a fault, as a page for a browser (API callers get PROTOCOL 1.3's envelope).
import { html } from '../html.js';
import { page, type Assets, type Section } from '../layout.js';

export function errorPage(
  status: number,
  message: string,
  errors: Array<{ field: string; reason: string }>,
  assets: Assets,
  section: Section = 'home',
): string {
  const title = status === 404 ? 'Not found' : status === 429 ? 'Too many requests' : status >= 500 ? 'Something failed' : 'Not understood';
  const body = html`<h1>${title}</h1><p>${message}</p>\
${errors.length ? html`<ul>${errors.map((e) => html`<li><code>${e.field}</code>: ${e.reason}</li>`)}</ul>` : ''}<p><a href="/">Home</a> · \
<a href="/explore/tree">Knowledge</a> · <a href="/explore/search">Search</a></p>`;
  return page({ title, section, assets, body });
}
