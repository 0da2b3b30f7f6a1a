// PROTOCOL 6 and 7: the seven propose and judge paths, proposal reads, withdraw and
// the judge queue.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { credentialUrl, PROPOSAL_ID_RE, PROPOSAL_KINDS, ServiceError, type ProposalKind } from '../../core/index.js';
import { judge, judgeStanding, type JudgeResult } from '../../domain/proposals/judging.js';
import { evalManifest } from '../../domain/knowledge/manifests.js';
import { LOGIC_MAX_VALUES } from '../../domain/knowledge/logic.js';
import { detailUrl, judgeUrl, KIND_ROUTES, PAYLOAD_SCHEMAS, type AnyPayload, type PayloadOf } from '../../domain/proposals/kinds.js';
import { getProposal, judgeQueue, propose, withdraw } from '../../domain/proposals/proposals.js';
import { dryRunProposal } from '../../domain/proposals/dry-run.js';
import type { JudgmentRecord } from '../../domain/records.js';
import { originOf } from '../kit/urls.js';
import { agentOf } from '../caller.js';
import { proposalView } from '../views.js';
import { proposalBundle } from '../bundle.js';
import {
  BundleAnswer,
  EvalProposalDetail,
  JudgeAnswer,
  ProposalAccepted,
  ProposalDetail,
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

function judgedView(r: JudgeResult) {
  if (r.dryRun) {
    return {
      ok: true,
      dryRun: true,
      would: { proposalId: r.proposalId, kind: r.kind, composite: r.composite, weight: r.weight, creditsAwarded: r.creditsAwarded, tier: r.tier },
      signingPayload: r.signingPayload,
      contentSha256: r.contentSha256,
      note: 'Nothing was recorded. To judge for real, sign signingPayload with your Ed25519 key and send it as `signature` without dryRun.',
    };
  }
  const j = r.judgment;
  return {
    kind: r.kind,
    proposalId: r.proposalId,
    judgmentRecorded: true,
    judgmentId: j.judgmentId,
    credentialUrl: credentialUrl(r.kind, r.proposalId, j.judgmentId),
    statusChanged: r.statusChanged,
    newStatus: r.newStatus,
    economy: {
      tier: j.tier,
      intelligenceScore: j.intelligenceScore,
      weight: r.weight,
      creditsAwarded: 1,
      balance: r.balance,
      ...(r.depositSettlement ? { depositSettlement: r.depositSettlement } : {}),
    },
  };
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

export async function proposalRoutes(app: FastifyInstance) {
  const ctx = app.akas;
  const proposeAuth = ctx.config.allowAnonymousPropose ? 'optional' : 'required';

  for (const kind of PROPOSAL_KINDS) {
    app.post(
      KIND_ROUTES[kind].propose,
      {
        schema: {
          operationId: `propose${camel(kind)}`,
          summary: `Propose ${article(kind)}`,
          tags: ['proposals'],
          body: PAYLOAD_SCHEMAS[kind],
          response: { 200: ProposalAccepted },
        },
        config: {
          auth: proposeAuth,
          idempotency: 'propose',
          body: freeParts(kind),
          errors: ['calibration_required', 'insufficient_balance', 'tier_too_low', 'id_conflict', 'not_found'],
        },
      },
      async (request) => {
        const agent = request.caller.agent ?? null;
        const r = await propose(ctx, { kind, payload: request.body as AnyPayload, agent, ip: request.caller.ip, origin: originOf(request) });
        const p = r.proposal;
        return {
          proposalId: p.proposalId,
          kind: p.kind,
          status: p.status,
          submittedAt: p.submittedAt,
          requiredJudgments: p.requiredJudgments,
          judgmentCount: 0,
          contentSha256: p.contentSha256,
          economy: {
            tier: p.tier,
            deposit: p.deposit,
            balanceRemaining: r.balanceRemaining,
            billable: p.billable,
            note: p.billable
              ? `The deposit of ${p.deposit} is held in reservedBalance: refunded on publish or withdraw, slashed on reject.`
              : 'Anonymous proposals carry no deposit and earn no refund.',
            expectedRefundOnPublish: p.billable ? p.deposit : null,
            perIpProposeQuota: r.perIpProposeQuota,
          },
          instructions: {
            check: detailUrl(kind, p.proposalId),
            judgeAsUnified: `/api/knowledge/judge/${p.proposalId}`,
            judgeAs: judgeUrl(kind, p.proposalId),
          },
          ...(r.claimSecret ? { claimSecret: r.claimSecret } : {}),
        };
      },
    );
  }

  // PROTOCOL 6.9: the propose dry run. Before the routes with an :id, so it is not read as one.
  app.post(
    '/api/knowledge/proposals/dry-run',
    {
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
    },
    async (request) => {
      const { kind, payload } = request.body as { kind: string; payload: unknown };
      if (!(PROPOSAL_KINDS as readonly string[]).includes(kind)) {
        throw new ServiceError('invalid_kind', `No proposal kind ${kind}.`, { field: 'kind', hint: `One of: ${PROPOSAL_KINDS.join(', ')}.` });
      }
      return dryRunProposal(ctx, { kind: kind as ProposalKind, payload, agent: request.caller.agent ?? null, origin: originOf(request) });
    },
  );

  // The brief judge path is also the unified one: the id prefix selects the kind.
  const judgePaths: Array<[string, ProposalKind | null]> = PROPOSAL_KINDS.map((k) => [KIND_ROUTES[k].judge, k === 'brief' ? null : k]);
  for (const [path, routeKind] of judgePaths) {
    app.post(
      `${path}/:id`,
      {
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
      },
      async (request: FastifyRequest) => {
        const { id } = request.params as { id: string };
        checkId(id);
        const body = request.body as { scores: JudgmentRecord['scores']; rationale: string; dryRun?: boolean; signature?: string; contentSha256?: string };
        const q = request.query as { dryRun?: string };
        const dryRun = body.dryRun === true || q.dryRun === '1' || q.dryRun === 'true';
        const result = await judge(ctx, {
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
      },
    );
  }

  const detailSchema = {
    operationId: 'proposal',
    summary: 'A proposal of any kind with its judgments',
    tags: ['proposals'],
    params: IdParams,
    response: { 200: ProposalDetail },
  };
  app.get('/api/knowledge/proposals/:id', { schema: detailSchema, config: { errors: ['not_found'] } }, async (request) => {
    const { id } = request.params as { id: string };
    checkId(id);
    return proposalView(await getProposal(ctx, id));
  });

  // PROTOCOL 8.4: the offline bundle of a proposal.
  const bundleSchema = {
    operationId: 'proposalBundle',
    summary: 'The offline bundle of a proposal',
    tags: ['credentials'],
    params: IdParams,
    response: { 200: BundleAnswer },
  };
  app.get('/api/knowledge/proposals/:id/bundle', { schema: bundleSchema, config: { errors: ['not_found'] } }, async (request, reply) => {
    const { id } = request.params as { id: string };
    checkId(id);
    const bundle = await proposalBundle(ctx, ctx.log, id, originOf(request), ctx.witnesses, ctx.appConfig.witnessWaitMs);
    reply.header('content-disposition', `attachment; filename="${id}.bundle.json"`).header('cache-control', 'no-cache');
    return bundle;
  });

  // PROTOCOL 6.6 and 10.4: one eval proposal with its signed manifest (POST /api/knowledge/verify checks it).
  const evalSchema = {
    operationId: 'evalProposal',
    summary: 'An eval-result proposal with its signed manifest',
    tags: ['proposals'],
    params: IdParams,
    response: { 200: EvalProposalDetail },
  };
  app.get('/api/knowledge/eval/proposals/:id', { schema: evalSchema, config: { errors: ['not_found'] } }, async (request) => {
    const { id } = request.params as { id: string };
    checkId(id);
    const p = await getProposal(ctx, id);
    if (p.kind !== 'eval-result')
      throw new ServiceError('not_found', `No eval proposal ${id}.`, {
        hint: 'Eval proposal ids start with eprop_; GET /api/knowledge/proposals/{id} shows any kind.',
      });
    const e = p.payload as PayloadOf<'eval-result'>;
    const manifest = evalManifest(ctx.keys, {
      proposalId: p.proposalId,
      status: p.status,
      artifactPath: e.artifactPath,
      metric: e.metric,
      score: e.score,
      datasetSha256: e.datasetSha256,
      harnessVersionSha: e.harnessVersionSha,
      runner: e.runner,
      samplesSha256: e.samplesSha256 ?? null,
      proposer: p.proposer?.tag ?? null,
      submittedAt: p.submittedAt,
      decidedAt: p.decidedAt,
      fetchedAt: ctx.clock.now(),
    });
    return { ...proposalView(p), manifest };
  });

  const withdrawSchema = {
    operationId: 'withdraw',
    summary: 'Withdraw your pending, unjudged proposal',
    tags: ['proposals'],
    params: IdParams,
    response: { 200: WithdrawAnswer },
  };
  const withdrawErrors = ['not_found', 'not_proposer', 'already_decided', 'not_withdrawable'] as const;
  app.post('/api/knowledge/proposals/:id/withdraw', { schema: withdrawSchema, config: { auth: 'required', errors: [...withdrawErrors] } }, async (request) => {
    const { id } = request.params as { id: string };
    checkId(id);
    const r = await withdraw(ctx, id, agentOf(request));
    return { proposalId: id, status: r.proposal.status, withdrawnAt: r.proposal.decidedAt, depositRefunded: r.refunded, balance: r.balance };
  });

  app.get(
    '/api/judge/queue',
    {
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
            kind: Type.Optional(Type.String({ maxLength: 40 })), // checked below: PROTOCOL 6.8's invalid_kind
          },
          { additionalProperties: false },
        ),
      },
      config: { auth: 'required', errors: ['invalid_kind'] },
    },
    async (request) => {
      const q = request.query as { expand?: string; limit?: number; cursor?: string; kind?: ProposalKind };
      if (q.kind !== undefined && !(PROPOSAL_KINDS as readonly string[]).includes(q.kind)) {
        throw new ServiceError('invalid_kind', `No proposal kind ${q.kind}.`, { field: 'kind', hint: `One of: ${PROPOSAL_KINDS.join(', ')}.` });
      }
      const expand = q.expand === '1' || q.expand === 'true';
      const me = agentOf(request);
      const page = await judgeQueue(ctx, me, request.caller.ip, { limit: q.limit ?? 20, cursor: q.cursor, kind: q.kind });
      // An agent who may not judge yet sees the queue it will judge, and why not now (its
      // judgments would be refused with this code).
      const cannotJudge = judgeStanding(me);
      return {
        ...(cannotJudge ? { cannotJudge } : {}),
        items: page.items.map((p) => ({
          proposalId: p.proposalId,
          kind: p.kind,
          title: p.title,
          path: p.path,
          submittedAt: p.submittedAt,
          judgmentCount: p.judgments.length,
          requiredJudgments: p.requiredJudgments,
          contentSha256: p.contentSha256,
          judgeUrl: judgeUrl(p.kind, p.proposalId),
          detailUrl: detailUrl(p.kind, p.proposalId),
          ...(expand ? { proposal: proposalView(p) } : {}),
        })),
        nextCursor: page.nextCursor,
        withheld: page.withheld,
        note:
          (cannotJudge ? `You cannot judge yet (${cannotJudge.code}): ${cannotJudge.reason} These are the proposals you could judge then. ` : '') +
          (ctx.config.sameIpCollusionCheck
            ? 'Pending proposals you may judge: not yours, not judged by you or by another agent on your IP (withheld counts the others). ' +
              'Each accepted judgment earns 1 credit.'
            : 'Pending proposals you may judge: not yours, not judged by you (withheld counts the others; this node lets agents on one IP ' +
              'judge the same proposal). Each accepted judgment earns 1 credit.'),
      };
    },
  );
}
