// The explorer's one page script (bundled by scripts/build-explorer.mjs). The pages read
// without it; it adds what needs a browser: search as you type, live updates from the node's
// event stream, and verification of what a page shows, computed here by the verifier's own
// browser build (loaded from the node, never a second implementation of any check) under keys
// this browser pinned on its first visit. Everything is built with DOM calls and textContent:
// nothing the node sends is ever parsed as HTML.
import type * as VerifierModule from '../../../verifier/browser.js';
import { loadVerifier } from './verifier.js';

type Verifier = typeof VerifierModule;
type Report = VerifierModule.Report;
type Check = VerifierModule.Check;
type Json = Record<string, unknown>;

const $ = <T extends Element = HTMLElement>(sel: string, root: ParentNode = document) => root.querySelector<T>(sel);
const $$ = <T extends Element = HTMLElement>(sel: string, root: ParentNode = document) => [...root.querySelectorAll<T>(sel)];

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string | null | undefined>): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

async function getJson<T = Json>(url: string): Promise<T> {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${url.split('?')[0]} answered ${res.status}${res.status === 429 ? ' (too many requests: try again shortly)' : ''}`);
  return (await res.json()) as T;
}

// ---------------------------------------------------------------- verification states

type State = 'ok' | 'bad' | 'unchecked' | 'pending';

function setState(target: Element, state: State, text: string, detail?: string) {
  target.setAttribute('data-state', state);
  const t = target.querySelector('.v-text') ?? target;
  t.textContent = text;
  if (detail) target.setAttribute('title', detail);
}

/** The verdict of some checks: any failure is bad; all unchecked is unchecked; else ok. */
function verdict(checks: Check[]): { state: State; text: string; detail: string } {
  const failed = checks.filter((c) => c.valid === false);
  const held = checks.filter((c) => c.valid === true);
  const unchecked = checks.filter((c) => c.valid === null);
  const detail = checks.map((c) => `${c.valid === true ? '✓' : c.valid === false ? '✗' : '–'} [${c.layer}] ${c.what}${c.why ? `: ${c.why}` : ''}`).join('\n');
  if (failed.length) return { state: 'bad', text: `not verified: ${failed[0].what}${failed[0].why ? ` (${failed[0].why})` : ''}`, detail };
  if (!held.length) return { state: 'unchecked', text: unchecked.length ? `not checked: ${unchecked[0].why ?? unchecked[0].what}` : 'nothing to check', detail };
  return { state: 'ok', text: unchecked.length ? `verified (${held.length} checks; ${unchecked.length} not checkable here)` : `verified (${held.length} checks)`, detail };
}

// ---------------------------------------------------------------- pinned keys

interface Pinned {
  issuer: string;
  logKey: string;
  at: number;
}
interface Keys {
  /** The issuer DID and log key this browser trusts (pinned on first visit). */
  issuer: string;
  logKey: string;
  /** The issuer part of GET /api/node/keys (rotations signed by both keys). */
  issuerKeys: VerifierModule.IssuerKeyList;
  /** What changed since the pin, if anything. */
  problems: string[];
  pinnedNow: boolean;
}

const PIN_KEY = `akas.pin.${location.origin}`;
let keysOnce: Promise<Keys> | null = null;

function readPin(): Pinned | null {
  try {
    const p = JSON.parse(localStorage.getItem(PIN_KEY) ?? 'null') as Pinned | null;
    return p && typeof p.issuer === 'string' && typeof p.logKey === 'string' ? p : null;
  } catch {
    return null;
  }
}

function nodeKeys(): Promise<Keys> {
  return (keysOnce ??= (async () => {
    const [d, k] = await Promise.all([getJson<{ issuer: { did: string }; log: { verifierKey: string } }>('/.well-known/akas.json'), getJson<{ issuer: VerifierModule.IssuerKeyList }>('/api/node/keys')]);
    let pin = readPin();
    let pinnedNow = false;
    if (!pin) {
      pin = { issuer: d.issuer.did, logKey: d.log.verifierKey, at: Date.now() };
      pinnedNow = true;
      try {
        localStorage.setItem(PIN_KEY, JSON.stringify(pin));
      } catch {
        // storage refused (private mode): the keys are pinned for this page only
      }
    }
    const problems: string[] = [];
    if (pin.logKey !== d.log.verifierKey) problems.push(`the node now publishes another log key (${d.log.verifierKey}) than the one pinned (${pin.logKey})`);
    if (pin.issuer !== d.issuer.did) {
      const V = await loadVerifier();
      const trust = await V.trustIssuerKeys(pin.issuer, k.issuer);
      if (!trust.keys.has(d.issuer.did)) problems.push(`the node's issuer ${d.issuer.did} is not reached from the pinned ${pin.issuer} by rotations signed by both keys`);
    }
    return { issuer: pin.issuer, logKey: pin.logKey, issuerKeys: k.issuer, problems, pinnedNow };
  })());
}

