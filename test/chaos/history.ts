// The history of a chaos run (issue 49), Jepsen-style: every operation an invoke line, then its
// completion (ok, fail or info) with the same client, f and node; each nemesis action and each
// crash the harness saw one info line. Written as JSON Lines (history.jsonl) as it happens, so
// a run that dies midway leaves what it did, and kept in memory for the checker.
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import type { Completion, HistoryEvent, NodeName, OpName } from './types.js';

/** Faults by kind, as report.json and the one line count them (the nemesis lines that start one). */
export interface FaultCounts {
  kill: number;
  pause: number;
  pgRestart: number;
  backendKill: number;
  skew: number;
  slow: number;
}

/** What an invocation answers the worker once it has written its completion. */
export interface Invocation {
  readonly node: NodeName;
  complete(type: Completion, value?: Record<string, unknown>, error?: string): void;
}

export class History {
  readonly events: HistoryEvent[] = [];
  private readonly out: WriteStream | undefined;
  private readonly t0: number;
  private closing: Promise<void> | undefined;

  /** file: where to write the lines as they come (none: memory only). t0: performance.now() at the run's start. */
  constructor(file?: string, t0 = performance.now()) {
    this.t0 = t0;
    this.out = file ? createWriteStream(file, { flags: 'w' }) : undefined;
  }

  /** Milliseconds since the run started. */
  now(): number {
    return Math.round((performance.now() - this.t0) * 10) / 10;
  }

  private push(e: Omit<HistoryEvent, 'i' | 'time'>): HistoryEvent {
    const event: HistoryEvent = { i: this.events.length, ...e, time: this.now() };
    for (const k of ['value', 'error', 'ip', 'agent'] as const) if (event[k] === undefined) delete event[k];
    this.events.push(event);
    this.out?.write(`${JSON.stringify(event)}\n`);
    return event;
  }

  /**
   * Writes an invoke line and answers the handle that writes its completion, once: a second
   * completion of one invocation is a bug of the harness, and throws.
   */
  invoke(f: OpName, client: number, node: NodeName, value: Record<string, unknown>, who: { ip?: string; agent?: string } = {}): Invocation {
    this.push({ type: 'invoke', f, client, node, value, ip: who.ip, agent: who.agent });
    let done = false;
    return {
      node,
      complete: (type, result, error) => {
        if (done) throw new Error(`${f} of client ${client} completed twice`);
        done = true;
        this.push({ type, f, client, node, value: result, error });
      },
    };
  }

  /** A nemesis action, done (or failed: error): one info line (client -1). */
  nemesis(target: string, value: Record<string, unknown> & { fault: string }, error?: string) {
    this.push({ type: 'info', f: 'nemesis', client: -1, node: target, value, error });
  }

  /** A process that exited without the nemesis asking (client -1). */
  crash(node: NodeName, value: Record<string, unknown>) {
    this.push({ type: 'info', f: 'crash', client: -1, node, value });
  }

  /** Flushes the file (the history stays readable in memory). */
  close(): Promise<void> {
    const out = this.out;
    if (!out) return Promise.resolve();
    this.closing ??= new Promise((resolve, reject) => {
      out.once('error', reject);
      out.end(() => resolve());
    });
    return this.closing;
  }
}

/** Reads a history.jsonl back (a line cut short by a crash of the harness is left out). */
export function readHistory(file: string): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      events.push(JSON.parse(line) as HistoryEvent);
    } catch {
      // the last line of a run that died while writing it
    }
  }
  return events;
}

/** The client operations of a history (its invoke lines). */
export function operationCount(events: readonly HistoryEvent[]): number {
  return events.filter((e) => e.type === 'invoke').length;
}

/** The faults a history's nemesis made, by kind (their ends, resume, unskew, unslow and restart, are not counted, nor a fault that failed). */
export function faultCounts(events: readonly HistoryEvent[]): FaultCounts {
  const counts: FaultCounts = { kill: 0, pause: 0, pgRestart: 0, backendKill: 0, skew: 0, slow: 0 };
  const kinds: Record<string, keyof FaultCounts> = {
    kill: 'kill',
    pause: 'pause',
    'pg-restart-fast': 'pgRestart',
    'pg-restart-immediate': 'pgRestart',
    'backend-kill': 'backendKill',
    skew: 'skew',
    slow: 'slow',
  };
  for (const e of events) {
    const kind = e.f === 'nemesis' && !e.error ? kinds[String(e.value?.fault)] : undefined;
    if (kind) counts[kind]++;
  }
  return counts;
}

/** The one line `npm run chaos` prints (issue 49: exactly this). */
export function summaryLine(operations: number, faults: FaultCounts, violations: number): string {
  const total = Object.values(faults).reduce((a, b) => a + b, 0);
  return (
    `chaos: ${operations} operations over 3 processes, ${total} faults ` +
    `(kill ${faults.kill}, pause ${faults.pause}, pg-restart ${faults.pgRestart}, backend-kill ${faults.backendKill}, skew ${faults.skew}), ` +
    `${violations} violations`
  );
}
