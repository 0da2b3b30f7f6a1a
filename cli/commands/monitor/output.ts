// Printing what `akas monitor` finds so that a SIGKILL loses no alert and repeats none (issue
// 34, 2). An alert is printed in two phases around the state file (cli/commands/monitor/state.ts):
//   1. it is added to the state's `pending` list, and the state saved (fsynced) before anything
//      is printed: a kill from here on cannot lose it;
//   2. its line is written to stdout, then appended to the output log beside the state
//      (`<state>.alerts.jsonl`, fsynced): an alert the output log holds is never printed again.
// At the next start, a pending alert the output log lacks is printed first (the kill came
// before or during its line), and one it holds is only moved to `emitted`. The one window left
// is between the two writes of phase 2, adjacent system calls with nothing in between: a kill
// there prints that line again at the next run, with the same id. The output log holds every
// alert exactly once, in order.
import { readFileSync } from 'node:fs';
import { appendLineSafely } from '../../kit/index.js';
import { besideState, type MonitorRecord, type MonitorState } from './state.js';

/** The output log of a state: every alert printed, one JSON line each, exactly once. */
export const outputLogPath = (statePath: string) => besideState(statePath, 'alerts.jsonl');

/**
 * Appends text to a file (created 0600) and fsyncs it; O_APPEND, so two writers never overwrite
 * each other; never through a link at the path, nor into a file others could write (cli/kit/safe-file.ts).
 */
export function appendDurably(path: string, text: string): void {
  appendLineSafely(path, text);
}

/** The ids in an output log (a line cut by a crash is not one: that alert was not recorded, and is printed again). */
function printedIds(path: string): Set<string> {
  const ids = new Set<string>();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return ids;
    throw e;
  }
  for (const line of text.split('\n')) {
    try {
      const id = (JSON.parse(line) as MonitorRecord).id;
      if (typeof id === 'string') ids.add(id);
    } catch {
      // the torn last line of a crash, or an empty one
    }
  }
  return ids;
}

export class AlertOutput {
  readonly path: string;

  /**
   * `print` writes one record to stdout (as a JSON line or as text); `afterPrint` runs once a
   * record is printed and logged (the tests' kill hook).
   */
  constructor(
    statePath: string,
    private readonly print: (r: MonitorRecord) => void,
    private readonly afterPrint?: (r: MonitorRecord) => void,
  ) {
    this.path = outputLogPath(statePath);
  }

  /**
   * The saved state's pending alerts, after a kill: each the output log lacks is printed now,
   * and all are moved to `emitted`. Answers whether the state changed (the caller saves it).
   */
  settle(state: MonitorState): boolean {
    if (!state.pending?.length) return false;
    const printed = printedIds(this.path);
    for (const r of state.pending) {
      if (!printed.has(String(r.id))) this.write(r);
      state.emitted.push(String(r.id));
    }
    state.pending = [];
    return true;
  }

  /** Phase 2: the line to stdout, then to the output log (the caller saved it as pending first). */
  write(r: MonitorRecord): void {
    this.print(r);
    appendDurably(this.path, `${JSON.stringify(r)}\n`);
    this.afterPrint?.(r);
  }
}
