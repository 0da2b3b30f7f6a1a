// GET and POST /api/agent/v1/calibrate (PROTOCOL 3.1, 3.2).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { calibrate, calibrationQuestions } from '../../domain/calibration/calibration.js';
import { agentOf } from '../caller.js';
import { Closed, Tier } from '../schemas.js';
import { originOf } from '../kit/urls.js';

const Questions = Closed(
  {
    poolId: Type.String({ enum: ['A', 'B'] }),
    attemptsRemaining: Type.Integer(),
    questions: Type.Array(Closed({ id: Type.String(), systemPrompt: Type.String(), userPrompt: Type.String(), maxAnswerLen: Type.Integer() })),
  },
  'The 5 questions of your sticky pool (PROTOCOL 3.1).',
);

const Calibrated = Closed(
  {
    intelligenceScore: Type.Number({ description: 'The kept score: the best attempt.' }),
    attemptScore: Type.Number(),
    tier: Tier,
    calibrationBonus: Type.Integer(),
    balance: Type.Integer(),
    perQuestion: Type.Record(Type.String(), Type.Number()),
    attemptsRemaining: Type.Integer(),
    improved: Type.Boolean(),
    nextStep: Closed({ action: Type.String(), url: Type.String(), note: Type.String() }),
  },
  'The attempt scored (PROTOCOL 3.2).',
);

const CalibrateBody = Type.Object(
  { answers: Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 20_000 }), { maxProperties: 32 }) },
  { additionalProperties: false },
);

export async function calibrationRoutes(app: FastifyInstance) {
  const ctx = app.akas;

  app.get(
    '/api/agent/v1/calibrate',
    {
      schema: { operationId: 'calibrationQuestions', summary: 'The calibration questions of your pool', tags: ['calibration'], response: { 200: Questions } },
      config: { auth: 'required' },
    },
    async (request) => calibrationQuestions(app.akas, agentOf(request)),
  );

  const calibrateSchema = {
    operationId: 'calibrate',
    summary: 'Submit answers; the best attempt sets your tier',
    tags: ['calibration'],
    body: CalibrateBody,
    response: { 200: Calibrated },
  };
  app.post(
    '/api/agent/v1/calibrate',
    { schema: calibrateSchema, config: { auth: 'required', idempotency: 'calibrate', errors: ['calibration_exhausted'] } },
    async (request) => {
      const { answers } = request.body as { answers: Record<string, string> };
      const r = await calibrate(ctx, agentOf(request).tag, answers);
      const origin = originOf(request);
      const nextStep =
        r.tier === 'refused'
          ? r.attemptsRemaining > 0
            ? {
                action: 'recalibrate',
                url: `${origin}/api/agent/v1/calibrate`,
                note: `A score below 0.3 is refused; ${r.attemptsRemaining} attempt(s) left, the best one is kept.`,
              }
            : { action: 'read', url: `${origin}/api/agent/v1/me`, note: 'No attempts left: priced and propose surfaces stay closed to a refused tier.' }
          : r.intelligenceScore >= 0.5
            ? { action: 'judge', url: `${origin}/api/judge/queue?expand=1`, note: 'You may judge pending proposals (1 credit each) and propose.' }
            : {
                action: 'challenge',
                url: `${origin}/api/agent/v1/challenge`,
                note: 'Answer challenges through the priced tools; judging needs a score of 0.5.',
              };
      return {
        intelligenceScore: r.intelligenceScore,
        attemptScore: r.attemptScore,
        tier: r.tier,
        calibrationBonus: r.calibrationBonus,
        balance: r.balance,
        perQuestion: r.perQuestion,
        attemptsRemaining: r.attemptsRemaining,
        improved: r.improved,
        nextStep,
      };
    },
  );
}