function showPin(keys: Keys) {
  const box = $('[data-pin-status]');
  if (keys.problems.length) {
    const warn = el('div', { class: 'pin changed', role: 'alert' }, el('strong', {}, 'The keys of this node changed since your browser pinned them. '), keys.problems.join('; ') + '. Checks below use the pinned keys.');
    $('main')?.prepend(warn);
  }
  if (!box) return;
  box.replaceChildren(
    el('p', {}, keys.pinnedNow ? 'Pinned now (first visit): ' : `Pinned by this browser: `, el('code', { class: 'wrap' }, keys.issuer), ' and the log key ', el('code', { class: 'wrap' }, keys.logKey), keys.problems.length ? '' : '. The node still publishes them.'),
  );
  const forget = el('button', { type: 'button' }, 'Forget the pinned keys');
  forget.addEventListener('click', () => {
    localStorage.removeItem(PIN_KEY);
    location.reload();
  });
  box.append(forget);
}

// ---------------------------------------------------------------- checks on the page

async function checkBundles(V: Verifier, keys: Keys) {
  const ids = [...new Set($$('[data-verify-bundle]').map((e) => e.dataset.verifyBundle!))];
  for (const id of ids) {
    const overall = $$(`[data-verify-bundle="${CSS.escape(id)}"]`);
    const parts = $$('[data-check][data-subject]');
    for (const e of [...overall, ...parts]) setState(e, 'pending', 'checking…');
    try {
      const bundle = await getJson(`/api/knowledge/proposals/${encodeURIComponent(id)}/bundle`);
      const report = await V.verifyBundle(bundle, { issuer: keys.issuer, issuerKeys: keys.issuerKeys, logKey: keys.logKey });
      // The bundle's blobs are not here: CAS checks are the Verify page's (drop the bytes there).
      const checks = report.checks.filter((c) => c.layer !== 'CAS' && c.id !== 'judgment.nodeMac');
      // On a proposal's page, the bundle holds for what this page shows only if it is the same content.
      if ($('[data-content="payload"]')) checks.push(await shownIsBundled(V, bundle, report.contentSha256));
      const v = verdict(checks);
      for (const e of overall) setState(e, v.state, v.text, v.detail);
      const global = checks.filter((c) => c.subject === undefined);
      for (const e of parts) {
        const layer = e.dataset.check!;
        const mine = checks.filter((c) => c.subject === e.dataset.subject && c.layer === layer);
        const theirs = global.filter((c) => c.layer === layer);
        const r = verdict([...theirs, ...mine]);
        setState(e, mine.length ? r.state : 'unchecked', mine.length ? r.text : 'not in the bundle', r.detail);
      }
    } catch (err) {
      for (const e of [...overall, ...parts]) setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
    }
  }
}

/** The content this page shows, hashed here, against the content of the bundle checked. */
async function shownIsBundled(V: Verifier, bundle: Json, bundled: string | undefined): Promise<Check> {
  const what = 'the content shown on this page is the content of the bundle';
  let shown: string | undefined;
  try {
    shown = (await V.verifyProposalJudgments({ ...(bundle.proposal as Json), ...shownProposal(), judgments: [] })).content?.contentSha256;
  } catch (err) {
    return { id: 'page.content', layer: 'content', what, valid: false, why: (err as Error).message } as Check;
  }
  const same = shown !== undefined && shown === bundled;
  return { id: 'page.content', layer: 'content', what, valid: bundled === undefined ? null : same, why: same ? shown : `the page's content hashes to ${shown ?? 'nothing'}, the bundle's to ${bundled ?? 'nothing'}` } as Check;
}

const proofCache = new Map<string, Promise<Json | null>>();

