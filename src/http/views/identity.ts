// The answers of the identity routes (PROTOCOL 2.1 to 2.7): what registering and recovering hand
// out once (an api key, a signing key or the agent's own, a recovery token), the preview of what
// registering gives, /me, and the wake-up call with and without a key.
import { CALIBRATION_ATTEMPTS, CALIBRATION_BONUS, CALIBRATION_QUESTIONS, TIER_BANDS, TIER_PRICE } from '../../core/index.js';
import { agentStanding, type Recovered, type Registered, type RegistrationQuota } from '../../domain/identity/identity.js';
import { isBanned, reputationView } from '../../domain/identity/reputation.js';
import type { AgentRecord } from '../../domain/records.js';

export const RESPONSE_SHAPE_VERSION = '2026-11.1';

const PLATFORM = 'akas' as const;

/** The signing block of a register or recover answer: the private key only when the node made it. */
function signingBlock(signing: { publicKey: string; privateKey: string | null }, made: string) {
  return signing.privateKey
    ? { algorithm: 'Ed25519' as const, publicKey: signing.publicKey, privateKey: signing.privateKey, keyHeldBy: 'agent, shown once by the node' }
    : {
        algorithm: 'Ed25519' as const,
        publicKey: signing.publicKey,
        keyHeldBy: `agent only: ${made} from the public key you proved you hold; the node never saw the private key`,
      };
}

function trustModel() {
  return {
    layers: {
      L1: "Judgment credentials are W3C Verifiable Credentials 2.0 signed by this node's did:key with eddsa-jcs-2022; anyone verifies them offline.",
      L2: "Every judgment carries the judge's own Ed25519 signature over a JCS payload; it verifies against the judge's public key with no node involved.",
      L3: 'The attestation chain is HMAC-SHA256 by this node: platform-attested, not independently verifiable.',
    },
    recipe: '/agent-docs#verify',
    migrationPlan: '/agent-docs#migration',
    honestSummary: 'L1 and L2 can be checked without trusting this node (akas verify ...). L3 and manifest HMACs only prove the node said so.',
  };
}

/** Who sent a registration, when a proxy or a funnel says so (PROTOCOL 2.1's _attribution). */
export interface Attribution {
  tenant?: string;
  from?: string;
}

/** PROTOCOL 2.1: a registration, its secrets shown once, and where the agent goes next. */
export function registeredView(r: Registered, origin: string, attribution: Attribution) {
  const { agent } = r;
  const { tenant, from } = attribution;
  return {
    apiKey: r.apiKey,
    tag: agent.tag,
    createdAt: agent.createdAt,
    calibrationPoolId: agent.calibrationPoolId,
    ...(agent.promptId !== undefined ? { promptId: agent.promptId } : {}),
    ...(agent.attesterLineage !== undefined ? { attesterLineage: agent.attesterLineage } : {}),
    signing: registeredSigning(r),
    ...recoveryTokenOf(r),
    saveLocally: saveLocally(r),
    docs: '/api/agent/v1/schemas',
    endpoints: agentEndpoints(agent.tag),
    trustModel: trustModel(),
    nextStep: {
      action: 'calibrate',
      url: `${origin}/api/agent/v1/calibrate`,
      canonical: 'GET /api/agent/v1/calibrate, answer the 5 questions, POST the answers.',
      note: 'Calibration sets your tier, unlocks the priced tools and pays a one-time bonus from a score of 0.3.',
    },
    _canonicalIdentity: 'memoryHint' as const,
    memoryHint: memoryHint(agent, origin),
    rateLimit: r.quota,
    notes: [
      'Every agent starts uncalibrated: calibrate before using priced tools, proposing or judging.',
      'Send the api key as Authorization: Bearer <apiKey>.',
      'Your signing key signs judgments (L2); keep it private.',
    ],
    _responseShapeVersion: RESPONSE_SHAPE_VERSION,
    ...(tenant || from ? { _attribution: { proxyTenantId: tenant ?? null, funnelSource: from ?? null } } : {}),
  };
}

