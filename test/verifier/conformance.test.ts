// The verifier against the normative statements a verifier must honour, one test per
// statement, named after its section: VC Data Model 2.0 §4 (contexts, identifiers, types,
// issuer, subjects, validity period, presentations), Data Integrity 1.0 (proofs, proof sets,
// proof chains, purposes, Verify Proof's domain and challenge), and eddsa-jcs-2022 (Data
// Integrity EdDSA Cryptosuites 1.0 §3.3: transformation, hashing, proof configuration, proof
// value). Fixtures come from @digitalbazaar/vc where the library agrees with the statement,
// and from test/helpers/jcs-sign.ts (the Create Proof algorithm written out) where the
// specification is stricter than the library or a fixture must break a rule.
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import * as Ed25519Multikey from '@digitalbazaar/ed25519-multikey';
import { createSignCryptosuite, createVerifyCryptosuite } from '@digitalbazaar/eddsa-jcs-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/core/index.js';
import { sha256 } from '../../src/core/crypto.js';
import { documentLoader } from '../../src/domain/credentials/credentials.js';
import { verifyCredential, verifyPresentation } from '../../verifier/index.js';
import { MAX_PROOFS_PER_DOCUMENT } from '../../verifier/credential.js';
import type { Report } from '../../verifier/report.js';
import { contextProblem, isUrl, subjectsOf, validityProblem } from '../../verifier/vc.js';
import { signer, signJcs, type Signer } from '../helpers/jcs-sign.js';
import { vectorJson, vectorText } from '../helpers/vectors.js';

type Json = Record<string, any>;
const V2 = 'https://www.w3.org/ns/credentials/v2';
const EXAMPLES = 'https://www.w3.org/ns/credentials/examples/v2';
const AT = Date.UTC(2026, 5, 1);

const failed = (r: Report) => r.checks.filter((c) => c.valid === false).map((c) => c.id);
const held = (r: Report, id: string) => r.checks.filter((c) => c.id === id).map((c) => c.valid);

const loader = async (url: string) => {
  if (url === EXAMPLES) return { contextUrl: null, documentUrl: url, document: vectorJson('w3c-vc-di-eddsa', 'contexts/credentials-examples-v2.jsonld') };
  return documentLoader(url);
};

/** A credential of `by`, unsigned: VC DM 2.0 §4 at its plainest. */
const unsigned = (by: Signer, extra: Json = {}): Json => ({
  '@context': [V2],
  type: ['VerifiableCredential'],
  issuer: by.did,
  validFrom: '2026-01-01T00:00:00Z',
  credentialSubject: { id: 'did:example:subject', name: 'Ada' },
  ...extra,
});

/** The library's own signer for a fresh Multikey: issue with @digitalbazaar/vc. */
async function libraryIssuer() {
  const key = await Ed25519Multikey.generate();
  const did = `did:key:${key.publicKeyMultibase}`;
  const withIds = await Ed25519Multikey.from({ ...(key as object), id: `${did}#${key.publicKeyMultibase}`, controller: did });
  const issue = (credential: Json) =>
    vc.issue({
      credential,
      suite: new DataIntegrityProof({ signer: (withIds as { signer(): unknown }).signer(), cryptosuite: createSignCryptosuite() }),
      documentLoader: loader,
    }) as Promise<Json>;
  return { did, issue };
}

const libraryVerifies = async (credential: Json) =>
  (
    await vc.verifyCredential({
      credential,
      suite: new DataIntegrityProof({ cryptosuite: createVerifyCryptosuite() }),
      documentLoader: loader,
      now: new Date(AT),
    })
  ).verified as boolean;

describe('the hand signer of these tests (eddsa-jcs-2022 §3.3.1 Create Proof)', () => {
  it('signs what @digitalbazaar/vc verifies', async () => {
    const by = signer();
    const credential = signJcs(unsigned(by), by);
    expect(await libraryVerifies(credential)).toBe(true);
    expect(verifyCredential(credential, { at: AT }).verified).toBe(true);
  });
});

