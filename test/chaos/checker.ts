// The chaos checker (issue 49, 3): one named check per invariant, over the history of a run and
// the final state once the nemesis has healed everything. The harness calls check() at the end
// of a run; test/chaos/checker.test.ts breaks each invariant on purpose and sees its check
// fail. A check that cannot run (a process does not answer, the CLI fails) is a violation of
// that check, never a pass.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPgStore, type PgStore } from '../../src/store/postgres/index.js';
import { checkBuckets, checkQuotas, checkReplays, limitsOf, operations, type Found, type Op } from './checker-history.js';
import { checkDeposits, checkCausalOrder } from './checker-ledger.js';
import { checkAppendOnly, checkConsistent, checkMonotonic, checkOneTree, historyCheckpoints, readServedLog, type ServedLog } from './checker-log.js';
import { BUILT_CLI, type CliRun, forwarder, Reader, runCli } from './checker-read.js';
import {
  checkDecisions,
  checkEventsLogged,
  checkStatusVersions,
  checkWrites,
  PURPOSES,
  proposalIds,
  readProposals,
  readVersions,
  type ProposalView,
  type VersionView,
} from './checker-state.js';
import type { CheckerReport, CheckId, CheckResult, FinalState, HistoryEvent, Violation } from './types.js';

/** What `akas log check --json` reports (src/node/check.ts). */
interface NodeAudit {
  ok: boolean;
  log: { ok: boolean; entries: number; problems: string[] };
  ledger: { ok: boolean; problems: string[]; totals: Record<string, number> };
  proposals: { ok: boolean; proposals: number; problems: string[] };
  records: { ok: boolean; problems: string[] };
}

/** A proposal problem of the node's audit that is about a deposit (src/domain/proposals/check.ts), not the decision. */
const DEPOSIT_PROBLEM = /deposit|reservation/;

const once = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let p: Promise<T> | undefined;
  return () => (p ??= make());
};

/** The final state, read once and only as the checks run need it. */
class Facts {
  readonly reader: Reader;
  readonly limits: ReturnType<typeof limitsOf>;
  readonly cli: string;
  readonly workDir: string;
  private opened?: PgStore;

  constructor(
    readonly ops: Op[],
    readonly state: FinalState,
  ) {
    this.reader = new Reader(state.processes);
    this.limits = limitsOf(state.limits);
    this.cli = state.cli ?? BUILT_CLI;
    this.workDir = state.workDir ?? mkdtempSync(join(tmpdir(), 'akas-chaos-checker-'));
  }

  readonly log = once<ServedLog>(() => readServedLog(this.reader));
  readonly read = once(async () => historyCheckpoints(this.ops, (await this.log()).logKey));
  readonly versions = once(async () => {
    const m = new Map<string, VersionView[]>();
    for (const p of PURPOSES) m.set(p, await readVersions(this.reader, p));
    return m;
  });
  readonly proposals = once<Map<string, ProposalView | undefined>>(async () => readProposals(this.reader, proposalIds(this.ops, (await this.log()).entries)));
  readonly store = once(async () => (this.opened = await openPgStore(this.state.store, { migrate: false, notify: false })));

  /** The node's own audit of the shared store, through the built CLI (exit 0 clean, 1 problems; anything else: it could not run). */
  readonly audit = once<NodeAudit>(async () => {
    const r = await runCli(this.cli, ['--json', 'log', 'check', '--store', this.state.store], this.cliEnv());
    if (r.code !== 0 && r.code !== 1) throw new Error(`akas log check exited ${r.code}: ${(r.stdout + r.stderr).slice(0, 500)}`);
    return JSON.parse(r.stdout) as NodeAudit;
  });

  cliEnv(): Record<string, string> {
    const config = join(this.workDir, 'cli-config');
    mkdirSync(config, { recursive: true, mode: 0o700 });
    return { AKAS_NODE_SECRET: this.state.nodeSecret, AKAS_CONFIG_DIR: config, XDG_STATE_HOME: join(this.workDir, 'cli-state') };
  }

  async close() {
    await this.opened?.close();
  }
}

type Outcome = { found: Found[]; detail: string };

