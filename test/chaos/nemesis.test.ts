// The nemesis's schedule (issue 49, 2): drawn from the seed alone, so a run that found a fault
// can be run again with the same faults at the same times; every seeded run of npm test makes
// every kind of fault; at every moment at least one process is free of a fault.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_NAMES } from './deployment.js';
import { FAULT_KINDS, plan } from './nemesis.js';

const runs = (JSON.parse(readFileSync(new URL('./regressions.json', import.meta.url), 'utf8')) as { runs: Array<{ seed: number; minutes: number }> }).runs;

describe('the nemesis schedule', () => {
  it('is the same for the same seed and length, and another for another seed', () => {
    expect(plan(7, 600_000)).toEqual(plan(7, 600_000));
    expect(plan(8, 600_000)).not.toEqual(plan(7, 600_000));
  });

  it.each(runs)('has every kind of fault in the seeded run of seed $seed ($minutes minutes)', ({ seed, minutes }) => {
    const kinds = new Set(plan(seed, minutes * 60_000).map((f) => f.fault));
    expect([...kinds].sort()).toEqual([...FAULT_KINDS].sort());
  });

  it('holds a pause 5 to 20 s and a skew at 90 s either way, and starts every fault before the run ends', () => {
    for (let seed = 0; seed < 50; seed++) {
      for (const f of plan(seed, 300_000)) {
        expect(f.at).toBeLessThan(300_000);
        if (f.fault === 'pause') expect(f.holdMs).toBeGreaterThanOrEqual(5000);
        if (f.fault === 'pause') expect(f.holdMs).toBeLessThanOrEqual(20_000);
        if (f.fault === 'skew') expect(['+90s', '-90s']).toContain(f.offset);
      }
    }
  });

  it('never plans a fault on all three processes at once', () => {
    for (let seed = 0; seed < 50; seed++) {
      const busy = plan(seed, 600_000)
        .filter((f) => f.fault === 'kill' || f.fault === 'pause' || f.fault === 'skew')
        .map((f) => ({ target: f.target, from: f.at, to: f.at + (f.holdMs ?? 0) }));
      for (const f of busy) {
        const during = new Set(busy.filter((g) => g.from <= f.from && g.to > f.from).map((g) => g.target));
        expect(during.size, `seed ${seed} at ${f.from} ms`).toBeLessThan(NODE_NAMES.length);
      }
    }
  });
});
