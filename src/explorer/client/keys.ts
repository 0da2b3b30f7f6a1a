// The node's keys this browser trusts: pinned on the first visit (trust on first use, in
// localStorage per origin); a changed log key, or an issuer the pinned one does not reach by
// rotations signed by both keys, is said on every page, and checks use the pinned keys.
import type * as VerifierModule from '../../../verifier/browser.js';
import { $, el, getJson } from './dom.js';
import { loadVerifier } from './verifier.js';

interface Pinned {
  issuer: string;
  logKey: string;
  at: number;
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
      if (!trust.keys.has(d.issuer.did))
        problems.push(`the node's issuer ${d.issuer.did} is not reached from the pinned ${pin.issuer} by rotations signed by both keys`);
    }
    return { issuer: pin.issuer, logKey: pin.logKey, issuerKeys: k.issuer, problems, pinnedNow };
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
  box.replaceChildren(
    el(
      'p',
      {},
      keys.pinnedNow ? 'Pinned now (first visit): ' : `Pinned by this browser: `,
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
  box.append(forget);
}
