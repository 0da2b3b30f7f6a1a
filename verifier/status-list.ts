// Status checks (W3C Bitstring Status List v1.0 §3.2; PROTOCOL 8.7): one module for the three
// verifiers (the CLI, the single file, the browser build). A list credential is checked as any
// credential (verifier/credential.ts), then as a list: its types, its purpose, its encodedList
// (multibase base64url of a GZIP bitstring, index 0 the high bit of byte 0) and akas's own bound,
// the spec's minimum of 131,072 entries, which the reference library does not enforce. A
// credential's entries are then read in the lists: a bit set is a failed check naming the
// purpose, the reason and the time; a list that could not be read is `null` ("status unknown"),
// never good.
//
// GZIP is not done here: the caller passes `inflate` (node:zlib in Node; in a browser the
// entry inflates with DecompressionStream first, then hands the bytes in: see inflateAsync).
import type { Checking } from '../src/core/checking.js';
import {
  getStatusBit,
  multibaseBase64url,
  STATUS_ENTRY_TYPE,
  STATUS_LIST_CREDENTIAL_TYPE,
  STATUS_LIST_LENGTH,
  STATUS_LIST_TYPE,
} from '../src/core/status-list.js';
import { credentialChecking } from './credential.js';
import type { IssuerTrust } from './issuer-keys.js';
import type { Checks } from './report.js';
import { isObject, isUrl } from './vc.js';

type Json = Record<string, unknown>;

/** GZIP-decompresses (throws on bytes that are not GZIP, or inflate past maxBytes). */
export type Inflate = (gzipped: Uint8Array, maxBytes: number) => Uint8Array;
/** The largest list inflated: 128 times the minimum (16 MiB, 134 million entries); a bigger one is refused, not inflated. */
export const MAX_LIST_BYTES = 128 * (STATUS_LIST_LENGTH / 8);

export interface StatusListOptions {
  /** The instant the list's validity window is checked at (ms); now by default. */
  at?: number;
  /** The DIDs a list may be issued by (the credentials' issuer), when no trust chain is given. */
  issuers?: string[];
  trust?: IssuerTrust;
  inflate: Inflate;
}

/** A list that checked out: where it answers for, its purpose, its bits and the time it speaks for. */
export interface ReadList {
  url: string;
  purpose: string;
  bits: Uint8Array;
  validFrom: string;
  issuer: string;
}

/** Why a change was made, where the caller knows (a list's version records): by list URL and index. */
export type StatusReasons = (listUrl: string, index: number) => { reason: string; at: number; version?: number } | undefined;

/** Inflates an encodedList; a string saying why when it is not multibase base64url GZIP of at most MAX_LIST_BYTES. */
export function inflateList(encodedList: unknown, inflate: Inflate): Uint8Array | string {
  const gz = multibaseBase64url(encodedList);
  if (!gz) return "encodedList is not multibase base64url ('u' + base64url, no padding)";
  try {
    return inflate(gz, MAX_LIST_BYTES);
  } catch (e) {
    return `encodedList is not GZIP of at most ${MAX_LIST_BYTES} bytes (${(e as Error).message})`;
  }
}

/**
 * Checks one BitstringStatusListCredential (§2.2, §3.2 steps 2-5): its proof and issuer as a
 * credential, its shape as a list, its length. Adds one check `status.list` for the list (the
 * credential checks that failed are named in it) and answers the list when it holds.
 */
