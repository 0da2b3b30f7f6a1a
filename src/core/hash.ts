import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Lowercase hex sha256 of bytes or a UTF-8 string. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
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
