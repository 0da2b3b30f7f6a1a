// The agent guide (guide.ts) as text (/llms.txt, Markdown as the llms.txt convention has it)
// and as a page (/agent-docs, one anchor per section: /agent-docs#verify).
import { escapeHtml, inlineHtml, page } from './html.js';
import type { Block, Section } from './guide.js';

function blockText(b: Block): string {
  if ('p' in b) return b.p;
  if ('sh' in b) return '```sh\n' + b.sh + '\n```';
  if ('code' in b) return '```' + (b.lang ?? '') + '\n' + b.code + '\n```';
  return b.list.map((item) => `- ${item}`).join('\n');
}

export function guideText(sections: Section[]): string {
  return sections.map((s, i) => [`${i === 0 ? '#' : '##'} ${s.title}`, ...s.blocks.map(blockText)].join('\n\n')).join('\n\n') + '\n';
}

function blockHtml(b: Block): string {
  if ('p' in b) return `<p>${inlineHtml(b.p)}</p>`;
  if ('sh' in b) return `<pre><code class="language-sh">${escapeHtml(b.sh)}</code></pre>`;
  if ('code' in b) return `<pre><code class="language-${escapeHtml(b.lang ?? 'text')}">${escapeHtml(b.code)}</code></pre>`;
  return `<ul>${b.list.map((item) => `<li>${inlineHtml(item)}</li>`).join('')}</ul>`;
}

export function guideHtml(sections: Section[]): string {
  const [first, ...rest] = sections;
  const toc = rest.map((s) => `<li><a href="#${s.id}">${escapeHtml(s.title)}</a></li>`).join('');
  const body = [
    `<h1 id="${first.id}">${escapeHtml(first.title)}</h1>`,
    ...first.blocks.map(blockHtml),
    `<nav><ul>${toc}</ul></nav>`,
    ...rest.map((s) => [`<h2 id="${s.id}">${escapeHtml(s.title)}</h2>`, ...s.blocks.map(blockHtml)].join('\n')),
    '<p>The same text for an LLM: <a href="/llms.txt">/llms.txt</a>.</p>',
  ].join('\n');
  return page(first.title, body);
}
