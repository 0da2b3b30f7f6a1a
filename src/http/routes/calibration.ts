// GET and POST /api/agent/v1/calibrate (PROTOCOL 3.1, 3.2).
import { Type } from 'typebox';
import { calibrate, calibrationQuestions } from '../../domain/calibration/calibration.js';
import { agentOf } from '../caller.js';
import { Closed, Tier } from '../schemas.js';
import { originOf } from '../../http-kit/urls.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';
import { calibratedView } from '../views/calibration.js';

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

const QuestionsRoute = {
  schema: { operationId: 'calibrationQuestions', summary: 'The calibration questions of your pool', tags: ['calibration'], response: { 200: Questions } },
  config: { auth: 'required' },
} satisfies RouteOptions;

const CalibrateRoute = {
  schema: {
    operationId: 'calibrate',
    summary: 'Submit answers; the best attempt sets your tier',
    tags: ['calibration'],
    body: CalibrateBody,
    response: { 200: Calibrated },
  },
  config: { auth: 'required', idempotency: 'calibrate', errors: ['calibration_exhausted'] },
} satisfies RouteOptions;

export async function calibrationRoutes(app: App) {
  app.get('/api/agent/v1/calibrate', QuestionsRoute, questions);
  app.post('/api/agent/v1/calibrate', CalibrateRoute, calibrateAnswers);
}

/** PROTOCOL 3.1: the questions of the caller's sticky pool. */
async function questions(request: Req<typeof QuestionsRoute.schema>) {
  return calibrationQuestions(request.server.akas, agentOf(request));
}

/** PROTOCOL 3.2: an attempt scored; the best one is kept and sets the tier. */
async function calibrateAnswers(request: Req<typeof CalibrateRoute.schema>) {
  const r = await calibrate(request.server.akas, agentOf(request).tag, request.body.answers);
  return calibratedView(r, originOf(request));
}
