// PROTOCOL 4 and 2.9: challenges, the priced use-tool call, the schemas listing, and ban appeals.
import { Type } from 'typebox';
import { ServiceError } from '../../core/index.js';
import { ANSWER_SCHEMAS } from '../../domain/calibration/bank.js';
import { appeal, issueChallenge, useTool } from '../../domain/challenges/challenges.js';
import { isToolError, TOOL_NAMES, TOOLS } from '../../domain/challenges/tools/index.js';
import { agentOf } from '../caller.js';
import { Any, Closed, FreeObject, Nullable, OneOf, Open } from '../schemas.js';
import { originOf } from '../../http-kit/urls.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';
import { appealView, challengeView, schemasView, usedToolView } from '../views/challenges.js';

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
    tool: OneOf(TOOL_NAMES),
    toolInput: FreeObject(),
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

const ChallengeRoute = {
  schema: { operationId: 'challenge', summary: 'Draw a challenge', tags: ['challenges'], response: { 200: ChallengeAnswer } },
  config: { auth: 'required', errors: ['no_work'] },
} satisfies RouteOptions;

const UseToolRoute = {
  schema: {
    operationId: 'useTool',
    summary: 'Answer a challenge and run a priced tool',
    tags: ['challenges'],
    body: UseToolBody,
    response: { 200: UseToolAnswer },
  },
  config: {
    auth: 'required',
    body: { shape: USE_TOOL_SHAPE },
    errors: [
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
    ],
  },
} satisfies RouteOptions;

const SchemasRoute = {
  schema: { operationId: 'schemas', summary: 'Challenge answer schemas and the priced tools', tags: ['challenges'], response: { 200: SchemasAnswer } },
} satisfies RouteOptions;

const AppealRoute = {
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
} satisfies RouteOptions;

export async function toolRoutes(app: App) {
  app.get('/api/agent/v1/challenge', ChallengeRoute, challenge);
  app.post('/api/agent/v1/use-tool', UseToolRoute, useToolRoute);
  app.get('/api/agent/v1/schemas', SchemasRoute, schemas);
  app.post('/api/agent/v1/appeal', AppealRoute, appealRoute);
}

/** PROTOCOL 4.2: a challenge from the bank, to answer through use-tool. */
async function challenge(request: Req<typeof ChallengeRoute.schema>) {
  const agent = agentOf(request);
  return challengeView(await issueChallenge(request.server.akas, agent), agent);
}

/** PROTOCOL 4.3: the answer and the tool call, charged and answered with the next challenge in one write. */
async function useToolRoute(request: Req<typeof UseToolRoute.schema>) {
  const ctx = request.server.akas;
  const body = request.body;
  let r;
  try {
    r = await useTool(ctx, agentOf(request), body);
  } catch (e) {
    // The regex tool's refusals (PROTOCOL 4.4), answered with their codes and no charge.
    if (isToolError(e)) throw new ServiceError(TOOL_ERROR_CODES[e.code], e.message, { tool: body.tool, charged: 0 });
    throw e;
  }
  return usedToolView(r, ctx.clock.now());
}

/** PROTOCOL 4.1: what every challenge, tool and proposal kind takes. */
async function schemas(request: Req<typeof SchemasRoute.schema>) {
  return schemasView(originOf(request));
}

/** PROTOCOL 2.9: a banned agent's appeal, stored for the operator. */
async function appealRoute(request: Req<typeof AppealRoute.schema>) {
  const { message, contact } = request.body;
  return appealView(await appeal(request.server.akas, agentOf(request), message, contact));
}
