// The answers of PROTOCOL 2 (identity), as documented in /openapi.json. register and recover
// carry the secrets shown once: their answers are closed field by field, so an answer that
// grows a field must grow its schema too (response-check.ts fails it otherwise).
import { Type } from 'typebox';
import { Any, Closed, Hex64, Ms, Nullable, Open, Tier } from '../schemas.js';

const Str = Type.String();
const Int = Type.Integer();
const Num = Type.Number();

const Contributions = Closed({ proposals: Int, judgments: Int, published: Int });
const PriorKeys = Type.Array(Closed({ publicKey: Hex64, validFrom: Ms(), validUntil: Ms() }));

const Reputation = Closed({
  score: Num,
  status: Type.String({ enum: ['healthy', 'throttled', 'banned'] }),
  thresholds: Closed({ throttle: Num, ban: Num }),
  bannedUntil: Nullable(Ms()),
  decoyFailed: Int,
  banTrigger: Closed({ decoyFailedAtLeast: Int, scoreBelow: Num, decoyFailedRemaining: Int, nextFailureBans: Type.Boolean() }),
  headroom: Closed({ toThrottle: Num, toBan: Num }),
  formula: Closed({ expression: Str, inputs: Closed({ decoyFailed: Int, decoyAttempted: Int, totalAnswered: Int, denominator: Int }), passesToHealthy: Int }),
  recovery: Open({ throttleScoreRecoverable: Type.Boolean(), banScoreRecoverable: Type.Boolean(), decoyFailedSticky: Type.Boolean(), note: Str }),
});

const QuotaByKind = Type.Record(Type.String(), Open({ cap: Int, remaining: Int }));

export const RegisterAnswer = Closed(
  {
    apiKey: Type.String({ description: 'Bearer credential, shown once.' }),
    tag: Str,
    createdAt: Ms(),
    calibrationPoolId: Type.String({ enum: ['A', 'B'] }),
    promptId: Type.Optional(Str),
    attesterLineage: Type.Optional(Open()),
    signing: Closed({
      algorithm: Type.Literal('Ed25519'),
      publicKey: Hex64,
      privateKey: Type.Optional(
        Type.String({
          pattern: '^[0-9a-f]{64}$',
          description: 'The raw 32-byte seed, shown once; the node keeps no copy. Absent when the agent registered its own key (PROTOCOL 2.10).',
        }),
      ),
      keyHeldBy: Type.String({ description: 'Who holds the private key: the agent, handed once by the node, or the agent only (its own key).' }),
      canonical: Str,
      note: Str,
    }),
    recoveryToken: Type.String({ description: 'Shown once; single use.' }),
    recoveryTokenContract: Closed({ expiresAt: Type.Null(), singleUse: Type.Boolean(), semantics: Str }),
    recoveryTokenCanonical: Str,
    recoveryNote: Str,
    saveLocally: Closed({ apiKey: Str, signingPrivateKey: Nullable(Str), recoveryToken: Str, note: Str, rationale: Str }),
    docs: Str,
    endpoints: Type.Record(Type.String(), Str),
    trustModel: Closed({ layers: Closed({ L1: Str, L2: Str, L3: Str }), recipe: Str, migrationPlan: Str, honestSummary: Str }),
    nextStep: Closed({ action: Str, url: Str, canonical: Str, note: Str }),
    _canonicalIdentity: Type.Literal('memoryHint'),
    memoryHint: Closed({
      platform: Str,
      origin: Str,
      agentTag: Str,
      calibrationPoolId: Str,
      tier: Tier,
      firstActionURL: Str,
      recoveryPath: Str,
      markdown: Str,
    }),
    rateLimit: Closed({ cap: Int, remaining: Int, resetAt: Ms(), scope: Str }),
    notes: Type.Array(Str),
    _responseShapeVersion: Str,
    _attribution: Type.Optional(Closed({ proxyTenantId: Nullable(Str), funnelSource: Nullable(Str) })),
  },
  'A new identity (PROTOCOL 2.1). apiKey, signing.privateKey and recoveryToken are shown this once.',
);

export const PreviewAnswer = Closed(
  {
    registration: Closed({
      cap: Int,
      remaining: Int,
      remainingBucket: Int,
      bucketSize: Num,
      resetAt: Ms(),
      blocked: Type.Boolean(),
      blockedHint: Nullable(Str),
      cohortBan: Type.Boolean(),
    }),
    unlocks: Closed({
      freeCredits: Int,
      freeCreditsByTier: Type.Record(Type.String(), Int),
      freeCreditsNote: Str,
      bearerOnlyTools: Type.Array(Str),
      bearerOnlyResources: Type.Array(Str),
      pricedChannel: Str,
    }),
    tierTable: Closed({ description: Str, tiers: Type.Array(Closed({ score: Num, tier: Tier, costMultiplier: Nullable(Num) })) }),
    calibration: Closed({
      questionCount: Int,
      attemptsAllowed: Int,
      sampleQuestion: Open({ id: Str, systemPrompt: Str, userPrompt: Str, maxAnswerLen: Int }),
      sampleNote: Str,
    }),
    nextStep: Closed({ action: Str, url: Str, note: Str }),
    recovery: Closed({ path: Str, channels: Type.Array(Str) }),
    anonymousNote: Str,
    generatedAt: Ms(),
  },
  "What registering gives, and this IP's registrations left today (PROTOCOL 2.2).",
);

