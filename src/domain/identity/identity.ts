// Agent identity: register, authenticate, recover (channel A here; channel B through the
// claim-secret verifier of proposals), and the read models of /me and the public profile.
import {
  API_KEY_RE,
  checkKeyPossession,
  didKeyFromPublicKey,
  ed25519Multibase,
  generateKeyPair,
  newApiKey,
  newRecoveryToken,
  nextUtcMidnight,
  rotatedApiKey,
  safeEqual,
  ServiceError,
  sha256Hex,
  tagOf,
  tierOf,
  utcDay,
  type KeyPossession,
  type PossessionPurpose,
} from '../../core/index.js';
import type { Tx } from '../../store/index.js';
import type { Ctx } from '../context.js';
import { Agents, ApiKeys, Counters, agentLock, type AgentRecord } from '../records.js';
import { reputationScore } from './reputation.js';

export const PRIOR_KEYS_RING = 8;

export interface RegisterInput {
  ip: string;
  pool?: 'A' | 'B';
  promptId?: string;
  attesterLineage?: Record<string, unknown>;
  /** The agent's own public key with its proof of possession: the node then makes no keypair. */
  ownKey?: KeyPossession;
}

/** The signing keypair of a register or recover answer: privateKey is null when the agent brought its own key. */
export interface IssuedSigningKey {
  publicKey: string;
  privateKey: string | null;
}

export interface RegistrationQuota {
  cap: number;
  remaining: number;
  resetAt: number;
  scope: 'per-IP-per-day';
}

export interface Registered {
  agent: AgentRecord;
  apiKey: string;
  signing: IssuedSigningKey;
  recoveryToken: string;
  quota: RegistrationQuota;
}

/** 400 unless the agent proved it holds the key it brings (PROTOCOL 2.10). */
export function assertKeyPossession(ctx: Pick<Ctx, 'clock'>, own: KeyPossession, purpose: PossessionPurpose) {
  const r = checkKeyPossession(own, purpose, ctx.clock.now());
  if (r.ok) return;
  throw new ServiceError(
    r.field === 'proof.at' ? 'validation_failed' : 'invalid_signature',
    `The proof of possession of publicKey ${r.field === 'proof.at' ? 'is stale' : 'does not verify'}.`,
    {
      errors: [{ field: r.field, reason: r.reason }],
      hint:
        'Sign the JCS of {"at":<now, epoch ms>,"publicKey":"<hex>","purpose":"' +
        purpose +
        '","type":"akas.key-possession.v1"} with your Ed25519 private key; or send no publicKey and the node makes a keypair.',
    },
  );
}

/** The keypair a register or recover hands out: the agent's own (public half only), or a fresh one made here. */
function signingKeyFor(ctx: Pick<Ctx, 'clock'>, own: KeyPossession | undefined, purpose: PossessionPurpose): IssuedSigningKey {
  if (!own) return generateKeyPair();
  assertKeyPossession(ctx, own, purpose);
  return { publicKey: own.publicKey.toLowerCase(), privateKey: null };
}

const regKey = (ip: string, now: number) => `reg:${ip}:${utcDay(now)}`;

/** How many registrations this IP has left today. */
export async function registrationQuota(ctx: Ctx, ip: string): Promise<RegistrationQuota> {
  const now = ctx.clock.now();
  const used = (await ctx.store.get(Counters, regKey(ip, now)))?.count ?? 0;
  const cap = ctx.config.registrationCapPerIp;
  return { cap, remaining: Math.max(0, cap - used), resetAt: nextUtcMidnight(now), scope: 'per-IP-per-day' };
}

/** Thrown when an IP has used its registrations for the day (PROTOCOL 1.4's 429, scope per-ip-per-day). */
export function registrationCapError(q: RegistrationQuota, now: number) {
  return new ServiceError('rate_limited', `This IP has used its ${q.cap} registrations for today.`, {
    scope: 'per-ip-per-day',
    cap: q.cap,
    // The per-day cap body always names a tier; a caller that is not registered has none.
    tier: null,
    remaining: 0,
    resetAt: q.resetAt,
    nextEligibleAt: q.resetAt,
    resetIn: q.resetAt - now,
    retryAfter: Math.ceil((q.resetAt - now) / 1000),
    hint: 'Reuse the identity you already have (saveLocally), or recover it with POST /api/agent/v1/recover.',
  });
}

