// The chaos harness (issue 49), in the Jepsen mould: deploy (deployment.ts: PostgreSQL, `akas
// store migrate`, three `akas serve` processes of the built binary), run concurrent clients
// (clients.ts) and the nemesis (nemesis.ts) for the run's length, heal, wait until every process
// answers and the log has caught up with every write, then hand the history and the final state
// to the checker (checker.ts) and write history.jsonl and report.json.
//
// The harness checks three things itself, since only it sees them: no process exits unasked
// (processes-alive; a crash is written to the history, and the process started again so the run
// goes on), the cluster recovers once healed (recovers: /healthz 200 everywhere, the outbox
// empty, the three processes serving one checkpoint, within RECOVERY_MS), and every refusal is in
// an error envelope of PROTOCOL 1.3 (envelopes).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent as Dispatcher, request } from 'undici';
import { CLI, Deployment, LIMITS, NODE_NAMES } from './deployment.js';
import { type FaultCounts, faultCounts, History, operationCount, summaryLine } from './history.js';
import { Nemesis, plan } from './nemesis.js';
import { rng } from './random.js';
import { World, Worker } from './clients.js';
import type { CheckerReport, CheckResult, FinalState, HistoryEvent, Violation } from './types.js';

/** How long the healed cluster may take to answer and to drain its log's outbox (a bound, not a measure). */
const RECOVERY_MS = 120_000;

export interface ChaosOptions {
  seed: number;
  /** The run's length (the clients' and the nemesis's; healing and checking come after). */
  durationMs: number;
  /** The folder history.jsonl and report.json go to (it exists). */
  out: string;
  /** Concurrent workers (default 6). */
  clients?: number;
  /** Progress lines (stderr in npm run chaos). */
  log?: (line: string) => void;
}

export type Checker = (history: HistoryEvent[], state: FinalState) => Promise<CheckerReport>;

/** report.json. */
export interface Report extends CheckerReport {
  seed: number;
  minutes: number;
  operations: number;
  processes: 3;
  faults: FaultCounts;
}

