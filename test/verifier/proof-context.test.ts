// verifier/credential.ts: a proof's @context must start the document's (eddsa-jcs-2022 §3.3.2
// step 4), item for item by their JCS. A string item is compared as it is (the JCS of strings is
// one to one, and never that of an object); an embedded context object by its JCS, so the order
// of its members does not matter and a changed member does.
import { describe, expect, it } from 'vitest';
import { verifyCredential } from '../../verifier/index.js';
import type { Report } from '../../verifier/report.js';
import { signer, signJcs } from '../helpers/jcs-sign.js';

type Json = Record<string, unknown>;
const V2 = 'https://www.w3.org/ns/credentials/v2';
const AT = Date.UTC(2026, 5, 1);
const failed = (r: Report) => r.checks.filter((c) => c.valid === false).map((c) => c.id);

describe("a proof's @context against the document's", () => {
  const by = signer();
  const embedded = { '@vocab': 'https://example.org/vocab#', name: 'https://schema.org/name' };
  const doc: Json = {
    '@context': [V2, embedded, 'https://example.org/extra/v1'],
    type: ['VerifiableCredential'],
    issuer: by.did,
    validFrom: '2026-01-01T00:00:00Z',
    credentialSubject: { id: 'did:example:subject', name: 'Ada' },
  };

  // Signed over the document as its proof's @context makes it (§3.3.2 step 4), then given the document's own.
  const signedUnder = (context: unknown[]): Json => ({ ...signJcs({ ...doc, '@context': context }, by, { '@context': context }), '@context': doc['@context'] });

  it('holds for an embedded context written with its members in another order', () => {
    const reordered = { name: embedded.name, '@vocab': embedded['@vocab'] };
    const r = verifyCredential(signedUnder([V2, reordered]), { at: AT });
    expect(r.verified, JSON.stringify(failed(r))).toBe(true);
  });

  it('fails for an embedded context with a member changed, a string in place of an object, or an item out of place', () => {
    for (const context of [
      [V2, { ...embedded, name: 'https://schema.org/givenName' }],
      [V2, 'https://example.org/vocab#'],
      [embedded, V2],
      [V2, embedded, 'https://example.org/extra/v2'],
    ]) {
      expect(failed(verifyCredential(signedUnder(context), { at: AT })), JSON.stringify(context)).toEqual(expect.arrayContaining(['proof.context']));
    }
  });

  it('holds for a proof without @context and for one naming the whole @context', () => {
    expect(verifyCredential(signJcs(doc, by, { '@context': undefined }), { at: AT }).verified).toBe(true);
    expect(verifyCredential(signJcs(doc, by), { at: AT }).verified).toBe(true);
  });
});
