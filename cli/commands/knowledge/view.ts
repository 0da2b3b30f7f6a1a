// How a knowledge node (PROTOCOL 10.2), a brief (10.3) and a traversal (10.5) read to a person.
// One model per answer (a heading, sections of labelled rows or lines, children), drawn
// either as plain text (stdout not a terminal) or by the ink view (cli/views/node.tsx), so
// both show the same facts. Loaded lazily by the knowledge commands only.

import type { Json } from '../../kit/index.js';

export interface Row {
  label: string;
  value: string;
  /** How the value reads at a glance: good (verified), bad (failed), weak (a claim nobody checked). */
  tone?: 'good' | 'bad' | 'weak';
}

export interface Section {
  title: string;
  /** A short line under the title: where the evidence comes from, how to check it. */
  note?: string;
  rows?: Row[];
  /** Free lines (bullets of a brief, eval entries). */
  lines?: string[];
}

export interface NodeModel {
  path: string;
  kind: string;
  title: string;
  /** version, refinedAt, proposal: the small print of the heading. */
  facts: string[];
  spec: string;
  sections: Section[];
  children: string[];
  /** The command that shows the next page of children, when there is one. */
  more: string | null;
}

const text = (v: unknown): string => (v === null || v === undefined ? '-' : typeof v === 'string' ? v : JSON.stringify(v));
const iso = (ms: unknown) => (typeof ms === 'number' && ms > 0 ? new Date(ms).toISOString() : '-');
const num = (v: unknown) => (typeof v === 'number' ? String(Math.round(v * 1e4) / 1e4) : text(v));

function payloadRows(p: Json, keys: string[]): Row[] {
  return keys.filter((k) => p[k] !== undefined).map((k) => ({ label: k, value: Array.isArray(p[k]) ? p[k].map(text).join('; ') : text(p[k]) }));
}

function manifestSection(m: Json, checkWith: string): Section {
  const rows: Row[] = Object.entries(m)
    .filter(([k]) => !['signature', 'provenance', 'uri', 'mediaType', 'artifactKind', 'artifactPath'].includes(k))
    .map(([k, v]) => ({ label: k, value: k === 'fetchedAt' ? `${iso(v)} (${text(v)})` : text(v) }));
  rows.push({ label: 'signature', value: `${text(m.signature)} (HMAC-SHA256 by the node)` });
  return { title: 'manifest', note: `signed by the node; only the node can check it: ${checkWith}`, rows };
}

function briefLines(b: Json): Section[] {
  const levels = b.levels ?? {};
  const out: Section[] = [];
  if (levels.tldr) out.push({ title: 'tldr', lines: [levels.tldr] });
  const bullets = (title: string, xs: unknown) => Array.isArray(xs) && xs.length && out.push({ title, lines: xs.map((x) => `• ${text(x)}`) });
  bullets('core', levels.core);
  bullets('pitfalls', b.pitfalls);
  bullets('heuristics', b.heuristics);
  const deep = levels.deep;
  if (deep) {
    const lines: string[] = [];
    for (const [term, def] of Object.entries(deep.definitions ?? {})) lines.push(`${term}: ${text(def)}`);
    for (const e of deep.examples ?? []) lines.push(`✗ ${e.violation}  ✓ ${e.fix}${e.note ? `  (${e.note})` : ''}`);
    for (const e of deep.edgeCases ?? []) lines.push(`edge case: ${e}`);
    for (const s of deep.sources ?? [])
      lines.push(`source: ${s.citation}${s.author ? `, ${s.author}` : ''}${s.year ? ` (${s.year})` : ''}${s.url ? ` ${s.url}` : ''}`);
    if (lines.length) out.push({ title: 'deep', lines });
  }
  for (const d of b.disputes ?? []) out.push({ title: `dispute: ${d.claim}`, lines: (d.positions ?? []).map((p: unknown) => `• ${text(p)}`) });
  if (Array.isArray(b.related) && b.related.length) out.push({ title: 'related', lines: [b.related.join(', ')] });
  if (Array.isArray(b.verifiedBy) && b.verifiedBy.length) out.push({ title: 'verified by', lines: [b.verifiedBy.join(', ')] });
  return out;
}