describe('VC Data Model 2.0', () => {
  const by = signer();
  const check = (extra: Json, at = AT) => verifyCredential(signJcs(unsigned(by, extra), by), { at });

  describe('§4.3 Contexts', () => {
    it('Verifiable credentials MUST include a @context property', () => {
      const doc = unsigned(by);
      delete doc['@context'];
      expect(failed(verifyCredential(signJcs(doc, by), { at: AT }))).toContain('context');
    });
    it('the first item MUST be https://www.w3.org/ns/credentials/v2', () => {
      expect(failed(check({ '@context': [EXAMPLES, V2] }))).toContain('context');
      expect(failed(check({ '@context': 'https://www.w3.org/ns/credentials/v2' }))).toContain('context');
    });
    it('subsequent items MUST be URLs or objects: "https ://not-a-url/..." and a number are refused', () => {
      expect(failed(check({ '@context': [V2, 'https ://not-a-url/contexts/foo.jsonld'] }))).toEqual(['context']);
      expect(failed(check({ '@context': [V2, 42] }))).toEqual(['context']);
      expect(check({ '@context': [V2, EXAMPLES] }).verified).toBe(true);
      expect(check({ '@context': [V2, { '@vocab': 'https://vocab.example/#' }] }).verified).toBe(true);
    });
    it('verifies a credential with the examples context issued by @digitalbazaar/vc', async () => {
      const lib = await libraryIssuer();
      const credential = await lib.issue({
        '@context': [V2, EXAMPLES],
        type: ['VerifiableCredential', 'ExampleAlumniCredential'],
        issuer: lib.did,
        validFrom: '2026-01-01T00:00:00Z',
        credentialSubject: { id: 'did:example:abc', alumniOf: 'The School of Examples' },
      });
      expect(verifyCredential(credential, { at: AT }).verified).toBe(true);
    });
  });

  describe('§4.4 Identifiers', () => {
    it('an id, if present, MUST be a single URL', () => {
      expect(check({ id: 'urn:uuid:58172aac-d8ba-11ed-83dd-0b3aef56cc33' }).verified).toBe(true);
      expect(check({ id: 'https://university.example/credentials/3732' }).verified).toBe(true);
      expect(failed(check({ id: 'not a url' }))).toEqual(['id']);
      expect(failed(check({ id: ['urn:a:1', 'urn:a:2'] }))).toEqual(['id']);
      expect(failed(check({ id: null }))).toEqual(['id']);
    });
    it("a subject's id, if present, MUST be a URL", () => {
      expect(failed(check({ credentialSubject: { id: 'subject 1', name: 'Ada' } }))).toEqual(['credentialSubject']);
    });
  });

  describe('§4.5 Types', () => {
    it('type MUST be present and include VerifiableCredential', () => {
      const doc = unsigned(by);
      delete doc.type;
      expect(failed(verifyCredential(signJcs(doc, by), { at: AT }))).toContain('type');
      expect(failed(check({ type: ['ExampleCredential'] }))).toEqual(['type']);
    });
    it('each type is a term or a URL: a non-empty string', () => {
      expect(failed(check({ type: ['VerifiableCredential', ''] }))).toEqual(['type']);
      expect(failed(check({ type: ['VerifiableCredential', { id: 'x' }] }))).toEqual(['type']);
      expect(check({ '@context': [V2, EXAMPLES], type: ['VerifiableCredential', 'ExampleDegreeCredential'] }).verified).toBe(true);
    });
  });

  describe('§4.7 Issuer', () => {
    it('issuer MUST be present', () => {
      const doc = unsigned(by);
      delete doc.issuer;
      expect(failed(verifyCredential(signJcs(doc, by), { at: AT }))).toEqual(expect.arrayContaining(['issuer']));
    });
    it('issuer MUST be a URL, or an object whose id is a URL', () => {
      expect(failed(check({ issuer: 'fake-issuer' }))).toEqual(expect.arrayContaining(['issuer']));
      expect(failed(check({ issuer: { id: 'not a url', name: 'x' } }))).toEqual(expect.arrayContaining(['issuer']));
      expect(failed(check({ issuer: null }))).toEqual(expect.arrayContaining(['issuer']));
      expect(check({ issuer: { id: by.did, name: 'Example University' } }).verified).toBe(true);
    });
  });

  describe('§4.8 Credential Subject', () => {
    it('credentialSubject MUST be present', () => {
      const doc = unsigned(by);
      delete doc.credentialSubject;
      expect(failed(verifyCredential(signJcs(doc, by), { at: AT }))).toEqual(['credentialSubject']);
    });
    it('is a set of objects: several subjects verify (issued by @digitalbazaar/vc)', async () => {
      const lib = await libraryIssuer();
      const credential = await lib.issue({
        '@context': [V2, EXAMPLES],
        type: ['VerifiableCredential', 'ExampleRelationshipCredential'],
        issuer: lib.did,
        validFrom: '2026-01-01T00:00:00Z',
        credentialSubject: [
          { id: 'did:example:ebfeb1f712ebc6f1c276e12ec21', name: 'Jayden Doe', spouse: 'did:example:c276e12ec21ebfeb1f712ebc6f1' },
          { id: 'did:example:c276e12ec21ebfeb1f712ebc6f1', name: 'Morgan Doe', spouse: 'did:example:ebfeb1f712ebc6f1c276e12ec21' },
        ],
      });
      const r = verifyCredential(credential, { at: AT });
      expect(r.verified, JSON.stringify(failed(r))).toBe(true);
      expect(r.subject).toBe('did:example:ebfeb1f712ebc6f1c276e12ec21');
    });
    it('each object MUST be the subject of one or more claims: {} is refused, alone or in a set', () => {
      expect(failed(check({ credentialSubject: {} }))).toEqual(['credentialSubject']);
      expect(failed(check({ credentialSubject: [{ id: 'did:example:subject' }, {}] }))).toEqual(['credentialSubject']);
      expect(failed(check({ credentialSubject: [] }))).toEqual(['credentialSubject']);
      expect(failed(check({ credentialSubject: ['did:example:subject'] }))).toEqual(['credentialSubject']);
    });
  });

  describe('§4.9 Validity Period', () => {
    it('validFrom and validUntil MUST be dateTimeStamps (akas also requires the zone: PROTOCOL 8.5)', () => {
      expect(failed(check({ validFrom: '2026-01-01' }))).toContain('dates');
      expect(failed(check({ validFrom: '2026-01-01T00:00:00' }))).toContain('dates');
      expect(check({ validUntil: '2027-01-01T00:00:00+02:00' }).verified).toBe(true);
    });
    it('validFrom MUST NOT be later than validUntil', () => {
      expect(failed(check({ validFrom: '2026-03-01T00:00:00Z', validUntil: '2026-02-01T00:00:00Z' }))).toContain('dates');
    });
    it('a credential is not valid before validFrom nor from validUntil on', () => {
      expect(failed(check({}, Date.UTC(2025, 0, 1)))).toEqual(['validity']);
      expect(failed(check({ validUntil: '2026-03-01T00:00:00Z' }))).toEqual(['validity']);
    });
  });

  describe('§4.13 Verifiable Presentations', () => {
    const holder = signer();
    const credentials = [signJcs(unsigned(by), by), signJcs(unsigned(by, { credentialSubject: { id: holder.did, degree: 'BSc' } }), by)];
    const vp = (extra: Json = {}): Json => ({
      '@context': [V2],
      type: ['VerifiablePresentation'],
      holder: holder.did,
      verifiableCredential: credentials,
      ...extra,
    });
    const signed = (extra: Json = {}, options: Json = {}) =>
      signJcs(vp(extra), holder, { proofPurpose: 'authentication', challenge: 'c-123', domain: 'auditor.example', ...options });

    it("verifies the holder's authentication proof with the challenge and domain given, and every credential in it", () => {
      const r = verifyPresentation(signed(), { at: AT, challenge: 'c-123', domain: 'auditor.example' });
      expect(r.verified, JSON.stringify(failed(r))).toBe(true);
      expect(r.credentials).toHaveLength(2);
      expect(held(r, 'credential.proof.signature')).toEqual([true, true]);
      expect(held(r, 'proof.challenge')).toEqual([true]);
    });
    it('Data Integrity §4.4: a challenge or a domain other than the one given is refused', () => {
      expect(failed(verifyPresentation(signed(), { at: AT, challenge: 'c-999' }))).toEqual(['proof.challenge']);
      expect(failed(verifyPresentation(signed(), { at: AT, domain: 'other.example' }))).toEqual(['proof.domain']);
      expect(failed(verifyPresentation(signed({}, { domain: ['a.example', 'b.example'] }), { at: AT, domain: ['b.example', 'a.example'] }))).toEqual([]);
    });
    it('Data Integrity §2.2: a presentation proof MUST be for authentication, by the holder', () => {
      expect(failed(verifyPresentation(signed({}, { proofPurpose: 'assertionMethod' }), { at: AT }))).toContain('proof.shape');
      const stranger = signer();
      const forged = signJcs(vp(), stranger, { proofPurpose: 'authentication' });
      expect(failed(verifyPresentation(forged, { at: AT }))).toEqual(['holder.controller']);
    });
    it('type MUST include VerifiablePresentation; a changed credential inside is named', () => {
      expect(failed(verifyPresentation(signed({ type: ['Presentation'] }), { at: AT }))).toContain('type');
      const tampered = vp();
      tampered.verifiableCredential = [credentials[0], { ...credentials[1], validFrom: '2026-01-02T00:00:00Z' }];
      const r = verifyPresentation(signJcs(tampered, holder, { proofPurpose: 'authentication' }), { at: AT });
      expect(failed(r)).toEqual(['credential.proof.signature']);
      expect(r.checks.find((c) => c.valid === false)!.subject).toBe('verifiableCredential[1]');
    });
    it('an unsigned presentation: its credentials are checked, its holder reported not authenticated; with a challenge it fails', () => {
      const r = verifyPresentation(vp(), { at: AT });
      expect(r.verified).toBe(true);
      expect(held(r, 'proof.signature')).toEqual([null]);
      expect(failed(verifyPresentation(vp(), { at: AT, challenge: 'c-123' }))).toEqual(['proof.signature']);
    });
  });
});

