// Calibration (PROTOCOL 3.2, 3.3): 5 questions from the agent's sticky pool, 3 lifetime
// attempts, the kept score is the best, and a one-time bonus at the first attempt scoring
// at least 0.3 (10 credits for frontier, strong, mid; 15 for weak).
import { CALIBRATION_ATTEMPTS, CALIBRATION_BONUS, MIN_SERVICE_SCORE, ServiceError, tierOf, type PaidTier, type Tier } from '../../core/index.js';
import { publicQuestion, scoreAnswers, type PublicQuestion } from './scoring.js';
import { calibrationSetOf } from './set.js';
import type { Ctx } from '../context.js';
import { AGENT_EVENT_KIND, agentEvent } from '../../core/standing.js';
import { enqueueLogEntry } from '../log/index.js';
import { moveCredits } from '../ledger.js';
import { Agents, agentLock, type AgentRecord } from '../records.js';

export interface CalibrationQuestions {
  poolId: 'A' | 'B';
  attemptsRemaining: number;
  questions: PublicQuestion[];
}

export const attemptsRemaining = (a: AgentRecord) => Math.max(0, CALIBRATION_ATTEMPTS - a.calibration.attempts);

export function calibrationQuestions(ctx: Pick<Ctx, 'config'>, agent: AgentRecord): CalibrationQuestions {
  return {
    poolId: agent.calibrationPoolId,
    attemptsRemaining: attemptsRemaining(agent),
    questions: calibrationSetOf(ctx.config).pools[agent.calibrationPoolId].map(publicQuestion),
  };
}

export interface CalibrationResult {
  /** The kept score: the best of every attempt. */
  intelligenceScore: number;
  /** This attempt's own score. */
  attemptScore: number;
  tier: Tier;
  calibrationBonus: number;
  balance: number;
  perQuestion: Record<string, number>;
  attemptsRemaining: number;
  improved: boolean;
}

/** Scores one attempt and keeps the best; answers to ids outside the pool are a 400. */
export async function calibrate(ctx: Ctx, tag: string, answers: Record<string, string>): Promise<CalibrationResult> {
  return ctx.store.transact([agentLock(tag)], async (tx) => {
    const agent = (await tx.get(Agents, tag))!;
    const questions = calibrationSetOf(ctx.config).pools[agent.calibrationPoolId];
    const known = new Set(questions.map((q) => q.id));
    const unknown = Object.keys(answers).filter((id) => !known.has(id));
    if (unknown.length) {
      throw new ServiceError('validation_failed', 'Some answers name questions outside your pool.', {
        errors: unknown.map((id) => ({ field: `answers.${id}`, reason: `not a question of pool ${agent.calibrationPoolId}` })),
      });
    }
    if (agent.calibration.attempts >= CALIBRATION_ATTEMPTS) {
      throw new ServiceError(
        'calibration_exhausted',
        `All ${CALIBRATION_ATTEMPTS} lifetime calibration attempts are used; the kept score is ${agent.calibration.score}.`,
        {
          intelligenceScore: agent.calibration.score,
          attemptsRemaining: 0,
        },
      );
    }
    const { intelligenceScore: attemptScore, perQuestion } = scoreAnswers(questions, answers);
    const prior = agent.calibration.score;
    const improved = prior === null || attemptScore > prior;
    const kept = prior === null ? attemptScore : Math.max(prior, attemptScore);
    agent.calibration.attempts += 1;
    agent.calibration.score = kept;
    agent.calibration.lastAttemptAt = ctx.clock.now();
    let bonus = 0;
    if (!agent.calibration.bonusPaid && attemptScore >= MIN_SERVICE_SCORE) {
      bonus = CALIBRATION_BONUS[tierOf(attemptScore) as PaidTier];
      agent.calibration.bonusPaid = true;
      moveCredits(tx, ctx, agent, 'mint', bonus, 'calibration bonus');
    } else {
      tx.put(Agents, tag, agent);
    }
    // The log records each attempt and the score kept, in the same commit: a standing's tier is
    // recomputed from these entries (PROTOCOL 8.9, 9.3).
    enqueueLogEntry(tx, ctx, {
      kind: AGENT_EVENT_KIND,
      tier: 'event',
      agent: tag,
      body: agentEvent('agent.calibrated', agent.calibration.lastAttemptAt ?? ctx.clock.now(), { attemptScore, intelligenceScore: kept, tier: tierOf(kept) }),
    });
    return {
      intelligenceScore: kept,
      attemptScore,
      tier: tierOf(kept),
      calibrationBonus: bonus,
      balance: agent.balance,
      perQuestion,
      attemptsRemaining: attemptsRemaining(agent),
      improved,
    };
  });
}