/** The checks, in the order the report lists them (types.ts CheckId). */
const CHECKS: Array<[CheckId, (f: Facts) => Promise<Outcome> | Outcome]> = [
  ['writes-acknowledged', async (f) => checkWrites(f.ops, f.reader, await f.proposals(), await f.versions())],
  ['ledger-conserved', async (f) => auditOnly((await f.audit()).ledger.problems, (await f.audit()).ledger.totals)],
  ['ledger-causal-order', async (f) => checkCausalOrder(f.ops, await f.store())],
  [
    'one-decision',
    async (f) =>
      checkDecisions(
        (await f.log()).entries,
        await f.proposals(),
        (await f.audit()).proposals.problems.filter((p) => !DEPOSIT_PROBLEM.test(p)),
      ),
  ],
  [
    'deposits-settled-once',
    async (f) =>
      checkDeposits(
        await f.store(),
        (await f.audit()).proposals.problems.filter((p) => DEPOSIT_PROBLEM.test(p)),
      ),
  ],
  ['log-append-only', async (f) => checkAppendOnly(await f.log(), await f.read(), (await f.audit()).log)],
  ['events-logged', async (f) => checkEventsLogged(f.ops, (await f.log()).entries)],
  ['checkpoints-monotonic', async (f) => checkMonotonic(await f.read(), f.ops)],
  ['checkpoints-consistent', async (f) => checkConsistent(await f.log(), await f.read(), f.reader)],
  ['one-tree', async (f) => checkOneTree(await f.log(), f.reader)],
  ['idempotent-replay', (f) => checkReplays(f.ops)],
  ['buckets-bounded', (f) => checkBuckets(f.ops, f.limits)],
  ['quotas-bounded', (f) => checkQuotas(f.ops, f.limits, f.state.startedAt)],
  ['status-versions', async (f) => checkStatusVersions(f.ops, (await f.log()).entries, await f.versions())],
  ['monitor-quiet', (f) => checkMonitor(f)],
];

/** The ids of every check the checker runs, in order. */
export const CHECK_IDS: readonly CheckId[] = CHECKS.map(([id]) => id);

/**
 * ledger-conserved (PROTOCOL 3.3): the node's own audit of the ledger (checkLedger: Σ balance +
 * Σ reserved = Σ minted − Σ spent − Σ slashed, per agent and in all, never negative) finds nothing.
 */
function auditOnly(problems: readonly string[], totals: Record<string, number>): Outcome {
  return {
    found: problems.map((p) => ({ message: `akas log check: ${p}`, evidence: { problem: p, totals } })),
    detail: `minted ${totals.minted}, spent ${totals.spent}, slashed ${totals.slashed}; held ${totals.balance} + reserved ${totals.reserved}`,
  };
}

/** The alerts a revocation in the history explains: a credential-revoked or -suspended alert of a credential it named (ok or unknown). */
function explained(alert: Record<string, unknown>, ops: readonly Op[], watched: string): boolean {
  const action = alert.what === 'credential-revoked' ? 'revoke' : alert.what === 'credential-suspended' ? 'suspend' : undefined;
  if (!action) return false;
  return ops.some((o) => {
    if (o.f !== 'revoke' || o.type === 'fail' || (o.asked.action ?? o.got.action) !== action) return false;
    const ids = [
      ...(Array.isArray(o.asked.ids) ? o.asked.ids : []),
      ...(Array.isArray(o.got.credentials) ? o.got.credentials.map((c: { judgmentId?: unknown }) => c.judgmentId) : []),
    ];
    return ids.includes(alert.judgmentId) || o.asked.judge === watched;
  });
}

/**
 * monitor-quiet: `akas monitor --once --json --agent TAG` from a fresh state, against each
 * process with the others as --compare views (each through a forwarder: checker-read.ts),
 * raises no alert: no fork or rollback between the processes' checkpoints, no status list
 * version missing, skipped, mismatched or invalid, no key changed; and `akas monitor --once --index` against each process finds
 * every index root the processes logged to be the one the log's entries give. A revocation or suspension alert about a credential the history
 * revoked is what the monitor is for and is not a violation. It must run to the end (exit 0
 * or 1): exit 2 or 3 is a violation too.
 */
