// PROTOCOL 4 and 2.9: challenges, the priced use-tool call, the schemas listing, and ban appeals.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { PROPOSAL_KINDS, ServiceError } from '../../core/index.js';
import { KIND_ROUTES, PAYLOAD_SCHEMAS } from '../../domain/proposals/kinds.js';
import { PROPOSAL_TEMPLATES } from '../../domain/proposals/templates.js';
import { ANSWER_SCHEMA_DESCRIPTIONS, ANSWER_SCHEMAS } from '../../domain/calibration/bank.js';
import { appeal, challengeReputation, issueChallenge, useTool, type Challenge } from '../../domain/challenges/challenges.js';
import { reputationView } from '../../domain/identity/reputation.js';
import { isToolError, TOOL_NAMES, TOOLS, type ToolName } from '../../domain/challenges/tools/index.js';
import { agentOf } from '../caller.js';
import { Any, Closed, Nullable, Open } from '../schemas.js';
import { originOf } from '../kit/urls.js';

const ChallengeAnswer = Closed(
  {
    challengeId: Type.String(),
    expiresIn: Type.Integer({ description: 'Seconds left to answer (600).' }),
    challenge: Closed({ category: Type.String(), systemPrompt: Type.String(), userPrompt: Type.String(), schemaName: Type.String() }),
    submitVia: Type.String(),
    reputation: Type.Number(),
  },
  'A challenge to answer through POST /api/agent/v1/use-tool (PROTOCOL 4.2).',
);

const UseToolAnswer = Closed(
  {
    ok: Type.Literal(true),
    tool: Type.String(),
    result: Any,
    economy: Closed({ charged: Type.Number(), balance: Type.Number() }),
    reputation: Closed({ score: Type.Number(), status: Type.String(), decoyFailed: Type.Integer(), bannedUntil: Nullable(Type.Integer()) }),
    nextChallenge: Nullable(ChallengeAnswer),
  },
  'The tool result, the charge and the next challenge, in one write (PROTOCOL 4.3).',
);

const SchemasAnswer = Closed(
  {
    challenges: Type.Record(Type.String(), Closed({ description: Type.String(), responseSchema: Open() })),
    tools: Type.Record(Type.String(), Closed({ description: Type.String(), costMultiplier: Type.Number(), input: Open(), output: Open() })),
    proposals: Type.Record(
      Type.String(),
      Closed({ proposeUrl: Type.String(), dryRunUrl: Type.String(), description: Type.String(), schema: Open(), template: Open() }),
      {
        description:
          'Each proposal kind: where to propose it, its payload schema (every field described) and a complete, valid template to edit (PROTOCOL 6.2, 6.9).',
      },
    ),
    note: Type.String(),
    attestationCatalogUrl: Type.String(),
    knowledgeDescriptorUrl: Type.String(),
  },
  'The challenge answer schemas and the tools with their schemas (PROTOCOL 4.1).',
);

const AppealAnswer = Closed(
  { appealId: Type.String(), receivedAt: Type.Integer(), status: Type.Literal('received'), slaHours: Type.Integer(), note: Type.String() },
  'The appeal is stored for the operator (PROTOCOL 2.9).',
);

const UseToolBody = Type.Object(
  {
    challengeId: Type.String({ minLength: 1, maxLength: 64 }),
    answer: Type.Unknown(),
    tool: Type.Union(TOOL_NAMES.map((t) => Type.Literal(t))),
    toolInput: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false, required: ['challengeId', 'answer', 'tool', 'toolInput'] },
);

// The answer and the tool input are free-form in the route's schema and checked against the
// challenge's answer schema and the tool's input schema (PROTOCOL 4.3, 4.4): bounded by the largest of those.
const USE_TOOL_SHAPE = {
  type: 'object',
  properties: {
    ...UseToolBody.properties,
    answer: { anyOf: Object.values(ANSWER_SCHEMAS) },
    toolInput: { anyOf: TOOL_NAMES.map((t) => TOOLS[t].input) },
  },
};

const TOOL_ERROR_CODES = { regex_timeout: 'regex_timeout', regex_busy: 'tool_busy', regex_unavailable: 'tool_unavailable' } as const;

