// DSSE envelopes of in-toto Statements, checked offline under a key the auditor gives
// (PROTOCOL 16.4): the envelope's shape, its payloadType, a signature over DSSE's PAE by that
// key (Ed25519, or ECDSA P-256 with SHA-256 as raw r||s or DER), and the Statement's shape.
// The Statement is read from the verified payload bytes, never re-parsed from elsewhere (DSSE).
import { createPublicKey, type KeyObject, verify as nodeVerify } from 'node:crypto';
import { dsseBase64, IN_TOTO_PAYLOAD_TYPE, pae, STATEMENT_TYPE } from '../src/core/dsse.js';
import { Checks, type Report } from './report.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

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

/** Whether `sig` is the key's signature of `message`. */
export function signatureHolds(key: KeyObject, message: Uint8Array, sig: Uint8Array): boolean {
  try {
    if (key.asymmetricKeyType === 'ed25519') return nodeVerify(null, message, key, sig);
    return nodeVerify('sha256', message, { key, dsaEncoding: sig.length === 64 ? 'ieee-p1363' : 'der' }, sig);
  } catch {
    return false;
  }
}

/** The checks of one envelope, added to `c`; answers the Statement when the signature held. */
export function envelopeChecking(c: Checks, env: unknown, key: KeyObject, subject?: string): Json | null {
  const payload = isObject(env) ? dsseBase64(env.payload) : null;
  const sigs = isObject(env) && Array.isArray(env.signatures) ? env.signatures : [];
  const shaped =
    isObject(env) && payload !== null && typeof env.payloadType === 'string' && sigs.length > 0 && sigs.every((s) => isObject(s) && dsseBase64(s.sig));
  c.add(
    'dsse.shape',
    'input',
    'a DSSE envelope: payload and payloadType, one or more signatures, base64 where base64 belongs',
    shaped,
    shaped ? undefined : 'payload, payloadType or signatures[].sig is missing or not base64',
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
  const held = sigs.findIndex((s) => signatureHolds(key, message, dsseBase64((s as Json).sig) as Buffer));
  c.add(
    'dsse.signature',
    'L1',
    "a signature over the envelope's PAE holds under the given key",
    held >= 0,
    held >= 0
      ? `signature ${held} (keyid ${String((sigs[held] as Json).keyid ?? '')})`
      : `none of the ${sigs.length} signature(s) is the given key's over this payload`,
    subject,
  );
  if (held < 0) return null;
  let statement: unknown;
  try {
    statement = JSON.parse(payload.toString('utf8'));
  } catch {
    statement = undefined;
  }
  const st = isObject(statement) ? statement : null;
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
      : 'the payload is not an in-toto Statement v1 with subjects that each have a digest',
    subject,
  );
  return ok ? st : null;
}

/** `akas verify dsse FILE --key PEM`: one DSSE envelope checked under the given key. */
export function verifyDsse(doc: unknown, key: KeyObject): Report & { statement?: Json } {
  const c = new Checks();
  const statement = envelopeChecking(c, doc, key);
  return { ...c.report(), ...(statement ? { statement } : {}) };
}