/** The sections a node's kind brings: its payload, and its evidence. */
function kindSections(n: Json): Section[] {
  switch (n.kind) {
    case 'leaf-brief':
      // A brief's spec is its tldr, already shown under the heading.
      return [
        ...briefLines(n.brief ?? {}).filter((s) => !(s.title === 'tldr' && s.lines?.[0] === n.spec)),
        ...(n.manifest ? [manifestSection(n.manifest, 'akas verify manifest FILE (FILE: this node as --json prints it)')] : []),
      ];
    case 'leaf-capability':
      return [{ title: 'capability', rows: payloadRows(n.payload ?? {}, ['trigger', 'alternative', 'cost', 'whenNot', 'recipe']) }];
    case 'leaf-decision': {
      const p = n.payload ?? {};
      return [
        {
          title: 'decision',
          rows: [
            { label: 'question', value: text(p.question) },
            { label: 'inputs', value: (p.inputsRequired ?? []).join(', ') || '(none)' },
          ],
        },
        {
          title: 'branches',
          note: `walk it: akas traverse ${n.path} --inputs '{...}'`,
          lines: (n.branches ?? []).map(
            (b: Json) => `${b.id} → ${b.to}  when ${text(b.condition)}${b.priors === null || b.priors === undefined ? '' : `  (prior ${b.priors})`}`,
          ),
        },
      ];
    }
    case 'leaf-artifact': {
      const p = n.payload ?? {};
      const prov = p.provenance ?? {};
      const v = n.sha256Verification ?? {};
      const summary = n.evalSummary ?? { count: 0, distinctRunners: 0, byMetric: {} };
      const metrics = Object.entries(prov.metrics ?? {})
        .map(([k, x]) => `${k} ${num(x)}`)
        .join(', ');
      const evalLines = [
        ...Object.entries(summary.byMetric ?? {}).map(([metric, m]) => {
          const s = m as Json;
          return `${metric}: mean ${num(s.mean)}, min ${num(s.min)}, max ${num(s.max)} over ${s.count}`;
        }),
        ...(n.independentEvals ?? []).map(
          (e: Json) => `${e.proposalId}  ${e.metric} ${num(e.score)} by ${e.runner}  (dataset ${String(e.datasetSha256).slice(0, 12)}…)`,
        ),
      ];
      return [
        {
          title: 'artifact',
          rows: [
            { label: 'uri', value: text(p.uri) },
            { label: 'sha256', value: text(p.sha256) },
            { label: 'bytes', value: text(p.bytes) },
            { label: 'mediaType', value: text(p.mediaType) },
            { label: 'artifactKind', value: text(p.artifactKind) },
            {
              label: 'trained by',
              value: `${text(prov.trainedBy)} on ${text(prov.on)} with ${text(prov.framework)}, ${text(prov.license)}, ${iso(prov.createdAt)}`,
            },
            { label: 'own metrics', value: metrics || '-', tone: 'weak' },
          ],
        },
        {
          title: 'sha256 verification',
          note: 'what the node says about the bytes; check them yourself: akas verify cas --node FILE BLOB (or --fetch)',
          rows: [
            { label: 'status', value: text(v.status), tone: v.status === 'platform-verified' ? 'good' : v.status === 'self-reported' ? 'weak' : 'bad' },
            { label: 'method', value: text(v.method) },
            { label: 'note', value: text(v.note) },
          ],
        },
        {
          title: `independent evals (${summary.count} by ${summary.distinctRunners} runner${summary.distinctRunners === 1 ? '' : 's'})`,
          note: "published eval results of these bytes by other agents, apart from the proposer's own metrics",
          lines: evalLines.length ? evalLines : ['none yet'],
        },
        ...(n.manifest ? [manifestSection(n.manifest, 'akas verify manifest FILE (FILE: this node as --json prints it)')] : []),
      ];
    }
    default:
      return [];
  }
}

/** The model of a node response; `command` is how to ask for the next page of children. */
export function nodeModel(n: Json, command: (cursor: string) => string): NodeModel {
  const facts = [n.kind === 'branch' && !n.proposalId ? 'implicit branch' : `version ${n.version ?? 1}`];
  if (n.refinedAt) facts.push(`spec sharpened ${n.refinedAt}`);
  if (n.proposalId) facts.push(`${n.proposalId}, published ${iso(n.publishedAt)}`);
  if (n.briefId) facts.push(`brief ${n.briefId}`);
  return {
    path: text(n.path),
    kind: text(n.kind),
    title: text(n.title),
    facts,
    spec: typeof n.spec === 'string' ? n.spec : '',
    sections: kindSections(n),
    children: Array.isArray(n.children) ? n.children.map(text) : [],
    more: n.childrenNextCursor ? command(n.childrenNextCursor) : null,
  };
}

