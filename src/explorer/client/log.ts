// The log as pages show it, checked in the browser: each entry shown against its inclusion
// proof (verifyLogProof, the proofs of a page fetched in one request), checkpoints and
// consistency proofs (verifyConsistency), all under the pinned log key; and the live log, whose
// new entries are prepended and checked as the node appends them.
import { $, $$, el, getJson, link, type Json } from './dom.js';
import { nodeKeys, type Keys } from './keys.js';
import { setState, verdict } from './results.js';
import { checkStatus } from './status.js';
import { loadVerifier, type Verifier } from './verifier.js';

const proofCache = new Map<string, Promise<Json | null>>();

async function proofsOf(ids: string[]): Promise<void> {
  const todo = ids.filter((id) => !proofCache.has(id));
  for (let i = 0; i < todo.length; i += 50) {
    const chunk = todo.slice(i, i + 50);
    const got = getJson<{ items: Json[]; missing: string[] }>(`/explore/proofs?ids=${chunk.join(',')}`);
    for (const id of chunk)
      proofCache.set(
        id,
        got.then((r) => r.items.find((d) => (d.entry as Json).id === id) ?? null),
      );
  }
}

export async function checkEntries(V: Verifier, keys: Keys, root: ParentNode = document) {
  const targets = $$('[data-verify-entry]', root).filter((e) => e.dataset.state === 'off');
  const ids = [...new Set(targets.map((e) => e.dataset.verifyEntry!))];
  if (!ids.length) return;
  for (const e of targets) setState(e, 'pending', 'checking…');
  await proofsOf(ids);
  await Promise.all(
    ids.map(async (id) => {
      const mine = targets.filter((e) => e.dataset.verifyEntry === id);
      try {
        const doc = await proofCache.get(id)!;
        if (!doc) {
          for (const e of mine) setState(e, 'unchecked', 'not checked: not in the log yet');
          proofCache.delete(id);
          return;
        }
        const v = verdict((await V.verifyLogProof(doc, keys.logKey)).checks);
        for (const e of mine)
          setState(e, v.state, v.state === 'ok' ? `in the log, under the pinned key (${(doc.inclusion as Json).size} entries)` : v.text, v.detail);
      } catch (err) {
        proofCache.delete(id);
        for (const e of mine) setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
      }
    }),
  );
}

const noteText = (selector: string): string | null => {
  const n = $(selector);
  if (!n) return null;
  return n instanceof HTMLTemplateElement ? n.content.textContent : n.textContent;
};

export async function checkCheckpoints(V: Verifier, keys: Keys) {
  for (const e of $$('[data-verify-checkpoint]')) {
    const note = noteText(`[data-note="${CSS.escape(e.dataset.verifyCheckpoint!)}"]`);
    if (!note) continue;
    const v = verdict((await V.verifyConsistency({ new: note }, keys.logKey)).checks);
    setState(e, v.state, v.state === 'ok' ? 'signed by the pinned log key' : v.text, v.detail);
  }
  const c = $('[data-verify-consistency]');
  if (c) {
    const oldNote = noteText('[data-note-old]');
    const newNote = noteText('[data-note-new]');
    if (!oldNote || !newNote) return setState(c, 'unchecked', 'not checked: the node keeps no signed checkpoint of that size');
    const proof = $$('[data-proof] code').map((x) => x.textContent ?? '');
    const v = verdict((await V.verifyConsistency({ old: oldNote, new: newNote, proof }, keys.logKey)).checks);
    setState(c, v.state, v.state === 'ok' ? 'both checkpoints are signed by the pinned log key, and the newer tree extends the older one' : v.text, v.detail);
  }
}

