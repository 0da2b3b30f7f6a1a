import * as crypto from 'node:crypto';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { CRYPTO_PLATFORM, sha256 } from './crypto.js';

// crypto.hash (Node >= 20.12) hashes in one call without a Hash object: about twice as fast
// on the short inputs of the hot paths (api keys, ETags). Looked up at the first hash, not as
// this module loads (node:crypto loads on first use in the CLI: scripts/lazy-builtins.mjs).
type OneShot = (alg: string, data: string | Uint8Array, enc: 'hex') => string;
let oneShot: OneShot | undefined;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Lowercase hex sha256 of bytes or a UTF-8 string (through the crypto adapter in the browser build). */
export function sha256Hex(data: string | Uint8Array): string {
  if (CRYPTO_PLATFORM !== 'node:crypto') {
    let hex = '';
    for (const b of sha256(data)) hex += HEX[b];
    return hex;
  }
  oneShot ??= (crypto as { hash?: OneShot }).hash;
  return oneShot ? oneShot('sha256', data, 'hex') : createHash('sha256').update(data).digest('hex');
}

/** Lowercase hex HMAC-SHA256. */
export function hmacSha256Hex(key: Uint8Array, data: string | Uint8Array): string {
  return createHmac('sha256', key).update(data).digest('hex');
}

/** Constant-time comparison of two strings; false (not an exception) when lengths differ. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    // Still spend the time of one comparison so the length is the only thing that leaks.
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

export const HEX64 = /^[0-9a-f]{64}$/;
export const HEX128 = /^[0-9a-f]{128}$/;