describe('Data Integrity 1.0', () => {
  const by = signer();
  it('§2.1 Proofs: a secured document MUST have a proof; created and expires are dateTimeStamps', () => {
    expect(failed(verifyCredential(unsigned(by), { at: AT }))).toEqual(expect.arrayContaining(['proof.shape']));
    expect(failed(verifyCredential(signJcs(unsigned(by), by, { created: '2026-01-01' }), { at: AT }))).toContain('proof.shape');
    expect(failed(verifyCredential(signJcs(unsigned(by), by, { expires: '2026-02-01T00:00:00Z' }), { at: AT }))).toEqual(['proof.expires']);
    expect(verifyCredential(signJcs(unsigned(by), by, { created: undefined }), { at: AT }).verified).toBe(true);
  });

  describe('§2.1.1 Proof Sets (verified as §4.5 says)', () => {
    it('a set of one proof verifies', () => {
      const one = signJcs(unsigned(by), by);
      expect(verifyCredential({ ...one, proof: [one.proof] }, { at: AT }).verified).toBe(true);
    });
    it('two valid proofs by the issuer verify (the second added by @digitalbazaar/vc)', async () => {
      const lib = await libraryIssuer();
      const first = await lib.issue({ ...unsigned(by), issuer: lib.did });
      const both = await lib.issue(first);
      expect(Array.isArray(both.proof) && both.proof.length).toBe(2);
      const r = verifyCredential(both, { at: AT });
      expect(r.verified, JSON.stringify(failed(r))).toBe(true);
      expect(held(r, 'proof.signature')).toEqual([true, true]);
    });
    it('a set with one bad proof does not verify, and names that proof', () => {
      const two = signJcs(signJcs(unsigned(by), by), by, { created: '2026-01-02T00:00:00Z' });
      expect(verifyCredential(two, { at: AT }).verified).toBe(true);
      const bad = structuredClone(two);
      bad.proof[1].created = '2026-01-03T00:00:00Z';
      const r = verifyCredential(bad, { at: AT });
      expect(failed(r)).toEqual(['proof.signature']);
      expect(r.checks.find((c) => c.valid === false)!.subject).toBe('proof[1]');
    });
    it("a proof by another key beside the issuer's holds as a proof; a set with none by the issuer does not", () => {
      const notary = signer();
      expect(verifyCredential(signJcs(signJcs(unsigned(by), by), notary), { at: AT }).verified).toBe(true);
      expect(failed(verifyCredential(signJcs(signJcs(unsigned(by), notary), notary, { created: '2026-01-02T00:00:00Z' }), { at: AT }))).toEqual([
        'issuer.controller',
      ]);
      expect(failed(verifyCredential({ ...unsigned(by), proof: [] }, { at: AT }))).toContain('proof.shape');
    });
  });

  it('§2.1.2 Proof Chains: a proof with previousProof is not supported, and fails closed', () => {
    const first = signJcs({ ...unsigned(by) }, by, { id: 'urn:uuid:1' });
    const chained = signJcs(first, by, { previousProof: 'urn:uuid:1', created: '2026-01-02T00:00:00Z' });
    const r = verifyCredential(chained, { at: AT });
    expect(r.verified).toBe(false);
    expect(r.checks.find((c) => c.id === 'proof.shape' && c.valid === false)!.why).toMatch(/proof chains/);
  });

  it('§2.2 Proof Purposes: a credential proof for authentication is not an assertion', () => {
    expect(failed(verifyCredential(signJcs(unsigned(by), by, { proofPurpose: 'authentication' }), { at: AT }))).toEqual(
      expect.arrayContaining(['proof.shape']),
    );
  });

  it('§4.4 Verify Proof: type, verificationMethod and proofPurpose MUST exist', () => {
    for (const field of ['type', 'verificationMethod', 'proofPurpose']) {
      const doc = signJcs(unsigned(by), by);
      delete (doc.proof as Json)[field];
      expect(verifyCredential(doc, { at: AT }).verified, field).toBe(false);
    }
  });
});

