// PROTOCOL 6 and 7: the seven propose and judge paths, proposal reads, withdraw and
// the judge queue.
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { PROPOSAL_ID_RE, PROPOSAL_KINDS, ServiceError, type ProposalKind } from '../../core/index.js';
import { judge, judgeStanding } from '../../domain/proposals/judging.js';
import { LOGIC_MAX_VALUES } from '../../domain/knowledge/logic.js';
import { KIND_ROUTES, PAYLOAD_SCHEMAS, proposalKindOf } from '../../domain/proposals/kinds.js';
import { getProposal, judgeQueue, propose, withdraw } from '../../domain/proposals/proposals.js';
import { dryRunProposal } from '../../domain/proposals/dry-run.js';
import { originOf } from '../../http-kit/urls.js';
import { agentOf, type AuthMode } from '../caller.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';
import { proposalView } from '../views/records.js';
import { acceptedView, evalProposalView, judgedView, queueView } from '../views/proposals.js';
import { proposalBundle } from '../bundle.js';
import { EvidenceQuery } from './knowledge-schemas.js';
import {
  BundleAnswer,
  EvalProposalDetail,
  JudgeAnswer,
  ProposalAccepted,
  ProposalRead,
  ProposeDryRunAnswer,
  QueueAnswer,
  WithdrawAnswer,
} from './proposal-schemas.js';