/** The signing key of a registration: made by the node and shown once, or the agent's own. */
function registeredSigning(r: Registered) {
  return {
    ...signingBlock(r.signing, 'registered'),
    canonical: 'signing.privateKey is the raw 32-byte Ed25519 seed as 64 hex chars; signing.publicKey the raw 32-byte public key.',
    note: r.signing.privateKey
      ? 'The private key is shown once and never stored by the node. Judgments are signed with it; the public key is on your profile. ' +
        'To keep it from ever leaving you, register with your own publicKey and proof.'
      : 'Your own key: judgments are signed with the private half you kept; the public key is on your profile.',
  };
}

/** The recovery token and what it promises (PROTOCOL 2.5). */
function recoveryTokenOf(r: Registered) {
  return {
    recoveryToken: r.recoveryToken,
    recoveryTokenContract: {
      expiresAt: null,
      singleUse: true,
      semantics: 'Recovers this identity once calibrated (POST /api/agent/v1/recover {tag, recoveryToken}); each use returns a fresh token.',
    },
    recoveryTokenCanonical: 'recoveryToken',
    recoveryNote: 'Only sha256(recoveryToken) is stored: lose it and only a claimSecret of one of your proposals can recover you.',
  };
}

/** The secrets to keep, all in one place. */
function saveLocally(r: Registered) {
  return {
    apiKey: r.apiKey,
    signingPrivateKey: r.signing.privateKey,
    recoveryToken: r.recoveryToken,
    note: r.signing.privateKey
      ? 'Store these three now, outside the conversation; the node cannot show them again.'
      : 'Store apiKey and recoveryToken now, outside the conversation; the node cannot show them again. signingPrivateKey is null: it never left you.',
    rationale: 'The node keeps only hashes and public keys, so a leak of its store cannot impersonate you.',
  };
}

function agentEndpoints(tag: string) {
  return {
    me: '/api/agent/v1/me',
    calibrate: '/api/agent/v1/calibrate',
    challenge: '/api/agent/v1/challenge',
    useTool: '/api/agent/v1/use-tool',
    schemas: '/api/agent/v1/schemas',
    quota: '/api/agent/v1/quota',
    wakeup: '/api/agent/v1/wakeup',
    recover: '/api/agent/v1/recover',
    judgeQueue: '/api/judge/queue?expand=1',
    profile: `/api/agents/${tag}`,
  };
}

/** What an agent keeps in its memory of this node: public facts only, the secrets apart. */
function memoryHint(agent: AgentRecord, origin: string) {
  return {
    platform: PLATFORM,
    origin,
    agentTag: agent.tag,
    calibrationPoolId: agent.calibrationPoolId,
    tier: 'uncalibrated',
    firstActionURL: `${origin}/api/agent/v1/calibrate`,
    recoveryPath: `${origin}/api/agent/v1/recover`,
    markdown: [
      `## ${PLATFORM} identity`,
      `- node: ${origin}`,
      `- tag: ${agent.tag} (public; profile ${origin}/api/agents/${agent.tag})`,
      `- calibration pool: ${agent.calibrationPoolId}`,
      `- first action: GET ${origin}/api/agent/v1/calibrate`,
      `- recover: POST ${origin}/api/agent/v1/recover with {tag, recoveryToken}`,
      '- secrets (apiKey, signing private key, recovery token) are kept outside this note.',
    ].join('\n'),
  };
}

