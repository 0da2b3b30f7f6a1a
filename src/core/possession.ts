// Keys that never leave the agent (PROTOCOL 2.10): an agent may bring its own Ed25519 public
// key to register or recover, proving it holds the private half by signing the JCS of
// {type, purpose, publicKey, at}. The node then never generates, sees or returns a private key.
// `at` (epoch ms, the agent's clock) must lie within KEY_POSSESSION_WINDOW_MS of the node's
// clock, so a proof captured in transit is useless soon after.
import { sign, verify } from './ed25519.js';
import { canonicalize } from './jcs.js';

export type PossessionPurpose = 'register' | 'recover';
export const KEY_POSSESSION_TYPE = 'akas.key-possession.v1';
export const KEY_POSSESSION_WINDOW_MS = 10 * 60 * 1000;

export interface KeyPossession {
  /** 64 lowercase hex: the raw Ed25519 public key the agent keeps the private half of. */
  publicKey: string;
  proof: { at: number; signature: string };
}

/** The exact string an agent signs to prove it holds a key. */
export function possessionSigningString(purpose: PossessionPurpose, publicKey: string, at: number): string {
  return canonicalize({ type: KEY_POSSESSION_TYPE, purpose, publicKey, at });
}

/** What an agent sends: its public key and a fresh proof signed with the private key. */
export function proveKeyPossession(keys: { publicKey: string; privateKey: string }, purpose: PossessionPurpose, at: number): KeyPossession {
  return { publicKey: keys.publicKey, proof: { at, signature: sign(keys.privateKey, possessionSigningString(purpose, keys.publicKey, at)) } };
}

export type PossessionCheck = { ok: true } | { ok: false; field: 'proof.at' | 'proof.signature'; reason: string };

/** Checks a proof of possession at the node's time `now`. */
export function checkKeyPossession(p: KeyPossession, purpose: PossessionPurpose, now: number): PossessionCheck {
  if (Math.abs(now - p.proof.at) > KEY_POSSESSION_WINDOW_MS) {
    return {
      ok: false,
      field: 'proof.at',
      reason: `must be within ${KEY_POSSESSION_WINDOW_MS / 60_000} minutes of the node's clock (it is ${new Date(now).toISOString()})`,
    };
  }
  if (!verify(p.publicKey, possessionSigningString(purpose, p.publicKey, p.proof.at), p.proof.signature)) {
    return {
      ok: false,
      field: 'proof.signature',
      reason: `does not verify: sign the JCS of {type: "${KEY_POSSESSION_TYPE}", purpose: "${purpose}", publicKey, at} with the private key of publicKey`,
    };
  }
  return { ok: true };
}
