// Log: checkpoints over time (and the log's growth drawn), entries by kind, one entry with its
// inclusion proof, and a consistency check between two checkpoints, all checked in the browser.
import type { LogEntry } from '../../core/index.js';
import type { StoredCheckpoint } from '../../domain/log/index.js';
import { growth } from '../charts.js';
import { html } from '../html.js';
import { agentLink, badge, code, entryLink, facts, hash, page, pager, qs, statusState, time, verifyState, type Assets } from '../layout.js';
import { judgmentOf, type Statuses } from './entries.js';
import { entryRow } from './home.js';

export interface LogData {
  size: number;
  checkpoints: StoredCheckpoint[];
  entries: LogEntry[];
  next: string | null;
  kind?: string;
  kinds: string[];
  paged: boolean;
  /** The node's status records of the credentials of the judgments among the entries. */
  statuses?: Statuses;
}

export function logPage(d: LogData, assets: Assets): string {
  const sizes = d.checkpoints.map((c) => c.size);
  const body = html`<h1>Log</h1>
<p>Every attestation, judgment and decision this node records is an entry of one append-only log: a hash chain whose entries are the leaves \
of an RFC 9162 Merkle tree, with checkpoints signed by the log key. ${d.size} entries so far.</p>
<section aria-labelledby="cps"><h2 id="cps">Checkpoints</h2>
<figure>${growth(
    [...d.checkpoints].reverse().map((c) => ({ at: c.at, size: c.size })),
    'Log size at each checkpoint',
  )}<figcaption>The log's size at each of its latest ${d.checkpoints.length} checkpoints.</figcaption></figure>
${
  d.checkpoints.length
    ? html`<table><caption class="sr">Checkpoints</caption><thead><tr><th scope="col">size</th><th scope="col">root</th><th \
scope="col">signed</th><th scope="col">signature</th></tr></thead><tbody>
${d.checkpoints.slice(0, 20).map(
  (c) => html`<tr><td>${c.size}</td><td>${hash(c.root, 16)}</td><td>${time(c.at)}</td>\
<td>${verifyState(html`data-verify-checkpoint="${c.size}"`, 'log key')}<template data-note="${c.size}">${c.note}</template></td></tr>`,
)}
</tbody></table>`
    : html`<p class="muted">No checkpoint yet.</p>`
}
${
  sizes.length >= 2
    ? html`<form class="consistency" action="/explore/log/consistency" method="get"><h3>Consistency between two checkpoints</h3><p>That the \
newer tree extends the older one (nothing rewritten, nothing removed):</p>
<p><label for="old">older</label> <select id="old" name="old">${sizes.slice(1).map(
        (s, i) => html`<option \
value="${s}"${i === Math.min(4, sizes.length - 2) ? ' selected' : ''}>${s}</option>`,
      )}</select>
<label for="new">newer</label> <select id="new" name="new">${sizes.map((s) => html`<option value="${s}">${s}</option>`)}</select> <button \
type="submit">Check</button></p></form>`
    : ''
}
</section>
<section aria-labelledby="ents"><h2 id="ents">Entries</h2>
<nav class="filters" aria-label="Kind"><ul>${[undefined, ...d.kinds].map(
    (k) => html`<li><a \
href="/explore/log${qs({ kind: k })}"${k === d.kind ? html` aria-current="true"` : ''}>${k ?? 'all kinds'}</a></li>`,
  )}</ul></nav>
${
  d.entries.length
    ? html`<table class="entries"><caption class="sr">Log entries, newest first</caption><thead><tr><th scope="col">entry</th><th \
scope="col">kind</th><th scope="col">what</th><th scope="col">agent</th><th scope="col">time</th><th scope="col">in the log</th></tr>\
</thead><tbody${d.paged || d.kind ? '' : html` data-live-log data-from="${d.size}"`}>${d.entries.map((e) => entryRow(e, d.statuses))}</tbody></table>`
    : html`<p class="muted">No entry${d.kind ? html` of kind ${d.kind}` : ''}.</p>`
}
${pager(d.paged ? `/explore/log${qs({ kind: d.kind })}` : null, d.next ? `/explore/log${qs({ kind: d.kind, before: d.next })}` : null)}
</section>`;
  return page({ title: 'Log', section: 'log', assets, body });
}