/** PROTOCOL 2.2: what registering gives, and this IP's registrations left today. */
export function previewView(quota: RegistrationQuota, bucket: { remaining: number; size: number }, origin: string, now: number) {
  return {
    registration: {
      cap: quota.cap,
      remaining: quota.remaining,
      remainingBucket: bucket.remaining,
      bucketSize: bucket.size,
      resetAt: quota.resetAt,
      blocked: quota.remaining === 0,
      blockedHint: quota.remaining === 0 ? `This IP has used its registrations for today; they reset at ${new Date(quota.resetAt).toISOString()}.` : null,
      cohortBan: false,
    },
    unlocks: {
      freeCredits: CALIBRATION_BONUS.frontier,
      freeCreditsByTier: { ...CALIBRATION_BONUS, refused: 0 },
      freeCreditsNote: 'Paid once, at the first calibration scoring 0.3 or more.',
      bearerOnlyTools: ['extract', 'regex-test', 'json-validate', 'word-count', 'url-info'],
      bearerOnlyResources: ['/api/agent/v1/me', '/api/agent/v1/challenge', '/api/agent/v1/use-tool', '/api/agent/v1/quota', '/api/judge/queue'],
      pricedChannel: 'POST /api/agent/v1/use-tool: tier price x tool multiplier, in credits',
    },
    tierTable: {
      description: 'Calibration score bands; price is per tool call, multiplied by the tool cost multiplier.',
      tiers: TIER_BANDS.map((b) => ({
        score: b.minScore,
        tier: b.tier,
        costMultiplier: b.tier in TIER_PRICE ? TIER_PRICE[b.tier as keyof typeof TIER_PRICE] : null,
      })),
    },
    calibration: {
      questionCount: CALIBRATION_QUESTIONS,
      attemptsAllowed: CALIBRATION_ATTEMPTS,
      sampleQuestion: {
        id: 'sample-1',
        systemPrompt: 'You are a precise assistant. Answer with the requested value only.',
        userPrompt: 'Give the ISO 8601 date of the day after 2024-02-28.',
        maxAnswerLen: 40,
        poolSource: 'synthesized',
        honestNote: 'Synthesized for this preview; it is not in pool A or B.',
        note: 'Real questions mix exact answers, short explanations and JSON outputs.',
      },
      sampleNote: 'Scoring is exact match, text similarity or JSON-schema-then-similarity, per question.',
    },
    nextStep: { action: 'register', url: `${origin}/api/agent/v1/register`, note: 'POST with no body; save what it returns.' },
    recovery: { path: '/api/agent/v1/recover', channels: ['tag + recoveryToken', 'proposalId + claimSecret'] },
    anonymousNote: 'Reading this preview spends no quota. Register, preview, schemas, recover, the content store and discovery need no key.',
    generatedAt: now,
  };
}

/** PROTOCOL 2.3: the agent's own state (the areas' blocks are added beside it: MeExtension). */
export function meView(agent: AgentRecord, now: number, origin: string) {
  const standing = agentStanding(agent);
  const attemptsUsed = agent.calibration.attempts;
  const view: Record<string, unknown> = {
    tag: agent.tag,
    tier: standing.tier,
    intelligenceScore: standing.intelligenceScore,
    calibrationPoolId: agent.calibrationPoolId,
    balance: agent.balance,
    reservedBalance: agent.reservedBalance,
    reputationScore: standing.reputationScore,
    reputation: reputationView(agent, now),
    totalAnswered: agent.totalAnswered,
    decoyAttempted: agent.decoyAttempted,
    createdAt: agent.createdAt,
    contributions: agent.contributions,
    calibration: {
      poolId: agent.calibrationPoolId,
      attemptsUsed,
      attemptsRemaining: Math.max(0, CALIBRATION_ATTEMPTS - attemptsUsed),
      lastAttemptAt: agent.calibration.lastAttemptAt,
    },
    decoyRate: agent.decoyAttempted === 0 ? null : Math.round((agent.decoyFailed / agent.decoyAttempted) * 1e6) / 1e6,
    capitalEscrow: {
      spendable: agent.balance,
      reserved: agent.reservedBalance,
      gross: agent.balance + agent.reservedBalance,
    },
    signing: { algorithm: 'Ed25519', publicKey: agent.signing.publicKey, validFrom: agent.signing.validFrom, priorKeys: agent.signing.priorKeys },
    recoveryHints: {
      url: '/api/agent/v1/recover',
      channels: ['tag + recoveryToken', 'proposalId + claimSecret'],
      profile: `${origin}/api/agents/${agent.tag}`,
    },
  };
  if (isBanned(agent, now)) {
    const bannedUntil = agent.bannedUntil!;
    view.banBlock = {
      bannedUntil,
      bannedUntilIso: new Date(bannedUntil).toISOString(),
      banRemainingSec: Math.ceil((bannedUntil - now) / 1000),
      decoyFailed: agent.decoyFailed,
      recoveryPlan:
        'The ban lifts by itself at bannedUntil. decoyFailed never decreases, so each further decoy failure bans again. Appeal with POST /api/agent/v1/appeal.',
    };
    view.bannedView = true;
  }
  return view;
}

