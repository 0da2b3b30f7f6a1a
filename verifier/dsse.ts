// DSSE envelopes of in-toto Statements, checked offline (PROTOCOL 16.4): the envelope read as
// strict JSON (a duplicated `payload` would let two readers verify two payloads), its shape,
// its payloadType, a signature over DSSE's PAE (Ed25519, or ECDSA P-256 with SHA-256 as raw
// r||s or DER), and the Statement's shape. The Statement is read from the verified payload
// bytes, never re-parsed from elsewhere (DSSE). The signer is the key the auditor gives, or the
// issuer keys a trust file pins, each in its window (8.6): then the key that signed must not
// have been rotated out before it signed, and where that cannot be told the verdict says so.
import { createPublicKey, KeyObject, verify as nodeVerify } from 'node:crypto';
import { isDateTimeStamp, timeOf } from '../src/core/credential.js';
import { AKAS_PREDICATE_BASE, dsseBase64, IN_TOTO_PAYLOAD_TYPE, pae, STATEMENT_TYPE } from '../src/core/dsse.js';
import { parseStrictJson } from '../src/core/strict-json.js';
import type { IssuerTrust, TrustedKey } from './issuer-keys.js';
import { NotCheckableError } from './judgment.js';
import { Checks, type Report } from './report.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Who may have signed: the key the auditor gives (--key), or the issuer keys a trust file pins, each in its window (--trust). */
export type DsseSigner = KeyObject | IssuerTrust;

export interface DsseOptions {
  /** The instant the trust file's windows are read at (ms): a signature exists, so it was made by then. Now by default. */
  now?: number;
}

/**
 * The document of a file (its text or bytes) read as strict JSON (PROTOCOL 16.4), or a value
 * already parsed; throws NotCheckableError (the check cannot run) for text that is not strict JSON.
 */
export function readSupplyChainJson(input: unknown, what: string): unknown {
  if (typeof input !== 'string' && !(input instanceof Uint8Array)) return input;
  const parsed = parseStrictJson(input);
  if (!parsed.ok) throw new NotCheckableError(`not a ${what}: ${parsed.reason}`);
  return parsed.value;
}

/** An SPKI PEM public key that DSSE checks take: Ed25519 or ECDSA P-256; throws saying why not. */
export function dsseKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (e) {
    throw new Error(`not a PEM public key (${(e as Error).message})`);
  }
  const type = key.asymmetricKeyType;
  if (type === 'ed25519') return key;
  if (type === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return key;
  throw new Error(`a ${type === 'ec' ? `${key.asymmetricKeyDetails?.namedCurve} EC` : type} key: DSSE checks take Ed25519 or ECDSA P-256`);
}

/**
 * Whether `sig` is the key's signature of `message`. ECDSA takes either S of a signature (s and
 * n - s both verify): P-256 signers (OpenSSL, Go, WebCrypto, cloud KMSs) do not normalize S, so
 * low-S only would refuse about half of genuine envelopes, and the twin signs the same payload
 * under the same key (akas names nothing by signature bytes). Ed25519's S < L is OpenSSL's rule.
 */
export function signatureHolds(key: KeyObject, message: Uint8Array, sig: Uint8Array): boolean {
  try {
    if (key.asymmetricKeyType === 'ed25519') return nodeVerify(null, message, key, sig);
    return nodeVerify('sha256', message, { key, dsaEncoding: sig.length === 64 ? 'ieee-p1363' : 'der' }, sig);
  } catch {
    return false;
  }
}

/** A key that may have signed, with the pinned issuer key it is (under --trust). */
interface Candidate {
  key: KeyObject;
  pinned?: TrustedKey;
}

const candidatesOf = (signer: DsseSigner): Candidate[] =>
  signer instanceof KeyObject
    ? [{ key: signer }]
    : [...signer.keys.values()].map((pinned) => ({
        key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(pinned.publicKey, 'hex').toString('base64url') }, format: 'jwk' }),
        pinned,
      }));

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
function windowChecking(c: Checks, held: TrustedKey[], st: Json, now: number, subject?: string) {
  const logged = loggedAt(st);
  const after = logged?.at ?? -Infinity;
  const verdicts = held.map((k) => ({ k, v: inWindow(k, after, now) }));
  const best = verdicts.find((x) => x.v === true) ?? verdicts.find((x) => x.v === null) ?? verdicts[0];
  const { k, v } = best;
  const window = `${k.did} was the issuer's from ${iso(k.from)} until ${iso(k.until)} (its window in the trust file)`;
  const named = logged ? `the Statement's ${logged.field} ${iso(logged.at)}` : undefined;
  c.add(
    'issuer.window',
    'L1',
    "the signing key was the issuer's when it signed (its window in the trust file)",
    v,
    v === true
      ? `${k.did} is the issuer's now, as the trust file says`
      : v === false
        ? now < k.from
          ? `${window}: its window has not begun`
          : `${window}, and it signed after ${named}: after it was rotated out`
        : `not checked: ${window}, and the envelope carries no time it was signed at${
            named ? ` (${named} shows only that it signed after then)` : ''
          }; export it again (the node signs with its current key)`,
    subject,
    true,
  );
}

