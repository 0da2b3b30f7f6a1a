// The crypto adapter (ARCHITECTURE 1, "the single-file verifier and the browser build"): the one
// module through which src/core and verifier/ hash with SHA-256 and check Ed25519 signatures.
// This is Node's, on node:crypto: hashing in one call (crypto.hash, Node >= 20.12), Ed25519
// verification with KeyObjects imported once through JWK (the fastest import path) and kept in
// an LRU keyed by the hex key. The browser build (scripts/build-verifier.mjs) puts
// crypto.web.ts in its place: WebCrypto's Ed25519, which answers a Promise, and a synchronous
// SHA-256 from @noble/hashes (WebCrypto's digest is asynchronous, and the Merkle and chain code
// of src/core that the node shares is synchronous).
//
// Checks that must run on both are written once, as generators that yield each signature they
// need checked (src/core/checking.ts): on Node every answer is synchronous, so they run with no
// Promise at all (the offline verifier's 10,000-credential speed); in a browser they await.
import * as nodeCrypto from 'node:crypto';
import { createHash, createPublicKey, verify as nodeVerify, type KeyObject } from 'node:crypto';
import { Lru } from './lru.js';

/** Which implementation this is: `node:crypto` here, `webcrypto` in the browser build. */
export const CRYPTO_PLATFORM: 'node:crypto' | 'webcrypto' = 'node:crypto';

type OneShot = <E extends 'buffer' | 'hex'>(alg: string, data: string | Uint8Array, enc: E) => E extends 'hex' ? string : Buffer;
// Looked up at the first hash, not as this module loads: the CLI and the single file load
// node:crypto when something first uses it (scripts/lazy-builtins.mjs).
let oneShot: OneShot | undefined;

/** SHA-256 of bytes or a UTF-8 string. */
export function sha256(data: string | Uint8Array): Uint8Array {
  oneShot ??= (nodeCrypto as { hash?: OneShot }).hash;
  return oneShot ? oneShot('sha256', data, 'buffer') : createHash('sha256').update(data).digest();
}

// The value of each hex digit's char code (both cases), for sha256Into.
const HEX_VALUE = new Uint8Array(128);
for (let i = 0; i < 16; i++) HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = HEX_VALUE['0123456789ABCDEF'.charCodeAt(i)] = i;

/**
 * SHA-256 of bytes or a UTF-8 string, written into `out` at `offset` (32 bytes). Asked of the
 * one-shot hash as hex and read back here: Node makes a Buffer for each digest asked as one at
 * about a microsecond's cost, as much as hashing a 400-byte proof (the offline verifier hashes
 * two per credential, eddsa-jcs-2022 §3.3.4).
 */
export function sha256Into(data: string | Uint8Array, out: Uint8Array, offset: number): void {
  // Looked up here too: a verifier may hash into bytes before (or without) any sha256 call.
  oneShot ??= (nodeCrypto as { hash?: OneShot }).hash;
  if (!oneShot) {
    out.set(createHash('sha256').update(data).digest(), offset);
    return;
  }
  const hex = oneShot('sha256', data, 'hex');
  for (let i = 0; i < 32; i++) out[offset + i] = (HEX_VALUE[hex.charCodeAt(2 * i)] << 4) | HEX_VALUE[hex.charCodeAt(2 * i + 1)];
}

const HEX32 = /^[0-9a-f]{64}$/i;

const publicKeys = new Lru<KeyObject>(4096);

// The key of the last call: a batch is mostly one issuer's key, and an LRU hit moves its entry
// (a Map delete and set per signature) where one comparison of the same string suffices.
let lastHex: string | undefined;
let lastKey: KeyObject | undefined;

function publicKeyObject(publicKeyHex: string): KeyObject | null {
  if (publicKeyHex === lastHex) return lastKey!;
  if (typeof publicKeyHex !== 'string') return null; // keys from untrusted JSON may be anything
  const key = publicKeyHex.toLowerCase();
  let obj = publicKeys.get(key);
  if (!obj) {
    if (!HEX32.test(key)) return null;
    try {
      obj = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key, 'hex').toString('base64url') }, format: 'jwk' });
    } catch {
      return null; // not a point on the curve, or a non-canonical encoding
    }
    publicKeys.set(key, obj);
  }
  lastHex = publicKeyHex;
  lastKey = obj;
  return obj;
}

/**
 * Ed25519 verification, answered at once: false (never an exception) for a malformed key or
 * signature. Only where verification is synchronous (Node); the browser build throws here, so
 * that code calling it unawares fails loudly instead of taking a Promise for a verdict.
 */
export function ed25519VerifyNow(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  const key = publicKeyObject(publicKeyHex);
  if (!key) return false;
  try {
    return nodeVerify(null, message, key, signature);
  } catch {
    return false;
  }
}

/** Ed25519 verification as the platform does it: synchronous on Node, a Promise in a browser. */
export const ed25519Verify: (publicKeyHex: string, message: Uint8Array, signature: Uint8Array) => boolean | Promise<boolean> = ed25519VerifyNow;

const P256_POINT = /^04[0-9a-f]{128}$/i;
const ecKeys = new Lru<KeyObject | null>(256);

/**
 * ECDSA P-256 with SHA-256 (DSSE envelopes others sign: PROTOCOL 16.4), answered at once: the
 * key an uncompressed point in hex (04 || x || y), the signature raw r || s (64 bytes; a DER
 * signature is read into this form by the check, verifier/dsse.ts, so both builds take one
 * form). Either S holds, as in OpenSSL and WebCrypto. False, never an exception, for a point
 * off the curve or a malformed signature.
 */
export function ecdsaP256VerifyNow(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): boolean {
  if (typeof publicKeyHex !== 'string' || !P256_POINT.test(publicKeyHex) || signature.length !== 64) return false;
  const hex = publicKeyHex.toLowerCase();
  let key = ecKeys.get(hex);
  if (key === undefined) {
    const b64 = (from: number) => Buffer.from(hex.slice(from, from + 64), 'hex').toString('base64url');
    try {
      key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64(2), y: b64(66) }, format: 'jwk' });
    } catch {
      key = null; // not a point on the curve
    }
    ecKeys.set(hex, key);
  }
  if (!key) return false;
  try {
    return nodeVerify('sha256', message, { key, dsaEncoding: 'ieee-p1363' }, signature);
  } catch {
    return false;
  }
}

/** ECDSA P-256 verification as the platform does it: synchronous on Node, a Promise in a browser. */
export const ecdsaP256Verify: (publicKeyHex: string, message: Uint8Array, signature: Uint8Array) => boolean | Promise<boolean> = ecdsaP256VerifyNow;
