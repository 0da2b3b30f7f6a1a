// DSSE envelopes of in-toto Statements, checked offline (PROTOCOL 16.4): the envelope read as
// strict JSON (a duplicated `payload` would let two readers verify two payloads), its shape,
// its payloadType, a signature over DSSE's PAE (Ed25519, or ECDSA P-256 with SHA-256 as raw
// r||s or DER), and the Statement's shape. The Statement is read from the verified payload
// bytes, never re-parsed from elsewhere (DSSE). The signer is the key the auditor gives, or the
// issuer keys a trust file pins, each in its window (8.6): then the key that signed must not
// have been rotated out before it signed, and where that cannot be told the verdict says so.
// One implementation for Node and the browser build: the checks are a generator that yields
// each signature it needs (src/core/checking.ts), run at once in Node (verifyDsse) and awaited
// on WebCrypto in a browser (verifyDsseAsync); keys are read by dsse-key.ts, not node:crypto.
import { ecdsaP256, ed25519, runAsync, runNow, type Checking } from '../src/core/checking.js';
import { isDateTimeStamp, timeOf } from '../src/core/credential.js';
import { AKAS_PREDICATE_BASE, dsseBase64, IN_TOTO_PAYLOAD_TYPE, pae, STATEMENT_TYPE } from '../src/core/dsse.js';
import { parseStrictJson } from '../src/core/strict-json.js';
import { dsseKey, ecdsaRaw, keyOfObject, type DsseKey, type KeyObjectLike } from './dsse-key.js';
import type { IssuerTrust, TrustedKey } from './issuer-keys.js';
import { Checks, readJsonInput, type Report } from './report.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export { dsseKey, type DsseKey };

/**
 * Who may have signed: the key the auditor gives (--key: dsseKey's answer, or a Node KeyObject),
 * or the issuer keys a trust file pins, each in its window (--trust).
 */
export type DsseSigner = DsseKey | KeyObjectLike | IssuerTrust;

export interface DsseOptions {
  /** The instant the trust file's windows are read at (ms): a signature exists, so it was made by then. Now by default. */
  now?: number;
}

/**
 * The document of a file (its text or bytes) read as strict JSON (PROTOCOL 16.4), or a value
 * already parsed; throws NotCheckableError (the check cannot run) for text that is not strict JSON.
 */
export function readSupplyChainJson(input: unknown, what: string): unknown {
  return readJsonInput(input, `a ${what}`);
}

/**
 * Whether `sig` is the key's signature of `message`. ECDSA takes either S of a signature (s and
 * n - s both verify): P-256 signers (OpenSSL, Go, WebCrypto, cloud KMSs) do not normalize S, so
 * low-S only would refuse about half of genuine envelopes, and the twin signs the same payload
 * under the same key (akas names nothing by signature bytes). Ed25519's S < L is OpenSSL's rule.
 */
export function* signatureChecking(key: DsseKey, message: Uint8Array, sig: Uint8Array): Checking<boolean> {
  if (key.algorithm === 'Ed25519') return yield* ed25519(key.publicKey, message, sig);
  const raw = ecdsaRaw(sig);
  return raw !== null && (yield* ecdsaP256(key.publicKey, message, raw));
}

/** A key that may have signed, with the pinned issuer key it is (under --trust). */
interface Candidate {
  key: DsseKey;
  pinned?: TrustedKey;
}

const isTrust = (s: DsseSigner): s is IssuerTrust => s instanceof Object && 'keys' in s && s.keys instanceof Map;
const isKeyObject = (s: DsseSigner): s is KeyObjectLike => typeof (s as KeyObjectLike).export === 'function';

const candidatesOf = (signer: DsseSigner): Candidate[] =>
  isTrust(signer)
    ? [...signer.keys.values()].map((pinned) => ({ key: { algorithm: 'Ed25519', publicKey: pinned.publicKey }, pinned }))
    : [{ key: isKeyObject(signer) ? keyOfObject(signer) : signer }];

