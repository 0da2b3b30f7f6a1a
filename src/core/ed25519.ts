// Ed25519 on raw 32-byte hex keys, with node:crypto. bench/crypto.ts measures it against
// @noble/ed25519 (node:crypto with cached KeyObjects verifies ~14x faster here). Building a
// KeyObject from raw bytes is the expensive step, so keys are imported once through JWK
// (the fastest import path) and kept in a small LRU keyed by the hex key.
// Verification goes through the crypto adapter (crypto.ts), which the browser build replaces.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign as nodeSign, type KeyObject } from 'node:crypto';
import { ed25519VerifyNow } from './crypto.js';
import { Lru } from './lru.js';

export interface Ed25519KeyPair {
  /** 64 lowercase hex chars: the raw public key. */
  publicKey: string;
  /** 64 lowercase hex chars: the raw 32-byte seed. */
  privateKey: string;
}

const HEX32 = /^[0-9a-f]{64}$/i;
const HEX64B = /^[0-9a-f]{128}$/i;

const privateKeys = new Lru<KeyObject>(256);

const b64u = (hex: string) => Buffer.from(hex, 'hex').toString('base64url');

/** The node:crypto KeyObject of a raw hex seed, built once and cached (signers that sign many times hold it). */
export function privateKeyObject(privateKeyHex: string): KeyObject {
  const key = privateKeyHex.toLowerCase();
  let obj = privateKeys.get(key);
  if (!obj) {
    if (!HEX32.test(key)) throw new TypeError('an Ed25519 private key is 64 hex chars');
    const pub = publicKeyFromPrivate(key);
    obj = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: b64u(key), x: b64u(pub) }, format: 'jwk' });
    privateKeys.set(key, obj);
  }
  return obj;
}

/** The raw public key (hex) of a raw 32-byte seed (hex). */
export function publicKeyFromPrivate(privateKeyHex: string): string {
  // PKCS8 import is the only way node derives the public half from a seed.
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(privateKeyHex, 'hex')]);
  const priv = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  const jwk = createPublicKey(priv).export({ format: 'jwk' });
  return Buffer.from(jwk.x as string, 'base64url').toString('hex');
}

/** A fresh keypair as raw hex. */
export function generateKeyPair(): Ed25519KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pub = publicKey.export({ format: 'jwk' });
  const priv = privateKey.export({ format: 'jwk' });
  const pair = {
    publicKey: Buffer.from(pub.x as string, 'base64url').toString('hex'),
    privateKey: Buffer.from(priv.d as string, 'base64url').toString('hex'),
  };
  return pair;
}

/** Signs bytes with a raw hex seed; returns the 128-hex signature. */
export function sign(privateKeyHex: string, message: string | Uint8Array): string {
  const msg = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
  return nodeSign(null, msg, privateKeyObject(privateKeyHex)).toString('hex');
}

/** Verifies a 128-hex signature; answers false (never throws) for malformed keys or signatures. */
export function verify(publicKeyHex: string, message: string | Uint8Array, signatureHex: string): boolean {
  if (typeof signatureHex !== 'string' || !HEX64B.test(signatureHex)) return false;
  const msg = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
  return ed25519VerifyNow(publicKeyHex, msg, Buffer.from(signatureHex, 'hex'));
}

/** Verifies signature bytes against a hex public key without hex round trips (the offline verifier's hot path). */
export function verifyRaw(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): boolean {
  return ed25519VerifyNow(publicKeyHex, message, signature);
}

/** Verifies raw signature bytes (any length; wrong lengths are simply invalid). */
export function verifyBytes(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  return verify(Buffer.from(publicKey).toString('hex'), message, Buffer.from(signature).toString('hex'));
}
