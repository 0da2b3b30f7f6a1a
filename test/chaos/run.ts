// `npm run chaos -- --minutes N --seed S [--out DIR] [--clients C]` (issue 49): runs the chaos
// harness for N minutes (fractions allowed), prints exactly one line,
//   chaos: N operations over 3 processes, F faults (kill K, pause P, pg-restart R, backend-kill B, skew S), V violations
// and writes history.jsonl and report.json into --out (default a fresh folder under the system's
// temp folder, named on stderr with the seed and the progress). Exit 0 with no violation, 1
// with any, 2 when it could not run (no build, no PostgreSQL server, no faketime, bad flags).
//
// scripts/chaos.mjs bundles this file with the project's esbuild into dist/chaos/run.mjs and runs
// it: the harness is TypeScript, and Node runs no TypeScript by itself; no new dependency.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { check } from './checker.js';
import { faketimeLibrary } from './deployment.js';
import { runChaos } from './harness.js';

function usage(message: string): never {
  process.stderr.write(`chaos: ${message}\nusage: npm run chaos -- --minutes N [--seed S] [--out DIR] [--clients C]\n`);
  process.exit(2);
}

// Ctrl-C or a SIGTERM ends the run at once: the exit handlers stop the processes and the cluster
// (test/chaos/deployment.ts, src/store/postgres/cluster.ts), and history.jsonl holds what was done.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

async function main() {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      options: { minutes: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' }, clients: { type: 'string' } },
      strict: true,
    }));
  } catch (e) {
    usage((e as Error).message);
  }
  const minutes = Number(values.minutes);
  if (!values.minutes || !Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60)
    usage('--minutes takes a number of minutes above 0 (fractions allowed)');
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32) usage('--seed takes a whole number from 0 to 4294967295');
  const clients = values.clients === undefined ? 6 : Number(values.clients);
  if (!Number.isInteger(clients) || clients < 1 || clients > 64) usage('--clients takes a whole number from 1 to 64');
  if (!faketimeLibrary()) usage("Debian's faketime is not installed (the skew fault needs libfaketime): apt-get install faketime");
  const out = values.out ? resolve(values.out) : mkdtempSync(join(tmpdir(), 'akas-chaos-'));
  mkdirSync(out, { recursive: true });
  process.stderr.write(`chaos: seed ${seed}, ${minutes} minutes, ${clients} clients; history and report in ${out}\n`);
  let result: Awaited<ReturnType<typeof runChaos>>;
  try {
    result = await runChaos({ seed, durationMs: minutes * 60_000, out, clients, log: (line) => process.stderr.write(`${line}\n`) }, check);
  } catch (e) {
    process.stderr.write(`chaos: could not run: ${(e as Error).stack ?? e}\n`);
    process.exit(2);
  }
  for (const v of result.report.violations) process.stderr.write(`chaos: violation ${v.check}: ${v.message}\n`);
  process.stdout.write(`${result.line}\n`);
  process.exit(result.report.violations.length ? 1 : 0);
}

await main();
