// The node's keys this browser trusts: pinned on the first visit (trust on first use, in
// localStorage per origin), or pinned by the reader, who pastes an issuer DID and log key they
// have from elsewhere (issue 32: the label says which, "pinned on first visit" is the node's own
// word at that moment); a changed log key, or an issuer the pinned one does not reach by
// rotations signed by both keys, is said on every page, and checks use the pinned keys.
import type * as VerifierModule from '../../../verifier/browser.js';
import { $, el, getJson } from './dom.js';
import { loadVerifier } from './verifier.js';

interface Pinned {
  issuer: string;
  logKey: string;
  at: number;
  /** How the keys were pinned: on the first visit, from the node's own answer (trust on first use), or by the reader. Older pins say nothing: first visit. */
  by?: 'first-visit' | 'reader';
}
export interface Keys {
  /** The issuer DID and log key this browser trusts (pinned on first visit). */
  issuer: string;
  logKey: string;
  /** The issuer part of GET /api/node/keys (rotations signed by both keys). */
  issuerKeys: VerifierModule.IssuerKeyList;
  /** What changed since the pin, if anything. */
  problems: string[];
  pinnedNow: boolean;
  /** Who pinned them: this browser on the first visit (trust on first use), or the reader. */
  pinnedBy: 'first-visit' | 'reader';
  /** When they were pinned (ms). */
  pinnedAt: number;
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

export function nodeKeys(): Promise<Keys> {
  return (keysOnce ??= (async () => {
    const [d, k] = await Promise.all([
      getJson<{ issuer: { did: string }; log: { verifierKey: string } }>('/.well-known/akas.json'),
      getJson<{ issuer: VerifierModule.IssuerKeyList }>('/api/node/keys'),
    ]);
    let pin = readPin();
    let pinnedNow = false;
    if (!pin) {
      pin = { issuer: d.issuer.did, logKey: d.log.verifierKey, at: Date.now(), by: 'first-visit' };
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
      if (!trust.keys.has(d.issuer.did))
        problems.push(`the node's issuer ${d.issuer.did} is not reached from the pinned ${pin.issuer} by rotations signed by both keys`);
    }
    return {
      issuer: pin.issuer,
      logKey: pin.logKey,
      issuerKeys: k.issuer,
      problems,
      pinnedNow,
      pinnedBy: pin.by === 'reader' ? 'reader' : 'first-visit',
      pinnedAt: pin.at,
    };
  })());
}

export function showPin(keys: Keys) {
  const box = $('[data-pin-status]');
  if (keys.problems.length) {
    const warn = el(
      'div',
      { class: 'pin changed', role: 'alert' },
      el('strong', {}, 'The keys of this node changed since your browser pinned them. '),
      keys.problems.join('; ') + '. Checks below use the pinned keys.',
    );
    $('main')?.prepend(warn);
  }
  if (!box) return;
  const when = new Date(keys.pinnedAt).toISOString().slice(0, 16).replace('T', ' ');
  const label =
    keys.pinnedBy === 'reader'
      ? `Pinned by you (${when} UTC): `
      : keys.pinnedNow
        ? 'Pinned on first visit, now (trust on first use: the keys this node shows today; pin your own below): '
        : `Pinned on first visit (${when} UTC; trust on first use: the keys this node showed then; pin your own below): `;
  box.replaceChildren(
    el(
      'p',
      { 'data-pinned-by': keys.pinnedBy },
      label,
      el('code', { class: 'wrap' }, keys.issuer),
      ' and the log key ',
      el('code', { class: 'wrap' }, keys.logKey),
      keys.problems.length ? '' : '. The node still publishes them.',
    ),
  );
  const forget = el('button', { type: 'button' }, 'Forget the pinned keys');
  forget.addEventListener('click', () => {
    localStorage.removeItem(PIN_KEY);
    location.reload();
  });
  box.append(forget, pinOwnForm());
}

/** The reader pins keys they have from elsewhere (the operator, akas trust pin on a machine they trust): the label then says "pinned by you". */
function pinOwnForm(): HTMLElement {
  const issuer = el('input', { name: 'pin-issuer', size: '60', placeholder: 'did:key:z6Mk...', 'aria-label': 'issuer did:key' }) as HTMLInputElement;
  const logKey = el('input', { name: 'pin-log-key', size: '60', placeholder: 'akas/...+...+...', 'aria-label': 'log key' }) as HTMLInputElement;
  const form = el(
    'form',
    { class: 'pin-own', 'data-pin-own': '' },
    el('label', {}, 'Issuer ', issuer),
    ' ',
    el('label', {}, 'Log key ', logKey),
    ' ',
    el('button', { type: 'submit' }, 'Pin these keys'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const pin: Pinned = { issuer: issuer.value.trim(), logKey: logKey.value.trim(), at: Date.now(), by: 'reader' };
    if (!/^did:key:z[1-9A-HJ-NP-Za-km-z]+$/.test(pin.issuer) || !/^[^+\s]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/.test(pin.logKey)) {
      issuer.setCustomValidity('a did:key issuer and a C2SP log key (NAME+KEYHASH+KEY), as akas node-keys prints them');
      issuer.reportValidity();
      return;
    }
    localStorage.setItem(PIN_KEY, JSON.stringify(pin));
    location.reload();
  });
  return el('details', {}, el('summary', {}, 'Pin keys you have from elsewhere'), form);
}
