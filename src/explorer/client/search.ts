// Search as you type: the search box's matches from the API's search, the words marked, arrow
// keys to move through them.
import { $, $$, el, getJson, link } from './dom.js';

function markWords(text: string, words: string[]): DocumentFragment {
  const frag = document.createDocumentFragment();
  const ws = [...new Set(words.filter((w) => w.length > 1))].sort((a, b) => b.length - a.length);
  if (!ws.length) {
    frag.append(text);
    return frag;
  }
  const re = new RegExp(`(${ws.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'giu');
  for (const [i, part] of text.split(re).entries()) frag.append(i % 2 ? el('mark', {}, part) : part);
  return frag;
}

export function liveSearch(input: HTMLInputElement) {
  let box = input.id === 'q' ? $('#suggest') : null;
  if (!box) {
    box = el('div', { class: 'suggest', hidden: '' });
    input.parentElement?.classList.add('search');
    input.after(box);
  }
  const list = box;
  list.id ||= `suggest-${input.id}`;
  const status = el('p', { class: 'sr', 'aria-live': 'polite' });
  list.before(status);
  let timer: number | undefined;
  let asked = 0;
  const close = () => {
    list.hidden = true;
  };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    const q = input.value.trim();
    if (!q) return close();
    timer = window.setTimeout(async () => {
      const mine = ++asked;
      try {
        const r = await getJson<{ items: Array<{ path: string; kind: string; title: string; match: Record<string, string[]> }>; total: number }>(
          `/api/knowledge/search?q=${encodeURIComponent(q)}&limit=8`,
        );
        if (mine !== asked) return;
        list.replaceChildren(
          ...r.items.map((h) => {
            const words = Object.values(h.match).flat();
            const a = el(
              'a',
              { href: h.path === '/' ? '/explore/tree' : `/explore/tree${h.path}` },
              markWords(h.title, words),
              ' ',
              el('span', { class: 'badge' }, h.kind),
              el('br'),
              el('code', { class: 'small' }, markWords(h.path, words)),
            );
            return a;
          }),
        );
        if (r.total > r.items.length) list.append(link(`/explore/search?q=${encodeURIComponent(q)}`, `All ${r.total} matches →`));
        status.textContent = r.total ? `${r.total} matches` : 'No match';
        list.hidden = r.items.length === 0;
      } catch {
        close();
      }
    }, 120);
  });
  const move = (dir: number) => {
    const links = $$<HTMLAnchorElement>('a', list);
    if (!links.length || list.hidden) return;
    const at = links.indexOf(document.activeElement as HTMLAnchorElement);
    const next = at === -1 ? (dir > 0 ? 0 : links.length - 1) : at + dir;
    if (next < 0 || next >= links.length) return input.focus();
    links[next].focus();
  };
  for (const target of [input, list]) {
    target.addEventListener('keydown', (ev) => {
      const k = (ev as KeyboardEvent).key;
      if (k === 'ArrowDown' || k === 'ArrowUp') {
        ev.preventDefault();
        move(k === 'ArrowDown' ? 1 : -1);
      } else if (k === 'Escape') {
        close();
        input.focus();
      }
    });
  }
  document.addEventListener('click', (ev) => {
    if (!list.contains(ev.target as Node) && ev.target !== input) close();
  });
}