describe('eddsa-jcs-2022 (Data Integrity EdDSA Cryptosuites 1.0)', () => {
  const by = signer();
  it('§2.1.1 Multikey: the verification method is a did:key URL whose fragment is its key', () => {
    const doc = signJcs(unsigned(by), by);
    expect(failed(verifyCredential({ ...doc, proof: { ...doc.proof, verificationMethod: `${by.did}#key-1` } }, { at: AT }))).toContain(
      'proof.verificationMethod',
    );
    expect(failed(verifyCredential({ ...doc, proof: { ...doc.proof, verificationMethod: 'https://issuer.example/keys/1' } }, { at: AT }))).toContain(
      'proof.verificationMethod',
    );
  });
  it('§3.3.2 Verify Proof step 4: the proof @context MUST start the document @context', () => {
    expect(failed(verifyCredential(signJcs(unsigned(by), by, { '@context': [EXAMPLES] }), { at: AT }))).toEqual(['proof.context']);
    expect(verifyCredential(signJcs(unsigned(by), by, { '@context': undefined }), { at: AT }).verified).toBe(true);
  });
  it('§3.3.2 step 4 in a proof set: each proof is checked against the document under its own @context (one canonical form per distinct context)', () => {
    const doc = unsigned(by, { '@context': [V2, EXAMPLES] });
    // A proof over the document as its own @context makes it (§3.3.2 step 4 swaps it in).
    const proofUnder = (context: unknown, created: string) =>
      signJcs({ ...doc, '@context': context } as Json, by, { '@context': context, created }).proof as Json;
    const set = {
      ...doc,
      proof: [
        signJcs(doc, by).proof as Json, // the document's own @context
        proofUnder([V2], '2026-01-02T00:00:00Z'), // a prefix, as an array
        proofUnder(V2, '2026-01-03T00:00:00Z'), // the same prefix as a single value
        signJcs(doc, by, { '@context': undefined, created: '2026-01-04T00:00:00Z' }).proof as Json, // none: the document's
        proofUnder([V2], '2026-01-05T00:00:00Z'), // the prefix again
      ],
    };
    const r = verifyCredential(set, { at: AT });
    expect(r.verified, JSON.stringify(failed(r))).toBe(true);
    expect(held(r, 'proof.signature')).toEqual([true, true, true, true, true]);
    // Signed under the array prefix, claimed under the single value: another document, refused.
    const swapped = structuredClone(set);
    swapped.proof[1]['@context'] = V2;
    const bad = verifyCredential(swapped, { at: AT });
    expect(failed(bad)).toEqual(['proof.signature']);
    expect(bad.checks.find((c) => c.valid === false)!.subject).toBe('proof[1]');
  });
  it(`a document carries at most ${MAX_PROOFS_PER_DOCUMENT} proofs (PROTOCOL 8.5); a set of more is refused unchecked`, () => {
    let doc = unsigned(by);
    for (let i = 0; i < MAX_PROOFS_PER_DOCUMENT; i++) doc = signJcs(doc, by, { created: `2026-01-0${i + 1}T00:00:00Z` });
    expect(verifyCredential(doc, { at: AT }).verified).toBe(true);
    const more = signJcs(doc, by, { created: '2026-01-09T00:00:00Z' });
    const r = verifyCredential(more, { at: AT });
    expect(failed(r)).toEqual(['proof.shape']);
    expect(r.checks.find((c) => c.id === 'proof.shape')!.why).toBe(
      `a set of ${MAX_PROOFS_PER_DOCUMENT + 1} proofs: a document carries at most ${MAX_PROOFS_PER_DOCUMENT} (PROTOCOL 8.5)`,
    );
  });
  it('§3.3.3 Transformation: the JCS of the document, so key order and white space do not matter, and a changed value does', () => {
    const doc = signJcs(unsigned(by), by);
    const reordered = Object.fromEntries(Object.entries(doc).reverse());
    expect(verifyCredential(JSON.stringify(reordered, null, 3), { at: AT }).verified).toBe(true);
    expect(failed(verifyCredential({ ...doc, credentialSubject: { id: 'did:example:subject', name: 'Eve' } }, { at: AT }))).toEqual(['proof.signature']);
  });
  it('§3.3.3, §3.3.5: type DataIntegrityProof and cryptosuite eddsa-jcs-2022, else an error', () => {
    expect(failed(verifyCredential(signJcs(unsigned(by), by, { cryptosuite: 'eddsa-rdfc-2022' }), { at: AT }))).toContain('proof.shape');
    expect(failed(verifyCredential(signJcs(unsigned(by), by, { type: 'Ed25519Signature2020' }), { at: AT }))).toContain('proof.shape');
  });
  it('§3.3.4 Hashing: SHA-256 of the proof configuration, then of the document (the W3C worked example)', () => {
    const signed = JSON.parse(vectorText('w3c-vc-di-eddsa', 'eddsa-jcs-2022/signedJCS.json'));
    const { proofValue: _v, ...config } = signed.proof;
    const { proof: _p, ...doc } = signed;
    const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
    expect(canonicalize(doc)).toBe(vectorText('w3c-vc-di-eddsa', 'eddsa-jcs-2022/canonDocJCS.txt').trim());
    expect(hex(sha256(canonicalize(config))) + hex(sha256(canonicalize(doc)))).toBe(vectorText('w3c-vc-di-eddsa', 'eddsa-jcs-2022/combinedHashJCS.txt').trim());
  });
  it('§3.3.5 Proof Configuration: created, when set, MUST be a datetime (and, for akas, a dateTimeStamp)', () => {
    expect(failed(verifyCredential(signJcs(unsigned(by), by, { created: 'yesterday' }), { at: AT }))).toContain('proof.shape');
  });
  it('§3.3.7 Proof Verification: a base58-btc proofValue of 64 bytes, an Ed25519 signature by the method key', () => {
    const doc = signJcs(unsigned(by), by);
    const p = doc.proof as Json;
    expect(failed(verifyCredential({ ...doc, proof: { ...p, proofValue: p.proofValue.slice(1) } }, { at: AT }))).toContain('proof.proofValue');
    expect(failed(verifyCredential({ ...doc, proof: { ...p, proofValue: 'u' + Buffer.alloc(64).toString('base64url') } }, { at: AT }))).toContain(
      'proof.proofValue',
    );
    const other = signer();
    const wrongKey = signJcs(unsigned(by), other);
    expect(failed(verifyCredential({ ...wrongKey, proof: { ...(wrongKey.proof as Json), verificationMethod: by.vm } }, { at: AT }))).toEqual([
      'proof.signature',
    ]);
  });
});

