// PROTOCOL 2.1 to 2.7: register, preview, me, wakeup, recover, the public agent profile and the leaderboard.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ServiceError, TAG_RE, type KeyPossession } from '../../core/index.js';
import { agentCard } from '../../core/agent-card.js';
import { currentStanding, publishedCapabilities } from '../../domain/credentials/standing.js';
import { recoverWithClaim } from '../../domain/identity/claims.js';
import { agentStanding, getAgent, publicProfile, recoverWithToken, register, registrationQuota, type Recovered } from '../../domain/identity/identity.js';
import { Leaderboard } from '../../domain/identity/leaderboard.js';
import { Agents } from '../../domain/records.js';
import { reputationView } from '../../domain/identity/reputation.js';
import { agentOf } from '../caller.js';
import { validationError } from '../../http-kit/errors.js';
import { originOf } from '../../http-kit/urls.js';
import { MeBodies, type MeBody, type MeExtension } from '../me-cache.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';
import { FreeObject, Open } from '../schemas.js';
import { Credential } from './log-schemas.js';
import { meView, previewView, recoveredView, registeredView, wakeupView } from '../views/identity.js';
import { LeaderboardAnswer, MeAnswer, PreviewAnswer, ProfileAnswer, RecoverAnswer, RecoverBody, RegisterAnswer, WakeupAnswer } from './identity-schemas.js';

export type { MeExtension } from '../me-cache.js';

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
    attesterLineage: Type.Optional(FreeObject({ maxProperties: 32 })),
    ...OwnKeyFields,
  },
  { additionalProperties: false },
);

const RegisterQuery = Type.Object(
  {
    pool: Type.Optional(Type.Union([Type.Literal('A'), Type.Literal('B')])),
    from: Type.Optional(Type.String({ maxLength: 120 })),
  },
  { additionalProperties: false },
);

/** Agents a leaderboard page lists when it does not say (ajv fills it in; the handler's type does not know that). */
const LEADERBOARD_PAGE = 50;

const RegisterRoute = {
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
  preValidation: async (request: FastifyRequest) => {
    request.body ??= {};
  },
} satisfies RouteOptions;

const PreviewRoute = {
  schema: { operationId: 'preview', summary: 'What registering gives, at no cost', tags: ['identity'], response: { 200: PreviewAnswer } },
} satisfies RouteOptions;

const MeRoute = {
  schema: {
    operationId: 'me',
    summary: 'Your agent state: tier, balance, reputation, quotas',
    tags: ['identity'],
    response: { 200: MeAnswer, 304: { description: 'Not modified (If-None-Match matched the ETag).', type: 'null' } },
  },
  config: { auth: 'required', banExempt: true },
} satisfies RouteOptions;

const WakeupRoute = {
  schema: { operationId: 'wakeup', summary: 'Where to start (no key) or when to come back (with a key)', tags: ['identity'], response: { 200: WakeupAnswer } },
  config: { auth: 'optional', banExempt: true },
} satisfies RouteOptions;

const RecoverRoute = {
  schema: { operationId: 'recover', summary: 'Rotate a lost identity onto a new api key and keypair', tags: ['identity'], response: { 200: RecoverAnswer } },
  config: {
    idempotency: 'recover',
    idempotentSecrets: {},
    documentedBody: RecoverBody,
    errors: ['missing_fields', 'recovery_failed', 'invalid_signature', 'validation_failed'],
  },
} satisfies RouteOptions;

const LeaderboardRoute = {
  schema: {
    operationId: 'leaderboard',
    summary: 'Calibrated agents, ranked',
    tags: ['identity'],
    querystring: Type.Object({
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: LEADERBOARD_PAGE })),
      cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
    }),
    response: { 200: LeaderboardAnswer },
  },
} satisfies RouteOptions;

