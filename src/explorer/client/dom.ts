// The small DOM and fetch helpers every part of the page script uses. Everything is built with
// DOM calls and textContent: nothing the node sends is ever parsed as HTML.
export type Json = Record<string, unknown>;

export const $ = <T extends Element = HTMLElement>(sel: string, root: ParentNode = document) => root.querySelector<T>(sel);
export const $$ = <T extends Element = HTMLElement>(sel: string, root: ParentNode = document) => [...root.querySelectorAll<T>(sel)];

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string | null | undefined>
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

export async function getJson<T = Json>(url: string): Promise<T> {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${url.split('?')[0]} answered ${res.status}${res.status === 429 ? ' (too many requests: try again shortly)' : ''}`);
  return (await res.json()) as T;
}

export function link(href: string, text: string, asCode = false): HTMLAnchorElement {
  const a = el('a', { href });
  if (asCode) a.append(el('code', {}, text));
  else a.textContent = text;
  return a;
}