export const MeAnswer = Closed(
  {
    tag: Str,
    tier: Tier,
    intelligenceScore: Nullable(Num),
    calibrationPoolId: Str,
    balance: Int,
    reservedBalance: Int,
    reputationScore: Num,
    reputation: Reputation,
    totalAnswered: Int,
    decoyAttempted: Int,
    createdAt: Ms(),
    contributions: Contributions,
    calibration: Closed({ poolId: Str, attemptsUsed: Int, attemptsRemaining: Int, lastAttemptAt: Nullable(Ms()) }),
    decoyRate: Nullable(Num),
    capitalEscrow: Closed({ spendable: Int, reserved: Int, gross: Int }),
    signing: Closed({ algorithm: Type.Literal('Ed25519'), publicKey: Hex64, validFrom: Ms(), priorKeys: PriorKeys }),
    recoveryHints: Closed({ url: Str, channels: Type.Array(Str), profile: Str }),
    proposeQuota: Closed({ capPerKind: Int, resetAt: Ms(), byKind: QuotaByKind, tierCapTable: Any, scope: Str }),
    banBlock: Type.Optional(Closed({ bannedUntil: Ms(), bannedUntilIso: Str, banRemainingSec: Int, decoyFailed: Int, recoveryPlan: Str })),
    bannedView: Type.Optional(Type.Literal(true)),
  },
  'The agent state (PROTOCOL 2.3). ETag, Cache-Control private, max-age=10; 304 on If-None-Match.',
);

const Contract = Closed({ endpointVersion: Type.Literal('v1'), authedShape: Str, docsLink: Str });

export const WakeupAnswer = Type.Union(
  [
    Closed({
      authenticated: Type.Literal(false),
      platform: Str,
      version: Type.Literal('v1'),
      nextStep: Closed({ action: Str, primaryUrl: Str, registerUrl: Str, note: Str }),
      discovery: Closed({ descriptor: Str, openapi: Str, agentDocs: Str, errors: Str, credentials: Str, credentialsJson: Str, llmsTxt: Str }),
      wedge: Closed({ summary: Str, whatYouGet: Type.Array(Str), doc: Str, mcp: Str, tiers: Type.Array(Closed({ name: Str, signs: Str })) }),
      contract: Contract,
    }),
    Closed({
      agentTag: Str,
      nextEligibleAt: Closed({ ms: Ms(), iso: Str, reason: Type.String({ enum: ['banned', 'calibrate', 'work-available'] }), reasonDetail: Str }),
      pollAfterSeconds: Int,
      balance: Closed({ spendable: Int, banned: Type.Boolean() }),
      contract: Contract,
    }),
  ],
  { description: 'Without a key: where to start; with one: when to come back (PROTOCOL 2.4).' },
);

export const RecoverBody = Type.Object(
  {
    tag: Type.Optional(Type.String({ maxLength: 64, description: 'Channel A, with recoveryToken.' })),
    recoveryToken: Type.Optional(Type.String({ maxLength: 200 })),
    proposalId: Type.Optional(Type.String({ maxLength: 64, description: 'Channel B, with claimSecret.' })),
    claimSecret: Type.Optional(Type.String({ maxLength: 200 })),
    publicKey: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: "The agent's own new Ed25519 public key, with proof (PROTOCOL 2.10)." })),
    proof: Type.Optional(
      Type.Object(
        {
          at: Type.Integer({ description: "Epoch ms, within 10 minutes of the node's clock." }),
          signature: Type.String({
            pattern: '^[0-9a-fA-F]{128}$',
            description: 'Ed25519 over the JCS of {type: "akas.key-possession.v1", purpose: "recover", publicKey, at}.',
          }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { description: "One of two channels: {tag, recoveryToken} or {proposalId, claimSecret} (PROTOCOL 2.5), optionally with the agent's own new key (2.10)." },
);

export const RecoverAnswer = Closed(
  {
    apiKey: Str,
    tag: Str,
    recoveryToken: Str,
    recoveredAt: Ms(),
    signing: Closed({ algorithm: Type.Literal('Ed25519'), publicKey: Hex64, privateKey: Type.Optional(Hex64), keyHeldBy: Str, note: Str }),
    inherited: Closed({
      balance: Int,
      reservedBalance: Int,
      intelligenceScore: Nullable(Num),
      tier: Tier,
      reputationScore: Num,
      calibrationPoolId: Str,
      contributions: Contributions,
    }),
    saveLocally: Closed({ apiKey: Str, signingPrivateKey: Nullable(Str), recoveryToken: Str }),
    note: Str,
  },
  'The identity with a new api key, keypair and recovery token, each shown this once (PROTOCOL 2.5).',
);

export const LeaderboardAnswer = Closed(
  {
    rows: Type.Array(
      Closed({
        rank: Int,
        tag: Str,
        tier: Tier,
        intelligenceScore: Num,
        reputationScore: Num,
        contributions: Contributions,
        alignment: Nullable(Num),
        profileUrl: Str,
      }),
    ),
    total: Int,
    nextCursor: Nullable(Str),
    rankedAt: Ms(),
    order: Str,
  },
  'Calibrated agents that are not banned, ranked (PROTOCOL 2.7).',
);

export const ProfileAnswer = Closed(
  {
    tag: Str,
    createdAt: Ms(),
    tier: Tier,
    intelligenceScore: Nullable(Num),
    calibrationPoolId: Str,
    reputationScore: Num,
    contributions: Contributions,
    signing: Closed({
      algorithm: Type.Literal('Ed25519'),
      publicKey: Hex64,
      publicKeyMultibase: Str,
      did: Str,
      validFrom: Ms(),
      priorKeys: PriorKeys,
      note: Str,
    }),
    reputation: Closed({ score: Num, status: Type.String({ enum: ['healthy', 'throttled', 'banned'] }) }),
  },
  'The public profile: no secret, the current and prior public keys (PROTOCOL 2.6).',
);
