// DSSE envelopes and Sigstore bundles made in the test (PROTOCOL 16.3): akas-shaped Statements
// signed by Ed25519 keys the test holds, and the trust file (8.6) that pins two of them as an
// issuer's keys before and after a rotation, for the checks of verifier/dsse.ts and sigstore.ts.
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { didKeyFromPublicKey } from '../../src/core/didkey.js';
import { dsseEnvelope, IN_TOTO_PAYLOAD_TYPE, sigstoreBundle, STATEMENT_TYPE } from '../../src/core/dsse.js';

export interface TestSigner {
  did: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** ECDSA only: how its signatures are encoded (DSSE verifiers take DER and raw r||s alike). */
  dsaEncoding?: 'der' | 'ieee-p1363';
}

export function ed25519Signer(): TestSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  return { did: didKeyFromPublicKey(raw.toString('hex')), privateKey, publicKey };
}

/** An ECDSA P-256 signer, as others sign DSSE envelopes (PROTOCOL 16.4): DER signatures by default, raw r||s if asked; its keyid a name, not a did:key. */
export function p256Signer(dsaEncoding: 'der' | 'ieee-p1363' = 'der'): TestSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { did: 'p256-test-key', privateKey, publicKey, dsaEncoding };
}

/** An attestation's Statement as the node states it (16.2), logged at `attestedAt`; without it, a Statement with no log time. */
export function statement(attestedAt?: string): Record<string, unknown> {
  const subject = [{ name: 'subjectSha256', digest: { sha256: 'a'.repeat(64) } }];
  if (attestedAt === undefined) return { _type: STATEMENT_TYPE, subject, predicateType: 'https://example.com/predicate/v1', predicate: {} };
  return {
    _type: STATEMENT_TYPE,
    subject,
    predicateType: 'https://akas.dev/attestation/review.attestation/v1',
    predicate: {
      kind: 'review.attestation.v1',
      tier: 'self',
      body: { subjectSha256: 'a'.repeat(64) },
      attestedBy: null,
      attestedAt,
      log: { origin: 'akas.test/log', id: 'att_0000000000000001', index: 1, hash: 'b'.repeat(64) },
    },
  };
}

/** The DSSE envelope of `payload` (a Statement, or bytes as they are) signed by `by`. */
export function envelope(by: TestSigner, payload: Record<string, unknown> | Buffer = statement('2021-06-01T00:00:00.000Z')) {
  const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(JSON.stringify(payload));
  return dsseEnvelope(bytes, IN_TOTO_PAYLOAD_TYPE, by.did, (pae) =>
    by.dsaEncoding ? sign('sha256', pae, { key: by.privateKey, dsaEncoding: by.dsaEncoding }) : sign(null, pae, by.privateKey),
  );
}

export const bundleOf = (env: ReturnType<typeof envelope>) => sigstoreBundle(env) as unknown as Record<string, any>;

/** The instant the issuer's key was rotated in the trust file below: `old` before it, `current` from it. */
export const ROTATED_AT = '2020-01-01T00:00:00.000Z';

/** A trust file pinning `old` until ROTATED_AT and `current` from then on, as akas trust pin writes one. */
export function rotatedTrust(old: TestSigner, current: TestSigner) {
  return {
    type: 'akas.trust.v1',
    issuers: [
      { did: old.did, validFrom: null, validUntil: ROTATED_AT },
      { did: current.did, validFrom: ROTATED_AT, validUntil: null },
    ],
    policy: 'quorum none\n',
  };
}
