// verifier/credential.ts: the strict eddsa-jcs-2022 verifier, against the W3C worked example
// (test/vectors/w3c-vc-di-eddsa), its tampered variants, credentials of our own issuing, and
// credentials issued by @digitalbazaar/vc itself (interop both ways), with issuer keys rotated.
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import * as Ed25519Multikey from '@digitalbazaar/ed25519-multikey';
import { createSignCryptosuite, createVerifyCryptosuite } from '@digitalbazaar/eddsa-jcs-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { describe, expect, it } from 'vitest';
import {
  cryptoRandom,
  didKeyFromPublicKey,
  freshNodeKeys,
  generateKeyPair,
  judgmentSigningString,
  newNodeKeyMaterial,
  nodeKeysFrom,
  rotateIssuerKey,
  sign,
  type NodeKeys,
} from '../../src/core/index.js';
import { documentLoader, issueJudgmentCredential } from '../../src/domain/credentials/credentials.js';
import type { JudgmentRecord } from '../../src/domain/records.js';
import { verifyCredentialAsync } from '../../verifier/credential.js';
import { NotCheckableError, trustIssuerKeys, verifyCredential, type CredentialReport } from '../../verifier/index.js';
import { vectorJson, vectorText } from '../helpers/vectors.js';

const SIGNED = vectorText('w3c-vc-di-eddsa', 'eddsa-jcs-2022/signedJCS.json');
const signed = () => JSON.parse(SIGNED) as Record<string, any>;

const failedIds = (r: CredentialReport) => r.checks.filter((c) => c.valid === false).map((c) => c.id);
const held = (r: CredentialReport, id: string) => r.checks.find((c) => c.id === id)?.valid;
/** The NotCheckableError a call throws (undefined when it answers). */
function thrown(call: () => unknown): NotCheckableError | undefined {
  try {
    call();
    return undefined;
  } catch (e) {
    if (e instanceof NotCheckableError) return e;
    throw e;
  }
}

/** A recorded judgment signed by a fresh judge key, as the node stores it. */
function judgment(at: number, overrides: Partial<JudgmentRecord> = {}): JudgmentRecord {
  const judge = generateKeyPair();
  const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
  const payload = {
    type: 'akas.judgment.v1' as const,
    kind: 'capability' as const,
    proposalId: 'cprop_0123456789abcdef',
    judge: 'ak_judge001',
    scores,
    rationale: 'Sound.',
  };
  const signature = sign(judge.privateKey, judgmentSigningString(payload));
  return {
    judgmentId: 'jdg_00112233445566ff',
    agentTag: 'ak_judge001',
    scores,
    composite: 0.8,
    rationale: 'Sound.',
    receivedAt: at,
    alignment: 1,
    weight: 2.8,
    tier: 'frontier',
    intelligenceScore: 0.9,
    ip: '10.0.0.1',
    contentSha256: 'ab'.repeat(32),
    signature: { algorithm: 'Ed25519', publicKey: judge.publicKey, signature, payload },
    attestation: {} as JudgmentRecord['attestation'],
    ...overrides,
  };
}

const issue = (keys: NodeKeys, at: number) => issueJudgmentCredential(keys, 'capability', 'cprop_0123456789abcdef', judgment(at));
const T0 = Date.UTC(2026, 0, 1, 12);

