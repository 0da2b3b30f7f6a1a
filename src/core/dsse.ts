// The supply-chain formats akas exports in (PROTOCOL 16), as pure code: the in-toto Statement v1
// (in-toto/attestation spec/v1/statement.md), DSSE v1's envelope and its pre-authentication
// encoding (secure-systems-lab/dsse protocol.md), and the Sigstore bundle v0.3 that carries one
// keyed DSSE envelope (sigstore/protobuf-specs sigstore_bundle.proto). Building them is here so
// the node (which signs), the CLI (which wraps) and the verifier (which checks) share one PAE.

export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
/** The DSSE payloadType of an in-toto Statement (in-toto spec/v1/envelope.md). */
export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
export const SIGSTORE_BUNDLE_V03 = 'application/vnd.dev.sigstore.bundle.v0.3+json';
/** Where akas's own predicate types live: `<base><kind>/v<major>` (PROTOCOL 16.2). */
export const AKAS_PREDICATE_BASE = 'https://akas.dev/attestation/';

export interface ResourceDescriptor {
  name?: string;
  uri?: string;
  digest: Record<string, string>;
}

export interface Statement {
  _type: typeof STATEMENT_TYPE;
  subject: ResourceDescriptor[];
  predicateType: string;
  predicate: Record<string, unknown>;
}

export interface DsseSignature {
  keyid: string;
  sig: string;
}

export interface DsseEnvelope {
  payload: string;
  payloadType: string;
  signatures: DsseSignature[];
}

export interface SigstoreBundle {
  mediaType: typeof SIGSTORE_BUNDLE_V03;
  verificationMaterial: { publicKey: { hint: string }; tlogEntries: []; timestampVerificationData: Record<string, never> };
  dsseEnvelope: DsseEnvelope;
}

/**
 * DSSE's pre-authentication encoding: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body,
 * lengths in bytes as ASCII decimal. The signature is over these bytes, never the payload alone.
 */
export function pae(payloadType: string, body: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${body.length} `), body]);
}

/** A DSSE envelope of one signature: `sign` gets the PAE bytes and answers the raw signature. */
export function dsseEnvelope(payload: Uint8Array, payloadType: string, keyid: string, sign: (pae: Buffer) => Uint8Array): DsseEnvelope {
  const sig = sign(pae(payloadType, payload));
  return { payload: Buffer.from(payload).toString('base64'), payloadType, signatures: [{ keyid, sig: Buffer.from(sig).toString('base64') }] };
}

/**
 * The Sigstore bundle v0.3 of a keyed DSSE envelope: no certificate, no Rekor entry, no
 * timestamp (akas's own log evidence rides beside it as a tlog-proof, never as a tlogEntry).
 * `publicKey.hint` is the envelope's keyid, as the bundle spec asks.
 */
export function sigstoreBundle(envelope: DsseEnvelope): SigstoreBundle {
  return {
    mediaType: SIGSTORE_BUNDLE_V03,
    verificationMaterial: { publicKey: { hint: envelope.signatures[0]?.keyid ?? '' }, tlogEntries: [], timestampVerificationData: {} },
    dsseEnvelope: envelope,
  };
}

/** Standard or URL-safe base64, padded or not (DSSE: "verifiers MUST accept either"); null when it is neither. */
export function dsseBase64(s: unknown): Buffer | null {
  if (typeof s !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(s)) return null;
  if (/[+/]/.test(s) && /[-_]/.test(s)) return null;
  const std = s.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (std.length % 4 === 1) return null;
  return Buffer.from(std, 'base64');
}
