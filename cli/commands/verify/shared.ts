// What the verify subcommands share: the --at, --issuer and --witness arguments, the mark a
// report line starts with, and stdin read whole (akas log watch and gate take --witness too).
// The checks themselves live in verifier/, never here.
import { readFileSync } from 'node:fs';
import { usageError } from '../../errors.js';

export interface CheckLike {
  id: string;
  layer: string;
  what: string;
  valid: boolean | null;
  why?: string;
  subject?: string;
}

/** `--at`: an ISO 8601 time or epoch milliseconds. */
export function timeArg(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const t = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(t)) throw usageError(`--at must be an ISO 8601 time or epoch milliseconds, got ${value}`);
  return t;
}

/** `--issuer`: a did:key, as akas node-keys prints it. */
export function issuerArg(value: string | undefined) {
  if (value !== undefined && !/^did:key:z[1-9A-HJ-NP-Za-km-z]+$/.test(value)) throw usageError(`--issuer must be a did:key (did:key:z6Mk...), got ${value}`);
  return value;
}

/** The start of a check's line: held, failed, or could not run (never counted as verified). */
export const mark = (v: boolean | null) => (v === true ? 'ok  ' : v === false ? 'FAIL' : '--  ');
export const failing = (checks: CheckLike[]) => checks.filter((c) => c.valid === false);

/** Reads the process's stdin whole (for `-`). */
export const readStdin = () => readFileSync(0);

/**
 * The witness policy of `--witness KEY` (repeatable; a `KEY@URL` as `akas witness` prints it
 * is taken too) and `--witness-quorum K` (default: every witness given). Undefined when no
 * witness is given; a usage error for a quorum without witnesses or out of range.
 */
export function witnessPolicyArg(witness: string[] = [], quorum?: string): { keys: string[]; quorum: number; now: number } | undefined {
  if (witness.length === 0) {
    if (quorum !== undefined) throw usageError('--witness-quorum needs the witnesses: --witness NAME+KEYID+KEY (repeatable)');
    return undefined;
  }
  const keys = witness.map((w) => (w.includes('@') ? w.slice(0, w.lastIndexOf('@')) : w));
  const k = quorum === undefined ? keys.length : Number(quorum);
  if (!Number.isInteger(k) || k < 1 || k > keys.length)
    throw usageError(`--witness-quorum is a whole number from 1 to ${keys.length} (the witnesses given), got ${quorum}`);
  return { keys, quorum: k, now: Math.floor(Date.now() / 1000) };
}