export interface ChaosResult {
  report: Report;
  history: HistoryEvent[];
  /** The one line of npm run chaos. */
  line: string;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await request(`${url}/healthz`, { signal: AbortSignal.timeout(5000) });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

async function checkpointSize(url: string): Promise<number | undefined> {
  try {
    const res = await request(`${url}/api/log/checkpoint`, { headers: { 'x-forwarded-for': '10.203.0.1' }, signal: AbortSignal.timeout(5000) });
    const text = await res.body.text();
    return res.statusCode === 200 ? Number(text.split('\n')[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * After the heal: every process answers /healthz 200, the outbox is empty, and the three serve
 * checkpoints of one size, twice in a row a second apart. Answers what did not hold in time.
 */
async function recover(d: Deployment, log: (line: string) => void): Promise<string | undefined> {
  const deadline = performance.now() + RECOVERY_MS;
  let last = '';
  let steady = 0;
  while (performance.now() < deadline) {
    const down = [];
    for (const name of NODE_NAMES) if (!(await healthy(d.proc(name).url))) down.push(name);
    const outbox = await d.outboxSize().catch(() => -1);
    const sizes = await Promise.all(NODE_NAMES.map((name) => checkpointSize(d.proc(name).url)));
    last = `not answering /healthz 200: [${down.join(', ')}]; outbox: ${outbox}; checkpoint sizes: ${sizes.join(', ')}`;
    steady = !down.length && outbox === 0 && sizes.every((s) => s !== undefined && s === sizes[0]) ? steady + 1 : 0;
    if (steady >= 2) return undefined;
    await new Promise((r) => setTimeout(r, 1000));
  }
  log(`chaos: the cluster did not recover: ${last}`);
  return last;
}

/** The harness's own checks, from the history and the recovery. */
function ownChecks(events: HistoryEvent[], stuck: string | undefined): { checks: CheckResult[]; violations: Violation[] } {
  const crashes = events.filter((e) => e.f === 'crash');
  const crashed: Violation[] = crashes.map((e) => ({
    check: 'processes-alive',
    message: `${e.node} exited unasked (${String(e.value?.code ?? e.value?.signal)}) at ${e.time} ms`,
    evidence: e,
  }));
  const recovered: Violation[] = stuck
    ? [{ check: 'recovers', message: `the healed cluster did not recover within ${RECOVERY_MS} ms: ${stuck}`, evidence: { stuck } }]
    : [];
  // A refusal is a JSON envelope with a code (PROTOCOL 1.3): the clients write `http_<status>`
  // for an answer without one (clients.ts), with what it was.
  const bare = events.filter((e) => e.type !== 'invoke' && e.error?.startsWith('http_'));
  const enveloped: Violation[] = bare.map((e) => ({
    check: 'envelopes',
    message:
      `${e.f} to ${e.node} at ${e.time} ms was answered ${e.value?.status} outside the error envelope: ` +
      String(e.value?.text ?? JSON.stringify(e.value?.body)).slice(0, 200),
    evidence: e,
  }));
  const refusals = events.filter((e) => e.type === 'fail' || e.type === 'info').filter((e) => typeof e.value?.status === 'number').length;
  return {
    checks: [
      { id: 'processes-alive', ok: !crashed.length, detail: crashed[0]?.message ?? 'no process exited unasked' },
      { id: 'recovers', ok: !recovered.length, detail: recovered[0]?.message ?? 'every process answers, the outbox drained, one checkpoint size' },
      { id: 'envelopes', ok: !enveloped.length, detail: enveloped[0]?.message ?? `${refusals} refusals, each in an envelope with a code` },
    ],
    violations: [...crashed, ...recovered, ...enveloped],
  };
}

/** Runs the harness once: deploy, load and faults, heal, check; writes history.jsonl and report.json into opts.out. */
export async function runChaos(opts: ChaosOptions, check: Checker): Promise<ChaosResult> {
  const t = performance.now();
  const say = opts.log ?? (() => undefined);
  const log = (line: string) => say(`${line} (${((performance.now() - t) / 1000).toFixed(1)} s)`);
  const startedAt = Date.now();
  const history = new History(join(opts.out, 'history.jsonl'));
  const d = await Deployment.start(opts.out, history);
  const dispatcher = new Dispatcher({ connections: 16, keepAliveTimeout: 4000 });
  try {
    log(`chaos: deployed: ${NODE_NAMES.map((n) => `${n} ${d.proc(n).url}`).join(', ')}; PostgreSQL on ${d.cluster.port}`);
    const schedule = plan(opts.seed, opts.durationMs);
    const nemesis = new Nemesis(schedule, d, history);
    d.onCrash = (p) => {
      log(`chaos: ${p.name} crashed; started again (a violation)`);
      nemesis.restartCrashed(p.name);
    };
    const world = new World();
    let stopped = false;
    const ctx = { history, deployment: d, world, dispatcher, runTag: `s${opts.seed}-${startedAt.toString(36)}`, stopped: () => stopped };
    const root = rng(opts.seed);
    const workers = Array.from({ length: opts.clients ?? 6 }, (_, k) => new Worker(k + 1, ctx, root.fork(`client-${k + 1}`)));
    const t0 = history.now();
    nemesis.start(() => history.now() - t0);
    const running = workers.map((w) => w.run({ burstFirst: w.id === 1 }));
    await new Promise((r) => setTimeout(r, opts.durationMs));
    stopped = true;
    log('chaos: the run is over: the clients finish, the nemesis heals');
    await Promise.all(running);
    await nemesis.heal();
    const stuck = await recover(d, log);

    const state: FinalState = {
      processes: NODE_NAMES.map((name) => ({ name, url: d.proc(name).url })),
      store: d.store,
      nodeSecret: d.secret,
      startedAt,
      limits: { ...LIMITS },
      cli: CLI,
      workDir: join(opts.out, 'checker'),
    };
    mkdirSync(state.workDir!, { recursive: true });
    log('chaos: checking');
    const checked = await check(history.events, state);
    const own = ownChecks(history.events, stuck);
    await history.close();
    const violations = [...checked.violations, ...own.violations];
    const report: Report = {
      seed: opts.seed,
      minutes: opts.durationMs / 60_000,
      operations: operationCount(history.events),
      processes: 3,
      faults: faultCounts(history.events),
      ok: !violations.length,
      checks: [...checked.checks, ...own.checks],
      violations,
    };
    writeFileSync(join(opts.out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    return { report, history: history.events, line: summaryLine(report.operations, report.faults, violations.length) };
  } finally {
    await dispatcher.close().catch(() => undefined);
    await history.close().catch(() => undefined);
    await d.close();
  }
}