/**
 * The time an akas Statement says its log entry was made (PROTOCOL 16.2: the predicate's
 * `attestedAt`, a decision's `decidedAt`, beside its `log`). The node signs an envelope when it
 * is exported, after that entry, so it is a time the envelope was signed AFTER. It is the
 * Statement's own word: read as such it can only show a key was rotated out before it signed,
 * never that it signed in time.
 */
function loggedAt(st: Json): { at: number; field: string } | undefined {
  const p = st.predicate;
  if (typeof st.predicateType !== 'string' || !st.predicateType.startsWith(AKAS_PREDICATE_BASE) || !isObject(p) || !isObject(p.log)) return undefined;
  const field = st.predicateType === `${AKAS_PREDICATE_BASE}decision/v1` ? 'decidedAt' : 'attestedAt';
  return isDateTimeStamp(p[field]) ? { at: timeOf(p[field]), field } : undefined;
}

const iso = (t: number) => (Number.isFinite(t) ? new Date(t).toISOString() : t < 0 ? 'the start' : 'now');

/**
 * Whether a pinned key was the issuer's when it signed, the signature made between `after` (the
 * log time the Statement names; -Infinity without one) and `now`. True while the key is the
 * issuer's now, as the file says: what it signs, the issuer signs (its start is not applied, as
 * the node signs an old attestation with the key current at export). False when the signing
 * span and the window do not meet: the key was rotated out before the Statement's log time, or
 * its window has not begun. Otherwise null: nothing tells when it signed (PROTOCOL 16.4).
 */
function inWindow(k: TrustedKey, after: number, now: number): boolean | null {
  if (now < k.from || after >= k.until) return false;
  return now < k.until ? true : null;
}

/** The issuer.window check of the pinned keys whose signatures held: the best of them (true, else null, else false). */
function windowChecking(c: Checks, held: TrustedKey[], st: Json, now: number, byTrustFile: boolean, subject?: string) {
  // A trust file gives each key its window; a pinned DID reaches the others by the node's signed rotations (8.3).
  const source = byTrustFile ? 'its window in the trust file' : 'its window by the signed rotations';
  const logged = loggedAt(st);
  const after = logged?.at ?? -Infinity;
  const verdicts = held.map((k) => ({ k, v: inWindow(k, after, now) }));
  const best = verdicts.find((x) => x.v === true) ?? verdicts.find((x) => x.v === null) ?? verdicts[0];
  const { k, v } = best;
  const window = `${k.did} was the issuer's from ${iso(k.from)} until ${iso(k.until)} (${source})`;
  const named = logged ? `the Statement's ${logged.field} ${iso(logged.at)}` : undefined;
  c.add({
    id: 'issuer.window',
    what: `the signing key was the issuer's when it signed (${source})`,
    valid: v,
    why:
      v === true
        ? `${k.did} is the issuer's now, as ${byTrustFile ? 'the trust file says' : 'the signed rotations say'}`
        : v === false
          ? now < k.from
            ? `${window}: its window has not begun`
            : `${window}, and it signed after ${named}: after it was rotated out`
          : `not checked: ${window}, and the envelope carries no time it was signed at${
              named ? ` (${named} shows only that it signed after then)` : ''
            }; export it again (the node signs with its current key)`,
    subject,
    anchor: true,
  });
}

