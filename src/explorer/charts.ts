// Pictures where they help, drawn on the server as SVG (no script, no style attribute: the
// explorer's CSP allows neither; colours come from the stylesheet's classes, so both themes
// apply). Each picture has a text alternative, and the numbers it draws are also in the page.
import { escapeText, html, raw, type Html } from './html.js';

const f2 = (n: number) => (Math.round(n * 100) / 100).toString();

/** A histogram of values in [0, 1], in `bins` equal bins. */
export function histogram(values: number[], label: string, bins = 10): Html {
  const counts = new Array<number>(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.max(0, Math.floor(v * bins)))] += 1;
  const max = Math.max(1, ...counts);
  const W = 300;
  const H = 110;
  const bw = W / bins;
  const bars = counts
    .map((c, i) => {
      const h = Math.round((c / max) * 80);
      return (
        `<rect class="bar" x="${f2(i * bw + 1)}" y="${90 - h}" width="${f2(bw - 2)}" height="${h}"><title>${f2(i / bins)}–` +
        `${f2((i + 1) / bins)}: ${c}</title></rect>` +
        (c ? `<text x="${f2(i * bw + bw / 2)}" y="${86 - h}" text-anchor="middle" class="lbl">${c}</text>` : '')
      );
    })
    .join('');
  const axis =
    `<line x1="0" y1="90" x2="${W}" y2="90" class="axis"></line><text x="0" y="104" class="lbl">0</text><text x="${W / 2}" ` +
    `y="104" text-anchor="middle" class="lbl">0.5</text><text x="${W}" y="104" text-anchor="end" class="lbl">1</text>`;
  const alt = `${label}: ${
    counts
      .map((c, i) => `${f2(i / bins)}–${f2((i + 1) / bins)} ${c}`)
      .filter((_, i) => counts[i])
      .join(', ') || 'no values'
  }`;
  return raw(`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeText(alt)}"><title>${escapeText(label)}</title>${bars}${axis}</svg>`);
}

/** A line of (time, value) points, such as the log's size at each checkpoint. */
export function growth(points: Array<{ at: number; size: number }>, label: string): Html {
  if (points.length < 2) return html`<p class="muted">Not enough checkpoints yet to draw the log's growth.</p>`;
  const W = 600;
  const H = 160;
  const xs = points.map((p) => p.at);
  const ys = points.map((p) => p.size);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const [y0, y1] = [0, Math.max(...ys, 1)];
  const X = (x: number) => 40 + ((x - x0) / Math.max(1, x1 - x0)) * (W - 50);
  const Y = (y: number) => H - 25 - ((y - y0) / (y1 - y0)) * (H - 40);
  const d = points.map((p, i) => `${i ? 'L' : 'M'}${f2(X(p.at))},${f2(Y(p.size))}`).join(' ');
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
  const alt = `${label}: from ${points[0].size} entries at ${iso(x0)} to ${points[points.length - 1].size} at ${iso(x1)}, ${points.length} checkpoints`;
  return raw(
    `<svg class="chart wide" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeText(alt)}"><title>${escapeText(label)}</title>` +
      `<line x1="40" y1="${H - 25}" x2="${W - 10}" y2="${H - 25}" class="axis"></line><line x1="40" y1="10" x2="40" y2="${H - 25}" class="axis"></line>` +
      `<text x="36" y="18" text-anchor="end" class="lbl">${y1}</text><text x="36" y="${H - 25}" text-anchor="end" class="lbl">0</text>` +
      `<text x="40" y="${H - 8}" class="lbl">${escapeText(iso(x0))}</text><text x="${W - 10}" y="${H - 8}" text-anchor="end" class="lbl">` +
      `${escapeText(iso(x1))}</text>` +
      `<path d="${d}" class="line"></path>` +
      points
        .map(
          (p) => `<circle cx="${f2(X(p.at))}" cy="${f2(Y(p.size))}" r="2.5" class="dot"><title>${p.size} entries at ${escapeText(iso(p.at))}</title></circle>`,
        )
        .join('') +
      `</svg>`,
  );
}

