// did:key, Multikey and base58btc of src/core/didkey.ts, and the W3C eddsa-jcs-2022 worked
// example (test/vectors/w3c-vc-di-eddsa) checked end to end with src/core alone.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  base58btcDecode,
  base58btcEncode,
  didKeyFromPublicKey,
  didKeyVerificationMethod,
  ed25519Multibase,
  publicKeyFromMultibase,
} from '../../src/core/didkey.js';
import { publicKeyFromPrivate, sign, verify, verifyBytes } from '../../src/core/ed25519.js';
import { sha256Hex } from '../../src/core/hash.js';
import { canonicalize } from '../../src/core/jcs.js';
import { vectorText } from '../helpers/vectors.js';

const text = (rel: string) => vectorText('w3c-vc-di-eddsa', rel);
const json = (rel: string) => JSON.parse(text(rel));

// From the vectors README: the raw key pair inside keyPair.json.
const RAW_PUBLIC_KEY = 'b00d8d938e7f773d51565aad36a623f5344f7f5d1960f9cf3e8e12620ea2810f';
const SEED = 'c96ef9ea10c5e414c471723aff9de72c35fa5b70fae97e8832ecac7d2e2b8ed6';
const keyPair: { publicKeyMultibase: string; privateKeyMultibase: string } = json('keyPair.json');

describe('base58btc', () => {
  it('encodes and decodes the known strings of the base58 draft', () => {
    const known: Array<[string, string]> = [
      ['', ''],
      ['Hello World!', '2NEpo7TZRRrLZSi2U'],
      ['The quick brown fox jumps over the lazy dog.', 'USm3fpXnKG5EUBx2ndxBDMPVciP5hGey2Jh4NDv6gmeo1LkMeiKrLJUUBk6Z'],
    ];
    for (const [plain, encoded] of known) {
      expect(base58btcEncode(Buffer.from(plain))).toBe(encoded);
      expect(Buffer.from(base58btcDecode(encoded)!).toString()).toBe(plain);
    }
    expect(base58btcEncode(Buffer.from('0000287fb4cd', 'hex'))).toBe('11233QC4');
  });

  it('keeps each leading zero byte as a leading "1"', () => {
    expect(base58btcEncode(new Uint8Array([0, 0, 0]))).toBe('111');
    expect(Array.from(base58btcDecode('111')!)).toEqual([0, 0, 0]);
    expect(base58btcEncode(new Uint8Array([0, 0, 1]))).toBe('112');
  });

  it('round-trips random bytes, including runs of leading zeros', () => {
    for (let i = 0; i < 300; i++) {
      const zeros = i % 5;
      const bytes = Buffer.concat([Buffer.alloc(zeros), randomBytes(i % 70)]);
      const encoded = base58btcEncode(bytes);
      expect(encoded).toMatch(/^[1-9A-HJ-NP-Za-km-z]*$/);
      expect(Buffer.from(base58btcDecode(encoded)!).equals(bytes)).toBe(true);
    }
  });

  it('decodes as the arithmetic of base58 does: leading 1s as zero bytes, the rest as one number, null for any character outside', () => {
    const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
    const reference = (text: string) => {
      let n = 0n;
      for (const ch of text) {
        const d = ALPHABET.indexOf(ch);
        if (d < 0) return null;
        n = n * 58n + BigInt(d);
      }
      const zeros = /^1*/.exec(text)![0].length;
      const hex = n === 0n ? '' : n.toString(16).padStart(Math.ceil(n.toString(16).length / 2) * 2, '0');
      return Buffer.concat([Buffer.alloc(zeros), Buffer.from(hex, 'hex')]).toString('hex');
    };
    let seed = 58;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
    const texts = ['', '1', '111', '1z', 'z', '211', 'zzzz', 'zzzzz', '0', '1l', 'é', '\u{1f600}', '1'.repeat(70), 'z'.repeat(400), `11${'z'.repeat(333)}`];
    for (let i = 0; i < 3000; i++) {
      let t = '';
      for (let n = Math.floor(next() * 130); n > 0; n--)
        t += next() < 0.1 ? '1' : next() < 0.003 ? String.fromCharCode(Math.floor(next() * 300)) : ALPHABET[Math.floor(next() * 58)];
      texts.push(t);
    }
    for (const t of texts) {
      const got = base58btcDecode(t);
      expect(got === null ? null : Buffer.from(got).toString('hex'), t).toBe(reference(t));
    }
  });

  it('answers null for characters outside the alphabet (0, O, I, l)', () => {
    for (const bad of ['0', 'O', 'I', 'l', 'abc+', ' 2N']) expect(base58btcDecode(bad)).toBeNull();
  });
});