describe('URLs (VC DM 2.0 §2 Terminology, the WHATWG URL Standard)', () => {
  it.each([
    ['did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2', true],
    ['urn:uuid:58172aac-d8ba-11ed-83dd-0b3aef56cc33', true],
    ['https://vc.example/issuers/5678', true],
    ['https ://not-a-url/contexts/foo.jsonld', false],
    ['fake-issuer', false],
    ['https://', false],
    ['http:/missing-slash.example', false],
    ['https://exa mple.example/', false],
    ['urn:has space', false],
    ['', false],
  ])('%s: %s', (value, ok) => expect(isUrl(value)).toBe(ok));
});

describe('isUrl answers what the URL parser reads, whichever way it is told (a scheme and opaque path without the parser, a memo)', () => {
  // The rule of isUrl as the URL parser alone tells it (no shortcut, nothing remembered).
  const parsed = (value: string) => {
    if (value === '' || /[\s\x00-\x1f\x7f<>"{}|\\^`]/.test(value)) return false;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return false;
    }
    if (!/^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) return false;
    return !(['http:', 'https:', 'ws:', 'wss:', 'ftp:'].includes(url.protocol) && (url.host === '' || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)));
  };
  const edges = (
    'urn:|urn:x|A:b|a+b.c-d:x|a:/x|a://h|a://[|a://h:99999|a:?x|a:#x|a:é|a:%zz|1a:x|:x|a|a_b:x|+a:x|javascript:x|file:x|FILE:x|File:/x|' +
    'HTTP:x|Https:x|ws:x|wss:|ftp:x|httpx:x|a::|a:[x]|did:key:z6Mk#z6Mk|urn:akas:judgment:jdg_1|urn:akas:judgment:jdg_1 |http:x|https://a.example/x#1'
  ).split('|');

  it.each(edges)('%s', (value) => expect(isUrl(value)).toBe(parsed(value)));

  it('agrees with the parser on 5,000 generated strings of scheme, colon, slash and host characters', () => {
    const chars = ['a', 'Z', 'h', 't', 'p', 's', 'w', 'f', 'i', 'l', 'e', '1', '+', '-', '.', ':', '/', '#', '?', '[', ']', '%', '@', 'é', '_'];
    let seed = 53;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
    for (let i = 0; i < 5000; i++) {
      let value = '';
      for (let n = Math.floor(next() * 12); n > 0; n--) value += chars[Math.floor(next() * chars.length)];
      expect(isUrl(value), value).toBe(parsed(value));
    }
  });

  it('answers a URL after a non-URL of the same start, and the same again past the number of answers remembered', () => {
    expect(isUrl('https://a.example/x y')).toBe(false);
    expect(isUrl('https://a.example/x')).toBe(true);
    expect(isUrl('https://')).toBe(false);
    for (let i = 0; i < 600; i++) expect(isUrl(`https://h${i}.example/`)).toBe(true);
    expect(isUrl('https://')).toBe(false);
    expect(isUrl('https://a.example/x')).toBe(true);
  });
});