async function proofsOf(ids: string[]): Promise<void> {
  const todo = ids.filter((id) => !proofCache.has(id));
  for (let i = 0; i < todo.length; i += 50) {
    const chunk = todo.slice(i, i + 50);
    const got = getJson<{ items: Json[]; missing: string[] }>(`/explore/proofs?ids=${chunk.join(',')}`);
    for (const id of chunk) proofCache.set(id, got.then((r) => r.items.find((d) => (d.entry as Json).id === id) ?? null));
  }
}

async function checkEntries(V: Verifier, keys: Keys, root: ParentNode = document) {
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
        for (const e of mine) setState(e, v.state, v.state === 'ok' ? `in the log, under the pinned key (${(doc.inclusion as Json).size} entries)` : v.text, v.detail);
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

async function checkCheckpoints(V: Verifier, keys: Keys) {
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

// ---------------------------------------------------------------- content binding (PROTOCOL 6.10, 10.7)

const shortHash = (h: string | undefined) => (h ? `${h.slice(0, 12)}…` : 'nothing');

/**
 * The proposal's content as this page shows it: kind, path, title, spec and payload read from
 * the page's text (data-content), never from a second copy, with the contentSha256 it shows.
 */
function shownProposal(): Json {
  const textOf = (sel: string) => {
    const e = $(sel);
    return e ? (e.textContent ?? '') : undefined;
  };
  const payloadText = textOf('[data-content="payload"]');
  if (payloadText === undefined) throw new Error('the page shows no payload');
  let payload: unknown;
  try {
    payload = JSON.parse(payloadText);
  } catch {
    throw new Error('the payload shown is not JSON');
  }
  const shown: Json = { kind: textOf('[data-content="kind"]'), path: textOf('[data-content="path"]') ?? null, title: textOf('[data-content="title"]'), payload };
  const spec = textOf('[data-content="spec"]');
  if (spec !== undefined) shown.spec = spec;
  const stated = textOf('[data-content-sha256]');
  if (stated !== undefined) shown.contentSha256 = stated;
  return shown;
}

/**
 * A proposal page: the content shown, rehashed here, against the contentSha256 shown and each
 * judgment, with the verifier's verifyProposalJudgments (the checks of akas verify judgments).
 * The judges' signatures come from the node's detail; the content from the page.
 */
async function checkContent(V: Verifier) {
  const box = $('[data-verify-content]');
  const judged = $$('[data-verify-judged]');
  const shown = $$('[data-verify-shown]');
  const all = [box, ...judged, ...shown];
  if (!box && !judged.length && !shown.length) return;
  const id = box?.dataset.verifyContent ?? '';
  for (const e of all) if (e) setState(e, 'pending', 'checking…');
  let r: VerifierModule.JudgmentsReport;
  let detail: Json;
  try {
    detail = await getJson(`/api/knowledge/proposals/${encodeURIComponent(id)}`);
  } catch (err) {
    for (const e of all) if (e) setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
    return;
  }
  try {
    r = await V.verifyProposalJudgments({ ...detail, ...shownProposal() });
  } catch (err) {
    // The page shows no content that can be read as this proposal's: not the content judged.
    for (const e of all) if (e) setState(e, 'bad', `not verified: ${(err as Error).message}`);
    return;
  }
  const content = r.content;
  const hash = content?.contentSha256;
  const v2 = r.checks.filter((c) => c.signed === 'v2');
  const v2bad = v2.filter((c) => !c.ok);
  const details = [
    `recomputed here: ${hash ?? 'cannot be'}`,
    `stated by the node: ${content?.stated ?? 'nothing'}`,
    ...(content?.problems ?? []),
    ...r.checks.map((c) => `${c.agentTag} (${c.signed}): ${c.ok ? 'holds' : c.problems.join('; ')}`),
  ].join('\n');
  if (box) {
    if (!content || !content.ok) setState(box, 'bad', `not verified: ${content?.problems[0] ?? 'the content shown cannot be read'}`, details);
    else if (v2bad.length) setState(box, 'bad', `not verified: ${v2bad[0].agentTag} signed content other than the content shown (${v2bad[0].problems[0]})`, details);
    else if (v2.length) setState(box, 'ok', `verified: the content shown hashes to ${shortHash(hash)}, the hash stated, and ${v2.length} judge${v2.length === 1 ? '' : 's'} signed it${r.v1 ? `; ${r.v1} v1 judgment${r.v1 === 1 ? " is" : 's are'} bound by the node's word only` : ''}`, details);
    else setState(box, 'unchecked', `not checked by any judge: the content shown hashes to ${shortHash(hash)}, the hash the node states, but ${r.checked ? "every judgment is v1, bound to it by the node's word only" : 'no judge has signed it yet'}`, details);
  }
  for (const e of shown) {
    const id = e.dataset.verifyShown!;
    const c = r.checks.find((x) => x.judgmentId === id);
    const j = ((detail.judgments ?? []) as Json[]).find((x) => x.judgmentId === id);
    const row = e.closest('tr');
    if (!c || !j || !row) setState(e, 'unchecked', 'not checked: not in the detail');
    else if (!c.payloadMatches || !c.signatureValid) setState(e, 'bad', `not verified: ${c.problems[0] ?? "the judge's signature does not hold"}`, c.problems.join('\n'));
    else {
      const wrong = shownJudgmentProblems(row, j);
      if (wrong.length) setState(e, 'bad', `not verified: ${wrong[0]}`, wrong.join('\n'));
      else setState(e, 'ok', 'what the judge signed', `${c.agentTag}'s signature covers the judge, the four scores and the rationale shown; the composite shown is their mean`);
    }
  }
  for (const e of judged) {
    const c = r.checks.find((x) => x.judgmentId === e.dataset.verifyJudged);
    const j = ((detail.judgments ?? []) as Json[]).find((x) => x.judgmentId === e.dataset.verifyJudged);
    if (!c) setState(e, 'unchecked', 'not checked: not in the detail');
    else if (c.signed === 'v2') setState(e, c.ok ? 'ok' : 'bad', c.ok ? 'the judge signed the content shown (v2)' : `not verified: ${c.problems[0]}`, c.problems.join('\n'));
    else if (content && !content.ok) setState(e, 'bad', `not verified: ${content.problems[0]}`);
    else if (j && typeof j.contentSha256 === 'string' && hash !== undefined && j.contentSha256 !== hash) setState(e, 'bad', `not verified: the node says it judged ${shortHash(j.contentSha256)}, the content shown hashes to ${shortHash(hash)}`);
    else setState(e, 'unchecked', `v1: bound to this content by the node's word only (the judge signed no content hash)`);
  }
}

/**
 * What a judgment's row shows against the judgment whose signature was checked (the judge,
 * each score to two places, the composite as their mean, the rationale): the problems found.
 * The page's own text is read, so HTML that shows other values than the node's JSON fails.
 */
function shownJudgmentProblems(row: Element, j: Json): string[] {
  const problems: string[] = [];
  const text = (e: Element | null) => (e?.textContent ?? '').trim();
  const by = text(row.querySelector('[data-judged-by]'));
  if (by !== j.agentTag) problems.push(`the page names the judge ${JSON.stringify(by)}, the signature is ${String(j.agentTag)}'s`);
  const scores = (j.scores ?? {}) as Record<string, number>;
  const dims = ['accuracy', 'clarity', 'compression', 'sources'];
  for (const dim of dims) {
    const shown = text(row.querySelector(`[data-judged-score="${dim}"]`));
    const signed = typeof scores[dim] === 'number' ? scores[dim].toFixed(2) : 'nothing';
    if (shown !== signed) problems.push(`the page shows ${dim} ${shown || 'nothing'}, the judge signed ${signed}`);
  }
  const mean = dims.reduce((sum, d) => sum + (scores[d] ?? NaN), 0) / dims.length;
  const composite = Number(text(row.querySelector('[data-judged-composite]')));
  if (!(Math.abs(composite - mean) <= 0.005 + 1e-9)) problems.push(`the page shows the composite ${text(row.querySelector('[data-judged-composite]')) || 'nothing'}, the mean of the signed scores is ${mean.toFixed(3)}`);
  const rationale = row.querySelector('[data-judged-rationale]');
  const signedRationale = typeof j.rationale === 'string' ? j.rationale : '';
  if (rationale ? rationale.textContent !== signedRationale : signedRationale !== '') {
    problems.push(signedRationale === '' ? 'the page shows a rationale the judge did not sign' : rationale ? 'the page shows another rationale than the one the judge signed' : 'the page does not show the rationale the judge signed');
  }
  return problems;
}

/** Reads the value at a JSON Pointer (no leading slash) in a document. */
function at(doc: unknown, pointer: string): unknown {
  let v = doc;
  for (const raw of pointer.split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof v !== 'object' || v === null || !Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Json)[key];
  }
  return v;
}

/** Every served text this page shows (data-field) against the read that was checked. */
function shownFieldsCheck(doc: Json): Check {
  const fields = $$('[data-field]');
  const wrong: string[] = [];
  for (const e of fields) {
    const pointer = e.dataset.field!;
    const v = at(doc, pointer);
    const expected = typeof v === 'string' ? v : v === undefined ? undefined : JSON.stringify(v);
    if (e.textContent !== expected) wrong.push(expected === undefined ? `${pointer}: the page shows text the node did not serve` : `${pointer}: the page shows ${JSON.stringify((e.textContent ?? '').slice(0, 60))}, the node served ${JSON.stringify(expected.slice(0, 60))}`);
  }
  return {
    id: 'page.shown',
    layer: 'content',
    what: 'the text on this page is the text served and checked',
    valid: fields.length ? wrong.length === 0 : null,
    why: wrong.length ? wrong.join('; ') : fields.length ? `${fields.length} texts` : 'not checked: the page marks no served text',
  } as Check;
}

/** A table of checks, layer by layer (content, L1, L2, L3, CAS), each layer with its own verdict. */
function checksTable(checks: Check[]): HTMLTableElement {
  const order = ['input', 'content', 'L1', 'L2', 'L3', 'CAS'];
  const layers = [...new Set(checks.map((c) => c.layer as string))].sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99));
  const state = (valid: boolean | null) => (valid === true ? 'ok' : valid === false ? 'bad' : 'unchecked');
  const bodies = layers.map((layer) => {
    const mine = checks.filter((c) => c.layer === layer);
    const v = verdict(mine);
    return el(
      'tbody',
      { 'data-layer': layer },
      el('tr', { class: 'layer' }, el('th', { scope: 'rowgroup', colspan: '2' }, layer), el('td', { colspan: '2' }, el('span', { class: 'v', 'data-state': v.state }, el('span', { class: 'v-text' }, v.state === 'ok' ? 'holds' : v.state === 'bad' ? 'does not hold' : 'not checked')))),
      ...mine.map((c) =>
        el(
          'tr',
          { 'data-check-id': c.id },
          el('td', {}, c.layer),
          el('td', {}, c.what, c.subject ? el('br') : null, c.subject ? el('code', { class: 'small' }, c.subject) : null),
          el('td', {}, el('span', { class: 'v', 'data-state': state(c.valid) }, el('span', { class: 'v-text' }, c.valid === true ? 'holds' : c.valid === false ? 'does not hold' : 'not checked'))),
          el('td', {}, c.why ?? ''),
        ),
      ),
    );
  });
  return el('table', { class: 'checks-table' }, el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'layer'), el('th', { scope: 'col' }, 'check'), el('th', { scope: 'col' }, 'verdict'), el('th', { scope: 'col' }, 'why'))), ...bodies);
}

