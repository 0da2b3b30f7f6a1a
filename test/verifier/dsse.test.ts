// verifier/dsse.ts and verifier/sigstore.ts (PROTOCOL 16.4): envelopes and bundles read as
// strict JSON and in their specified shapes (issue 54: a duplicated payload, repeated fields
// given as objects, a messageSignature beside the envelope), and under a trust file the key that
// signed held to its window at the log time the Statement names (a rotated-out key fails after
// it, and where nothing tells when it signed the window is reported not checked, never passed).
import { generateKeyPairSync, sign } from 'node:crypto';
import { bundleFromJSON } from '@sigstore/bundle';
import { describe, expect, it } from 'vitest';
import { IN_TOTO_PAYLOAD_TYPE, pae } from '../../src/core/dsse.js';
import { NotCheckableError } from '../../verifier/judgment.js';
import { verifyDsse } from '../../verifier/dsse.js';
import { verifySigstore } from '../../verifier/sigstore.js';
import { parseTrust, issuerTrustOf } from '../../verifier/trust.js';
import { bundleOf, ed25519Signer, envelope, ROTATED_AT, rotatedTrust, statement } from '../helpers/dsse-fixtures.js';

const old = ed25519Signer();
const current = ed25519Signer();
const trust = issuerTrustOf(parseTrust(rotatedTrust(old, current)))!;
const NOW = Date.parse('2026-06-01T00:00:00Z');
const check = (r: { checks: Array<{ id: string; valid: boolean | null }> }, id: string) => r.checks.find((c) => c.id === id)?.valid;
const failed = (r: { checks: Array<{ id: string; valid: boolean | null }> }) => r.checks.filter((c) => c.valid === false).map((c) => c.id);

describe('an envelope read as strict JSON', () => {
  it('refuses a duplicated payload key, which JSON.parse would read as its last value', () => {
    const signed = envelope(current);
    const other = Buffer.from(JSON.stringify(statement('2024-01-01T00:00:00.000Z'))).toString('base64');
    const sigs = JSON.stringify(signed.signatures);
    const text = `{"payload":"${other}","payloadType":"${IN_TOTO_PAYLOAD_TYPE}","signatures":${sigs},"payload":"${signed.payload}"}`;
    expect(() => verifyDsse(text, current.publicKey)).toThrow(NotCheckableError);
    expect(() => verifyDsse(text, current.publicKey)).toThrow(/duplicate key "payload"/);
    // The same envelope written once reads and holds.
    expect(verifyDsse(JSON.stringify(signed), current.publicKey).verified).toBe(true);
  });

  it('refuses bytes that are not UTF-8, and a Statement with a duplicated key inside the signed payload', () => {
    expect(() => verifyDsse(Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]), current.publicKey)).toThrow(NotCheckableError);
    const twice = Buffer.from(
      `{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":"${'a'.repeat(64)}"}}],"predicateType":"a","predicateType":"b"}`,
    );
    const r = verifyDsse(envelope(current, twice), current.publicKey);
    expect(check(r, 'dsse.signature')).toBe(true);
    expect(failed(r)).toEqual(['statement.shape']);
  });
});

