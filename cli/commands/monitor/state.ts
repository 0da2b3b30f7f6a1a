// What `akas monitor` keeps between runs (one JSON file, written whole to a fresh temporary file
// opened with O_EXCL | O_NOFOLLOW, fsynced, renamed over the old one, and the folder fsynced
// (cli/kit/safe-file.ts): a SIGKILL at any point leaves either the old state or the new one, and a
// link planted at the path or at a temporary name in a shared folder is never followed). The order that makes a kill lose nothing and repeat
// nothing (cli/commands/monitor/output.ts): an alert is saved in `pending` before it is printed, and
// once printed it is appended to the output log beside the state; entries read since the last
// save are read again on the next run, an alert whose id the state holds is not printed again,
// and a pending one is printed at the next start unless the output log holds it.
import { readFileSync } from 'node:fs';
import { writeFileSafely } from '../../kit/index.js';

export interface MonitorState {
  version: 1;
  /** The log key (C2SP verifier key) checkpoints are checked with, pinned at the first run. */
  logKey: string;
  /** The last checkpoint verified (its signed note), null before the first. */
  checkpoint: string | null;
  /** The next log index to read. */
  next: number;
  /** Ids of the alerts already printed. */
  emitted: string[];
  /** Alerts saved before being printed (cli/commands/monitor/output.ts): at the next start, printed unless the output log holds them. */
  pending?: MonitorRecord[];
  /** The watched credentials whose bit was set in the last version of its list read, as `judgmentId:purpose` (cli/commands/monitor/status.ts). */
  statusSet?: string[];
  /** The last version read of each status list, by its URL. */
  listVersions?: Record<string, number>;
  /** Every public key of the watched agent seen so far (current and rotated), 64 hex. */
  keys: string[];
  /** The node's issuer DID first seen (the pin its rotations are followed from). */
  issuer?: string;
}

/** What the monitor reports: an alert (exit 1) or an event. */
export interface MonitorRecord {
  type: 'alert' | 'event';
  /** Alerts (and events that must not repeat): a stable id, the same finding having the same id on every run. */
  id?: string;
  what: string;
  message: string;
  [k: string]: unknown;
}

export class StateError extends Error {}

/** The saved state, or undefined when there is none; a file that is not a state throws (never silently restarted from 0). */
export function readState(path: string): MonitorState | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StateError(`cannot read the monitor state ${path}: ${(e as Error).message}`);
  }
  try {
    const s = JSON.parse(text) as MonitorState;
    if (s.version !== 1 || typeof s.logKey !== 'string' || !Number.isSafeInteger(s.next) || !Array.isArray(s.emitted) || !Array.isArray(s.keys))
      throw new Error('not a monitor state');
    if ((s.pending !== undefined && !Array.isArray(s.pending)) || (s.statusSet !== undefined && !Array.isArray(s.statusSet)))
      throw new Error('not a monitor state');
    return s;
  } catch (e) {
    throw new StateError(`${path} is not a monitor state (${(e as Error).message}): move it aside to start over`);
  }
}

/** Where the files kept beside a state are: `<state>.<suffix>` (the state's `.json` dropped). */
export const besideState = (statePath: string, suffix: string) => `${statePath.replace(/\.json$/, '')}.${suffix}`;

/** Writes the state atomically and durably, never through a link (see above). */
export function writeState(path: string, state: MonitorState) {
  writeFileSafely(path, `${JSON.stringify(state)}\n`);
}