/**
 * A knowledge node page: the node's read (the same URL the page was made from) checked against
 * its evidence with the verifier's verifyNode, under the issuer and log key this browser
 * pinned, and every text the page shows held against that read.
 */
async function checkNode(V: Verifier, keys: Keys) {
  const box = $('[data-verify-node]');
  if (!box) return;
  setState(box, 'pending', 'checking…');
  try {
    const doc = await getJson(box.dataset.verifyNode!);
    const report = await V.verifyNode(doc, { issuer: keys.issuer, issuerKeys: keys.issuerKeys, logKey: keys.logKey });
    const checks = [...report.checks, shownFieldsCheck(doc)];
    const v = verdict(checks);
    setState(box, v.state, v.text, v.detail);
    $('[data-node-checks]')?.replaceChildren(el('details', {}, el('summary', {}, 'Each check, layer by layer'), checksTable(checks)));
  } catch (err) {
    setState(box, 'unchecked', `not checked: ${(err as Error).message}`);
  }
}

async function verifyPage() {
  const wanted = $$('[data-verify-bundle], [data-verify-entry], [data-verify-checkpoint], [data-verify-consistency], [data-verify-content], [data-verify-judged], [data-verify-shown], [data-verify-node]');
  const pinBox = $('[data-pin-status]');
  if (!wanted.length && !pinBox) return;
  let keys: Keys;
  let V: Verifier;
  try {
    [V, keys] = await Promise.all([loadVerifier(), nodeKeys()]);
  } catch (err) {
    // Every state on the page says why, each layer of a judgment too (no verifier, or not the package's).
    for (const e of [...wanted, ...$$('[data-check][data-subject]')]) setState(e, 'unchecked', `not checked: ${(err as Error).message}`);
    return;
  }
  showPin(keys);
  await Promise.all([checkBundles(V, keys), checkEntries(V, keys), checkCheckpoints(V, keys), checkContent(V), checkNode(V, keys)]);
}

