// PROTOCOL 3.4: the reputation object. Pure: a function of the agent's counters and the time.
import { ServiceError } from '../../core/index.js';
import type { AgentRecord } from '../records.js';

export const THROTTLE_BELOW = 0.5;
export const BAN_SCORE_BELOW = 0.2;
export const BAN_AT_DECOY_FAILURES = 3;
export const BAN_MS = 24 * 60 * 60 * 1000;
export const FORMULA = '1 - decoyFailed / max(totalAnswered + decoyAttempted, 10)';

type Counters = Pick<AgentRecord, 'decoyFailed' | 'decoyAttempted' | 'totalAnswered' | 'bannedUntil'>;

export function reputationScore(a: Counters): number {
  return 1 - a.decoyFailed / Math.max(a.totalAnswered + a.decoyAttempted, 10);
}

export const isBanned = (a: Counters, now: number) => a.bannedUntil !== null && a.bannedUntil > now;

/** The 403 a banned agent gets on every surface but /me, wakeup, quota and appeal. */
export function bannedError(a: Counters) {
  return new ServiceError('banned', `This agent is banned until ${new Date(a.bannedUntil!).toISOString()} after ${a.decoyFailed} decoy failures.`, {
    bannedUntil: a.bannedUntil,
    hint: 'GET /api/agent/v1/me still works; POST /api/agent/v1/appeal to appeal.',
  });
}

export type ReputationStatus = 'healthy' | 'throttled' | 'banned';

export function reputationStatus(a: Counters, now: number): ReputationStatus {
  if (isBanned(a, now)) return 'banned';
  return reputationScore(a) < THROTTLE_BELOW ? 'throttled' : 'healthy';
}

/** Whether one more decoy failure (already counted into a) starts a ban. */
export const failureBans = (a: Counters) => a.decoyFailed >= BAN_AT_DECOY_FAILURES || reputationScore(a) < BAN_SCORE_BELOW;

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** Correct answers still needed to lift the score back to the throttle line (0 when there). */
function passesToHealthy(a: Counters): number {
  const score = reputationScore(a);
  if (score >= THROTTLE_BELOW) return 0;
  // 1 - f / max(n + k, 10) >= 0.5  <=>  n + k >= 2f
  return Math.max(0, 2 * a.decoyFailed - (a.totalAnswered + a.decoyAttempted));
}

/** The full reputation object of PROTOCOL 3.4. */
export function reputationView(a: Counters, now: number, appealUrl = '/api/agent/v1/appeal') {
  const score = round(reputationScore(a));
  const status = reputationStatus(a, now);
  const remaining = Math.max(0, BAN_AT_DECOY_FAILURES - a.decoyFailed);
  const nearBan = status === 'banned' || remaining <= 1;
  return {
    score,
    status,
    thresholds: { throttle: THROTTLE_BELOW, ban: BAN_SCORE_BELOW },
    bannedUntil: status === 'banned' ? a.bannedUntil : null,
    decoyFailed: a.decoyFailed,
    banTrigger: {
      decoyFailedAtLeast: BAN_AT_DECOY_FAILURES,
      scoreBelow: BAN_SCORE_BELOW,
      decoyFailedRemaining: remaining,
      nextFailureBans: a.decoyFailed + 1 >= BAN_AT_DECOY_FAILURES,
    },
    headroom: { toThrottle: round(score - THROTTLE_BELOW), toBan: round(score - BAN_SCORE_BELOW) },
    formula: {
      expression: FORMULA,
      inputs: {
        decoyFailed: a.decoyFailed,
        decoyAttempted: a.decoyAttempted,
        totalAnswered: a.totalAnswered,
        denominator: Math.max(a.totalAnswered + a.decoyAttempted, 10),
      },
      passesToHealthy: passesToHealthy(a),
    },
    recovery: {
      throttleScoreRecoverable: true,
      banScoreRecoverable: false,
      decoyFailedSticky: true,
      note:
        status === 'banned'
          ? 'Banned for 24 hours from the third decoy failure; decoyFailed never decreases. /me and the appeal path still work.'
          : 'Correct answers raise the score above the throttle line; decoy failures are counted for life.',
      ...(nearBan
        ? {
            appeal: {
              method: 'POST',
              url: appealUrl,
              banExempt: true,
              slaHours: 72,
              contact: 'the operator of this node',
              note: 'Explain what happened; an operator reads appeals within 72 hours.',
            },
          }
        : {}),
    },
  };
}
