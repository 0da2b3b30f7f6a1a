// eddsa-jcs-2022 Create Proof (Data Integrity EdDSA Cryptosuites 1.0 §3.3.1), written out for
// the tests that need documents @digitalbazaar/vc will not sign (the spec is stricter than the
// library somewhere, or a fixture is meant to break a rule). The conformance suite checks it
// against the library once: a document signed here verifies with @digitalbazaar/vc.
import { createHash } from 'node:crypto';
import { canonicalize, didKeyFromPublicKey, generateKeyPair, sign } from '../../src/core/index.js';
import { base58btcEncode } from '../../src/core/didkey.js';
import type { Ed25519KeyPair } from '../../src/core/ed25519.js';

export interface Signer extends Ed25519KeyPair {
  did: string;
  vm: string;
}

export function signer(pair: Ed25519KeyPair = generateKeyPair()): Signer {
  const did = didKeyFromPublicKey(pair.publicKey);
  return { ...pair, did, vm: `${did}#${did.slice('did:key:'.length)}` };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Adds an eddsa-jcs-2022 proof to a document (into a proof set when it has one). options: the
 * proof options (created, proofPurpose, challenge, domain, ...) beside the defaults.
 */
export function signJcs<T extends Record<string, unknown>>(doc: T, by: Signer, options: Record<string, unknown> = {}): T {
  const { proof: existing, ...unsecured } = doc as Record<string, unknown>;
  const proof: Record<string, unknown> = {
    type: 'DataIntegrityProof',
    cryptosuite: 'eddsa-jcs-2022',
    created: '2026-01-01T00:00:00Z',
    verificationMethod: by.vm,
    proofPurpose: 'assertionMethod',
    ...options,
  };
  // §3.3.1 step 2: the document's @context goes into the proof.
  if (unsecured['@context'] !== undefined && !('@context' in options)) proof['@context'] = unsecured['@context'];
  for (const [k, v] of Object.entries(proof)) if (v === undefined) delete proof[k];
  const hashData = Buffer.concat([sha256(canonicalize(proof)), sha256(canonicalize(unsecured))]);
  proof.proofValue = 'z' + base58btcEncode(Buffer.from(sign(by.privateKey, hashData), 'hex'));
  const proofs = existing === undefined ? proof : [...(Array.isArray(existing) ? existing : [existing]), proof];
  return { ...(unsecured as T), proof: proofs };
}
