// Id formats of PROTOCOL 1.8. Randomness comes from an injected source so tests can fix it.
import { randomBytes } from 'node:crypto';

/** A source of random bytes; node:crypto's in production, a seeded one in tests. */
export type RandomSource = (n: number) => Buffer;
export const cryptoRandom: RandomSource = (n) => randomBytes(n);

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** n base62 chars drawn without modulo bias (rejection sampling over bytes < 248). */
export function base62(random: RandomSource, n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of random(n * 2)) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

export const hex = (random: RandomSource, bytes: number) => random(bytes).toString('hex');

export const API_KEY_RE = /^ak_[0-9A-Za-z]{40}$/;
export const TAG_RE = /^ak_[0-9A-Za-z]{8}$/;
export const RECOVERY_TOKEN_RE = /^rec_[A-Za-z0-9_-]{43}$/;
export const CLAIM_SECRET_RE = /^cs_[0-9a-f]{64}$/;

/** apiKey: `ak_` + 40 base62; its first 11 chars are the agent's tag. */
export const newApiKey = (random: RandomSource) => 'ak_' + base62(random, 40);
/** A rotated apiKey keeps the identity's tag as its prefix. */
export const rotatedApiKey = (random: RandomSource, tag: string) => tag + base62(random, 40 - (tag.length - 3));
export const tagOf = (apiKey: string) => apiKey.slice(0, 11);
export const newRecoveryToken = (random: RandomSource) => 'rec_' + random(32).toString('base64url');

export { PROPOSAL_PREFIX, PROPOSAL_KINDS, PROPOSAL_ID_RE, kindOfProposalId, type ProposalKind } from './kinds.js';
import { PROPOSAL_PREFIX, type ProposalKind } from './kinds.js';

export const newProposalId = (random: RandomSource, kind: ProposalKind) => PROPOSAL_PREFIX[kind] + hex(random, 8);

export const newJudgmentId = (random: RandomSource) => 'jdg_' + hex(random, 8);
export const newChallengeId = (random: RandomSource) => 'ch_' + hex(random, 8);
export const newAttestationId = (random: RandomSource) => 'att_' + hex(random, 8);
export const newLedgerId = (random: RandomSource) => hex(random, 6);