async function checkMonitor(f: Facts): Promise<Outcome> {
  const judges = new Map<string, number>();
  for (const o of f.ops) if (o.f === 'judge' && o.type === 'ok' && typeof o.got.tag === 'string') judges.set(o.got.tag, (judges.get(o.got.tag) ?? 0) + 1);
  const busiest = [...judges].sort((a, b) => b[1] - a[1])[0]?.[0];
  // With no judge at all the monitor still follows the log and the lists as an auditor of nobody.
  const agents = f.state.monitorAgents ?? [busiest ?? 'ak_00000000'];
  const found: Found[] = [];
  let runs = 0;
  const via = await Promise.all(f.state.processes.map((p) => forwarder(p.url)));
  try {
    for (const tag of agents) {
      for (const [i, p] of f.state.processes.entries()) {
        const others = via.filter((_, j) => j !== i).flatMap((x) => ['--compare', x.url]);
        const statePath = join(f.workDir, `monitor-${p.name}-${tag}-${runs++}.json`);
        const args = ['--json', '--base-url', via[i].url, 'monitor', '--once', '--agent', tag, '--state', statePath, ...others];
        found.push(...monitorFindings(await runCli(f.cli, args, f.cliEnv()), p.name, tag, f.ops));
      }
    }
    // The verifiable index rebuilt from each process's tiles, every root the processes logged compared (issue 51, 5).
    for (const [i, p] of f.state.processes.entries()) {
      const statePath = join(f.workDir, `monitor-index-${p.name}-${runs++}.json`);
      const args = ['--json', '--base-url', via[i].url, 'monitor', '--once', '--index', '--state', statePath];
      found.push(...monitorFindings(await runCli(f.cli, args, f.cliEnv()), p.name, null, f.ops));
    }
  } finally {
    await Promise.all(via.map((x) => x.close()));
  }
  return { found, detail: `${runs} monitor runs (agents ${agents.join(', ')}, and the index) over ${f.state.processes.length} processes` };
}

/** What one monitor run found: its alerts the history does not explain, and a run that could not finish. */
function monitorFindings(r: CliRun, node: string, tag: string | null, ops: readonly Op[]): Found[] {
  const found: Found[] = [];
  const run = tag === null ? 'akas monitor --index' : `akas monitor --agent ${tag}`;
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const a of lines.filter((l) => l.type === 'alert' && (tag === null || !explained(l, ops, tag))))
    found.push({ message: `${run} on ${node}: ${String(a.what)}: ${String(a.message)}`, evidence: { node, agent: tag, alert: a } });
  if (r.code !== 0 && r.code !== 1)
    found.push({
      // What it could not do is its last line (stderr, else the last it printed): the message says it, so a failed run is read without the folder.
      message: `${run} on ${node} could not finish (exit ${r.code}): ${lastLine(r).slice(0, 600)}`,
      evidence: { node, stdout: r.stdout.slice(-2000), stderr: r.stderr.slice(-2000) },
    });
  return found;
}

/** Why a monitor run could not finish: the checks it left undone (its `incomplete` events), else its last line. */
function lastLine(r: CliRun): string {
  const undone = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.what === 'incomplete')
    .map((l) => String(l.message));
  return undone.length ? undone.join('; ') : ((r.stderr.trim() || r.stdout.trim()).split('\n').at(-1) ?? '');
}

export interface CheckOptions {
  /** Run only these checks (the break tests each run the check they break). */
  only?: readonly CheckId[];
}

/**
 * Checks a run: every check in CHECK_IDS (or `only`), each reported with what it checked, and
 * every violation with the check that found it, a message and the evidence.
 */
export async function check(history: readonly HistoryEvent[], state: FinalState, options: CheckOptions = {}): Promise<CheckerReport> {
  const facts = new Facts(operations(history), state);
  const checks: CheckResult[] = [];
  const violations: Violation[] = [];
  try {
    for (const [id, run] of CHECKS) {
      if (options.only && !options.only.includes(id)) continue;
      let outcome: Outcome;
      try {
        outcome = await run(facts);
      } catch (e) {
        outcome = {
          found: [{ message: `could not check: ${(e as Error).message}`, evidence: { error: String((e as Error).stack ?? e) } }],
          detail: 'could not check',
        };
      }
      for (const v of outcome.found) violations.push({ check: id, message: v.message, evidence: v.evidence });
      checks.push({ id, ok: outcome.found.length === 0, detail: outcome.found[0]?.message ?? outcome.detail });
    }
  } finally {
    await facts.close();
  }
  return { ok: violations.length === 0, checks, violations };
}