/** A brief answer (GET /api/knowledge/briefs/{id}) as a model of the same shape. */
export function briefModel(r: Json): NodeModel {
  const b = r.brief ?? {};
  const m = r.manifest ?? {};
  return {
    path: text(r.path),
    kind: `brief, level ${text(m.level)}`,
    title: text(b.title),
    facts: [`${text(b.id)} version ${text(b.version)}`, `${text(b.domain)} / ${text(b.topic)}`, `${text(m.tokenCount)} tokens`],
    spec: '',
    sections: [...briefLines(b), manifestSection(m, 'akas verify manifest FILE (FILE: this brief as --json prints it)')],
    children: [],
    more: null,
  };
}

const indent = (s: string, by = '  ') =>
  s
    .split('\n')
    .map((l) => by + l)
    .join('\n');

/** The plain text of a model: for pipes and files (no colours, no cursor codes). */
export function modelText(m: NodeModel): string {
  const out = [`${m.path}  (${m.kind})`, m.title, `  ${m.facts.join(' · ')}`];
  if (m.spec) out.push('', indent(m.spec));
  for (const s of m.sections) {
    out.push('', s.title);
    if (s.note) out.push(`  (${s.note})`);
    if (s.rows?.length) {
      const w = Math.max(...s.rows.map((r) => r.label.length));
      for (const r of s.rows) out.push(`  ${r.label.padEnd(w)}  ${r.value}`);
    }
    for (const l of s.lines ?? []) out.push(indent(l));
  }
  if (m.children.length || m.kind === 'branch') {
    out.push('', `children${m.children.length ? '' : ': none'}`);
    for (const [i, c] of m.children.entries()) out.push(`${i === m.children.length - 1 && !m.more ? '└── ' : '├── '}${c}`);
    if (m.more) out.push(`└── … more: ${m.more}`);
  }
  return out.join('\n');
}

/** A traversal (POST /api/knowledge/dg/traverse) as plain text: each decision, then where it ends. */
export function traversalText(t: Json): string {
  const out = [
    `traversal ${t.traversalId} of ${t.path}${t.complete ? '' : '  (INCOMPLETE)'}`,
    // A kept traversal comes back without its inputs (the node keeps their hash alone).
    t.inputs !== undefined ? `  inputs ${JSON.stringify(t.inputs)}` : `  inputs sha256 ${t.inputsSha256} (not kept by the node)`,
  ];
  if (t.stopped) out.push(`  stopped: ${t.stopped.reason} at ${t.stopped.at} (depth ${t.stopped.depth}, limit ${t.stopped.limit})`);
  out.push('', 'steps');
  for (const s of t.steps ?? []) {
    out.push(`${'  '.repeat(Number(s.depth) + 1)}${s.path}: ${s.question}`);
    for (const b of s.branches ?? []) out.push(`${'  '.repeat(Number(s.depth) + 2)}${b.holds ? '✓' : '✗'} ${b.id} → ${b.to}`);
  }
  out.push('', `leaves (${(t.leaves ?? []).length}; ${t.forks} fork${t.forks === 1 ? '' : 's'})`);
  for (const l of t.leaves ?? []) {
    const via = (l.via ?? []).map((v: Json) => `${v.path}[${v.branch}]`).join(' → ');
    out.push(`  ${l.to}${l.node ? `  ${l.node.kind}: ${l.node.title}` : '  (nothing published there)'}`, `    via ${via}`);
  }
  if ((t.deadEnds ?? []).length) out.push('', `dead ends (no branch held): ${t.deadEnds.join(', ')}`);
  return out.join('\n');
}

/** Search hits as a table: path, kind, score, the verdict of each hit (when told), title. */
export function searchText(r: Json, verdict?: (i: number) => string): string {
  const items = (r.items ?? []) as Json[];
  if (!items.length) return `nothing found for "${text(r.query)}"`;
  const rows = items.map((i, n) => [text(i.path), text(i.kind), num(i.score), ...(verdict ? [verdict(n)] : []), text(i.title)]);
  const head = ['PATH', 'KIND', 'SCORE', ...(verdict ? ['VERDICT'] : []), 'TITLE'];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c].length)));
  const line = (row: string[]) => row.map((v, c) => (c === row.length - 1 ? v : v.padEnd(widths[c]))).join('  ');
  return [line(head), ...rows.map(line), `${items.length} of ${r.totalIsEstimate ? 'about ' : ''}${r.total}`].join('\n');
}