export function* statusListChecking(c: Checks, list: unknown, o: StatusListOptions): Checking<ReadList | undefined> {
  const url = isObject(list) && typeof list.id === 'string' ? list.id : '(a list without id)';
  const what = 'a status list: a BitstringStatusListCredential by the issuer, of at least 131,072 entries (Bitstring Status List §2.2, §3.2)';
  const fail = (why: string): undefined => {
    c.add('status.list', 'L1', what, false, why, url);
    return undefined;
  };
  const vc = yield* credentialChecking(list, { at: o.at, trust: o.trust });
  const broken = vc.checks.filter((k) => k.valid === false);
  if (broken.length) return fail(`the list credential does not verify: ${broken.map((k) => `${k.id} (${k.why ?? k.what})`).join('; ')}`);
  const doc = list as Json;
  if (!o.trust && !(o.issuers ?? []).includes(vc.issuer ?? '')) return fail(`the list is issued by ${vc.issuer}, not by the credentials' issuer`);
  if (!isUrl(doc.id)) return fail('the list credential has no URL id');
  const types = Array.isArray(doc.type) ? doc.type : [doc.type];
  if (!types.includes(STATUS_LIST_CREDENTIAL_TYPE)) return fail(`its type does not include ${STATUS_LIST_CREDENTIAL_TYPE}`);
  const subject = doc.credentialSubject;
  if (!isObject(subject) || subject.type !== STATUS_LIST_TYPE) return fail(`its credentialSubject is not a ${STATUS_LIST_TYPE}`);
  if (typeof subject.statusPurpose !== 'string') return fail('its statusPurpose is not a string');
  const bits = inflateList(subject.encodedList, o.inflate);
  if (typeof bits === 'string') return fail(bits);
  // §3.2 step 5 (STATUS_LIST_LENGTH_ERROR): the herd a credential hides in.
  if (bits.length * 8 < STATUS_LIST_LENGTH)
    return fail(`the list holds ${bits.length * 8} entries, fewer than the ${STATUS_LIST_LENGTH} required (STATUS_LIST_LENGTH_ERROR)`);
  c.add('status.list', 'L1', what, true, `${subject.statusPurpose}, ${bits.length * 8} entries, valid from ${String(doc.validFrom)}`, doc.id);
  return { url: doc.id, purpose: subject.statusPurpose, bits, validFrom: String(doc.validFrom), issuer: vc.issuer ?? '' };
}

/** What one entry of a credential says. */
export interface StatusVerdict {
  purpose: string;
  index: number;
  list: string;
  /** clear: not revoked/suspended as of `asOf`; set: revoked/suspended; unknown: the list could not be read. */
  state: 'clear' | 'set' | 'unknown' | 'malformed';
  asOf?: string;
  reason?: string;
  at?: number;
}

/** The credentialStatus entries of a credential (none for one issued before status lists). */
export function statusEntries(credential: unknown): unknown[] {
  if (!isObject(credential)) return [];
  const s = credential.credentialStatus;
  return s === undefined ? [] : Array.isArray(s) ? s : [s];
}

const INDEX = /^(0|[1-9][0-9]{0,15})$/;

// A batch reads thousands of entries of the same purposes in the same lists: their checks'
// texts are made once per purpose (and list time), not once per entry.
const TEXTS = new Map<string, { id: string; what: string }>();
function textsOf(purpose: string) {
  let t = TEXTS.get(purpose);
  if (!t) {
    const done = purpose === 'revocation' ? 'revoked' : purpose === 'suspension' ? 'suspended' : `set for ${purpose}`;
    t = { id: `status.${purpose}`, what: `not ${done} (Bitstring Status List §3.2)` };
    if (TEXTS.size < 64) TEXTS.set(purpose, t);
  }
  return t;
}
let clear: { purpose: string; validFrom: string; text: string } | undefined;
function clearText(purpose: string, validFrom: string) {
  if (clear?.purpose !== purpose || clear.validFrom !== validFrom)
    clear = { purpose, validFrom, text: `not ${purpose === 'revocation' ? 'revoked' : 'suspended'} as of ${validFrom}` };
  return clear.text;
}

/**
 * Reads a credential's entries (§2.1, §3.2 steps 3, 6, 7) in the lists that checked out: one
 * check `status.PURPOSE` per entry; `unreadable` says why a list is missing (status unknown).
 */
