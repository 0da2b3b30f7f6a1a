// GET /api/agent/v1/quota: the caller's token bucket and today's propose counters per kind.
import { casQuotaOf, casQuotaStatus } from '../../domain/cas/quota.js';
import { ProposeCounts, proposeQuota, proposeQuotaOfKey, tagOfProposeCount } from '../../domain/proposals/proposals.js';
import { Type } from 'typebox';
import { agentOf, bucketOf } from '../caller.js';
import { Any, Closed, Ms, Open, Tier } from '../schemas.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';

const QuotaAnswer = Closed(
  {
    tag: Type.String(),
    tier: Tier,
    rateLimit: Closed(
      { scope: Type.String({ enum: ['per-bearer', 'per-ip'] }), bucketSize: Type.Number(), refillPerSecond: Type.Number(), remaining: Type.Integer() },
      "The bucket the agent draws from: its own once calibrated, before that its IP's (PROTOCOL 1.4).",
    ),
    proposeQuota: Closed({
      capPerKind: Type.Integer(),
      resetAt: Ms(),
      byKind: Type.Record(Type.String(), Open({ cap: Type.Integer(), usedByKey: Type.Integer(), usedByIp: Type.Integer(), remaining: Type.Integer() })),
      tierCapTable: Any,
      scopes: Type.Array(Type.String()),
    }),
    tierCapTable: Any,
    casQuota: Closed(
      {
        scope: Type.String({ enum: ['per-agent-per-day', 'per-ip-per-day'] }),
        cap: Type.Integer({ description: 'Bytes a day.' }),
        used: Type.Integer(),
        remaining: Type.Integer(),
        resetAt: Ms(),
      },
      "Your content-store upload quota today: your own by tier once calibrated, else your IP's (PROTOCOL 5.1).",
    ),
    note: Type.String(),
  },
  "Your token bucket, today's propose counters per kind by api key and by IP, and your content-store quota (PROTOCOL 2.8).",
);

const QuotaRoute = {
  schema: { operationId: 'quota', summary: 'Your rate limit and propose quotas', tags: ['identity'], response: { 200: QuotaAnswer } },
  config: { auth: 'required', banExempt: true },
} satisfies RouteOptions;

export async function quotaRoutes(app: App) {
  app.get('/api/agent/v1/quota', QuotaRoute, quota);
  // /me carries the api key's own counters (PROTOCOL 2.3 lists proposeQuota among its
  // fields); the per-IP side depends on where the caller is and lives in /quota.
  const ctx = app.akas;
  app.akasMeExtensions.push({
    block: async (agent) => ({ proposeQuota: await proposeQuotaOfKey(ctx, agent) }),
    reads: [{ space: ProposeCounts, tagOf: tagOfProposeCount }],
  });
}

/** PROTOCOL 2.8: the caller's token bucket, today's propose counters per kind, and its content-store quota. */
async function quota(request: Req<typeof QuotaRoute.schema>) {
  const ctx = request.server.akas;
  const agent = agentOf(request);
  const q = await proposeQuota(ctx, agent, request.caller.ip);
  const bucket = bucketOf(request.caller);
  return {
    tag: agent.tag,
    tier: q.tier,
    rateLimit: {
      scope: bucket.scope,
      bucketSize: ctx.buckets.burst,
      refillPerSecond: ctx.buckets.refillPerSecond,
      remaining: await ctx.buckets.peek(bucket.key),
    },
    proposeQuota: {
      capPerKind: q.capPerKind,
      resetAt: q.resetAt,
      byKind: q.byKind,
      tierCapTable: q.tierCapTable,
      scopes: ['per-apikey-per-day', 'per-ip-per-day'],
    },
    tierCapTable: q.tierCapTable,
    casQuota: await casQuotaStatus(ctx, casQuotaOf(ctx, request.caller.ip, agent)),
    note: 'Each kind has its own daily cap, counted both for your api key and for your egress IP (shared by every agent on it).',
  };
}