export interface EntryData {
  doc: {
    entry: LogEntry & { mac: string; signingKeyId: string; leafHash: string };
    inclusion: { index: number; size: number; proof: string[] };
    checkpoint: string;
    logKey?: string;
  };
  /** The node's status records of the judgment's credential, when the entry records a judgment. */
  statuses?: Statuses;
}

export function entryPage(d: EntryData, assets: Assets): string {
  const e = d.doc.entry;
  const judgment = judgmentOf(e);
  const body = html`<p class="muted small"><a href="/explore/log">Log</a> / <code>${e.id}</code></p>
<h1>Entry #${e.seq} ${badge(e.tier, 'tier')}</h1>
${facts([
  ['Id', html`<code>${e.id}</code>`],
  ['Kind', html`<code>${e.kind}</code>`],
  ['Agent', agentLink(e.agent)],
  ['Attested', time(e.attestedAt)],
  ['Hash', code(e.hash)],
  ['Previous', e.seq > 0 ? entryLink(`att_${(e.seq - 1).toString(16).padStart(16, '0')}`, code(e.prevHash)) : code(e.prevHash)],
  ['In the log', verifyState(html`data-verify-entry="${e.id}" data-inline-proof`, 'inclusion')],
  [
    'Credential',
    judgment
      ? html`<a href="${judgment.credentialUrl}"><code>${judgment.judgmentId}</code></a> ${statusState(judgment.judgmentId, d.statuses?.[judgment.judgmentId])}`
      : null,
  ],
  ['Node HMAC', html`${code(e.mac)} <span class="v" data-state="node">needs the node: HMAC-SHA256 under ${e.signingKeyId}, a key only the node holds</span>`],
])}
<h2>Body</h2><pre class="json">${JSON.stringify(e.body, null, 2)}</pre>
<h2>Inclusion proof</h2>
<p>Leaf ${d.doc.inclusion.index} of a tree of ${d.doc.inclusion.size} entries; ${d.doc.inclusion.proof.length} hashes lead from the leaf \
(${code(e.leafHash)}) to the root the checkpoint signs.</p>
<ol class="proof">${d.doc.inclusion.proof.map((h) => html`<li>${code(h)}</li>`)}</ol>
<h2>Checkpoint</h2><pre class="note">${d.doc.checkpoint}</pre>
<p class="muted small">Save <a href="/api/attestations/${e.id}" download="${e.id}.json">the entry with its proof</a> and check it offline: \
akas verify log-proof FILE --log-key KEY.</p>`;
  return page({ title: `Entry #${e.seq}`, section: 'log', assets, body });
}

export interface ConsistencyData {
  old: number;
  new: number;
  proof: string[];
  oldNote: string | null;
  newNote: string | null;
}

export function consistencyPage(d: ConsistencyData, assets: Assets): string {
  const body = html`<p class="muted small"><a href="/explore/log">Log</a> / consistency</p>
<h1>Checkpoint ${d.old} → ${d.new}</h1>
<p>The log promises to be append-only: the tree of ${d.new} entries must contain the tree of ${d.old} unchanged. The consistency proof \
below shows it from the two signed roots alone.</p>
${facts([['Result', verifyState(html`data-verify-consistency data-old="${d.old}" data-new="${d.new}"`, 'consistency')]])}
<h2>Older checkpoint</h2>${
    d.oldNote
      ? html`<pre class="note" data-note-old>${d.oldNote}</pre>`
      : html`<p class="muted">The node keeps no \
signed checkpoint of size ${d.old}.</p>`
  }
<h2>Newer checkpoint</h2>${
    d.newNote
      ? html`<pre class="note" data-note-new>${d.newNote}</pre>`
      : html`<p class="muted">The node keeps no \
signed checkpoint of size ${d.new}.</p>`
  }
<h2>Proof</h2><ol class="proof" data-proof>${d.proof.map((h) => html`<li>${code(h)}</li>`)}</ol>
<p class="muted small">The same as JSON: <a \
href="/api/log/proof/consistency${qs({ old: d.old, new: d.new })}">/api/log/proof/consistency${qs({ old: d.old, new: d.new })}</a>; akas \
log watch checks it continuously.</p>`;
  return page({ title: `Consistency ${d.old} → ${d.new}`, section: 'log', assets, body });
}
