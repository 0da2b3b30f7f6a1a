// Escaping by construction: every page is built with the `html` template tag, which escapes each
// interpolated value unless it is itself the output of `html` (or of `raw`, for the few fragments
// the explorer makes itself, such as its SVG charts). Arrays are joined, and null, undefined and
// false render as nothing, so `${cond && html`...`}` reads as it should.

/** HTML that is safe to insert as it is (built by `html`, or vouched for by `raw`). */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for element content and quoted attribute values. */
export const escapeText = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeText(String(value));
}

/** The template tag of every page: interpolations are escaped unless they are Html. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** Marks a fragment the explorer built itself (never user data) as HTML. */
export const raw = (s: string): Html => new Html(s);

/** Joins fragments with a separator (escaped like any value). */
export const join = (parts: unknown[], sep: unknown): Html => html`${parts.flatMap((p, i) => (i ? [sep, p] : [p]))}`;

/** A URL fit for an href: http(s) only (never javascript: or data:), or null. */
export const safeUrl = (u: unknown): string | null => (typeof u === 'string' && /^https?:\/\/[^\s]+$/i.test(u) ? u : null);
