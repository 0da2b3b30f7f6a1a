// Recover channel B (PROTOCOL 2.5): a claimSecret is an HMAC bound to a proposal id and the
// public key its proposer held when proposing. It recovers the proposer while that key is
// still the current key or one of the ring of 8 prior keys, so it survives up to 8 recovers.
import { canonicalize, currentHmac, hmacSha256Hex, safeEqual, type KeyPossession } from '../../core/index.js';
import type { Ctx } from '../context.js';
import { assertKeyPossession, PRIOR_KEYS_RING, recoveryFailed, rotateIdentity, type Recovered } from './identity.js';
import { Proposals, type AgentRecord } from '../records.js';

/** The claimSecret of a proposal: cs_ + HMAC-SHA256(node key, JCS{type, proposalId, publicKey}). */
export function claimSecretFor(ctx: Pick<Ctx, 'keys'>, proposalId: string, publicKey: string, key = currentHmac(ctx.keys).key): string {
  return 'cs_' + hmacSha256Hex(key, canonicalize({ type: 'akas.claim.v1', proposalId, publicKey }));
}

// Any of the node's HMAC keys (current and prior) may have minted it: rotation keeps claims.
const claimMatches = (ctx: Pick<Ctx, 'keys'>, proposalId: string, publicKey: string, presented: string) =>
  ctx.keys.hmac.map((h) => safeEqual(claimSecretFor(ctx, proposalId, publicKey, h.key), presented)).includes(true);

// The claim's key must still be in the ring after the rotation this recover makes: the
// current key, or a prior key that is not the oldest of a full ring. So one claimSecret
// recovers at most PRIOR_KEYS_RING times (PROTOCOL 2.5: at most 8 times). And it must be no
// older than the key the last recovery with the recovery token rotated onto: that recovery
// revokes every claim secret issued before it.
function keyInRing(agent: AgentRecord, publicKey: string) {
  const newestFirst = [agent.signing.publicKey, ...agent.signing.priorKeys.map((k) => k.publicKey)];
  const at = newestFirst.indexOf(publicKey);
  if (at < 0 || at >= PRIOR_KEYS_RING) return false;
  const floor = agent.claimsFloorKey === undefined ? -1 : newestFirst.indexOf(agent.claimsFloorKey);
  return floor < 0 || at <= floor;
}

/** Channel B: proposalId + claimSecret. Every failure is the identical recovery_failed. */
export async function recoverWithClaim(ctx: Ctx, proposalId: string, claimSecret: string, ownKey?: KeyPossession): Promise<Recovered> {
  if (ownKey) assertKeyPossession(ctx, ownKey, 'recover');
  const proposal = await ctx.store.get(Proposals, proposalId);
  if (!proposal?.proposer) {
    claimSecretFor(ctx, proposalId, '0'.repeat(64)); // same work as a real check
    throw recoveryFailed();
  }
  const { tag, publicKey } = proposal.proposer;
  const matches = claimMatches(ctx, proposalId, publicKey, claimSecret);
  return rotateIdentity(ctx, tag, (agent) => keyInRing(agent, publicKey) && matches, ownKey);
}
