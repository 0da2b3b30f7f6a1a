// Checks written once for both builds of the verifier (src/core/crypto.ts): a check is a
// generator that yields every signature it needs checked (Ed25519, or ECDSA P-256 for the DSSE
// envelopes others sign: PROTOCOL 16.4) and is handed back the verdict. `runNow` drives it on the spot where verification is synchronous (Node): no
// Promise at all. `runAsync` awaits each verdict (the browser's WebCrypto). The same pattern
// as the Merkle proof builders of merkle.ts, which yield the nodes they read.
import { ecdsaP256Verify, ecdsaP256VerifyNow, ed25519Verify, ed25519VerifyNow } from './crypto.js';

/**
 * One signature to check: a hex public key (Ed25519: its 32 bytes; ECDSA P-256: the
 * uncompressed point, 04 || x || y), the signed bytes, the signature bytes (ECDSA: raw r || s,
 * the hash SHA-256). No algorithm named is Ed25519.
 */
export interface SignatureCheck {
  publicKey: string;
  message: Uint8Array;
  signature: Uint8Array;
  algorithm?: 'ECDSA-P256';
}

/** A check that yields signatures to verify and returns T. */
export type Checking<T> = Generator<SignatureCheck, T, boolean>;

const HEX64B = /^[0-9a-f]{128}$/i;
const encoder = new TextEncoder();

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Asks for one Ed25519 verdict (raw signature bytes). */
export function* ed25519(publicKey: string, message: string | Uint8Array, signature: Uint8Array): Checking<boolean> {
  if (typeof publicKey !== 'string' || !(signature instanceof Uint8Array) || signature.length !== 64) return false;
  return yield { publicKey, message: typeof message === 'string' ? encoder.encode(message) : message, signature };
}

/** Asks for one Ed25519 verdict on a 128-hex signature (false for one that is not 128 hex). */
export function* ed25519Hex(publicKey: string, message: string | Uint8Array, signatureHex: unknown): Checking<boolean> {
  if (typeof signatureHex !== 'string' || !HEX64B.test(signatureHex)) return false;
  return yield* ed25519(publicKey, message, hexBytes(signatureHex));
}

/** Asks for one ECDSA P-256 / SHA-256 verdict: a 65-byte uncompressed point in hex, a raw r || s signature of 64 bytes. */
export function* ecdsaP256(publicKey: string, message: Uint8Array, signature: Uint8Array): Checking<boolean> {
  if (typeof publicKey !== 'string' || !(signature instanceof Uint8Array) || signature.length !== 64) return false;
  return yield { publicKey, message, signature, algorithm: 'ECDSA-P256' };
}

/** Runs a check where signatures answer at once (Node). Throws in the browser build, which has only runAsync. */
export function runNow<T>(check: Checking<T>): T {
  let step = check.next();
  while (!step.done) {
    const s = step.value;
    step = check.next(
      s.algorithm === undefined ? ed25519VerifyNow(s.publicKey, s.message, s.signature) : ecdsaP256VerifyNow(s.publicKey, s.message, s.signature),
    );
  }
  return step.value;
}

/** Runs a check with the platform's verifier, awaiting it where it is asynchronous (WebCrypto). */
export async function runAsync<T>(check: Checking<T>): Promise<T> {
  let step = check.next();
  while (!step.done) {
    const s = step.value;
    step = check.next(
      await (s.algorithm === undefined ? ed25519Verify(s.publicKey, s.message, s.signature) : ecdsaP256Verify(s.publicKey, s.message, s.signature)),
    );
  }
  return step.value;
}
