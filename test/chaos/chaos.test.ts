// The seeded chaos runs of npm test (issue 49): for each run of test/chaos/regressions.json marked
// npmTest (the 45 s run whose schedule has every kind of fault; every run with
// AKAS_CHAOS_REGRESSIONS=1), three processes of the built
// binary on a throwaway PostgreSQL cluster, concurrent clients and the nemesis; then the checker,
// which must find no violation. A failed run keeps its history.jsonl and report.json in the
// folder its failure names: `npm run chaos -- --minutes M --seed S` runs it again.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { describePg } from '../helpers/postgres.js';
import { check } from './checker.js';
import { faketimeLibrary } from './deployment.js';
import { runChaos } from './harness.js';

interface Run {
  seed: number;
  minutes: number;
  clients: number;
  /** Run in every npm test (else only with AKAS_CHAOS_REGRESSIONS=1: the longer runs). */
  npmTest: boolean;
}

const all = (JSON.parse(readFileSync(new URL('./regressions.json', import.meta.url), 'utf8')) as { runs: Run[] }).runs;
const runs = process.env.AKAS_CHAOS_REGRESSIONS === '1' ? all : all.filter((r) => r.npmTest);

describePg('the chaos harness: clients and a nemesis over three akas serve processes on one PostgreSQL', () => {
  it.each(runs)(
    'finds no violation in the seeded run of seed $seed ($minutes minutes, $clients clients), with every kind of fault made',
    async ({ seed, minutes, clients }) => {
      if (!faketimeLibrary()) throw new Error("Debian's faketime is not installed (the skew fault needs it; .ci/run installs it)");
      const out = mkdtempSync(join(tmpdir(), `akas-chaos-${seed}-`));
      const { report, line } = await runChaos({ seed, durationMs: minutes * 60_000, out, clients }, check);
      const where = `${line}; history and report kept in ${out}`;
      expect(report.faults, where).toEqual({
        kill: expect.any(Number),
        pause: expect.any(Number),
        pgRestart: expect.any(Number),
        backendKill: expect.any(Number),
        skew: expect.any(Number),
        slow: expect.any(Number),
      });
      for (const [kind, n] of Object.entries(report.faults)) expect(n, `${kind} faults made; ${where}`).toBeGreaterThan(0);
      expect(report.operations, where).toBeGreaterThan(100);
      expect(
        report.violations.map((v) => `${v.check}: ${v.message}`),
        where,
      ).toEqual([]);
      rmSync(out, { recursive: true, force: true });
    },
    900_000,
  );
});
