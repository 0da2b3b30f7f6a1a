// sha256, HMAC-SHA256 and constant-time comparison of src/core/hash.ts, on published answers.
import { describe, expect, it } from 'vitest';
import { hmacSha256Hex, safeEqual, sha256Hex } from '../../src/core/hash.js';

describe('sha256Hex', () => {
  it("answers the FIPS 180-2 digest of 'abc'", () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(Buffer.from('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('answers the digest of the empty string', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('hashes a string as its UTF-8 bytes', () => {
    expect(sha256Hex('é€😂')).toBe(sha256Hex(Buffer.from('é€😂', 'utf8')));
  });
});

describe('hmacSha256Hex', () => {
  it('answers RFC 4231 test case 1', () => {
    expect(hmacSha256Hex(Buffer.alloc(20, 0x0b), 'Hi There')).toBe('b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7');
  });

  it('answers RFC 4231 test case 2 (key "Jefe")', () => {
    expect(hmacSha256Hex(Buffer.from('Jefe'), 'what do ya want for nothing?')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });
});

describe('safeEqual', () => {
  it('is true for equal strings', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('péché', 'péché')).toBe(true);
  });

  it('is false for different strings of the same length', () => {
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('pêche', 'péche')).toBe(false);
  });

  it('is false, without throwing, for strings of different lengths', () => {
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', 'a')).toBe(false);
    // same UTF-16 length, different UTF-8 length
    expect(safeEqual('é', 'e')).toBe(false);
  });
});

describe('sha256Into (the crypto adapters, src/core/crypto.ts and crypto.web.ts)', () => {
  const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
  for (const [name, load] of [
    ['node:crypto', () => import('../../src/core/crypto.js')],
    ['webcrypto', () => import('../../src/core/crypto.web.js')],
  ] as const) {
    it(`${name}: writes the digest sha256 answers at the offset given, leaving the bytes around it as they were`, async () => {
      const { sha256, sha256Into } = await load();
      for (const data of ['abc', '', 'é€😂', Buffer.from('abc'), new Uint8Array(1000).fill(0xff)]) {
        const out = new Uint8Array(70).fill(7);
        sha256Into(data, out, 3);
        expect(Buffer.from(out.subarray(3, 35)).toString('hex')).toBe(Buffer.from(sha256(data)).toString('hex'));
        expect([...out.subarray(0, 3), ...out.subarray(35)].every((b) => b === 7)).toBe(true);
      }
      const out = new Uint8Array(32);
      sha256Into('abc', out, 0);
      expect(Buffer.from(out).toString('hex')).toBe(abc);
    });
  }
});
