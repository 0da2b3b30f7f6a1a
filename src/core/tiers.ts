// PROTOCOL 3.3 and 14: the tier bands, prices, daily propose caps and calibration bonus.

export const TIERS = ['uncalibrated', 'frontier', 'strong', 'mid', 'weak', 'refused'] as const;
export type Tier = (typeof TIERS)[number];
export type PaidTier = 'frontier' | 'strong' | 'mid' | 'weak';

/** Lower bound of each band, best first. */
export const TIER_BANDS: ReadonlyArray<{ tier: Tier; minScore: number }> = [
  { tier: 'frontier', minScore: 0.9 },
  { tier: 'strong', minScore: 0.7 },
  { tier: 'mid', minScore: 0.5 },
  { tier: 'weak', minScore: 0.3 },
  { tier: 'refused', minScore: 0 },
];

export const TIER_PRICE: Record<PaidTier, number> = { frontier: 1, strong: 2, mid: 5, weak: 15 };
export const PROPOSE_CAP: Record<PaidTier, number> = { frontier: 200, strong: 80, mid: 40, weak: 20 };
export const CALIBRATION_BONUS: Record<PaidTier, number> = { frontier: 10, strong: 10, mid: 10, weak: 15 };

export const MIN_SERVICE_SCORE = 0.3;
export const CALIBRATION_ATTEMPTS = 3;
export const CALIBRATION_QUESTIONS = 5;

/** The tier of a score; null (no calibration yet) is uncalibrated. */
export function tierOf(score: number | null): Tier {
  if (score === null) return 'uncalibrated';
  for (const band of TIER_BANDS) if (score >= band.minScore) return band.tier;
  return 'refused';
}

export const isPaidTier = (t: Tier): t is PaidTier => t in TIER_PRICE;