export interface GraphBranch {
  id: string;
  condition: unknown;
  to: string;
  priors?: number | null;
  /** What is published at `to` (its explorer link), when something is. */
  toKind?: string | null;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** A decision graph's node as a picture: the question on top, an edge per branch (its id and condition) to where it leads. */
export function decisionGraph(question: string, branches: GraphBranch[]): Html {
  const n = Math.max(1, branches.length);
  const colW = 170;
  const W = Math.max(360, n * colW + 20);
  const H = 210;
  const rootX = W / 2;
  const parts: string[] = [];
  parts.push(
    `<rect x="${f2(rootX - 160)}" y="8" width="320" height="40" rx="6" class="gnode root"></rect><text x="${f2(rootX)}" y="33" ` +
      `text-anchor="middle" class="gq">${escapeText(clip(question, 48))}</text>`,
  );
  branches.forEach((b, i) => {
    const cx = 10 + colW * i + colW / 2 + (W - 20 - n * colW) / 2;
    const cond = typeof b.condition === 'boolean' ? String(b.condition) : JSON.stringify(b.condition);
    parts.push(`<path d="M${f2(rootX)},48 C${f2(rootX)},100 ${f2(cx)},100 ${f2(cx)},148" class="edge"></path>`);
    parts.push(
      `<text x="${f2(cx)}" y="118" text-anchor="middle" class="lbl"><tspan class="bid">${escapeText(clip(b.id, 22))}</tspan>` +
        `${b.priors != null ? ` (${f2(b.priors)})` : ''}</text>`,
    );
    parts.push(`<text x="${f2(cx)}" y="132" text-anchor="middle" class="lbl cond">${escapeText(clip(cond, 26))}</text>`);
    const box =
      `<rect x="${f2(cx - colW / 2 + 6)}" y="150" width="${colW - 12}" height="34" rx="6" class="gnode${b.toKind ? ' pub' : ''}` +
      `"></rect><text x="${f2(cx)}" y="171" text-anchor="middle" class="gt">${escapeText(clip(b.to, 24))}</text>`;
    parts.push(box);
  });
  const alt = `Decision graph: ${question} — ${branches.map((b) => `${b.id} leads to ${b.to}`).join('; ')}`;
  return raw(`<svg class="chart graph" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeText(alt)}">${parts.join('')}</svg>`);
}

/** The shape of the tree under a node: the node, its children, and how many children each has. */
export function treeShape(path: string, children: Array<{ path: string; count: number; more: boolean }>): Html {
  if (!children.length) return html``;
  const rowH = 22;
  const H = children.length * rowH + 10;
  const W = 600;
  const max = Math.max(1, ...children.map((c) => c.count));
  const rows = children
    .map((c, i) => {
      const y = 5 + i * rowH;
      const w = Math.round((c.count / max) * 200);
      const name = c.path.split('/').pop() ?? c.path;
      return (
        `<path d="M10,${H / 2} C60,${H / 2} 60,${y + 11} 110,${y + 11}" class="edge"></path>` +
        `<text x="116" y="${y + 15}" class="gt">${escapeText(clip(name, 36))}</text>` +
        `<rect x="380" y="${y + 5}" width="${Math.max(w, c.count ? 2 : 0)}" height="12" rx="2" class="bar"></rect><text x="${386 + w}" y="` +
        `${y + 15}" class="lbl">${c.count}${c.more ? '+' : ''}</text>`
      );
    })
    .join('');
  const alt = `The tree under ${path}: ${children.map((c) => `${c.path} with ${c.count}${c.more ? ' or more' : ''} children`).join(', ')}`;
  return raw(
    `<svg class="chart wide" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeText(alt)}"><circle cx="10" cy="${H / 2}" r="4" ` +
      `class="dot"></circle>${rows}</svg>`,
  );
}