export function credentialStatusChecks(
  c: Checks,
  credential: unknown,
  lists: Map<string, ReadList>,
  o: { unreadable?: Map<string, string>; reasons?: StatusReasons; subject?: string } = {},
): StatusVerdict[] {
  const entries = statusEntries(credential);
  if (!entries.length) {
    c.add(
      'status',
      'L1',
      'the credential carries a status entry (Bitstring Status List §2.1)',
      null,
      'status unknown: no credentialStatus (issued before status lists)',
      o.subject,
    );
    return [];
  }
  return entries.map((e) => {
    const entry = isObject(e) ? e : {};
    const purpose = typeof entry.statusPurpose === 'string' ? entry.statusPurpose : '?';
    const { id, what } = textsOf(purpose);
    const listUrl = typeof entry.statusListCredential === 'string' ? entry.statusListCredential : '';
    const index = typeof entry.statusListIndex === 'string' && INDEX.test(entry.statusListIndex) ? Number(entry.statusListIndex) : -1;
    const verdict = (state: StatusVerdict['state'], extra?: Partial<StatusVerdict>): StatusVerdict =>
      extra ? { purpose, index, list: listUrl, state, ...extra } : { purpose, index, list: listUrl, state };
    // §2.1: the entry's MUSTs (MALFORMED_VALUE_ERROR).
    if (entry.type !== STATUS_ENTRY_TYPE || purpose === '?' || index < 0 || !isUrl(listUrl) || entry.id === listUrl) {
      c.add(id, 'L1', what, false, `a malformed ${STATUS_ENTRY_TYPE} (MALFORMED_VALUE_ERROR)`, o.subject);
      return verdict('malformed');
    }
    const list = lists.get(listUrl);
    if (!list) {
      c.add(
        id,
        'L1',
        what,
        null,
        `status unknown: the list ${listUrl} could not be read${o.unreadable?.get(listUrl) ? ` (${o.unreadable.get(listUrl)})` : ''}`,
        o.subject,
      );
      return verdict('unknown');
    }
    if (list.purpose !== purpose) {
      c.add(id, 'L1', what, false, `the list at ${listUrl} is a ${list.purpose} list, the entry says ${purpose} (STATUS_VERIFICATION_ERROR)`, o.subject);
      return verdict('malformed');
    }
    if (index >= list.bits.length * 8) {
      c.add(id, 'L1', what, false, `index ${index} is past the list's ${list.bits.length * 8} entries (RANGE_ERROR)`, o.subject);
      return verdict('malformed');
    }
    if (!getStatusBit(list.bits, index)) {
      c.add(id, 'L1', what, true, clearText(purpose, list.validFrom), o.subject);
      return verdict('clear', { asOf: list.validFrom });
    }
    const why = o.reasons?.(listUrl, index);
    const when = why ? new Date(why.at).toISOString() : `at or before ${list.validFrom}`;
    c.add(
      id,
      'L1',
      what,
      false,
      `${purpose === 'revocation' ? 'REVOKED' : purpose === 'suspension' ? 'SUSPENDED' : `set for ${purpose}`} ${when}: ` +
        `${why ? why.reason : 'reason not given (the list versions name it)'} (list as of ${list.validFrom})`,
      o.subject,
    );
    return verdict('set', { asOf: list.validFrom, ...(why ? { reason: why.reason, at: why.at } : {}) });
  });
}

/** Inflates with the platform's DecompressionStream (browsers; Node has it too), bounded by maxBytes. */
export async function inflateAsync(gzipped: Uint8Array, maxBytes = MAX_LIST_BYTES): Promise<Uint8Array> {
  const stream = new Blob([gzipped as never]).stream().pipeThrough(new DecompressionStream('gzip'));
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel();
      throw new Error(`more than ${maxBytes} bytes`);
    }
    parts.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * An Inflate for a browser: every list's encodedList is inflated asynchronously first
 * (inflateAsync), and the synchronous checks then read the bytes it kept.
 */
export async function preinflated(lists: unknown[]): Promise<Inflate> {
  const done = new Map<string, Uint8Array | Error>();
  const key = (gz: Uint8Array) => {
    let s = '';
    for (let i = 0; i < gz.length; i++) s += String.fromCharCode(gz[i]);
    return s;
  };
  for (const l of lists) {
    const encoded = isObject(l) && isObject(l.credentialSubject) ? l.credentialSubject.encodedList : undefined;
    const gz = multibaseBase64url(encoded);
    if (!gz) continue;
    done.set(key(gz), await inflateAsync(gz).catch((e: Error) => e));
  }
  return (gz) => {
    const r = done.get(key(gz));
    if (r === undefined) throw new Error('not inflated');
    if (r instanceof Error) throw r;
    return r;
  };
}
