// PROTOCOL 2.1 to 2.7: register, preview, me, wakeup, recover, the public agent profile and the leaderboard.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import {
  CALIBRATION_ATTEMPTS,
  CALIBRATION_BONUS,
  CALIBRATION_QUESTIONS,
  nextUtcMidnight,
  ServiceError,
  sha256Hex,
  TAG_RE,
  type KeyPossession,
  TIER_BANDS,
  TIER_PRICE,
} from '../../core/index.js';
import { recoverWithClaim } from '../../domain/identity/claims.js';
import { agentStanding, getAgent, publicProfile, recoverWithToken, register, registrationQuota, type Recovered } from '../../domain/identity/identity.js';
import { Leaderboard } from '../../domain/identity/leaderboard.js';
import { Agents, type AgentRecord } from '../../domain/records.js';
import type { Space } from '../../store/index.js';
import { isBanned, reputationView } from '../../domain/identity/reputation.js';
import { agentOf } from '../caller.js';
import { validationError } from '../kit/errors.js';
import { originOf } from '../kit/urls.js';
import { LeaderboardAnswer, MeAnswer, PreviewAnswer, ProfileAnswer, RecoverAnswer, RecoverBody, RegisterAnswer, WakeupAnswer } from './identity-schemas.js';
import { Generations } from '../generations.js';

export const RESPONSE_SHAPE_VERSION = '2026-11.1';

const PLATFORM = 'akas';

/**
 * A block another area adds to GET /me, with the keyspaces it reads: a write to one of them
 * drops the agent's cached /me body (tagOf maps a written key to the agent it concerns).
 */
export interface MeExtension {
  block: (agent: AgentRecord, now: number) => Promise<Record<string, unknown>>;
  reads: Array<{ space: Space<unknown>; tagOf: (key: string) => string | null }>;
}

/** How long a served /me body may be reused when nothing it reads was written meanwhile. */
const ME_CACHE_MS = 1000;

/** An agent's own public key and its proof of possession (PROTOCOL 2.10). */
const OwnKeyFields = {
  publicKey: Type.Optional(
    Type.String({
      pattern: '^[0-9a-fA-F]{64}$',
      description: "The agent's own Ed25519 public key (64 hex): the node then makes no keypair and returns no private key.",
    }),
  ),
  proof: Type.Optional(
    Type.Object(
      {
        at: Type.Integer({
          minimum: 0,
          maximum: 8_640_000_000_000_000,
          description: "Epoch ms when the proof was made (within 10 minutes of the node's clock).",
        }),
        signature: Type.String({
          pattern: '^[0-9a-fA-F]{128}$',
          description: 'Ed25519 signature (128 hex) over the JCS of {type: "akas.key-possession.v1", purpose, publicKey, at}.',
        }),
      },
      { additionalProperties: false },
    ),
  ),
};

const RegisterBody = Type.Object(
  {
    promptId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    attesterLineage: Type.Optional(Type.Object({}, { additionalProperties: true, maxProperties: 32 })),
    ...OwnKeyFields,
  },
  { additionalProperties: false },
);

/** The agent's own key of a register or recover body, or undefined; 400 when only half of it came. */
function ownKeyOf(body: { publicKey?: unknown; proof?: unknown }): KeyPossession | undefined {
  if (body.publicKey === undefined && body.proof === undefined) return undefined;
  const proof = body.proof as { at?: unknown; signature?: unknown } | undefined;
  const errors = [];
  if (typeof body.publicKey !== 'string' || !/^[0-9a-fA-F]{64}$/.test(body.publicKey))
    errors.push({ field: 'publicKey', reason: 'must be 64 hex characters (a raw Ed25519 public key) when proof is sent' });
  if (!proof || typeof proof !== 'object') errors.push({ field: 'proof', reason: 'must be {at, signature} when publicKey is sent' });
  else {
    if (!Number.isSafeInteger(proof.at) || (proof.at as number) < 0) errors.push({ field: 'proof.at', reason: 'must be an integer (epoch ms)' });
    if (typeof proof.signature !== 'string' || !/^[0-9a-fA-F]{128}$/.test(proof.signature))
      errors.push({ field: 'proof.signature', reason: 'must be 128 hex characters' });
  }
  if (errors.length) throw new ServiceError('validation_failed', 'publicKey and proof go together: your own key and the proof that you hold it.', { errors });
  return { publicKey: (body.publicKey as string).toLowerCase(), proof: { at: proof!.at as number, signature: (proof!.signature as string).toLowerCase() } };
}

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