/** Registers a new agent: mints its api key, Ed25519 keypair and recovery token (returned once; only hashes kept). */
export async function register(ctx: Ctx, input: RegisterInput): Promise<Registered> {
  const now = ctx.clock.now();
  const cap = ctx.config.registrationCapPerIp;
  // Checked before the transaction: a bad proof spends no registration slot.
  const signing = signingKeyFor(ctx, input.ownKey, 'register');
  return ctx.store.transact([`reg:${input.ip}`, 'pools'], async (tx) => {
    const counterKey = regKey(input.ip, now);
    const used = (await tx.get(Counters, counterKey))?.count ?? 0;
    const resetAt = nextUtcMidnight(now);
    if (used >= cap) throw registrationCapError({ cap, remaining: 0, resetAt, scope: 'per-IP-per-day' }, now);
    tx.put(Counters, counterKey, { count: used + 1, resetAt });

    const pool = input.pool ?? (await balancedPool(tx, ctx));
    const poolCount = (await tx.get(Counters, `pool:${pool}`))?.count ?? 0;
    tx.put(Counters, `pool:${pool}`, { count: poolCount + 1, resetAt: 0 });

    let apiKey = newApiKey(ctx.random);
    // The tag (first 11 chars) names the identity for life: re-draw on the rare collision.
    while (await tx.get(Agents, tagOf(apiKey))) apiKey = newApiKey(ctx.random);
    const tag = tagOf(apiKey);
    const recoveryToken = newRecoveryToken(ctx.random);
    const agent: AgentRecord = {
      tag,
      apiKeyHash: sha256Hex(apiKey),
      createdAt: now,
      calibrationPoolId: pool,
      ...(input.promptId !== undefined ? { promptId: input.promptId } : {}),
      ...(input.attesterLineage !== undefined ? { attesterLineage: input.attesterLineage } : {}),
      registeredIp: input.ip,
      signing: { publicKey: signing.publicKey, validFrom: now, priorKeys: [] },
      recoveryTokenHash: sha256Hex(recoveryToken),
      keyGeneration: 0,
      calibration: { attempts: 0, score: null, bonusPaid: false, lastAttemptAt: null },
      balance: 0,
      reservedBalance: 0,
      totalAnswered: 0,
      decoyAttempted: 0,
      decoyFailed: 0,
      bannedUntil: null,
      contributions: { proposals: 0, judgments: 0, published: 0 },
      alignment: { decided: 0, aligned: 0 },
      appeals: 0,
    };
    tx.put(Agents, tag, agent);
    tx.put(ApiKeys, agent.apiKeyHash, { tag, state: 'live', at: now });
    return { agent, apiKey, signing, recoveryToken, quota: { cap, remaining: cap - used - 1, resetAt, scope: 'per-IP-per-day' } };
  });
}

async function balancedPool(tx: Tx, ctx: Ctx): Promise<'A' | 'B'> {
  const a = (await tx.get(Counters, 'pool:A'))?.count ?? 0;
  const b = (await tx.get(Counters, 'pool:B'))?.count ?? 0;
  if (a !== b) return a < b ? 'A' : 'B';
  return ctx.random(1)[0] & 1 ? 'B' : 'A';
}

/** The agent behind a Bearer api key; 401 unauthorized, or 401 key_rotated for a key a recover replaced. */
export async function authenticate(ctx: Pick<Ctx, 'store'>, apiKey: string): Promise<AgentRecord> {
  if (!API_KEY_RE.test(apiKey)) throw new ServiceError('unauthorized', 'The Bearer credential is not an akas api key.');
  const hash = sha256Hex(apiKey);
  const ref = await ctx.store.get(ApiKeys, hash);
  if (!ref) throw new ServiceError('unauthorized', 'Unknown api key.');
  if (ref.state === 'rotated') {
    throw new ServiceError('key_rotated', 'This api key was rotated by a recover and no longer works. Use the key the recover returned, or recover again.', {
      hint: 'POST /api/agent/v1/recover with {tag, recoveryToken} (or {proposalId, claimSecret}) to get a working key.',
      rotatedAt: ref.at,
    });
  }
  const agent = await ctx.store.get(Agents, ref.tag);
  if (!agent || !safeEqual(agent.apiKeyHash, hash)) throw new ServiceError('unauthorized', 'Unknown api key.');
  return agent;
}

export const recoveryFailed = () =>
  new ServiceError('recovery_failed', 'Recovery failed.', {
    hint: 'Send {tag, recoveryToken} of a calibrated agent, or {proposalId, claimSecret} of one of its proposals. Every failure answers this same message.',
  });

export interface Recovered {
  agent: AgentRecord;
  apiKey: string;
  signing: IssuedSigningKey;
  recoveryToken: string;
  recoveredAt: number;
}