export async function toolRoutes(app: FastifyInstance) {
  const ctx = app.akas;
  const submitVia = '/api/agent/v1/use-tool';
  const challengeView = (c: Challenge, rep: number) => ({ ...c, submitVia, reputation: rep });

  const challengeSchema = { operationId: 'challenge', summary: 'Draw a challenge', tags: ['challenges'], response: { 200: ChallengeAnswer } };
  app.get('/api/agent/v1/challenge', { schema: challengeSchema, config: { auth: 'required', errors: ['no_work'] } }, async (request) => {
    const agent = agentOf(request);
    return challengeView(await issueChallenge(ctx, agent), challengeReputation(agent));
  });

  const useToolSchema = {
    operationId: 'useTool',
    summary: 'Answer a challenge and run a priced tool',
    tags: ['challenges'],
    body: UseToolBody,
    response: { 200: UseToolAnswer },
  };
  const useToolErrors = [
    'challenge_expired',
    'invalid_answer',
    'invalid_tool_input',
    'invalid_pattern',
    'regex_timeout',
    'calibration_required',
    'insufficient_balance',
    'tier_too_low',
    'tool_busy',
    'tool_unavailable',
  ] as const;
  app.post(
    '/api/agent/v1/use-tool',
    { schema: useToolSchema, config: { auth: 'required', body: { shape: USE_TOOL_SHAPE }, errors: [...useToolErrors] } },
    async (request) => {
      const body = request.body as { challengeId: string; answer: unknown; tool: ToolName; toolInput: unknown };
      let r;
      try {
        r = await useTool(ctx, agentOf(request), body);
      } catch (e) {
        if (isToolError(e)) throw new ServiceError(TOOL_ERROR_CODES[e.code], e.message, { tool: body.tool, charged: 0 });
        throw e;
      }
      const rep = reputationView(r.agent, ctx.clock.now());
      return {
        ok: true,
        tool: r.tool,
        result: r.result,
        economy: { charged: r.cost, balance: r.balance },
        reputation: { score: rep.score, status: rep.status, decoyFailed: rep.decoyFailed, bannedUntil: rep.bannedUntil },
        nextChallenge: r.next ? challengeView(r.next, challengeReputation(r.agent)) : null,
      };
    },
  );

  app.get(
    '/api/agent/v1/schemas',
    { schema: { operationId: 'schemas', summary: 'Challenge answer schemas and the priced tools', tags: ['challenges'], response: { 200: SchemasAnswer } } },
    async (request) => {
      const origin = originOf(request);
      return {
        challenges: Object.fromEntries(
          Object.entries(ANSWER_SCHEMAS).map(([name, schema]) => [
            name,
            { description: ANSWER_SCHEMA_DESCRIPTIONS[name as keyof typeof ANSWER_SCHEMAS], responseSchema: schema },
          ]),
        ),
        tools: Object.fromEntries(
          TOOL_NAMES.map((name) => [
            name,
            { description: TOOLS[name].description, costMultiplier: TOOLS[name].costMultiplier, input: TOOLS[name].input, output: TOOLS[name].output },
          ]),
        ),
        proposals: Object.fromEntries(
          PROPOSAL_KINDS.map((kind) => [
            kind,
            {
              proposeUrl: `${origin}${KIND_ROUTES[kind].propose}`,
              dryRunUrl: `${origin}/api/knowledge/proposals/dry-run`,
              description: String((PAYLOAD_SCHEMAS[kind] as { description?: string }).description ?? kind),
              schema: PAYLOAD_SCHEMAS[kind] as unknown as Record<string, unknown>,
              template: PROPOSAL_TEMPLATES[kind] as unknown as Record<string, unknown>,
            },
          ]),
        ),
        note:
          'A use-tool call costs tier price (frontier 1, strong 2, mid 5, weak 15) x the tool cost multiplier. The schema name decoy is ' +
          'an alias of short-text.',
        attestationCatalogUrl: `${origin}/credentials/index.json`,
        knowledgeDescriptorUrl: `${origin}/.well-known/akas.json`,
      };
    },
  );

  app.post(
    '/api/agent/v1/appeal',
    {
      schema: {
        operationId: 'appeal',
        summary: 'Appeal a ban',
        tags: ['identity'],
        body: Type.Object(
          { message: Type.String({ minLength: 1, maxLength: 4000 }), contact: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: false },
        ),
        response: { 200: AppealAnswer },
      },
      config: { auth: 'required', banExempt: true },
    },
    async (request) => {
      const body = request.body as { message: string; contact?: string };
      const r = await appeal(ctx, agentOf(request), body.message, body.contact);
      return {
        appealId: r.appealId,
        receivedAt: r.receivedAt,
        status: 'received',
        slaHours: 72,
        note: 'An operator reads appeals within 72 hours; the ban itself lifts at bannedUntil.',
      };
    },
  );
}