describe('a Sigstore bundle in the shape of sigstore_bundle.proto', () => {
  const good = bundleOf(envelope(current));

  it('takes the bundle akas exports', () => {
    expect(verifySigstore(JSON.stringify(good), current.publicKey).verified).toBe(true);
  });

  it('refuses tlogEntries or rfc3161Timestamps given as objects (repeated fields are arrays)', () => {
    const tlog = structuredClone(good);
    tlog.verificationMaterial.tlogEntries = { 0: { logIndex: '1' } };
    expect(failed(verifySigstore(tlog, current.publicKey))).toEqual(['bundle.shape']);
    const stamps = structuredClone(good);
    stamps.verificationMaterial.timestampVerificationData = { rfc3161Timestamps: { 0: { signedTimestamp: 'AA==' } } };
    expect(failed(verifySigstore(stamps, current.publicKey))).toEqual(['bundle.shape']);
  });

  it('refuses a messageSignature beside the envelope: @sigstore/bundle would read the messageSignature', () => {
    const both = structuredClone(good);
    both.messageSignature = { messageDigest: { algorithm: 'SHA2_256', digest: 'AA==' }, signature: 'AA==' };
    expect(bundleFromJSON(both).content?.$case).toBe('messageSignature');
    expect(failed(verifySigstore(both, current.publicKey))).toEqual(['bundle.shape']);
  });

  it("refuses a field sigstore_bundle.proto does not have, as proto JSON spells it (message_signature), and two of the key material's oneof", () => {
    const snake = structuredClone(good);
    snake.message_signature = { signature: 'AA==' };
    expect(failed(verifySigstore(snake, current.publicKey))).toEqual(['bundle.shape']);
    const twoKeys = structuredClone(good);
    twoKeys.verificationMaterial.certificate = { rawBytes: 'AA==' };
    expect(failed(verifySigstore(twoKeys, current.publicKey))).toEqual(['bundle.shape', 'bundle.keyed']);
    const extraSig = structuredClone(good);
    extraSig.dsseEnvelope.signatures[0].extension = {};
    expect(failed(verifySigstore(extraSig, current.publicKey))).toEqual(['bundle.shape']);
  });
});

describe('an envelope under a trust file: the signing key in its window', () => {
  it('fails a rotated-out key that signed a Statement logged after its rotation', () => {
    const r = verifyDsse(envelope(old, statement('2021-06-01T00:00:00.000Z')), trust, { now: NOW });
    expect(check(r, 'dsse.signature')).toBe(true);
    expect(failed(r)).toEqual(['issuer.window']);
    expect(r.verified).toBe(false);
    const b = verifySigstore(bundleOf(envelope(old)), trust, { now: NOW });
    expect(failed(b)).toEqual(['issuer.window']);
  });

  it('says the window was not checked when nothing tells when a rotated-out key signed: unanchored, never verified', () => {
    for (const st of [statement(), statement('2019-06-01T00:00:00.000Z')]) {
      const r = verifyDsse(envelope(old, st), trust, { now: NOW });
      expect(check(r, 'issuer.window')).toBeNull();
      expect(r).toMatchObject({ verified: true, anchored: false, unanchored: ['issuer.window'] });
    }
  });

  it("holds the key that is the issuer's now, for an attestation logged before its window began (the node signs at export)", () => {
    for (const st of [statement('2019-06-01T00:00:00.000Z'), statement('2021-06-01T00:00:00.000Z'), statement()]) {
      const r = verifyDsse(envelope(current, st), trust, { now: NOW });
      expect(check(r, 'issuer.window')).toBe(true);
      expect(r).toMatchObject({ verified: true, anchored: true });
    }
  });

  it('held before the rotation, the old key is in its window; a key whose window has not begun fails', () => {
    const before = Date.parse(ROTATED_AT) - 1000;
    expect(check(verifyDsse(envelope(old, statement('2019-06-01T00:00:00.000Z')), trust, { now: before }), 'issuer.window')).toBe(true);
    expect(check(verifyDsse(envelope(current, statement('2019-06-01T00:00:00.000Z')), trust, { now: before }), 'issuer.window')).toBe(false);
  });

  it('names no window under a key the auditor gives (--key)', () => {
    const r = verifyDsse(envelope(old), old.publicKey, { now: NOW });
    expect(check(r, 'issuer.window')).toBeUndefined();
    expect(r).toMatchObject({ verified: true, anchored: true });
  });
});

describe('ECDSA P-256 signatures', () => {
  it('holds either S of a signature: P-256 signers do not normalize S (PROTOCOL 16.4)', () => {
    const n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const payload = Buffer.from(JSON.stringify(statement()));
    const raw = sign('sha256', pae(IN_TOTO_PAYLOAD_TYPE, payload), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    const s = BigInt(`0x${raw.subarray(32).toString('hex')}`);
    const twin = Buffer.concat([raw.subarray(0, 32), Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex')]);
    for (const sig of [raw, twin]) {
      const env = { payload: payload.toString('base64'), payloadType: IN_TOTO_PAYLOAD_TYPE, signatures: [{ sig: sig.toString('base64') }] };
      expect(verifyDsse(env, publicKey).verified).toBe(true);
    }
  });
});
