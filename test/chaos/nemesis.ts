// The nemesis of a chaos run (issue 49, 2): faults on a schedule drawn from the run's seed (the
// same seed and length give the same schedule), each written to the history when done:
// - kill: SIGKILL a process, then start it again;
// - pause: SIGSTOP a process for 5 to 20 s (a GC or VM stall), then SIGCONT;
// - pg-restart-fast, pg-restart-immediate: restart PostgreSQL (`pg_ctl restart -m fast`: every
//   connection closed, open transactions rolled back; `-m immediate`: a crash, then recovery
//   from the WAL, which also empties the UNLOGGED token buckets);
// - backend-kill: pg_terminate_backend of akas's connections (one process's, or all);
// - skew: restart a process under a clock 90 s ahead or behind (libfaketime), and later under
//   the machine's own again (unskew);
// - slow: add 100 to 500 ms to every chunk of one process's database link, then restore it.
// A fault on a process waits for the one before it on that process to end (one fault at a time
// on each), and the schedule leaves at least one process free of faults at every moment. At
// the end, heal() cuts every hold short, resumes, unskews, restores and restarts what is down.
import type { History } from './history.js';
import type { Deployment, ProcessName } from './deployment.js';
import { NODE_NAMES } from './deployment.js';
import { rng } from './random.js';

export type FaultKind = 'kill' | 'pause' | 'pg-restart-fast' | 'pg-restart-immediate' | 'backend-kill' | 'skew' | 'slow';
export const FAULT_KINDS: readonly FaultKind[] = ['kill', 'pause', 'pg-restart-fast', 'pg-restart-immediate', 'backend-kill', 'skew', 'slow'];

export interface PlannedFault {
  /** When it starts, in ms from the run's start. */
  at: number;
  fault: FaultKind;
  /** A process, 'pg' (a restart of the server), or 'all' (every akas backend). */
  target: ProcessName | 'pg' | 'all';
  /** pause, skew, slow: how long it holds (ms). */
  holdMs?: number;
  /** skew: the clock offset, as faketime writes it. */
  offset?: '+90s' | '-90s';
  /** slow: the delay added to each chunk (ms). */
  delayMs?: number;
}

/** When the first fault comes: the clients register and calibrate their agents first. */
const FIRST_AT_MS = 4000;
/** What a process is planned busy for past its hold: a start or two of `akas serve` on a loaded machine. */
const RESTART_ESTIMATE_MS = 8000;

/**
 * The schedule of a run of `durationMs` from `seed`: first every kind once, in a seeded order,
 * spread over the first 80 % of the run (so a run of 45 s exercises each), then a fault every 5
 * to 15 s. A fault on a process goes to one with no fault planned at that time, leaving one
 * free; when none is, it waits for the first to be.
 */
export function plan(seed: number, durationMs: number): PlannedFault[] {
  const r = rng(seed).fork('nemesis');
  const busyUntil = new Map<ProcessName, number>(NODE_NAMES.map((n) => [n, 0]));
  const linkBusyUntil = new Map<ProcessName, number>(NODE_NAMES.map((n) => [n, 0]));
  const out: PlannedFault[] = [];
  const firstGap = Math.max(1500, Math.min(15_000, (durationMs * 0.8 - FIRST_AT_MS) / FAULT_KINDS.length));
  const first = r.shuffle(FAULT_KINDS);
  let at = Math.min(FIRST_AT_MS, durationMs * 0.1);
  for (let k = 0; at < durationMs - 3000; k++) {
    const fault = k < first.length ? first[k] : r.pick(FAULT_KINDS);
    const planned: PlannedFault = { at: Math.round(at), fault, target: 'pg' };
    if (fault === 'kill' || fault === 'pause' || fault === 'skew') {
      // At most two processes under a fault at once.
      const busy = NODE_NAMES.filter((n) => busyUntil.get(n)! > at);
      if (busy.length >= 2) {
        at = Math.min(...busy.map((n) => busyUntil.get(n)!));
        planned.at = Math.round(at);
      }
      const free = NODE_NAMES.filter((n) => busyUntil.get(n)! <= at);
      const target = r.pick(free);
      planned.target = target;
      if (fault === 'pause') planned.holdMs = r.int(5000, 20_000);
      if (fault === 'skew') {
        planned.offset = r.chance(0.5) ? '+90s' : '-90s';
        planned.holdMs = r.int(5000, 15_000);
      }
      const cost = fault === 'kill' ? RESTART_ESTIMATE_MS : fault === 'skew' ? planned.holdMs! + 2 * RESTART_ESTIMATE_MS : planned.holdMs!;
      busyUntil.set(target, at + cost);
    } else if (fault === 'slow') {
      const free = NODE_NAMES.filter((n) => linkBusyUntil.get(n)! <= at);
      const target = free.length ? r.pick(free) : r.pick(NODE_NAMES);
      planned.target = target;
      planned.delayMs = r.int(100, 500);
      planned.holdMs = r.int(4000, 12_000);
      linkBusyUntil.set(target, Math.max(linkBusyUntil.get(target)!, at) + planned.holdMs);
    } else if (fault === 'backend-kill') {
      planned.target = r.chance(0.5) ? 'all' : r.pick(NODE_NAMES);
    }
    out.push(planned);
    at += k < first.length - 1 ? firstGap : r.int(5000, 15_000);
  }
  return out;
}

