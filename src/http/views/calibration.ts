// The answer of a calibration attempt (PROTOCOL 3.2): the scores, and the step the new tier opens.
import type { CalibrationResult } from '../../domain/calibration/calibration.js';

/** What an agent does next with the tier an attempt gave it. */
function nextStepAfter(r: CalibrationResult, origin: string) {
  if (r.tier === 'refused') {
    return r.attemptsRemaining > 0
      ? {
          action: 'recalibrate',
          url: `${origin}/api/agent/v1/calibrate`,
          note: `A score below 0.3 is refused; ${r.attemptsRemaining} attempt(s) left, the best one is kept.`,
        }
      : { action: 'read', url: `${origin}/api/agent/v1/me`, note: 'No attempts left: priced and propose surfaces stay closed to a refused tier.' };
  }
  return r.intelligenceScore >= 0.5
    ? { action: 'judge', url: `${origin}/api/judge/queue?expand=1`, note: 'You may judge pending proposals (1 credit each) and propose.' }
    : {
        action: 'challenge',
        url: `${origin}/api/agent/v1/challenge`,
        note: 'Answer challenges through the priced tools; judging needs a score of 0.5.',
      };
}

export function calibratedView(r: CalibrationResult, origin: string) {
  return {
    intelligenceScore: r.intelligenceScore,
    attemptScore: r.attemptScore,
    tier: r.tier,
    calibrationBonus: r.calibrationBonus,
    balance: r.balance,
    perQuestion: r.perQuestion,
    attemptsRemaining: r.attemptsRemaining,
    improved: r.improved,
    nextStep: nextStepAfter(r, origin),
  };
}