// ---------------------------------------------------------------- live updates

function liveLog() {
  const body = $('[data-live-log]');
  if (!body || typeof EventSource === 'undefined') return;
  const status = $('[data-live-status]');
  const count = $('[data-live-count]');
  const from = Number(body.dataset.from ?? '0');
  const source = new EventSource(`/api/events?from=${from}`);
  let pending: HTMLElement[] = [];
  let timer: number | undefined;
  source.addEventListener('open', () => status && (status.textContent = 'Live: new entries of the log appear here as the node appends them, each checked in your browser.'));
  source.addEventListener('entry', (ev) => {
    const e = JSON.parse((ev as MessageEvent<string>).data) as { id: string; seq: number; kind: string; tier: string; agent: string | null; attestedAt: number; body: Json };
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
        if (rows.length) await checkEntries(V, keys, body);
      } catch {
        // shown as not checked by checkEntries
      }
    }, 300);
  });
  source.addEventListener('error', () => status && (status.textContent = 'The live stream paused; the browser reconnects by itself.'));
}

function link(href: string, text: string, asCode = false): HTMLAnchorElement {
  const a = el('a', { href });
  if (asCode) a.append(el('code', {}, text));
  else a.textContent = text;
  return a;
}

function entryRow(e: { id: string; seq: number; kind: string; tier: string; agent: string | null; attestedAt: number; body: Json }): HTMLTableRowElement {
  const what = el('td');
  if (e.kind === 'attestation.event.v1') {
    what.append(el('code', {}, String(e.body.event ?? '')), ' ');
    if (typeof e.body.proposalId === 'string') what.append(link(`/explore/proposals/${encodeURIComponent(e.body.proposalId)}`, e.body.proposalId, true));
    if (e.body.status) what.append(` → ${String(e.body.status)}`);
  } else {
    if (typeof e.body.verdict === 'string') what.append(el('strong', {}, e.body.verdict), ' ');
    if (typeof e.body.subjectSha256 === 'string') what.append('subject ', el('code', { class: 'hash', title: e.body.subjectSha256 }, `${e.body.subjectSha256.slice(0, 12)}…`));
  }
  const iso = new Date(e.attestedAt).toISOString();
  const v = el('span', { class: 'v', 'data-state': 'off', 'data-verify-entry': e.id, 'aria-live': 'polite' }, el('span', { class: 'v-label' }, 'log:'), ' ', el('span', { class: 'v-text' }, 'checking…'));
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

// ---------------------------------------------------------------- search as you type

function markWords(text: string, words: string[]): DocumentFragment {
  const frag = document.createDocumentFragment();
  const ws = [...new Set(words.filter((w) => w.length > 1))].sort((a, b) => b.length - a.length);
  if (!ws.length) {
    frag.append(text);
    return frag;
  }
  const re = new RegExp(`(${ws.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'giu');
  text.split(re).forEach((part, i) => frag.append(i % 2 ? el('mark', {}, part) : part));
  return frag;
}

function liveSearch(input: HTMLInputElement) {
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
        const r = await getJson<{ items: Array<{ path: string; kind: string; title: string; match: Record<string, string[]> }>; total: number }>(`/api/knowledge/search?q=${encodeURIComponent(q)}&limit=8`);
        if (mine !== asked) return;
        list.replaceChildren(
          ...r.items.map((h) => {
            const words = Object.values(h.match).flat();
            const a = el('a', { href: h.path === '/' ? '/explore/tree' : `/explore/tree${h.path}` }, markWords(h.title, words), ' ', el('span', { class: 'badge' }, h.kind), el('br'), el('code', { class: 'small' }, markWords(h.path, words)));
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

// ---------------------------------------------------------------- the Verify page

async function readInputs(form: HTMLFormElement): Promise<Array<{ name: string; bytes: Uint8Array }>> {
  const out: Array<{ name: string; bytes: Uint8Array }> = [];
  const files = ($('input[type=file]', form) as HTMLInputElement).files;
  for (const f of files ? [...files] : []) out.push({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) });
  for (const f of dropped) out.push(f);
  const text = ($('textarea', form) as HTMLTextAreaElement).value.trim();
  if (text) out.push({ name: 'pasted JSON', bytes: new TextEncoder().encode(text) });
  return out;
}

let dropped: Array<{ name: string; bytes: Uint8Array }> = [];

/** A knowledge node read or a brief read (PROTOCOL 10.2, 10.3), as akas node/brief --json save them. */
const isNodeRead = (j: Json) => typeof j.evidence === 'object' || (typeof j.path === 'string' && typeof j.kind === 'string' && /^(branch|leaf-)/.test(j.kind)) || (typeof j.brief === 'object' && typeof j.manifest === 'object');

function parseJson(bytes: Uint8Array): Json | null {
  try {
    const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null;
  }
}

function resultCard(title: string, kind: string, report: Report): HTMLElement {
  const v = verdict(report.checks);
  const state = el('span', { class: 'v', 'data-state': report.verified ? (v.state === 'unchecked' ? 'unchecked' : 'ok') : 'bad' }, el('span', { class: 'v-text' }, report.verified ? (v.state === 'unchecked' ? 'nothing could be checked' : 'verified') : 'not verified'));
  return el('div', { class: 'result', 'data-result': kind }, el('h3', {}, `${title} `, el('span', { class: 'badge' }, kind), ' ', state), checksTable(report.checks));
}

/** A proposal detail's judgments (akas verify judgments) as checks: the content shown, then each judgment. */
function judgmentChecks(r: VerifierModule.JudgmentsReport): Report {
  const checks: Check[] = [];
  if (r.content) {
    checks.push({ id: 'content.hash', layer: 'content', what: `the content shown hashes to the contentSha256 stated${r.content.binding === 'store' ? " (stored before content binding: bound by the node's store)" : ''}`, valid: r.content.ok, why: r.content.ok ? r.content.contentSha256 : r.content.problems.join('; ') } as Check);
  }
  for (const c of r.checks) {
    checks.push(
      { id: 'judgment.content', layer: 'content', what: `${c.agentTag} judged the content shown`, valid: c.signed === 'v2' ? c.contentSigned === true : null, why: c.signed === 'v2' ? (c.contentSigned ? 'signed over its contentSha256 (akas.judgment.v2)' : c.problems[0]) : "not checked: a v1 judgment signs no content: bound by the node's word only", subject: c.judgmentId } as Check,
      { id: 'judgment.payload', layer: 'L2', what: `${c.agentTag}: the shown fields are what the judge signed`, valid: c.payloadMatches, subject: c.judgmentId } as Check,
      { id: 'judgment.signature', layer: 'L2', what: `${c.agentTag}'s Ed25519 signature`, valid: c.signatureValid, subject: c.judgmentId } as Check,
    );
  }
  return { verified: r.ok, checks };
}