describe('Multikey and did:key for Ed25519', () => {
  it('encodes the W3C vector key as its publicKeyMultibase', () => {
    expect(ed25519Multibase(RAW_PUBLIC_KEY)).toBe(keyPair.publicKeyMultibase);
    expect(keyPair.publicKeyMultibase.startsWith('z6Mk')).toBe(true);
  });

  it('reads the raw key back from the multibase and from the did:key', () => {
    expect(publicKeyFromMultibase(keyPair.publicKeyMultibase)).toBe(RAW_PUBLIC_KEY);
    expect(publicKeyFromMultibase(didKeyFromPublicKey(RAW_PUBLIC_KEY))).toBe(RAW_PUBLIC_KEY);
    expect(publicKeyFromMultibase(didKeyVerificationMethod(RAW_PUBLIC_KEY))).toBe(RAW_PUBLIC_KEY);
  });

  it('finds the seed in privateKeyMultibase (0x8026 header) and derives the same public key', () => {
    const bytes = base58btcDecode(keyPair.privateKeyMultibase.slice(1))!;
    expect(Array.from(bytes.subarray(0, 2))).toEqual([0x80, 0x26]);
    expect(Buffer.from(bytes.subarray(2)).toString('hex')).toBe(SEED);
    expect(publicKeyFromPrivate(SEED)).toBe(RAW_PUBLIC_KEY);
  });

  it('builds the verificationMethod used by the vector proof', () => {
    const proofConfig = json('eddsa-jcs-2022/proofConfigJCS.json');
    expect(didKeyVerificationMethod(RAW_PUBLIC_KEY)).toBe(proofConfig.verificationMethod);
    expect(didKeyFromPublicKey(RAW_PUBLIC_KEY)).toBe(`did:key:${keyPair.publicKeyMultibase}`);
  });

  it('round-trips random keys', () => {
    for (let i = 0; i < 50; i++) {
      const key = randomBytes(32).toString('hex');
      expect(publicKeyFromMultibase(ed25519Multibase(key))).toBe(key);
    }
  });

  it('answers null for what is not an Ed25519 multibase', () => {
    const body = keyPair.publicKeyMultibase.slice(1);
    expect(publicKeyFromMultibase(body)).toBeNull(); // no 'z' prefix
    expect(publicKeyFromMultibase('u' + body)).toBeNull(); // another multibase
    expect(publicKeyFromMultibase(keyPair.privateKeyMultibase)).toBeNull(); // 0x8026 header
    expect(publicKeyFromMultibase('z' + base58btcEncode(Buffer.from('ed01' + '00'.repeat(31), 'hex')))).toBeNull(); // 31 bytes
    expect(publicKeyFromMultibase('z0OIl')).toBeNull();
    expect(publicKeyFromMultibase('')).toBeNull();
  });
});

describe('the W3C eddsa-jcs-2022 worked example, with src/core only', () => {
  const unsigned = json('unsigned.json');
  const canonDoc = text('eddsa-jcs-2022/canonDocJCS.txt');
  const proofCanon = text('eddsa-jcs-2022/proofCanonJCS.txt');
  const docHash = text('eddsa-jcs-2022/docHashJCS.txt').trim();
  const proofHash = text('eddsa-jcs-2022/proofHashJCS.txt').trim();
  const combined = text('eddsa-jcs-2022/combinedHashJCS.txt').trim();
  const sigHex = text('eddsa-jcs-2022/sigHexJCS.txt').trim();
  const sigB58 = text('eddsa-jcs-2022/sigBTC58JCS.txt').trim();
  const signed = json('eddsa-jcs-2022/signedJCS.json');

  it('canonicalizes unsigned.json to canonDocJCS.txt', () => {
    expect(canonicalize(unsigned)).toBe(canonDoc);
  });

  it('canonicalizes the proof configuration to proofCanonJCS.txt', () => {
    expect(canonicalize(json('eddsa-jcs-2022/proofConfigJCS.json'))).toBe(proofCanon);
  });

  it('hashes both canonical forms to the listed SHA-256 values', () => {
    expect(sha256Hex(canonDoc)).toBe(docHash);
    expect(sha256Hex(proofCanon)).toBe(proofHash);
    expect(proofHash + docHash).toBe(combined);
  });

  it('verifies the signature over proofHash || docHash against the raw public key', () => {
    const signedBytes = Buffer.from(proofHash + docHash, 'hex');
    expect(signedBytes).toHaveLength(64);
    const pk = Buffer.from(RAW_PUBLIC_KEY, 'hex');
    expect(verifyBytes(pk, signedBytes, Buffer.from(sigHex, 'hex'))).toBe(true);
    expect(verifyBytes(pk, Buffer.from(docHash + proofHash, 'hex'), Buffer.from(sigHex, 'hex'))).toBe(false);
  });

  it('reproduces the signature by signing with the seed', () => {
    expect(sign(SEED, Buffer.from(combined, 'hex'))).toBe(sigHex);
  });

  it("encodes the signature as 'z' + base58btc, the proofValue", () => {
    expect('z' + base58btcEncode(Buffer.from(sigHex, 'hex'))).toBe(sigB58);
    expect(signed.proof.proofValue).toBe(sigB58);
    expect(Buffer.from(base58btcDecode(sigB58.slice(1))!).toString('hex')).toBe(sigHex);
  });

  it('verifies signedJCS.json the way a verifier does: drop proof and proofValue, hash, verify', () => {
    const { proof, ...document } = signed;
    const { proofValue, ...options } = proof;
    const hashes = sha256Hex(canonicalize(options)) + sha256Hex(canonicalize(document));
    const signature = Buffer.from(base58btcDecode(proofValue.slice(1))!).toString('hex');
    const key = publicKeyFromMultibase(options.verificationMethod.split('#')[0]);
    expect(key).toBe(RAW_PUBLIC_KEY);
    expect(verify(key!, Buffer.from(hashes, 'hex'), signature)).toBe(true);
    // and a changed claim breaks it
    const tampered = { ...document, name: 'Alumni Credential!' };
    const bad = sha256Hex(canonicalize(options)) + sha256Hex(canonicalize(tampered));
    expect(verify(key!, Buffer.from(bad, 'hex'), signature)).toBe(false);
  });
});