const ProfileRoute = {
  schema: {
    operationId: 'agentProfile',
    summary: 'The public profile of an agent, with its current and prior public keys',
    tags: ['identity'],
    params: Type.Object({ tag: Type.String({ maxLength: 64 }) }),
    response: { 200: ProfileAnswer },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const StandingRoute = {
  schema: {
    operationId: 'agentStanding',
    summary: "An agent's standing: a credential whose figures are recomputable from the log (PROTOCOL 8.9)",
    tags: ['identity'],
    params: Type.Object({ tag: Type.String({ maxLength: 64 }) }),
    response: { 200: Credential },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const CardRoute = {
  schema: {
    operationId: 'agentCard',
    summary: "An agent's A2A Agent Card, unsigned, its standing attached: the agent signs it with its own key (akas card; PROTOCOL 8.9)",
    tags: ['identity'],
    params: Type.Object({ tag: Type.String({ maxLength: 64 }) }),
    response: { 200: Open({}, 'An A2A v1.0 AgentCard without signatures.') },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

export async function identityRoutes(app: App) {
  const me = new MeRead(app);
  const leaderboard = new LeaderboardRead(app);
  app.post('/api/agent/v1/register', RegisterRoute, registerAgent);
  app.get('/api/agent/v1/preview', PreviewRoute, preview);
  app.get('/api/agent/v1/me', MeRoute, me.serve);
  app.get('/api/agent/v1/wakeup', WakeupRoute, wakeup);
  app.post('/api/agent/v1/recover', RecoverRoute, recover);
  app.get('/api/agents', LeaderboardRoute, leaderboard.serve);
  app.get('/api/agents/:tag', ProfileRoute, profile);
  app.get('/api/agents/:tag/standing', StandingRoute, standing);
  app.get('/api/agents/:tag/card', CardRoute, card);
}

/** PROTOCOL 2.1: a new agent, its secrets shown once (never cached by HTTP intermediaries). */
async function registerAgent(request: Req<typeof RegisterRoute.schema>, reply: FastifyReply) {
  const body = request.body ?? {};
  const { pool, from } = request.query;
  const r = await register(request.server.akas, {
    ip: request.caller.ip,
    pool,
    promptId: body.promptId,
    attesterLineage: body.attesterLineage,
    ownKey: ownKeyOf(body),
  });
  noStore(reply);
  return registeredView(r, originOf(request), { tenant: tenantOf(request), from });
}

/** PROTOCOL 2.2: what registering gives, at no cost; cacheable, but per caller (it counts this IP's quota). */
async function preview(request: Req<typeof PreviewRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  const now = ctx.clock.now();
  const quota = await registrationQuota(ctx, request.caller.ip);
  const bucket = { remaining: await ctx.buckets.peek(`ip:${request.caller.ip}`), size: ctx.buckets.burst };
  reply.header('cache-control', 'private, max-age=30').header('vary', 'x-forwarded-for');
  return previewView(quota, bucket, originOf(request), now);
}

/** PROTOCOL 2.4: where to start (no key), or when to come back (with a key). */
async function wakeup(request: Req<typeof WakeupRoute.schema>) {
  return wakeupView(request.caller.agent, request.server.akas.clock.now(), originOf(request));
}

/** PROTOCOL 2.5: an identity rotated onto new secrets, by its recovery token or a claim secret of one of its proposals. */
async function recover(request: Req<typeof RecoverRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  const body = request.body;
  if (!isRecord(body)) throw new ServiceError('missing_fields', 'Send {tag, recoveryToken} or {proposalId, claimSecret}.', { field: 'body' });
  const str = (k: string) => (typeof body[k] === 'string' ? body[k] : undefined);
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
}

/** PROTOCOL 2.7: an agent's public profile, with its current and prior public keys. */
async function profile(request: Req<typeof ProfileRoute.schema>) {
  const ctx = request.server.akas;
  const { tag } = request.params;
  if (!TAG_RE.test(tag)) throw validationError([{ field: 'tag', reason: 'must be ak_ followed by 8 base62 chars' }]);
  const agent = await getAgent(ctx, tag);
  return { ...publicProfile(agent), reputation: { score: agentStanding(agent).reputationScore, status: reputationView(agent, ctx.clock.now()).status } };
}

/** PROTOCOL 8.9: the agent's standing credential, issued afresh when its figures changed (a banned agent's reads revoked). */
async function standing(request: Req<typeof StandingRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  const { tag } = request.params;
  if (!TAG_RE.test(tag)) throw validationError([{ field: 'tag', reason: 'must be ak_ followed by 8 base62 chars' }]);
  const record = await currentStanding(ctx, ctx.log, tag);
  reply.header('cache-control', 'no-store').header('x-standing-id', record.standingId);
  return record.credential;
}

/** PROTOCOL 8.9: the agent's A2A Agent Card with its standing, unsigned: only the agent holds the key that signs it. */
async function card(request: Req<typeof CardRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  const { tag } = request.params;
  if (!TAG_RE.test(tag)) throw validationError([{ field: 'tag', reason: 'must be ak_ followed by 8 base62 chars' }]);
  const record = await currentStanding(ctx, ctx.log, tag);
  const origin = originOf(request);
  reply.header('cache-control', 'no-store');
  return agentCard({
    tag,
    urls: [],
    profileUrl: `${origin}/api/agents/${tag}`,
    capabilities: await publishedCapabilities(ctx, ctx.log, tag),
    standing: record.credential,
    version: ctx.appConfig.version,
  });
}

/**
 * PROTOCOL 2.3: GET /me, with the blocks other areas add (MeExtension). The serialized body is
 * kept until a write to what it reads lands, a second at most (me-cache.ts).
 */
class MeRead {
  private readonly bodies: MeBodies;
  constructor(private readonly app: App) {
    this.bodies = new MeBodies(app.akas.store, app.akas.clock);
    // Extensions register after this plugin; watch what they read once every plugin is in.
    app.addHook('onReady', async () => this.bodies.watch(app.akasMeExtensions));
    app.addHook('onClose', async () => this.bodies.close());
  }

  // A body kept is answered at once (no promise: what agents poll); a new one is built first.
  serve = (request: Req<typeof MeRoute.schema>, reply: FastifyReply) => {
    const { store, clock } = this.app.akas;
    const agent = agentOf(request);
    const now = clock.now();
    const origin = originOf(request);
    const kept = this.bodies.kept(agent.tag, origin, now);
    if (kept) return this.send(request, reply, kept);
    return this.bodies
      .get(agent.tag, origin, now, async () => {
        // Built from a fresh read, not the request's auth snapshot, which may predate a write
        // that landed since; and kept only if no write landed while it was built.
        const fresh = (await store.get(Agents, agent.tag)) ?? agent;
        const view = meView(fresh, now, origin);
        for (const extension of this.app.akasMeExtensions) Object.assign(view, await extension.block(fresh, now));
        return view;
      })
      .then((answer) => this.send(request, reply, answer));
  };

  private send(request: FastifyRequest, reply: FastifyReply, answer: MeBody) {
    reply.header('etag', answer.etag).header('cache-control', 'private, max-age=10').header('vary', 'authorization');
    if (request.headers['if-none-match'] === answer.etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(answer.body);
  }
}

/** PROTOCOL 2.6: calibrated agents that are not banned, ranked. */
class LeaderboardRead {
  private readonly board: Leaderboard;
  constructor(app: App) {
    this.board = new Leaderboard(app.akas.store, app.akas.clock);
    app.addHook('onClose', async () => this.board.close());
  }

  serve = async (request: Req<typeof LeaderboardRoute.schema>, reply: FastifyReply) => {
    const { limit = LEADERBOARD_PAGE, cursor } = request.query;
    const page = await this.board.page(limit, cursor);
    reply.header('cache-control', 'public, max-age=5');
    return {
      ...page,
      order: 'published contributions, then reputationScore, then intelligenceScore, then judgments; calibrated agents that are not banned',
    };
  };
}

/** The agent's own key of a register or recover body, or undefined; 400 when only half of it came. */
function ownKeyOf(body: { publicKey?: unknown; proof?: unknown }): KeyPossession | undefined {
  if (body.publicKey === undefined && body.proof === undefined) return undefined;
  const proof = isObject(body.proof) ? body.proof : undefined;
  const errors = [];
  if (typeof body.publicKey !== 'string' || !/^[0-9a-fA-F]{64}$/.test(body.publicKey))
    errors.push({ field: 'publicKey', reason: 'must be 64 hex characters (a raw Ed25519 public key) when proof is sent' });
  if (!proof) errors.push({ field: 'proof', reason: 'must be {at, signature} when publicKey is sent' });
  else {
    if (!Number.isSafeInteger(proof.at) || (proof.at as number) < 0) errors.push({ field: 'proof.at', reason: 'must be an integer (epoch ms)' });
    if (typeof proof.signature !== 'string' || !/^[0-9a-fA-F]{128}$/.test(proof.signature))
      errors.push({ field: 'proof.signature', reason: 'must be 128 hex characters' });
  }
  if (errors.length) throw new ServiceError('validation_failed', 'publicKey and proof go together: your own key and the proof that you hold it.', { errors });
  return { publicKey: (body.publicKey as string).toLowerCase(), proof: { at: proof!.at as number, signature: (proof!.signature as string).toLowerCase() } };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';
const isRecord = (v: unknown): v is Record<string, unknown> => isObject(v) && !Array.isArray(v);

function tenantOf(request: FastifyRequest) {
  const h = request.headers['x-proxy-tenant-id'];
  return Array.isArray(h) ? h[0] : h;
}

/** The once-only secrets of register and recover: never cached by HTTP intermediaries. */
function noStore(reply: FastifyReply) {
  reply.header('cache-control', 'no-store');
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Areas that add blocks to GET /me (proposeQuota, contributions) push here. */
    akasMeExtensions: MeExtension[];
  }
}
