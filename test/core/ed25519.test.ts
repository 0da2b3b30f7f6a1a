// Ed25519 conformance of src/core/ed25519.ts: RFC 8032 section 7.1 and Project Wycheproof
// (test/vectors/rfc8032 and test/vectors/wycheproof, see their README).
import { describe, expect, it } from 'vitest';
import { vectorJson } from '../helpers/vectors.js';
import { generateKeyPair, publicKeyFromPrivate, sign, verify, verifyBytes } from '../../src/core/ed25519.js';

const readJson = (rel: string) => vectorJson(rel);

interface RfcVector {
  test: string;
  secretKeyHex: string;
  publicKeyHex: string;
  messageHex: string;
  messageLength: number;
  signatureHex: string;
}
interface WycheproofTest {
  tcId: number;
  comment: string;
  flags: string[];
  msg: string;
  sig: string;
  result: 'valid' | 'invalid' | 'acceptable';
}
interface WycheproofGroup {
  publicKey: { pk: string };
  tests: WycheproofTest[];
}

const rfc: RfcVector[] = readJson('rfc8032/rfc8032-7.1-ed25519.json').vectors;
const wycheproof: { numberOfTests: number; testGroups: WycheproofGroup[] } = readJson('wycheproof/ed25519_test.json');
const wycheproofTests = wycheproof.testGroups.flatMap((g) =>
  g.tests.map((t) => ({ ...t, pk: g.publicKey.pk, label: `tcId ${t.tcId} ${t.result} [${t.flags.join(',')}] ${t.comment}` })),
);

/** The same hex with one bit flipped at byte `i`. */
const flipBit = (hex: string, i = 0) => {
  const b = Buffer.from(hex, 'hex');
  b[i] ^= 0x01;
  return b.toString('hex');
};

describe('Ed25519 (src/core/ed25519.ts)', () => {
  describe('RFC 8032 section 7.1 test vectors', () => {
    it('has the five vectors', () => {
      expect(rfc.map((v) => v.test)).toHaveLength(5);
    });

    describe.each(rfc)('TEST $test', (v) => {
      const msg = Buffer.from(v.messageHex, 'hex');

      it('derives the public key from the seed', () => {
        expect(msg.length).toBe(v.messageLength);
        expect(publicKeyFromPrivate(v.secretKeyHex)).toBe(v.publicKeyHex);
      });

      it('signs deterministically to the listed signature', () => {
        expect(sign(v.secretKeyHex, msg)).toBe(v.signatureHex);
      });

      it('verifies the listed signature', () => {
        expect(verify(v.publicKeyHex, msg, v.signatureHex)).toBe(true);
        expect(verifyBytes(Buffer.from(v.publicKeyHex, 'hex'), msg, Buffer.from(v.signatureHex, 'hex'))).toBe(true);
      });

      it('rejects the signature with one bit flipped, in R or in S', () => {
        expect(verify(v.publicKeyHex, msg, flipBit(v.signatureHex, 0))).toBe(false);
        expect(verify(v.publicKeyHex, msg, flipBit(v.signatureHex, 40))).toBe(false);
      });

      it('rejects it for a message with one bit flipped, or under another key', () => {
        const other = Buffer.concat([msg, Buffer.from([0])]);
        expect(verify(v.publicKeyHex, msg.length ? Buffer.from(flipBit(v.messageHex), 'hex') : other, v.signatureHex)).toBe(false);
        expect(verify(flipBit(v.publicKeyHex), msg, v.signatureHex)).toBe(false);
      });
    });
  });

  describe('Project Wycheproof ed25519_test.json', () => {
    it('has all 151 tests, each valid or invalid', () => {
      expect(wycheproof.numberOfTests).toBe(151);
      expect(wycheproofTests).toHaveLength(151);
      expect(new Set(wycheproofTests.map((t) => t.result))).toEqual(new Set(['valid', 'invalid']));
    });

    // A key that cannot be imported makes verify answer false, which counts as "invalid".
    it.each(wycheproofTests)('$label', (t) => {
      expect(verify(t.pk, Buffer.from(t.msg, 'hex'), t.sig)).toBe(t.result === 'valid');
      expect(verifyBytes(Buffer.from(t.pk, 'hex'), Buffer.from(t.msg, 'hex'), Buffer.from(t.sig, 'hex'))).toBe(t.result === 'valid');
    });
  });

  describe('generateKeyPair', () => {
    it('answers a raw hex keypair whose public half derives from the seed', () => {
      const pair = generateKeyPair();
      expect(pair.publicKey).toMatch(/^[0-9a-f]{64}$/);
      expect(pair.privateKey).toMatch(/^[0-9a-f]{64}$/);
      expect(publicKeyFromPrivate(pair.privateKey)).toBe(pair.publicKey);
    });

    it('signs with the seed and verifies with the public key (string and bytes)', () => {
      const pair = generateKeyPair();
      const sig = sign(pair.privateKey, 'hello');
      expect(sig).toMatch(/^[0-9a-f]{128}$/);
      expect(verify(pair.publicKey, 'hello', sig)).toBe(true);
      expect(verify(pair.publicKey, Buffer.from('hello'), sig)).toBe(true);
      expect(verify(pair.publicKey, 'hellO', sig)).toBe(false);
      expect(verify(generateKeyPair().publicKey, 'hello', sig)).toBe(false);
    });

    it('draws a different keypair each time', () => {
      expect(generateKeyPair().privateKey).not.toBe(generateKeyPair().privateKey);
    });

    it('accepts uppercase hex for keys and signatures', () => {
      const pair = generateKeyPair();
      const sig = sign(pair.privateKey.toUpperCase(), 'x');
      expect(verify(pair.publicKey.toUpperCase(), 'x', sig.toUpperCase())).toBe(true);
    });
  });

  describe('verify on garbage', () => {
    const pair = generateKeyPair();
    const sig = sign(pair.privateKey, 'm');
    const garbage: Array<[string, unknown, unknown]> = [
      ['an empty public key', '', sig],
      ['a public key one byte short', pair.publicKey.slice(2), sig],
      ['a public key one byte long', pair.publicKey + '00', sig],
      ['a non-hex public key', 'zz' + pair.publicKey.slice(2), sig],
      ['an odd-length public key', pair.publicKey.slice(1), sig],
      ['an empty signature', pair.publicKey, ''],
      ['a signature one byte short', pair.publicKey, sig.slice(2)],
      ['a signature with a garbage byte appended', pair.publicKey, sig + '00'],
      ['a non-hex signature', pair.publicKey, 'g' + sig.slice(1)],
      ['a null public key', null, sig],
      ['a numeric public key', 42, sig],
      ['an undefined signature', pair.publicKey, undefined],
      ['an object as signature', pair.publicKey, { sig }],
    ];

    it.each(garbage)('answers false, never throws, for %s', (_label, pk, s) => {
      expect(verify(pk as string, 'm', s as string)).toBe(false);
    });

    it('answers false from verifyBytes for wrong lengths', () => {
      const pk = Buffer.from(pair.publicKey, 'hex');
      const raw = Buffer.from(sig, 'hex');
      expect(verifyBytes(pk, Buffer.from('m'), raw)).toBe(true);
      expect(verifyBytes(pk.subarray(1), Buffer.from('m'), raw)).toBe(false);
      expect(verifyBytes(pk, Buffer.from('m'), raw.subarray(1))).toBe(false);
      expect(verifyBytes(pk, Buffer.from('m'), Buffer.concat([raw, Buffer.from([0])]))).toBe(false);
      expect(verifyBytes(new Uint8Array(32), Buffer.from('m'), raw)).toBe(false);
    });
  });
});