/** An abortable wait: ends at once when the signal aborts (the nemesis is healing). */
function hold(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export class Nemesis {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly healing = new AbortController();

  constructor(
    private readonly schedule: readonly PlannedFault[],
    private readonly d: Deployment,
    private readonly history: History,
  ) {}

  /** Starts the schedule; `elapsed()` is the run's clock (ms since its start). */
  start(elapsed: () => number) {
    for (const f of this.schedule) {
      this.timers.push(setTimeout(() => this.enqueue(f), Math.max(0, f.at - elapsed())));
    }
  }

  /** Runs a fault after the one before it on the same target (a process, its link, the server). */
  private enqueue(f: PlannedFault) {
    if (this.healing.signal.aborted) return;
    const chain = f.fault === 'slow' ? `link-${f.target}` : f.fault.startsWith('pg-') || f.fault === 'backend-kill' ? 'pg' : f.target;
    const before = this.chains.get(chain) ?? Promise.resolve();
    this.chains.set(
      chain,
      before.then(() => (this.healing.signal.aborted ? undefined : this.run(f))),
    );
  }

  /** Does something and writes its line: value on success, the error otherwise. */
  private async act(target: string, fault: string, what: () => Promise<Record<string, unknown>>) {
    const start = this.history.now();
    try {
      const value = await what();
      this.history.nemesis(target, { fault, target, start, ms: Math.round(this.history.now() - start), ...value });
    } catch (e) {
      this.history.nemesis(target, { fault, target, start, ms: Math.round(this.history.now() - start) }, (e as Error).message.slice(0, 2000));
    }
  }

  private async run(f: PlannedFault): Promise<void> {
    const d = this.d;
    const signal = this.healing.signal;
    switch (f.fault) {
      case 'kill': {
        const name = f.target as ProcessName;
        await this.act(name, 'kill', async () => ({ pid: await d.kill(name) }));
        await this.act(name, 'restart', async () => d.startProcess(name));
        return;
      }
      case 'pause': {
        const name = f.target as ProcessName;
        await this.act(name, 'pause', async () => ({ pid: d.pause(name), holdMs: f.holdMs }));
        await hold(f.holdMs!, signal);
        await this.act(name, 'resume', async () => ({ pid: d.resume(name) }));
        return;
      }
      case 'skew': {
        const name = f.target as ProcessName;
        await this.act(name, 'skew', async () => {
          await d.stop(name);
          return { offset: f.offset, ...(await d.startProcess(name, f.offset)) };
        });
        await hold(f.holdMs!, signal);
        await this.unskew(name);
        return;
      }
      case 'slow': {
        const name = f.target as ProcessName;
        await this.act(`link-${name}`, 'slow', async () => (d.proc(name).link.slow(f.delayMs!), { delayMs: f.delayMs }));
        await hold(f.holdMs!, signal);
        await this.act(`link-${name}`, 'unslow', async () => (d.proc(name).link.slow(0), {}));
        return;
      }
      case 'pg-restart-fast':
      case 'pg-restart-immediate': {
        const mode = f.fault === 'pg-restart-fast' ? 'fast' : 'immediate';
        await this.act('pg', f.fault, async () => {
          const before = d.cluster.postmasterPid();
          await d.cluster.restart(mode);
          return { mode, pid: before, newPid: d.cluster.postmasterPid() };
        });
        return;
      }
      case 'backend-kill':
        await this.act(String(f.target), 'backend-kill', async () => ({ terminated: await d.terminateBackends(f.target as ProcessName | 'all') }));
        return;
    }
  }

  /** Starts again a process that crashed (after whatever the nemesis is doing to it). */
  restartCrashed(name: ProcessName) {
    const before = this.chains.get(name) ?? Promise.resolve();
    this.chains.set(
      name,
      before.then(() =>
        this.d.proc(name).child ? undefined : this.act(name, 'restart', async () => ({ after: 'crash', ...(await this.d.startProcess(name)) })),
      ),
    );
  }

  private async unskew(name: ProcessName) {
    await this.act(name, 'unskew', async () => {
      await this.d.stop(name);
      return this.d.startProcess(name);
    });
  }

  /**
   * The end of the run: no fault starts any more, every hold ends now (its end action runs: a
   * resume, an unskew, a restored link), and what is still down comes back: the server, then
   * every process that is not running, paused, skewed or slowed.
   */
  async heal(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.healing.abort();
    await Promise.all(this.chains.values());
    const d = this.d;
    const start = this.history.now();
    const done: string[] = [];
    if (!d.cluster.postmasterPid()) {
      await d.cluster.restart('fast');
      done.push('pg started');
    }
    for (const name of NODE_NAMES) {
      const p = d.proc(name);
      if (p.link.delayMs) {
        p.link.slow(0);
        done.push(`link-${name} restored`);
      }
      if (p.paused) {
        d.resume(name);
        done.push(`${name} resumed`);
      }
      if (p.skew) {
        await this.unskew(name);
        done.push(`${name} unskewed`);
      }
      if (!p.child) {
        await this.act(name, 'restart', async () => d.startProcess(name));
        done.push(`${name} restarted`);
      }
    }
    this.history.nemesis('all', { fault: 'heal', target: 'all', start, ms: Math.round(this.history.now() - start), done });
  }
}
