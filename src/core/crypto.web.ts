// The crypto adapter of the browser build (see crypto.ts, whose place it takes there): Ed25519
// verification through WebCrypto (`crypto.subtle.verify('Ed25519', ...)`, asynchronous; each
// key imported once and its CryptoKey kept), ECDSA P-256 / SHA-256 the same way (DSSE envelopes
// others sign, PROTOCOL 16.4: WebCrypto takes raw r || s, the form the checks hand in), SHA-256 from @noble/hashes (synchronous, because
// the Merkle and chain code it shares with the node is). No Node built-in is used.
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';

export const CRYPTO_PLATFORM: 'node:crypto' | 'webcrypto' = 'webcrypto';

const encoder = new TextEncoder();

/** SHA-256 of bytes or a UTF-8 string. */
export function sha256(data: string | Uint8Array): Uint8Array {
  return nobleSha256(typeof data === 'string' ? encoder.encode(data) : data);
}

/** SHA-256 of bytes or a UTF-8 string, written into `out` at `offset` (32 bytes). */
export function sha256Into(data: string | Uint8Array, out: Uint8Array, offset: number): void {
  out.set(sha256(data), offset);
}

const HEX32 = /^[0-9a-f]{64}$/i;
type Key = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
const keys = new Map<string, Promise<Key | null>>();
const ecKeys = new Map<string, Promise<Key | null>>();

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function importKey(publicKeyHex: string): Promise<Key | null> {
  const key = publicKeyHex.toLowerCase();
  let got = keys.get(key);
  if (!got) {
    got = crypto.subtle.importKey('raw', hexBytes(key), { name: 'Ed25519' }, false, ['verify']).catch(() => null);
    if (keys.size >= 4096) keys.clear();
    keys.set(key, got);
  }
  return got;
}

/** Not available in a browser: WebCrypto verifies asynchronously (use the generators' async driver). */
export function ed25519VerifyNow(_publicKeyHex: string, _message: Uint8Array, _signature: Uint8Array): boolean {
  throw new Error('akas verifier (browser build): Ed25519 is asynchronous here; this check must go through src/core/checking.ts');
}

/** Ed25519 verification through WebCrypto; false (never a rejection) for a malformed key or signature. */
export async function ed25519Verify(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (typeof publicKeyHex !== 'string' || !HEX32.test(publicKeyHex) || signature.length !== 64) return false;
  const key = await importKey(publicKeyHex);
  if (!key) return false;
  try {
    return await crypto.subtle.verify({ name: 'Ed25519' }, key, signature, message);
  } catch {
    return false;
  }
}

const P256_POINT = /^04[0-9a-f]{128}$/i;

function importEcKey(publicKeyHex: string): Promise<Key | null> {
  const key = publicKeyHex.toLowerCase();
  let got = ecKeys.get(key);
  if (!got) {
    // Importing checks the point is on the curve: a point off it is refused, never verified against.
    got = crypto.subtle.importKey('raw', hexBytes(key), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']).catch(() => null);
    if (ecKeys.size >= 256) ecKeys.clear();
    ecKeys.set(key, got);
  }
  return got;
}

/** Not available in a browser: WebCrypto verifies asynchronously. */
export function ecdsaP256VerifyNow(_publicKeyHex: string, _message: Uint8Array, _signature: Uint8Array): boolean {
  throw new Error('akas verifier (browser build): ECDSA is asynchronous here; this check must go through src/core/checking.ts');
}

/** ECDSA P-256 with SHA-256 through WebCrypto: an uncompressed point in hex, a raw r || s signature; false (never a rejection) when malformed. */
export async function ecdsaP256Verify(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (typeof publicKeyHex !== 'string' || !P256_POINT.test(publicKeyHex) || signature.length !== 64) return false;
  const key = await importEcKey(publicKeyHex);
  if (!key) return false;
  try {
    return await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, signature, message);
  } catch {
    return false;
  }
}
