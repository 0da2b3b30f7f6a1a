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
import { ed25519Hex, type Checking } from '../src/core/checking.js';
import { sha256 } from '../src/core/crypto.js';
import { publicKeyFromMultibase } from '../src/core/didkey.js';
import { canonicalize } from '../src/core/jcs.js';
import {
  getStatusBit,
  multibaseBase64url,
  STATUS_ENTRY_TYPE,
  STATUS_HEAD_TYPE,
  STATUS_LIST_CREDENTIAL_TYPE,
  STATUS_LIST_LENGTH,
  STATUS_LIST_TYPE,
  statusHeadStatement,
  type StatusHead,
} from '../src/core/status-list.js';
import { credentialChecking } from './credential.js';
import type { IssuerTrust } from './issuer-keys.js';
import type { CheckId, Checks } from './report.js';
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
  /** sha256 hex of the JCS of the list credential (what a version's log entry and a status head name). */
  sha256: string;
  /** Its version, where the source says (a bundle's item, a status head, the node's X-Status-List-Version). */
  version?: number;
  /** The status head that names this very version as the newest (the list then speaks as of the head's time). */
  head?: ReadHead;
}

/** A status head that checked out (PROTOCOL 8.7): the newest version of each list at a log size, by list URL. */
export interface ReadHead {
  issuer: string;
  origin: string;
  treeSize: number;
  rootHash: string;
  /** When the issuer said so (ms). */
  at: number;
  lists: Map<string, { purpose: string; version: number; credentialSha256: string; index: number }>;
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
/** sha256 hex of the JCS of a document ('' when it cannot be canonicalized). */
export function jcsSha256(v: unknown): string {
  try {
    return hex(sha256(canonicalize(v)));
  } catch {
    return '';
  }
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
    c.add({ id: 'status.list', what, valid: false, why, subject: url });
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
  c.add({
    id: 'status.list',
    what,
    valid: true,
    why: `${subject.statusPurpose}, ${bits.length * 8} entries, valid from ${String(doc.validFrom)}`,
    subject: doc.id,
  });
  return { url: doc.id, purpose: subject.statusPurpose, bits, validFrom: String(doc.validFrom), issuer: vc.issuer ?? '', sha256: jcsSha256(list) };
}

const HEAD_WHAT = "a status head: the issuer's signed word on the newest version of each list logged at a checkpoint (PROTOCOL 8.7)";
const SHA256_HEX = /^[0-9a-f]{64}$/;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

// The shape of a head, or why it is not one.
function headShape(h: unknown): string | undefined {
  if (!isObject(h) || h.type !== STATUS_HEAD_TYPE) return `not an ${STATUS_HEAD_TYPE}`;
  if (typeof h.issuer !== 'string' || typeof h.origin !== 'string' || typeof h.rootHash !== 'string') return 'issuer, origin and rootHash are strings';
  if (!isCount(h.treeSize) || !isCount(h.at)) return 'treeSize and at are whole numbers';
  if (!Array.isArray(h.lists)) return 'lists is an array';
  for (const l of h.lists)
    if (
      !isObject(l) ||
      typeof l.purpose !== 'string' ||
      !isUrl(l.list) ||
      !isCount(l.version) ||
      !isCount(l.index) ||
      !SHA256_HEX.test(String(l.credentialSha256))
    )
      return 'each list names its purpose, URL, version, log index and credentialSha256';
  const ns = h.nodeSignature;
  if (!isObject(ns) || ns.algorithm !== 'Ed25519' || ns.issuer !== h.issuer) return 'it carries no Ed25519 nodeSignature by its issuer';
  return undefined;
}

/**
 * Checks a status head: its shape, the issuer's Ed25519 signature over it, and that the key was
 * the issuer's (pinned, in its window at the head's time) or, unpinned, one of `issuers`. Adds
 * one check `status.head`; answers the head when it holds.
 */
export function* statusHeadChecking(c: Checks, head: unknown, o: { trust?: IssuerTrust; issuers?: string[] }): Checking<ReadHead | undefined> {
  const bad = headShape(head);
  if (bad) {
    c.add({ id: 'status.head', what: HEAD_WHAT, valid: false, why: bad });
    return undefined;
  }
  const h = head as unknown as StatusHead;
  const publicKey = h.issuer.startsWith('did:key:') ? publicKeyFromMultibase(h.issuer) : null;
  const signed = publicKey !== null && (yield* ed25519Hex(publicKey, statusHeadStatement(h), h.nodeSignature!.signature));
  const key = o.trust?.keys.get(h.issuer);
  const why = !signed
    ? 'the signature does not verify under the key it names: the head was changed'
    : o.trust
      ? key === undefined
        ? `${h.issuer} is not an issuer key ${o.trust.byTrustFile ? 'the trust file pins' : `reached from ${o.trust.pinned}`}`
        : h.at < key.from || h.at >= key.until
          ? "that key was not the issuer's when the head was made"
          : undefined
      : (o.issuers ?? []).includes(h.issuer)
        ? undefined
        : `signed by ${h.issuer}, not by the credentials' issuer`;
  c.add({ id: 'status.head', what: HEAD_WHAT, valid: why === undefined, why: why ?? `at tree size ${h.treeSize}, ${new Date(h.at).toISOString()}` });
  if (why) return undefined;
  const lists = new Map(h.lists.map((l) => [l.list, { purpose: l.purpose, version: l.version, credentialSha256: l.credentialSha256, index: l.index }]));
  return { issuer: h.issuer, origin: h.origin, treeSize: h.treeSize, rootHash: h.rootHash, at: h.at, lists };
}

/**
 * Binds the lists that checked out to the heads that did (PROTOCOL 8.7): a list a head names as
 * the newest speaks as of the head's time; a list of a URL a head covers that is not the version
 * it names is refused (`status.fresh`, failed: an older or another version, a rollback), and is
 * dropped from `lists` so no credential is read in it.
 */
export function bindHeads(c: Checks, lists: Map<string, ReadList>, heads: ReadHead[]): void {
  for (const [url, list] of lists) {
    const named = heads.map((h) => ({ h, l: h.lists.get(url) })).filter((x) => x.l !== undefined);
    if (!named.length) continue;
    const match = named.find((x) => x.l!.credentialSha256 === list.sha256 && x.l!.purpose === list.purpose);
    if (match) {
      list.head = match.h;
      list.version = match.l!.version;
      continue;
    }
    const newest = named.sort((a, b) => b.h.at - a.h.at)[0];
    c.add({
      id: 'status.fresh',
      what: 'the list is the newest version the status head names (no older version stands in for it)',
      valid: false,
      why:
        `the status head of ${new Date(newest.h.at).toISOString()} names version ${newest.l!.version} of ${url}; the list given is another` +
        `${list.version !== undefined ? ` (version ${list.version})` : ''}`,
      subject: url,
    });
    lists.delete(url);
  }
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
const TEXTS = new Map<string, { id: CheckId; what: string }>();
// The purposes Bitstring Status List §2.1 names have a check id each; an entry of any other
// purpose (the credential's own word) is checked the same way under `status.other`, its purpose
// in the check's text: an id is never made of what the input says (PROTOCOL 8.8).
const PURPOSE_IDS: Record<string, CheckId> = {
  revocation: 'status.revocation',
  suspension: 'status.suspension',
  refresh: 'status.refresh',
  message: 'status.message',
};
function textsOf(purpose: string) {
  let t = TEXTS.get(purpose);
  if (!t) {
    const done = purpose === 'revocation' ? 'revoked' : purpose === 'suspension' ? 'suspended' : `set for ${purpose}`;
    t = { id: Object.hasOwn(PURPOSE_IDS, purpose) ? PURPOSE_IDS[purpose] : 'status.other', what: `not ${done} (Bitstring Status List §3.2)` };
    if (TEXTS.size < 64) TEXTS.set(purpose, t);
  }
  return t;
}
let clear: { purpose: string; list: ReadList; text: string } | undefined;
function clearText(purpose: string, list: ReadList) {
  if (clear?.purpose !== purpose || clear.list !== list)
    clear = { purpose, list, text: `not ${purpose === 'revocation' ? 'revoked' : 'suspended'} ${asOf(list)}` };
  return clear.text;
}

/** The time and version a list speaks for: its head's (the newest at a checkpoint) or, without one, its own validFrom. */
export function asOf(list: ReadList): string {
  const version = list.version !== undefined ? `version ${list.version}` : 'version not given';
  return list.head
    ? `as of ${new Date(list.head.at).toISOString()} (${version}, the newest at tree size ${list.head.treeSize})`
    : `as of ${list.validFrom} (${version}; no status head says whether a newer one exists)`;
}

// A list with no head that was made before the credential says nothing of it: the credential
// did not exist yet, and the list alone cannot say that no version came after it.
const predates = (list: ReadList, credentialValidFrom: unknown) =>
  !list.head && typeof credentialValidFrom === 'string' && Date.parse(list.validFrom) < Date.parse(credentialValidFrom);

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
    c.add({
      id: 'status',
      what: 'the credential carries a status entry (Bitstring Status List §2.1)',
      valid: null,
      why: 'status unknown: no credentialStatus (issued before status lists)',
      subject: o.subject,
    });
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
      c.add({ id, what, valid: false, why: `a malformed ${STATUS_ENTRY_TYPE} (MALFORMED_VALUE_ERROR)`, subject: o.subject });
      return verdict('malformed');
    }
    const list = lists.get(listUrl);
    if (!list) {
      c.add({
        id,
        what,
        valid: null,
        why: `status unknown: the list ${listUrl} could not be read${o.unreadable?.get(listUrl) ? ` (${o.unreadable.get(listUrl)})` : ''}`,
        subject: o.subject,
      });
      return verdict('unknown');
    }
    if (list.purpose !== purpose) {
      c.add({
        id,
        what,
        valid: false,
        why: `the list at ${listUrl} is a ${list.purpose} list, the entry says ${purpose} (STATUS_VERIFICATION_ERROR)`,
        subject: o.subject,
      });
      return verdict('malformed');
    }
    if (index >= list.bits.length * 8) {
      c.add({ id, what, valid: false, why: `index ${index} is past the list's ${list.bits.length * 8} entries (RANGE_ERROR)`, subject: o.subject });
      return verdict('malformed');
    }
    if (!getStatusBit(list.bits, index)) {
      const validFrom = isObject(credential) ? credential.validFrom : undefined;
      if (predates(list, validFrom)) {
        c.add({
          id,
          what,
          valid: null,
          why:
            `status unknown: the list (valid from ${list.validFrom}) predates the credential (valid from ${String(validFrom)}) and no status head ` +
            'says it is still the newest: check with --status, or give the status head with the list',
          subject: o.subject,
        });
        return verdict('unknown');
      }
      c.add({ id, what, valid: true, why: clearText(purpose, list), subject: o.subject });
      return verdict('clear', { asOf: list.head ? new Date(list.head.at).toISOString() : list.validFrom });
    }
    const why = o.reasons?.(listUrl, index);
    const when = why ? new Date(why.at).toISOString() : `at or before ${list.validFrom}`;
    c.add({
      id,
      what,
      valid: false,
      why:
        `${purpose === 'revocation' ? 'REVOKED' : purpose === 'suspension' ? 'SUSPENDED' : `set for ${purpose}`} ${when}: ` +
        `${why ? why.reason : 'reason not given (the list versions name it)'} (list ${asOf(list)})`,
      subject: o.subject,
    });
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