/** The checks of one envelope, added to `c`; answers the Statement when the signature held. */
export function envelopeChecking(c: Checks, env: unknown, signer: DsseSigner, subject?: string, options: DsseOptions = {}): Json | null {
  const payload = isObject(env) ? dsseBase64(env.payload) : null;
  const sigs = isObject(env) && Array.isArray(env.signatures) ? env.signatures : [];
  const shaped =
    isObject(env) &&
    payload !== null &&
    typeof env.payloadType === 'string' &&
    sigs.length > 0 &&
    sigs.every((s) => isObject(s) && dsseBase64(s.sig) && (s.keyid === undefined || typeof s.keyid === 'string'));
  c.add(
    'dsse.shape',
    'input',
    'a DSSE envelope: payload and payloadType, one or more signatures, base64 where base64 belongs',
    shaped,
    shaped ? undefined : 'payload, payloadType or signatures[].sig is missing or not base64 (or a keyid is not a string)',
    subject,
  );
  if (!shaped || !isObject(env) || payload === null) return null;
  const type = env.payloadType as string;
  c.add(
    'dsse.payloadType',
    'content',
    `the payload is an in-toto Statement (${IN_TOTO_PAYLOAD_TYPE})`,
    type === IN_TOTO_PAYLOAD_TYPE,
    `payloadType is ${type}`,
    subject,
  );
  const message = pae(type, payload);
  const candidates = candidatesOf(signer);
  // Every candidate key that signed, with the first of its signatures that holds.
  const held = candidates.flatMap((k) => {
    const i = sigs.findIndex((s) => signatureHolds(k.key, message, dsseBase64((s as Json).sig) as Buffer));
    return i < 0 ? [] : [{ ...k, i }];
  });
  const first = held[0];
  c.add(
    'dsse.signature',
    'L1',
    `a signature over the envelope's PAE holds under ${signer instanceof KeyObject ? 'the given key' : 'an issuer key the trust file pins'}`,
    first !== undefined,
    first
      ? `signature ${first.i} (keyid ${String((sigs[first.i] as Json).keyid ?? '')})${first.pinned ? ` by ${first.pinned.did}` : ''}`
      : `none of the ${sigs.length} signature(s) is ${signer instanceof KeyObject ? "the given key's" : 'by an issuer key the trust file pins'} over this payload`,
    subject,
  );
  if (!first) return null;
  const st = statementOf(payload);
  const subjects = st && Array.isArray(st.subject) ? st.subject : [];
  const ok =
    st !== null &&
    st._type === STATEMENT_TYPE &&
    typeof st.predicateType === 'string' &&
    subjects.length > 0 &&
    subjects.every((s) => isObject(s) && isObject(s.digest) && Object.keys(s.digest).length > 0);
  c.add(
    'statement.shape',
    'content',
    'the payload is an in-toto Statement v1 with a subject digest and a predicateType',
    ok,
    ok
      ? `${String(st?.predicateType)} about ${subjects.length} subject(s)`
      : 'the payload is not an in-toto Statement v1 (strict JSON) with subjects that each have a digest',
    subject,
  );
  if (!ok || st === null) return null;
  const pinned = held.flatMap((h) => (h.pinned ? [h.pinned] : []));
  if (pinned.length) windowChecking(c, pinned, st, options.now ?? Date.now(), subject);
  return st;
}

/** The payload read as a strict JSON object (a duplicate key in a Statement is two Statements), or null. */
function statementOf(payload: Buffer): Json | null {
  const parsed = parseStrictJson(payload);
  return parsed.ok && isObject(parsed.value) ? parsed.value : null;
}

/**
 * `akas verify dsse FILE --key PEM | --trust FILE`: one DSSE envelope (its text, bytes or parsed
 * value) checked under the signer given. Throws NotCheckableError for text that is not strict JSON.
 */
export function verifyDsse(input: unknown, signer: DsseSigner, options: DsseOptions = {}): Report & { statement?: Json } {
  const doc = readSupplyChainJson(input, 'DSSE envelope');
  const c = new Checks();
  const statement = envelopeChecking(c, doc, signer, undefined, options);
  return { ...c.report(), ...(statement ? { statement } : {}) };
}