const RegisterQuery = Type.Object(
  {
    pool: Type.Optional(Type.Union([Type.Literal('A'), Type.Literal('B')])),
    from: Type.Optional(Type.String({ maxLength: 120 })),
  },
  { additionalProperties: false },
);

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

function tenantOf(request: FastifyRequest) {
  const h = request.headers['x-proxy-tenant-id'];
  return Array.isArray(h) ? h[0] : h;
}

/** The once-only secrets of register and recover: never cached by HTTP intermediaries. */
function noStore(reply: FastifyReply) {
  reply.header('cache-control', 'no-store');
}

function meView(agent: AgentRecord, now: number, origin: string) {
  const standing = agentStanding(agent);
  const banned = isBanned(agent, now);
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
  if (banned) {
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

function recoveredView(r: Recovered) {
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

export async function identityRoutes(app: FastifyInstance) {
  const ctx = app.akas;
  const meExtensions = app.akasMeExtensions;

  app.post(
    '/api/agent/v1/register',
    {
      schema: {
        operationId: 'register',
        summary: "Register a new agent: an api key, an Ed25519 keypair (or the agent's own public key) and a recovery token, shown once",
        tags: ['identity'],
        body: RegisterBody,
        querystring: RegisterQuery,
        response: { 200: RegisterAnswer },
      },
      config: { idempotency: 'register', idempotentSecrets: { bodyProof: 'publicKey' }, bodyOptional: true, errors: ['invalid_signature'] },
      // "No body needed": an absent body is the empty object.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as { promptId?: string; attesterLineage?: Record<string, unknown>; publicKey?: string; proof?: unknown };
      const query = request.query as { pool?: 'A' | 'B'; from?: string };
      const origin = originOf(request);
      const r = await register(ctx, {
        ip: request.caller.ip,
        pool: query.pool,
        promptId: body.promptId,
        attesterLineage: body.attesterLineage,
        ownKey: ownKeyOf(body),
      });
      const { agent } = r;
      const tenant = tenantOf(request);
      noStore(reply);
      return {
        apiKey: r.apiKey,
        tag: agent.tag,
        createdAt: agent.createdAt,
        calibrationPoolId: agent.calibrationPoolId,
        ...(agent.promptId !== undefined ? { promptId: agent.promptId } : {}),
        ...(agent.attesterLineage !== undefined ? { attesterLineage: agent.attesterLineage } : {}),
        signing: {
          ...signingBlock(r.signing, 'registered'),
          canonical: 'signing.privateKey is the raw 32-byte Ed25519 seed as 64 hex chars; signing.publicKey the raw 32-byte public key.',
          note: r.signing.privateKey
            ? 'The private key is shown once and never stored by the node. Judgments are signed with it; the public key is on your profile. ' +
              'To keep it from ever leaving you, register with your own publicKey and proof.'
            : 'Your own key: judgments are signed with the private half you kept; the public key is on your profile.',
        },
        recoveryToken: r.recoveryToken,
        recoveryTokenContract: {
          expiresAt: null,
          singleUse: true,
          semantics: 'Recovers this identity once calibrated (POST /api/agent/v1/recover {tag, recoveryToken}); each use returns a fresh token.',
        },
        recoveryTokenCanonical: 'recoveryToken',
        recoveryNote: 'Only sha256(recoveryToken) is stored: lose it and only a claimSecret of one of your proposals can recover you.',
        saveLocally: {
          apiKey: r.apiKey,
          signingPrivateKey: r.signing.privateKey,
          recoveryToken: r.recoveryToken,
          note: r.signing.privateKey
            ? 'Store these three now, outside the conversation; the node cannot show them again.'
            : 'Store apiKey and recoveryToken now, outside the conversation; the node cannot show them again. signingPrivateKey is null: it never left you.',
          rationale: 'The node keeps only hashes and public keys, so a leak of its store cannot impersonate you.',
        },
        docs: '/api/agent/v1/schemas',
        endpoints: {
          me: '/api/agent/v1/me',
          calibrate: '/api/agent/v1/calibrate',
          challenge: '/api/agent/v1/challenge',
          useTool: '/api/agent/v1/use-tool',
          schemas: '/api/agent/v1/schemas',
          quota: '/api/agent/v1/quota',
          wakeup: '/api/agent/v1/wakeup',
          recover: '/api/agent/v1/recover',
          judgeQueue: '/api/judge/queue?expand=1',
          profile: `/api/agents/${agent.tag}`,
        },
        trustModel: trustModel(),
        nextStep: {
          action: 'calibrate',
          url: `${origin}/api/agent/v1/calibrate`,
          canonical: 'GET /api/agent/v1/calibrate, answer the 5 questions, POST the answers.',
          note: 'Calibration sets your tier, unlocks the priced tools and pays a one-time bonus from a score of 0.3.',
        },
        _canonicalIdentity: 'memoryHint',
        memoryHint: {
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
        },
        rateLimit: r.quota,
        notes: [
          'Every agent starts uncalibrated: calibrate before using priced tools, proposing or judging.',
          'Send the api key as Authorization: Bearer <apiKey>.',
          'Your signing key signs judgments (L2); keep it private.',
        ],
        _responseShapeVersion: RESPONSE_SHAPE_VERSION,
        ...(tenant || query.from ? { _attribution: { proxyTenantId: tenant ?? null, funnelSource: query.from ?? null } } : {}),
      };
    },
  );

  const previewSchema = { operationId: 'preview', summary: 'What registering gives, at no cost', tags: ['identity'], response: { 200: PreviewAnswer } };
  app.get('/api/agent/v1/preview', { schema: previewSchema }, async (request, reply) => {
    const now = ctx.clock.now();
    const quota = await registrationQuota(ctx, request.caller.ip);
    const remainingBucket = await ctx.buckets.peek(`ip:${request.caller.ip}`);
    const origin = originOf(request);
    // Cacheable, but per caller: the registration block counts this IP's quota.
    reply.header('cache-control', 'private, max-age=30').header('vary', 'x-forwarded-for');
    return {
      registration: {
        cap: quota.cap,
        remaining: quota.remaining,
        remainingBucket,
        bucketSize: ctx.buckets.burst,
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
  });

  // /me is what agents poll. Its serialized body is kept per agent (and origin) until a write
  // to anything it reads lands, or for at most ME_CACHE_MS (its only time-dependent fields,
  // the ban countdown and the quota reset, move by the second and the day).
  // Kept by time, not by count (generations.ts): the bodies of agents that polled in the last
  // second or two, not one stale body for each of the last 10,000 agents.
  const meCache = new Generations<string, Map<string, { body: string; etag: string; until: number }>>(ME_CACHE_MS, 10_000, ctx.clock.now());
  let writes = 0; // a body built while a write landed is served but not kept
  const forget = (tag: string | null) => {
    writes++;
    if (tag) meCache.delete(tag);
  };
  // Writes a shared store may have missed: every body goes.
  const forgetAll = () => {
    writes++;
    meCache.clear();
  };
  let unwatch: Array<() => void> = [];
  // Extensions register after this plugin; watch what they read once every plugin is in.
  app.addHook('onReady', async () => {
    unwatch = [
      ctx.store.watch(Agents, forget, forgetAll),
      ...meExtensions.flatMap((e) => e.reads.map((r) => ctx.store.watch(r.space, (k) => forget(r.tagOf(k)), forgetAll))),
    ];
  });
  app.addHook('onClose', async () => {
    for (const stop of unwatch) stop();
  });

  const meSchema = {
    operationId: 'me',
    summary: 'Your agent state: tier, balance, reputation, quotas',
    tags: ['identity'],
    response: { 200: MeAnswer, 304: { description: 'Not modified (If-None-Match matched the ETag).', type: 'null' } },
  };
  app.get('/api/agent/v1/me', { schema: meSchema, config: { auth: 'required', banExempt: true } }, async (request, reply) => {
    const agent = agentOf(request);
    const now = ctx.clock.now();
    const origin = originOf(request);
    let cached = meCache.get(agent.tag, now)?.get(origin);
    if (!cached || cached.until <= now) {
      // Built from a fresh read, not the request's auth snapshot, which may predate a write
      // that landed since; and kept only if no write landed while it was built.
      const before = writes;
      const fresh = (await ctx.store.get(Agents, agent.tag)) ?? agent;
      const view = meView(fresh, now, origin);
      for (const extension of meExtensions) Object.assign(view, await extension.block(fresh, now));
      const body = JSON.stringify(view);
      cached = { body, etag: `"${sha256Hex(body).slice(0, 32)}"`, until: Math.min(now + ME_CACHE_MS, nextUtcMidnight(now)) };
      if (writes === before) {
        let byOrigin = meCache.get(agent.tag, now);
        if (!byOrigin) meCache.set(agent.tag, (byOrigin = new Map()), now);
        byOrigin.set(origin, cached);
      }
    }
    reply.header('etag', cached.etag).header('cache-control', 'private, max-age=10').header('vary', 'authorization');
    if (request.headers['if-none-match'] === cached.etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(cached.body);
  });

  const wakeupSchema = {
    operationId: 'wakeup',
    summary: 'Where to start (no key) or when to come back (with a key)',
    tags: ['identity'],
    response: { 200: WakeupAnswer },
  };
  app.get('/api/agent/v1/wakeup', { schema: wakeupSchema, config: { auth: 'optional', banExempt: true } }, async (request) => {
    const origin = originOf(request);
    const contract = {
      endpointVersion: 'v1',
      authedShape: 'agentTag, nextEligibleAt, pollAfterSeconds, balance, contract',
      docsLink: `${origin}/agent-docs#wakeup`,
    };
    const agent = request.caller.agent;
    const now = ctx.clock.now();
    if (!agent) {
      return {
        authenticated: false,
        platform: PLATFORM,
        version: 'v1',
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
  });

  const recoverSchema = {
    operationId: 'recover',
    summary: 'Rotate a lost identity onto a new api key and keypair',
    tags: ['identity'],
    response: { 200: RecoverAnswer },
  };
  const recoverConfig = {
    idempotency: 'recover',
    idempotentSecrets: {},
    documentedBody: RecoverBody,
    errors: ['missing_fields' as const, 'recovery_failed' as const, 'invalid_signature' as const, 'validation_failed' as const],
  };
  app.post('/api/agent/v1/recover', { schema: recoverSchema, config: recoverConfig }, async (request, reply) => {
    const body = request.body as Record<string, unknown> | undefined;
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ServiceError('missing_fields', 'Send {tag, recoveryToken} or {proposalId, claimSecret}.', { field: 'body' });
    }
    const str = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : undefined);
    const proposalId = str('proposalId');
    const claimSecret = str('claimSecret');
    const tag = str('tag');
    const recoveryToken = str('recoveryToken');
    const ownKey = ownKeyOf(body);
    let recovered: Recovered;
    // The proposal channel is evaluated first when both are present (PROTOCOL 2.5).
    if (proposalId !== undefined && claimSecret !== undefined) recovered = await recoverWithClaim(ctx, proposalId, claimSecret, ownKey);
    else if (tag !== undefined && recoveryToken !== undefined) recovered = await recoverWithToken(ctx, tag, recoveryToken, ownKey);
    else {
      throw new ServiceError('missing_fields', 'Send {tag, recoveryToken} or {proposalId, claimSecret}.', {
        errors: [{ field: 'tag|proposalId', reason: 'one full channel is required' }],
      });
    }
    noStore(reply);
    return recoveredView(recovered);
  });

  const leaderboard = new Leaderboard(ctx.store, ctx.clock);
  app.addHook('onClose', async () => leaderboard.close());
  const LeaderboardQuery = Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  });
  const leaderboardSchema = {
    operationId: 'leaderboard',
    summary: 'Calibrated agents, ranked',
    tags: ['identity'],
    querystring: LeaderboardQuery,
    response: { 200: LeaderboardAnswer },
  };
  app.get('/api/agents', { schema: leaderboardSchema }, async (request, reply) => {
    const { limit, cursor } = request.query as { limit: number; cursor?: string };
    const page = await leaderboard.page(limit, cursor);
    reply.header('cache-control', 'public, max-age=5');
    return {
      ...page,
      order: 'published contributions, then reputationScore, then intelligenceScore, then judgments; calibrated agents that are not banned',
    };
  });

  const profileSchema = {
    operationId: 'agentProfile',
    summary: 'The public profile of an agent, with its current and prior public keys',
    tags: ['identity'],
    params: Type.Object({ tag: Type.String({ maxLength: 64 }) }),
    response: { 200: ProfileAnswer },
  };
  app.get('/api/agents/:tag', { schema: profileSchema, config: { errors: ['not_found'] } }, async (request) => {
    const { tag } = request.params as { tag: string };
    if (!TAG_RE.test(tag)) throw validationError([{ field: 'tag', reason: 'must be ak_ followed by 8 base62 chars' }]);
    const agent = await getAgent(ctx, tag);
    return { ...publicProfile(agent), reputation: { score: agentStanding(agent).reputationScore, status: reputationView(agent, ctx.clock.now()).status } };
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Areas that add blocks to GET /me (proposeQuota, contributions) push here. */
    akasMeExtensions: MeExtension[];
  }
}