function verifyForm(form: HTMLFormElement) {
  const results = $('[data-verify-results]')!;
  const drop = $('[data-drop]', form);
  if (drop) {
    drop.addEventListener('dragover', (ev) => {
      ev.preventDefault();
      drop.classList.add('over');
    });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', async (ev) => {
      ev.preventDefault();
      drop.classList.remove('over');
      const files = (ev as DragEvent).dataTransfer?.files;
      dropped = [];
      for (const f of files ? [...files] : []) dropped.push({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) });
      drop.querySelector('.muted')!.textContent = `${dropped.length} file${dropped.length === 1 ? '' : 's'} dropped: ${dropped.map((d) => d.name).join(', ')}. Press Check.`;
    });
  }
  void nodeKeys().then(
    (k) => {
      // The pinned keys, when this browser has some, are the default to check against.
      ($('[name=issuer]', form) as HTMLInputElement).value = k.issuer;
      ($('[name=logKey]', form) as HTMLInputElement).value = k.logKey;
    },
    () => undefined,
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    results.replaceChildren(el('p', { class: 'muted' }, 'Checking…'));
    try {
      const V = await loadVerifier();
      const issuer = ($('[name=issuer]', form) as HTMLInputElement).value.trim();
      const logKey = ($('[name=logKey]', form) as HTMLInputElement).value.trim();
      const expected = ($('[name=sha256]', form) as HTMLInputElement).value.trim();
      const issuerKeys = (await nodeKeys().catch(() => null))?.issuerKeys;
      const inputs = await readInputs(form);
      if (!inputs.length) return results.replaceChildren(el('p', {}, 'Choose or drop a file, or paste JSON, first.'));
      const docs = inputs.map((i) => ({ ...i, json: parseJson(i.bytes) }));
      // Files that are not JSON documents are bytes: a bundle's blobs, or files to hash.
      const blobs = new Map<string, Uint8Array>();
      const bytesOnly = docs.filter((d) => !d.json || !(d.json.format || d.json.proof || d.json.entry || d.json.judgments || d.json.type || isNodeRead(d.json)));
      const hashed = await Promise.all(bytesOnly.map(async (d) => ({ d, r: await V.verifyCas(d.bytes, expected || undefined, d.name) })));
      for (const { d, r } of hashed) blobs.set(r.sha256, d.bytes);
      const cards: HTMLElement[] = [];
      for (const d of docs) {
        const j = d.json;
        if (j && typeof j.format === 'string' && j.format.startsWith('akas.bundle')) {
          cards.push(resultCard(d.name, 'bundle', await V.verifyBundle(d.bytes, { issuer: issuer || undefined, issuerKeys, logKey: logKey || undefined, blobs })));
        } else if (j && V.isPresentation(j)) {
          cards.push(resultCard(d.name, 'presentation', await V.verifyPresentation(d.bytes, { issuer: issuer || undefined })));
        } else if (j && j.proof && j.credentialSubject) {
          const trust = issuer && issuerKeys ? await V.trustIssuerKeys(issuer, issuerKeys) : undefined;
          cards.push(resultCard(d.name, 'credential', await V.verifyCredential(d.bytes, { issuer: issuer || undefined, trust, checkJudgeSignature: true })));
        } else if (j && j.entry && j.inclusion) {
          cards.push(resultCard(d.name, 'log proof', await V.verifyLogProof(j, logKey)));
        } else if (j && isNodeRead(j)) {
          // akas node PATH --json, akas brief ID --json: the same checks as akas verify node.
          cards.push(resultCard(d.name, 'node', await V.verifyNode(d.bytes, { issuer: issuer || undefined, issuerKeys: issuer ? issuerKeys : undefined, logKey: logKey || undefined })));
        } else if (j && Array.isArray(j.judgments) && typeof j.proposalId === 'string') {
          cards.push(resultCard(d.name, 'proposal judgments', judgmentChecks(await V.verifyProposalJudgments(j))));
        } else {
          const h = hashed.find((x) => x.d === d);
          const r = h ? h.r : await V.verifyCas(d.bytes, expected || undefined, d.name);
          cards.push(resultCard(`${d.name} (sha256 ${r.sha256}, ${r.bytes} bytes)`, 'file', r));
        }
      }
      results.replaceChildren(...cards);
    } catch (err) {
      results.replaceChildren(el('p', { class: 'v', 'data-state': 'bad' }, el('span', { class: 'v-text' }, `could not check: ${(err as Error).message}`)));
    }
  });
}

// ---------------------------------------------------------------- start

function start() {
  for (const input of $$<HTMLInputElement>('input[data-live-search]')) liveSearch(input);
  document.addEventListener('keydown', (ev) => {
    // "/" jumps to the search box, as on many sites (not while typing in a field).
    const t = ev.target as HTMLElement;
    if (ev.key === '/' && !/^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName) && !t.isContentEditable) {
      ev.preventDefault();
      $<HTMLInputElement>('#q')?.focus();
    }
  });
  const form = $<HTMLFormElement>('[data-verify-form]');
  if (form) verifyForm(form);
  liveLog();
  void verifyPage();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