/** The checks of one envelope, added to `c`; answers the Statement when the signature held. */
export function* envelopeChecking(c: Checks, env: unknown, signer: DsseSigner, subject?: string, options: DsseOptions = {}): Checking<Json | null> {
  const payload = isObject(env) ? dsseBase64(env.payload) : null;
  const sigs = isObject(env) && Array.isArray(env.signatures) ? env.signatures : [];
  const shaped =
    isObject(env) &&
    payload !== null &&
    typeof env.payloadType === 'string' &&
    sigs.length > 0 &&
    sigs.every((s) => isObject(s) && dsseBase64(s.sig) && (s.keyid === undefined || typeof s.keyid === 'string'));
  c.add({
    id: 'dsse.shape',
    what: 'a DSSE envelope: payload and payloadType, one or more signatures, base64 where base64 belongs',
    valid: shaped,
    why: shaped ? undefined : 'payload, payloadType or signatures[].sig is missing or not base64 (or a keyid is not a string)',
    subject,
  });
  if (!shaped || !isObject(env) || payload === null) return null;
  const type = env.payloadType as string;
  c.add({
    id: 'dsse.payloadType',
    what: `the payload is an in-toto Statement (${IN_TOTO_PAYLOAD_TYPE})`,
    valid: type === IN_TOTO_PAYLOAD_TYPE,
    why: `payloadType is ${type}`,
    subject,
  });
  const message = pae(type, payload);
  const pinnedKeys = isTrust(signer);
  // Every candidate key that signed, with the first of its signatures that holds.
  const held: Array<Candidate & { i: number }> = [];
  for (const k of candidatesOf(signer))
    for (const [i, s] of sigs.entries())
      if (yield* signatureChecking(k.key, message, dsseBase64((s as Json).sig) as Uint8Array)) {
        held.push({ ...k, i });
        break;
      }
  const first = held[0];
  const pinnedBy = pinnedKeys && !signer.byTrustFile ? `reached from ${signer.pinned}` : 'the trust file pins';
  c.add({
    id: 'dsse.signature',
    what: `a signature over the envelope's PAE holds under ${pinnedKeys ? `an issuer key ${pinnedBy}` : 'the given key'}`,
    valid: first !== undefined,
    why: first
      ? `signature ${first.i} (keyid ${String((sigs[first.i] as Json).keyid ?? '')})${first.pinned ? ` by ${first.pinned.did}` : ''}`
      : `none of the ${sigs.length} signature(s) is ${pinnedKeys ? `by an issuer key ${pinnedBy}` : "the given key's"} over this payload`,
    subject,
  });
  if (!first) return null;
  const st = statementOf(payload);
  const subjects = st && Array.isArray(st.subject) ? st.subject : [];
  const ok =
    st !== null &&
    st._type === STATEMENT_TYPE &&
    typeof st.predicateType === 'string' &&
    subjects.length > 0 &&
    subjects.every((s) => isObject(s) && isObject(s.digest) && Object.keys(s.digest).length > 0);
  c.add({
    id: 'statement.shape',
    what: 'the payload is an in-toto Statement v1 with a subject digest and a predicateType',
    valid: ok,
    why: ok
      ? `${String(st?.predicateType)} about ${subjects.length} subject(s)`
      : 'the payload is not an in-toto Statement v1 (strict JSON) with subjects that each have a digest',
    subject,
  });
  if (!ok || st === null) return null;
  const pinned = held.flatMap((h) => (h.pinned ? [h.pinned] : []));
  if (pinned.length) windowChecking(c, pinned, st, options.now ?? Date.now(), isTrust(signer) && signer.byTrustFile === true, subject);
  return st;
}

/** The payload read as a strict JSON object (a duplicate key in a Statement is two Statements), or null. */
function statementOf(payload: Uint8Array): Json | null {
  const parsed = parseStrictJson(payload);
  return parsed.ok && isObject(parsed.value) ? parsed.value : null;
}

export type DsseReport = Report & { statement?: Json };

/** The checks of verifyDsse, as a generator of the signatures they need. */
export function* dsseChecking(input: unknown, signer: DsseSigner, options: DsseOptions = {}): Checking<DsseReport> {
  const doc = readSupplyChainJson(input, 'DSSE envelope');
  const c = new Checks();
  const statement = yield* envelopeChecking(c, doc, signer, undefined, options);
  return { ...c.report(), ...(statement ? { statement } : {}) };
}

/**
 * `akas verify dsse FILE --key PEM | --trust FILE`: one DSSE envelope (its text, bytes or parsed
 * value) checked under the signer given. Throws NotCheckableError for text that is not strict JSON.
 */
export function verifyDsse(input: unknown, signer: DsseSigner, options: DsseOptions = {}): DsseReport {
  return runNow(dsseChecking(input, signer, options));
}

/** verifyDsse where signatures are asynchronous (WebCrypto in a browser); the same checks. Rejects with NotCheckableError for text that is not strict JSON. */
export function verifyDsseAsync(input: unknown, signer: DsseSigner, options: DsseOptions = {}): Promise<DsseReport> {
  return runAsync(dsseChecking(input, signer, options));
}