describe('the W3C eddsa-jcs-2022 worked example', () => {
  it('has a proof that verifies: every proof check holds', () => {
    const r = verifyCredential(SIGNED, { at: T0 });
    for (const id of [
      'context',
      'type',
      'dates',
      'proof.shape',
      'proof.context',
      'proof.verificationMethod',
      'proof.proofValue',
      'proof.signature',
      'validity',
    ]) {
      expect(held(r, id), id).toBe(true);
    }
  });

  it('is refused as a credential only because its issuer is an https URL while its key is a did:key', () => {
    // Documented in test/vectors/w3c-vc-di-eddsa/README.md; @digitalbazaar/vc refuses it the same way.
    expect(failedIds(verifyCredential(SIGNED, { at: T0 }))).toEqual(['issuer.controller']);
  });

  it("verifies once the issuer is the verification method's DID, signed again with the vector key", async () => {
    // The vector's own seed signs the same credential with a did:key issuer.
    const keyPair = vectorJson('w3c-vc-di-eddsa', 'keyPair.json');
    // The file names the secret `privateKeyMultibase`; the Multikey spec (and the library) `secretKeyMultibase`.
    const key = await Ed25519Multikey.from({
      publicKeyMultibase: keyPair.publicKeyMultibase,
      secretKeyMultibase: keyPair.privateKeyMultibase,
      type: 'Multikey',
      controller: `did:key:${keyPair.publicKeyMultibase}`,
      id: `did:key:${keyPair.publicKeyMultibase}#${keyPair.publicKeyMultibase}`,
    });
    const unsigned = { ...vectorJson('w3c-vc-di-eddsa', 'unsigned.json'), issuer: `did:key:${keyPair.publicKeyMultibase}` };
    const suite = new DataIntegrityProof({
      signer: (key as { signer(): unknown }).signer(),
      cryptosuite: createSignCryptosuite(),
      date: '2023-02-24T23:36:38Z',
    });
    const credential = await vc.issue({ credential: unsigned, suite, documentLoader: exampleLoader });
    expect(verifyCredential(JSON.stringify(credential), { at: T0 }).verified).toBe(true);
  });

  describe('tampered', () => {
    const cases: Array<[string, (d: Record<string, any>) => void, string]> = [
      ['a subject value changed', (d) => (d.credentialSubject.alumniOf = 'Another University'), 'proof.signature'],
      ['validFrom moved', (d) => (d.validFrom = '2023-01-02T00:00:00Z'), 'proof.signature'],
      ['the proof created changed', (d) => (d.proof.created = '2023-02-24T23:36:39Z'), 'proof.signature'],
      [
        'the proofValue re-encoded one character off',
        (d) => (d.proof.proofValue = d.proof.proofValue.slice(0, -1) + (d.proof.proofValue.endsWith('2') ? '3' : '2')),
        'proof.signature',
      ],
      ['the proofValue with 32 bytes of garbage appended', (d) => (d.proof.proofValue += 'JxqcWVfmeXyY9ALtbsjNpV6fTB33vLgs1qkNuEEe1uWtW'), 'proof.proofValue'],
      ['the proofValue not multibase', (d) => (d.proof.proofValue = d.proof.proofValue.slice(1)), 'proof.proofValue'],
      ['another cryptosuite', (d) => (d.proof.cryptosuite = 'eddsa-rdfc-2022'), 'proof.shape'],
      ['another proof type', (d) => (d.proof.type = 'Ed25519Signature2020'), 'proof.shape'],
      ['another proof purpose', (d) => (d.proof.proofPurpose = 'authentication'), 'proof.shape'],
      ['a created without time zone', (d) => (d.proof.created = '2023-02-24T23:36:38'), 'proof.shape'],
      ['a validFrom that is no date', (d) => (d.validFrom = '2023-02-30T00:00:00Z'), 'dates'],
      ['a proof @context that is not a prefix', (d) => (d.proof['@context'] = ['https://www.w3.org/ns/credentials/examples/v2']), 'proof.context'],
      [
        'a verificationMethod with another fragment',
        (d) => (d.proof.verificationMethod = d.proof.verificationMethod.replace(/#.*/, '#key-1')),
        'proof.verificationMethod',
      ],
      ['a verificationMethod that is not a did:key', (d) => (d.proof.verificationMethod = 'https://vc.example/issuers/5678#key-1'), 'proof.verificationMethod'],
      ['no proof', (d) => delete d.proof, 'proof.shape'],
      ['a VC 1.1 context', (d) => (d['@context'][0] = 'https://www.w3.org/2018/credentials/v1'), 'context'],
    ];
    it.each(cases.map(([name, tamper, check]) => [name, check, tamper] as const))('%s: fails and names %s', (_name, check, tamper) => {
      const d = signed();
      tamper(d);
      expect(failedIds(verifyCredential(JSON.stringify(d), { at: T0 }))).toContain(check);
    });

    it('does not read a file with a duplicate key, a lone surrogate or bytes that are not UTF-8: NotCheckableError, invalid_json (PROTOCOL 8.8)', () => {
      const dup = SIGNED.replace('"validFrom"', '"validFrom": "2020-01-01T00:00:00Z", "validFrom"');
      const lone = SIGNED.replace('"The School of Examples"', '"The School of \\ud800Examples"');
      expect(lone).not.toBe(SIGNED);
      const notUtf8 = Buffer.concat([Buffer.from(SIGNED.slice(0, 20)), Buffer.from([0xff]), Buffer.from(SIGNED.slice(20))]);
      for (const input of [dup, lone, notUtf8, 'not json at all']) expect(thrown(() => verifyCredential(input))).toMatchObject({ code: 'invalid_json' });
      expect(thrown(() => verifyCredential(lone))?.message).toContain('lone surrogate');
    });

    it('rejects, never throws, from its asynchronous form for what it cannot read (the browser build catches it)', async () => {
      await expect(verifyCredentialAsync('{"a": 1, "a": 2}')).rejects.toBeInstanceOf(NotCheckableError);
    });
  });
});

const exampleLoader = async (url: string) => {
  if (url === 'https://www.w3.org/ns/credentials/examples/v2')
    return { contextUrl: null, documentUrl: url, document: vectorJson('w3c-vc-di-eddsa', 'contexts/credentials-examples-v2.jsonld') };
  return documentLoader(url);
};

describe('judgment credentials issued by the node', () => {
  it('verify, with the judge signature they carry (L2), and are refused for any changed byte of a value', async () => {
    const keys = freshNodeKeys(cryptoRandom, T0);
    const credential = await issue(keys, T0 + 1000);
    const text = JSON.stringify(credential);
    const ok = verifyCredential(text, { at: T0 + 2000, issuer: keys.issuer.did, checkJudgeSignature: true });
    expect(ok.verified, JSON.stringify(failedIds(ok))).toBe(true);
    expect(held(ok, 'judge.signature')).toBe(true);
    expect(held(ok, 'issuer.pinned')).toBe(true);
    // Every value byte: change one character inside each string value and number.
    const positions = [...text.matchAll(/":\s*"([^"]{2,})"|":\s*(\d)/g)].map((m) => m.index! + m[0].length - 2);
    expect(positions.length).toBeGreaterThan(15);
    for (const at of positions) {
      const ch = text[at];
      const swapped = text.slice(0, at) + (ch === 'a' ? 'b' : /[0-9]/.test(ch) ? String((Number(ch) + 1) % 10) : 'a') + text.slice(at + 1);
      if (swapped === text) continue;
      // A changed byte that leaves no JSON is refused too: not read at all (NotCheckableError).
      let verified = false;
      thrown(() => (verified = verifyCredential(swapped, { at: T0 + 2000, checkJudgeSignature: true }).verified));
      expect(verified, `byte ${at} (${text.slice(at - 20, at + 5)})`).toBe(false);
    }
  });

  it('checks the validity window at another instant (--at)', async () => {
    const keys = freshNodeKeys(cryptoRandom, T0);
    const credential = await issue(keys, T0 + 1000);
    expect(failedIds(verifyCredential(credential, { at: T0 }))).toEqual(['validity']);
    expect(verifyCredential(credential, { at: T0 + 1000 }).verified).toBe(true);
  });

  it('names a judge signature that does not hold', async () => {
    const keys = freshNodeKeys(cryptoRandom, T0);
    const j = judgment(T0);
    j.signature.signature = sign(generateKeyPair().privateKey, 'something else');
    const credential = await issueJudgmentCredential(keys, 'capability', 'cprop_0123456789abcdef', j);
    expect(failedIds(verifyCredential(credential, { at: T0, checkJudgeSignature: true }))).toEqual(['judge.signature']);
  });

  it('verify with @digitalbazaar/vc used directly', async () => {
    const keys = freshNodeKeys(cryptoRandom, T0);
    const credential = await issue(keys, T0);
    const suite = new DataIntegrityProof({ cryptosuite: createVerifyCryptosuite() });
    const r = await vc.verifyCredential({ credential, suite, documentLoader, now: new Date(T0 + 1000) });
    expect(r.verified, String(r.error)).toBe(true);
    const tampered = structuredClone(credential) as Record<string, any>;
    tampered.credentialSubject.composite = 0.1;
    expect((await vc.verifyCredential({ credential: tampered, suite, documentLoader, now: new Date(T0 + 1000) })).verified).toBe(false);
  });
});

describe('credentials issued by @digitalbazaar/vc', () => {
  it("verify with ours (a did:key issuer, the library's own Multikey signer)", async () => {
    const key = await Ed25519Multikey.generate();
    const did = `did:key:${key.publicKeyMultibase}`;
    const keyWithIds = await Ed25519Multikey.from({ ...(key as object), id: `${did}#${key.publicKeyMultibase}`, controller: did });
    const suite = new DataIntegrityProof({ signer: (keyWithIds as { signer(): unknown }).signer(), cryptosuite: createSignCryptosuite() });
    const credential = await vc.issue({
      credential: {
        '@context': ['https://www.w3.org/ns/credentials/v2'],
        type: ['VerifiableCredential'],
        issuer: did,
        validFrom: '2025-01-01T00:00:00Z',
        credentialSubject: { id: 'urn:example:subject', name: 'Ada' },
      },
      suite,
      documentLoader,
    });
    const r = verifyCredential(JSON.stringify(credential), { issuer: did });
    expect(r.verified, JSON.stringify(failedIds(r))).toBe(true);
    const other = JSON.stringify(credential).replace('"Ada"', '"Eve"');
    expect(failedIds(verifyCredential(other))).toEqual(['proof.signature']);
  });
});

describe('issuer key rotation', () => {
  it('keeps a credential issued before a rotation verifiable, with the key checked against its window', async () => {
    let material = newNodeKeyMaterial(cryptoRandom, T0);
    const before = nodeKeysFrom(material);
    const old = await issue(before, T0 + 10);
    material = rotateIssuerKey(material, T0 + 100);
    const after = nodeKeysFrom(material);
    const fresh = await issue(after, T0 + 200);
    expect(after.issuer.did).not.toBe(before.issuer.did);

    const list = { keys: after.issuers, rotations: after.rotations };
    const trust = trustIssuerKeys(after.issuer.did, list);
    expect(trust.problems).toEqual([]);
    for (const c of [old, fresh]) expect(verifyCredential(c, { trust, at: T0 + 300 }).verified).toBe(true);
    // Pinned on the old DID, the chain reaches the new key too.
    expect(verifyCredential(fresh, { trust: trustIssuerKeys(before.issuer.did, list), at: T0 + 300 }).verified).toBe(true);

    // The old key signing after its window closed: refused, naming issuer.key.
    const late = await issue(before, T0 + 150);
    expect(failedIds(verifyCredential(late, { trust, at: T0 + 300 }))).toEqual(['issuer.key']);
  });

  it("refuses a credential whose key was never the issuer's, and a rotation not signed by both keys", async () => {
    const keys = freshNodeKeys(cryptoRandom, T0);
    const stranger = freshNodeKeys(cryptoRandom, T0);
    const forged = await issue(stranger, T0 + 10);
    const trust = trustIssuerKeys(keys.issuer.did, { keys: keys.issuers, rotations: keys.rotations });
    expect(failedIds(verifyCredential(forged, { trust, at: T0 + 20 }))).toEqual(['issuer.key']);
    expect(failedIds(verifyCredential(forged, { issuer: keys.issuer.did, at: T0 + 20 }))).toEqual(['issuer.pinned']);

    // A rotation into the stranger's key, signed by it alone, reaches nothing.
    const fake = {
      type: 'akas.issuer-rotation.v1' as const,
      from: keys.issuer.did,
      to: stranger.issuer.did,
      at: T0 + 5,
      signatures: { from: '00'.repeat(64), to: '00'.repeat(64) },
    };
    const t = trustIssuerKeys(keys.issuer.did, { rotations: [fake] });
    expect(t.keys.has(stranger.issuer.did)).toBe(false);
    expect(t.problems[0]).toMatch(/not signed by both/);
    expect(didKeyFromPublicKey(stranger.issuer.publicKey)).toBe(stranger.issuer.did);
  });

  it('does not let an unsigned window in the published list widen a key', () => {
    let material = newNodeKeyMaterial(cryptoRandom, T0);
    material = rotateIssuerKey(material, T0 + 100);
    const keys = nodeKeysFrom(material);
    const widened = keys.issuers.map((k, i) => (i === 0 ? { ...k, validUntil: null } : k));
    const t = trustIssuerKeys(keys.issuer.did, { keys: widened, rotations: keys.rotations });
    expect(t.keys.get(keys.issuers[0].did)!.until).toBe(T0 + 100);
    expect(t.problems.join()).toMatch(/validUntil null disagrees/);
  });
});