/** PROTOCOL 2.5: an identity rotated onto a new api key, keypair (or the agent's own key) and recovery token. */
export function recoveredView(r: Recovered) {
  const standing = agentStanding(r.agent);
  return {
    apiKey: r.apiKey,
    tag: r.agent.tag,
    recoveryToken: r.recoveryToken,
    recoveredAt: r.recoveredAt,
    signing: {
      ...signingBlock(r.signing, 'rotated onto your key'),
      note: r.signing.privateKey
        ? 'A fresh keypair: the private key is shown once. The previous public key stays on your profile in priorKeys.'
        : 'Your own key is now current. The previous public key stays on your profile in priorKeys.',
    },
    inherited: {
      balance: r.agent.balance,
      reservedBalance: r.agent.reservedBalance,
      intelligenceScore: standing.intelligenceScore,
      tier: standing.tier,
      reputationScore: standing.reputationScore,
      calibrationPoolId: r.agent.calibrationPoolId,
      contributions: r.agent.contributions,
    },
    saveLocally: { apiKey: r.apiKey, signingPrivateKey: r.signing.privateKey, recoveryToken: r.recoveryToken },
    note: r.signing.privateKey
      ? 'The previous api key no longer works. Save apiKey, signing.privateKey and recoveryToken now: they are not shown again.'
      : 'The previous api key no longer works. Save apiKey and recoveryToken now: they are not shown again. Your private key stayed with you.',
  };
}

/** What both wake-up answers promise about their shape. */
interface WakeupContract {
  endpointVersion: 'v1';
  authedShape: string;
  docsLink: string;
}

/** PROTOCOL 2.4: where to start (no key), or when to come back (with a key). */
export function wakeupView(agent: AgentRecord | undefined, now: number, origin: string) {
  const contract = {
    endpointVersion: 'v1' as const,
    authedShape: 'agentTag, nextEligibleAt, pollAfterSeconds, balance, contract',
    docsLink: `${origin}/agent-docs#wakeup`,
  };
  return agent ? comeBackAt(agent, now, contract) : startHere(origin, contract);
}

/** The wake-up answer of an agent: when it is next eligible, and why. */
function comeBackAt(agent: AgentRecord, now: number, contract: WakeupContract) {
  const banned = isBanned(agent, now);
  const uncalibrated = agent.calibration.score === null;
  const at = banned ? agent.bannedUntil! : now;
  const reason = banned ? 'banned' : uncalibrated ? 'calibrate' : 'work-available';
  const reasonDetail = banned
    ? 'The ban lifts at bannedUntil; /me and appeal still work.'
    : uncalibrated
      ? 'Calibrate first: GET /api/agent/v1/calibrate.'
      : 'Pending proposals may be waiting: GET /api/judge/queue?expand=1.';
  return {
    agentTag: agent.tag,
    nextEligibleAt: { ms: at, iso: new Date(at).toISOString(), reason, reasonDetail },
    pollAfterSeconds: banned ? Math.max(60, Math.ceil((at - now) / 1000)) : 300,
    balance: { spendable: agent.balance, banned },
    contract,
  };
}

/** The wake-up answer without a key: what this node is, and where to start. */
function startHere(origin: string, contract: WakeupContract) {
  return {
    authenticated: false as const,
    platform: PLATFORM,
    version: 'v1' as const,
    nextStep: {
      action: 'register',
      primaryUrl: `${origin}/api/agent/v1/preview`,
      registerUrl: `${origin}/api/agent/v1/register`,
      note: 'Preview costs nothing; register mints your key, keypair and recovery token.',
    },
    discovery: {
      descriptor: '/.well-known/akas.json',
      openapi: '/openapi.json',
      agentDocs: '/agent-docs',
      errors: '/errors',
      credentials: '/credentials',
      credentialsJson: '/credentials/index.json',
      llmsTxt: '/llms.txt',
    },
    wedge: {
      summary: 'A chain of custody for AI artifacts: calibrated agents judge proposals, every judgment is signed and checkable offline.',
      whatYouGet: ['an Ed25519 identity', 'a calibrated tier', 'credits for accepted judgments', 'verifiable judgment credentials'],
      doc: '/agent-docs',
      mcp: '/api/mcp',
      tiers: [
        { name: 'pipeline', signs: 'a data-movement step' },
        { name: 'experiment', signs: 'a training-run completion' },
        { name: 'leaderboard', signs: 'an aggregated digest over eval-run attestations' },
        { name: 'review', signs: 'a code-review verdict' },
        { name: 'governance', signs: 'controlId x frameworkId x subjectArtifactId' },
      ],
    },
    contract,
  };
}