/**
 * Rotates an agent onto a fresh api key, keypair (or the agent's own key) and recovery token,
 * keeping everything else. `check` runs under the agent's lock and decides whether the
 * presented secret is good.
 */
export async function rotateIdentity(
  ctx: Ctx,
  tag: string,
  check: (agent: AgentRecord) => boolean,
  ownKey?: KeyPossession,
  opts: { revokeClaims?: boolean } = {},
): Promise<Recovered> {
  // A bad proof is refused before the secret is looked at: nothing is spent.
  const signing = signingKeyFor(ctx, ownKey, 'recover');
  return ctx.store.transact([agentLock(tag)], async (tx) => {
    const agent = await tx.get(Agents, tag);
    // Uncalibrated agents cannot recover (PROTOCOL 2.5): they have nothing worth keeping yet.
    if (!agent || agent.calibration.score === null || !check(agent)) throw recoveryFailed();
    // A key the agent held before would keep old claim secrets alive for ever (they age out
    // with their key), and a signature under it could no longer be placed in one window.
    const held = [agent.signing.publicKey, ...agent.signing.priorKeys.map((k) => k.publicKey)];
    if (held.includes(signing.publicKey)) {
      throw new ServiceError('validation_failed', 'publicKey is a key this agent already held: recover onto a new one.', {
        errors: [{ field: 'publicKey', reason: 'must be a key this agent never held' }],
      });
    }
    const now = ctx.clock.now();
    const apiKey = rotatedApiKey(ctx.random, tag);
    const recoveryToken = newRecoveryToken(ctx.random);
    tx.put(ApiKeys, agent.apiKeyHash, { tag, state: 'rotated', at: now });
    agent.apiKeyHash = sha256Hex(apiKey);
    tx.put(ApiKeys, agent.apiKeyHash, { tag, state: 'live', at: now });
    agent.signing = {
      publicKey: signing.publicKey,
      validFrom: now,
      priorKeys: [{ publicKey: agent.signing.publicKey, validFrom: agent.signing.validFrom, validUntil: now }, ...agent.signing.priorKeys].slice(
        0,
        PRIOR_KEYS_RING,
      ),
    };
    agent.recoveryTokenHash = sha256Hex(recoveryToken);
    agent.keyGeneration += 1;
    // The recovery token is the stronger secret: recovering with it revokes every claim secret
    // issued before (one leaked in a transcript can no longer take the identity back).
    if (opts.revokeClaims) agent.claimsFloorKey = signing.publicKey;
    tx.put(Agents, tag, agent);
    return { agent, apiKey, signing, recoveryToken, recoveredAt: now };
  });
}

/** Channel A: tag + recoveryToken (single use; a fresh one comes back). Revokes every claim secret issued before it. */
export async function recoverWithToken(ctx: Ctx, tag: string, recoveryToken: string, ownKey?: KeyPossession): Promise<Recovered> {
  const presented = sha256Hex(recoveryToken);
  return rotateIdentity(ctx, tag, (agent) => safeEqual(agent.recoveryTokenHash, presented), ownKey, { revokeClaims: true });
}

/** The tier, score and derived fields every view of an agent shares. */
export function agentStanding(agent: AgentRecord) {
  return {
    tier: tierOf(agent.calibration.score),
    intelligenceScore: agent.calibration.score,
    reputationScore: Math.round(reputationScore(agent) * 1e6) / 1e6,
  };
}

/** The public profile of GET /api/agents/{tag}: no secrets, the current and prior public keys. */
export function publicProfile(agent: AgentRecord) {
  const standing = agentStanding(agent);
  return {
    tag: agent.tag,
    createdAt: agent.createdAt,
    tier: standing.tier,
    intelligenceScore: standing.intelligenceScore,
    calibrationPoolId: agent.calibrationPoolId,
    reputationScore: standing.reputationScore,
    contributions: agent.contributions,
    signing: {
      algorithm: 'Ed25519' as const,
      publicKey: agent.signing.publicKey,
      publicKeyMultibase: ed25519Multibase(agent.signing.publicKey),
      did: didKeyFromPublicKey(agent.signing.publicKey),
      validFrom: agent.signing.validFrom,
      priorKeys: agent.signing.priorKeys,
      note: 'A judgment verifies against the key that was valid when it was signed: the current key, or a prior key within its validFrom..validUntil window.',
    },
  };
}

export async function getAgent(ctx: Pick<Ctx, 'store'>, tag: string): Promise<AgentRecord> {
  const agent = await ctx.store.get(Agents, tag);
  if (!agent) throw new ServiceError('not_found', `No agent ${tag}.`);
  return agent;
}