describe('the reasons the VC DM 2.0 shape checks give', () => {
  it('name each date that is not a dateTimeStamp, in order, then an order that is wrong', () => {
    expect(validityProblem({ validFrom: 'x', validUntil: 2 })).toBe('not a dateTimeStamp: validFrom "x", validUntil 2');
    expect(validityProblem({ validUntil: 'y' })).toBe('not a dateTimeStamp: validUntil "y"');
    expect(validityProblem({ validFrom: 'x', validUntil: '2026-01-01T00:00:00Z' })).toBe('not a dateTimeStamp: validFrom "x"');
    expect(validityProblem({ validFrom: '2026-01-02T00:00:00Z', validUntil: '2026-01-01T00:00:00Z' })).toBe(
      'validFrom 2026-01-02T00:00:00Z is later than validUntil 2026-01-01T00:00:00Z',
    );
    expect(validityProblem({ validFrom: '2026-01-01T00:00:00Z' })).toBeNull();
  });

  it('name the first @context item after the first that is neither a URL nor an object, and the first subject that is not one', () => {
    expect(contextProblem([V2, 'https://a.example/', 'not a url', 7])).toBe('@context item 2 is "not a url": neither a URL nor an object');
    expect(contextProblem([V2, {}, 'urn:x'])).toBeNull();
    expect(subjectsOf([{ a: 1 }, {}, 3])).toEqual({ problem: 'credentialSubject[1] is {}: a subject that makes no claim' });
    expect(subjectsOf({ id: 'not a url' })).toEqual({ problem: 'credentialSubject id "not a url" is not a single URL' });
  });
});