/** The operationId of a kind's route: proposeBrief, judgeEvalResult ... */
const camel = (kind: string) => kind.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());
const article = (kind: string) => (/^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`);

const Score = Type.Number({ minimum: 0, maximum: 1 });
export const JudgeBody = Type.Object(
  {
    scores: Type.Object({ accuracy: Score, clarity: Score, compression: Score, sources: Score }, { additionalProperties: false }),
    rationale: Type.String({ maxLength: 400 }), // PROTOCOL 7.1: at most 400 characters, may be empty
    dryRun: Type.Optional(Type.Boolean()),
    signature: Type.Optional(Type.String({ maxLength: 256 })),
    contentSha256: Type.Optional(
      Type.String({
        pattern: '^[0-9a-fA-F]{64}$',
        description:
          "The proposal's contentSha256 you read and signed (the v2 payload of PROTOCOL 7.2); a judgment of other content is refused (409 content_mismatch).",
      }),
    ),
  },
  { additionalProperties: false },
);
const JudgeQuery = Type.Object({ dryRun: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('0'), Type.Literal('true'), Type.Literal('false')])) });
const IdParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'A proposal id: kind prefix + 16 hex.' }) });

/** Every refusal of the judge routes (PROTOCOL 7.5). */
export const JUDGE_ERRORS = [
  'signature_required',
  'invalid_signature',
  'calibration_required',
  'tier_too_low',
  'self_judge',
  'same_ip_collusion',
  'not_found',
  'already_judged',
  'already_decided',
  'content_mismatch',
] as const;

/** An id that cannot name a proposal is an unknown proposalId (PROTOCOL 7.5: 404 not_found). */
function checkId(id: string) {
  if (!PROPOSAL_ID_RE.test(id)) {
    throw new ServiceError('not_found', `No proposal ${id}.`, {
      hint: 'A proposal id is a kind prefix (prop_, cprop_, gprop_, ...) and 16 lowercase hex; GET /api/judge/queue lists pending ones.',
    });
  }
}

// A graph's branch conditions are free-form JSON Logic in its schema; propose bounds each to
// LOGIC_MAX_VALUES values (PROTOCOL 6.2), so its body may hold that many members per branch
// beyond what the schema derives (and strings of any length: up to the node's body limit).
const GRAPH_BRANCHES = (PAYLOAD_SCHEMAS.graph.properties.payload.properties.branches as unknown as { maxItems: number }).maxItems;
const GRAPH_CONDITIONS = { members: GRAPH_BRANCHES * LOGIC_MAX_VALUES, bytes: Infinity };
const freeParts = (kind: ProposalKind) => (kind === 'graph' ? { extra: GRAPH_CONDITIONS } : undefined);
// The dry run's payload is any kind's propose body: bounded as the largest of them.
const ANY_PAYLOAD = {
  type: 'object',
  properties: { kind: { type: 'string', maxLength: 40 }, payload: { anyOf: PROPOSAL_KINDS.map((k) => PAYLOAD_SCHEMAS[k]) } },
};

/** A kind's propose route: its payload schema, and anonymous proposing as the node allows it (PROTOCOL 6.1). */
const proposeRoute = (kind: ProposalKind, auth: AuthMode) =>
  ({
    schema: {
      operationId: `propose${camel(kind)}`,
      summary: `Propose ${article(kind)}`,
      tags: ['proposals'],
      body: PAYLOAD_SCHEMAS[kind],
      response: { 200: ProposalAccepted },
    },
    config: {
      auth,
      idempotency: 'propose',
      body: freeParts(kind),
      errors: ['calibration_required', 'insufficient_balance', 'tier_too_low', 'id_conflict', 'not_found'],
    },
  }) satisfies RouteOptions;
type ProposeSchema = ReturnType<typeof proposeRoute>['schema'];

const DryRunRoute = {
  schema: {
    operationId: 'proposeDryRun',
    summary: 'Check a proposal payload as its propose path would, storing and charging nothing',
    tags: ['proposals'],
    body: Type.Object(
      {
        kind: Type.String({
          maxLength: 40,
          description: 'The proposal kind: brief, capability, graph, artifact, eval-result, tree-expansion or spec-sharpening.',
        }),
        payload: Type.Unknown({ description: 'The payload to check.' }),
      },
      { additionalProperties: false, required: ['kind', 'payload'] },
    ),
    response: { 200: ProposeDryRunAnswer },
  },
  config: { auth: 'optional', body: { shape: ANY_PAYLOAD, extra: GRAPH_CONDITIONS }, errors: ['invalid_kind'] },
} satisfies RouteOptions;

/** A judge path: the brief one is also the unified one, whose id prefix names the kind (routeKind null). */
const judgeRoute = (routeKind: ProposalKind | null) =>
  ({
    schema: {
      operationId: routeKind ? `judge${camel(routeKind)}` : 'judge',
      summary: routeKind ? `Judge ${article(routeKind)} proposal` : 'Judge a proposal of any kind (the id prefix names the kind)',
      tags: ['judging'],
      body: JudgeBody,
      params: IdParams,
      querystring: JudgeQuery,
      response: { 200: JudgeAnswer },
    },
    config: { auth: 'required', idempotency: 'judge', errors: [...JUDGE_ERRORS] },
  }) satisfies RouteOptions;
type JudgeSchema = ReturnType<typeof judgeRoute>['schema'];

const DetailRoute = {
  schema: {
    operationId: 'proposal',
    summary: 'A proposal of any kind with its judgments',
    tags: ['proposals'],
    params: IdParams,
    querystring: Type.Object({ evidence: EvidenceQuery }, { additionalProperties: false }),
    response: { 200: ProposalRead },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const BundleRoute = {
  schema: {
    operationId: 'proposalBundle',
    summary: 'The offline bundle of a proposal',
    tags: ['credentials'],
    params: IdParams,
    response: { 200: BundleAnswer },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const EvalRoute = {
  schema: {
    operationId: 'evalProposal',
    summary: 'An eval-result proposal with its signed manifest',
    tags: ['proposals'],
    params: IdParams,
    response: { 200: EvalProposalDetail },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const WithdrawRoute = {
  schema: {
    operationId: 'withdraw',
    summary: 'Withdraw your pending, unjudged proposal',
    tags: ['proposals'],
    params: IdParams,
    response: { 200: WithdrawAnswer },
  },
  config: { auth: 'required', errors: ['not_found', 'not_proposer', 'already_decided', 'not_withdrawable'] },
} satisfies RouteOptions;

const QueueRoute = {
  schema: {
    operationId: 'judgeQueue',
    summary: 'Pending proposals you may judge',
    tags: ['judging'],
    response: { 200: QueueAnswer },
    querystring: Type.Object(
      {
        expand: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('0'), Type.Literal('true'), Type.Literal('false')])),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        cursor: Type.Optional(Type.String({ maxLength: 100 })),
        kind: Type.Optional(Type.String({ maxLength: 40 })), // checked by the handler: PROTOCOL 6.8's invalid_kind
      },
      { additionalProperties: false },
    ),
  },
  config: { auth: 'required', errors: ['invalid_kind'] },
} satisfies RouteOptions;

export async function proposalRoutes(app: App) {
  const proposeAuth = app.akas.config.allowAnonymousPropose ? 'optional' : 'required';
  for (const kind of PROPOSAL_KINDS) app.post(KIND_ROUTES[kind].propose, proposeRoute(kind, proposeAuth), proposeAs(kind));
  // PROTOCOL 6.9: the propose dry run. Before the routes with an :id, so it is not read as one.
  app.post('/api/knowledge/proposals/dry-run', DryRunRoute, dryRun);
  for (const kind of PROPOSAL_KINDS) {
    const routeKind = kind === 'brief' ? null : kind;
    app.post(`${KIND_ROUTES[kind].judge}/:id`, judgeRoute(routeKind), judgeAs(routeKind));
  }
  app.get('/api/knowledge/proposals/:id', DetailRoute, detail);
  // PROTOCOL 8.4: the offline bundle of a proposal.
  app.get('/api/knowledge/proposals/:id/bundle', BundleRoute, bundle);
  app.get('/api/knowledge/eval/proposals/:id', EvalRoute, evalProposal);
  app.post('/api/knowledge/proposals/:id/withdraw', WithdrawRoute, withdrawOwn);
  app.get('/api/judge/queue', QueueRoute, queue);
}

/** PROTOCOL 6.1 to 6.5: a proposal of one kind, checked, its deposit held, queued for judging. */
function proposeAs(kind: ProposalKind) {
  return async function submitProposal(request: Req<ProposeSchema>) {
    const agent = request.caller.agent ?? null;
    return acceptedView(await propose(request.server.akas, { kind, payload: request.body, agent, ip: request.caller.ip, origin: originOf(request) }));
  };
}

/** PROTOCOL 6.9: a payload checked as its propose path would, storing and charging nothing. */
async function dryRun(request: Req<typeof DryRunRoute.schema>) {
  const { kind, payload } = request.body;
  return dryRunProposal(request.server.akas, { kind: proposalKindOf(kind), payload, agent: request.caller.agent ?? null, origin: originOf(request) });
}

/** PROTOCOL 7.1 to 7.3: a signed judgment of a pending proposal (or its dry run: the payload to sign, nothing recorded). */
function judgeAs(routeKind: ProposalKind | null) {
  return async function judgeProposal(request: Req<JudgeSchema>) {
    const { id } = request.params;
    checkId(id);
    const body = request.body;
    const q = request.query;
    const dryRun = body.dryRun === true || q.dryRun === '1' || q.dryRun === 'true';
    const result = await judge(request.server.akas, {
      routeKind,
      proposalId: id,
      judge: agentOf(request),
      ip: request.caller.ip,
      scores: body.scores,
      rationale: body.rationale,
      signature: body.signature?.toLowerCase(),
      contentSha256: body.contentSha256?.toLowerCase(),
      dryRun,
    });
    return judgedView(result);
  };
}

/**
 * PROTOCOL 6.6: a proposal of any kind with its judgments; with ?evidence=full, its bundle's
 * other parts beside it (8.4: judges, credentials, issuer keys, log events, status), so a reader
 * checks what it shows in the one request.
 */
async function detail(request: Req<typeof DetailRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  const { id } = request.params;
  checkId(id);
  if (request.query.evidence !== 'full') return proposalView(await getProposal(ctx, id));
  const {
    format: _format,
    exportedAt: _at,
    proposal,
    ...evidence
  } = await proposalBundle(ctx, ctx.log, id, originOf(request), ctx.witnesses, ctx.appConfig.witnessWaitMs);
  reply.header('cache-control', 'no-store');
  return { ...proposal, evidence };
}

/** PROTOCOL 8.4: everything needed to check a proposal's judgments offline, as one file. */
async function bundle(request: Req<typeof BundleRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  const { id } = request.params;
  checkId(id);
  const answer = await proposalBundle(ctx, ctx.log, id, originOf(request), ctx.witnesses, ctx.appConfig.witnessWaitMs);
  reply.header('content-disposition', `attachment; filename="${id}.bundle.json"`).header('cache-control', 'no-cache');
  return answer;
}

/** PROTOCOL 6.6 and 10.4: one eval proposal with its signed manifest. */
async function evalProposal(request: Req<typeof EvalRoute.schema>) {
  const ctx = request.server.akas;
  const { id } = request.params;
  checkId(id);
  const p = await getProposal(ctx, id);
  if (p.kind !== 'eval-result')
    throw new ServiceError('not_found', `No eval proposal ${id}.`, {
      hint: 'Eval proposal ids start with eprop_; GET /api/knowledge/proposals/{id} shows any kind.',
    });
  return evalProposalView(ctx.keys, p, ctx.clock.now());
}

/** PROTOCOL 6.7: the proposer takes back a pending, unjudged proposal; its deposit is refunded. */
async function withdrawOwn(request: Req<typeof WithdrawRoute.schema>) {
  const { id } = request.params;
  checkId(id);
  const r = await withdraw(request.server.akas, id, agentOf(request));
  return { proposalId: id, status: r.proposal.status, withdrawnAt: r.proposal.decidedAt, depositRefunded: r.refunded, balance: r.balance };
}

/** PROTOCOL 7.4: the pending proposals the caller may judge, a page at a time. */
async function queue(request: Req<typeof QueueRoute.schema>) {
  const ctx = request.server.akas;
  const q = request.query;
  const kind = q.kind === undefined ? undefined : proposalKindOf(q.kind);
  const me = agentOf(request);
  const page = await judgeQueue(ctx, me, request.caller.ip, { limit: q.limit ?? 20, cursor: q.cursor, kind });
  return queueView(page, { expand: q.expand === '1' || q.expand === 'true', cannotJudge: judgeStanding(me), sameIpRule: ctx.config.sameIpCollusionCheck });
}