export function liveLog() {
  const body = $('[data-live-log]');
  if (!body || typeof EventSource === 'undefined') return;
  const status = $('[data-live-status]');
  const count = $('[data-live-count]');
  const from = Number(body.dataset.from ?? '0');
  const source = new EventSource(`/api/events?from=${from}`);
  let pending: HTMLElement[] = [];
  let timer: number | undefined;
  source.addEventListener(
    'open',
    () => status && (status.textContent = 'Live: new entries of the log appear here as the node appends them, each checked in your browser.'),
  );
  source.addEventListener('entry', (ev) => {
    const e = JSON.parse((ev as MessageEvent<string>).data) as {
      id: string;
      seq: number;
      kind: string;
      tier: string;
      agent: string | null;
      attestedAt: number;
      body: Json;
    };
    if (body.querySelector(`[data-entry="${CSS.escape(e.id)}"]`)) return;
    const row = entryRow(e);
    body.prepend(row);
    while (body.children.length > 50) body.lastElementChild?.remove();
    if (count) count.textContent = String(e.seq + 1);
    pending.push(row);
    clearTimeout(timer);
    timer = window.setTimeout(async () => {
      const rows = pending;
      pending = [];
      try {
        const [V, keys] = await Promise.all([loadVerifier(), nodeKeys()]);
        if (rows.length) await Promise.all([checkEntries(V, keys, body), checkStatus(V, keys, body)]);
      } catch {
        // shown as not checked by checkEntries
      }
    }, 300);
  });
  source.addEventListener('error', () => status && (status.textContent = 'The live stream paused; the browser reconnects by itself.'));
}

function entryRow(e: { id: string; seq: number; kind: string; tier: string; agent: string | null; attestedAt: number; body: Json }): HTMLTableRowElement {
  const what = el('td');
  if (e.kind === 'attestation.event.v1') {
    what.append(el('code', {}, String(e.body.event ?? '')), ' ');
    if (typeof e.body.proposalId === 'string') what.append(link(`/explore/proposals/${encodeURIComponent(e.body.proposalId)}`, e.body.proposalId, true));
    if (e.body.status) what.append(` → ${String(e.body.status)}`);
    const { event, judgmentId, kind, proposalId } = e.body;
    // A judgment's credential, and its status (status.ts), as the node's own rows have them (pages/entries.ts).
    if (event === 'judgment.recorded' && typeof judgmentId === 'string' && typeof kind === 'string' && typeof proposalId === 'string')
      what.append(
        el('br'),
        link(`/api/credentials/judgment/${encodeURIComponent(kind)}/${encodeURIComponent(proposalId)}/${encodeURIComponent(judgmentId)}`, 'credential'),
        ' ',
        el(
          'span',
          { class: 'v', 'data-state': 'off', 'data-verify-status': judgmentId, 'aria-live': 'polite' },
          el('span', { class: 'v-label' }, 'status:'),
          ' ',
          el('span', { class: 'v-text' }, 'checking…'),
        ),
      );
  } else {
    if (typeof e.body.verdict === 'string') what.append(el('strong', {}, e.body.verdict), ' ');
    if (typeof e.body.subjectSha256 === 'string')
      what.append('subject ', el('code', { class: 'hash', title: e.body.subjectSha256 }, `${e.body.subjectSha256.slice(0, 12)}…`));
  }
  const iso = new Date(e.attestedAt).toISOString();
  const v = el(
    'span',
    { class: 'v', 'data-state': 'off', 'data-verify-entry': e.id, 'aria-live': 'polite' },
    el('span', { class: 'v-label' }, 'log:'),
    ' ',
    el('span', { class: 'v-text' }, 'checking…'),
  );
  const row = el(
    'tr',
    { 'data-entry': e.id, class: 'fresh' },
    el('td', {}, link(`/explore/log/${e.id}`, `#${e.seq}`, true)),
    el('td', {}, el('span', { class: `badge b-${e.tier.replace(/[^a-z0-9-]/gi, '')}` }, e.tier), ' ', el('code', {}, e.kind)),
    what,
    el('td', {}, e.agent ? link(`/explore/agents/${encodeURIComponent(e.agent)}`, e.agent, true) : el('span', { class: 'muted' }, 'anonymous')),
    el('td', {}, el('time', { datetime: iso }, `${iso.slice(0, 19).replace('T', ' ')}Z`)),
    el('td', {}, v),
  );
  return row;
}
