// What the verify subcommands share: the --at, --issuer, --trust and --witness arguments, the
// mark a report line starts with, the verdict and its exit code (0 verified, 1 failed, 3
// unanchored), and stdin read whole (akas log watch and gate take --witness too).
// The checks themselves live in verifier/, never here.
import { readFileSync } from 'node:fs';
import { CliError, reasonOf, usageError } from '../../errors.js';

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

/** What `--trust FILE` pins (verifier/trust.ts), as the verifier's options take it. */
export interface TrustArg {
  /** The trust file as parsed: its issuers (plain values, for the worker threads of verify credential) and policy. */
  file: import('../../../verifier/trust.js').Trust;
  /** The issuer keys it pins, each in its window; undefined when it pins none. */
  issuers?: import('../../../verifier/issuer-keys.js').IssuerTrust;
  /** The log keys its policy pins; undefined when none. */
  logKeys?: string[];
  /** Its witness quorum; undefined for `quorum none`. */
  witnesses?: import('../../../verifier/log.js').WitnessPolicy;
}

/**
 * `--trust FILE`: the issuers, log keys and witness quorum an auditor pins in one file (PROTOCOL
 * 8.6). It stands instead of --issuer, --issuer-keys, --log-key and --witness: given with any of
 * them it is a usage error, so no verdict mixes two sources of trust. A file that is not a trust
 * file: exit 2 naming what is wrong.
 */
export async function trustArg(path: string | undefined, others: Record<string, unknown> = {}): Promise<TrustArg | undefined> {
  if (path === undefined) return undefined;
  const mixed = Object.entries(others)
    .filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))
    .map(([k]) => k);
  if (mixed.length) throw usageError(`--trust pins the issuer, the log keys and the witnesses: leave out ${mixed.join(', ')}`);
  const { parseTrust, issuerTrustOf, TrustFileError } = await import('../../../verifier/trust.js');
  let bytes: Buffer;
  try {
    bytes = path === '-' ? readStdin() : readFileSync(path);
  } catch (e) {
    throw new CliError(2, `Cannot read ${path}: ${reasonOf(e)}`, { code: 'unreadable', path });
  }
  try {
    const file = parseTrust(bytes);
    const q = file.policy.quorum;
    return {
      file,
      issuers: issuerTrustOf(file),
      logKeys: file.policy.logs.length ? file.policy.logs : undefined,
      witnesses: q ? { keys: file.policy.witnesses, rule: q, now: Math.floor(Date.now() / 1000) } : undefined,
    };
  } catch (e) {
    if (e instanceof TrustFileError) throw new CliError(2, `${path} is not a trust file: ${e.message}`, { code: 'not_a_trust_file', path });
    throw e;
  }
}

/** The line an unanchored verdict ends with (exit 3): which checks could not be tied to a pinned key, and what to pin. */
export function anchorLine(r: { unanchored: string[] }): string {
  const ids = r.unanchored;
  const issuer = ids.some((id) => id.includes('issuer'));
  const log = ids.some((id) => id.startsWith('log.'));
  const judges = ids.some((id) => id.startsWith('judge.key'));
  const pins = [
    issuer || log
      ? `--trust FILE (akas node-keys --trust > trust.json)${issuer ? ', or --issuer DID' : ''}${log ? `${issuer ? ' and' : ', or'} --log-key KEY` : ''}`
      : '',
    judges ? '--agent PROFILE.json for each judge (akas agents TAG --json): its keys and their windows' : '',
  ].filter(Boolean);
  const shown = ids.length > 4 ? `${ids.slice(0, 4).join(', ')} and ${ids.length - 4} more` : ids.join(', ');
  return `UNANCHORED (exit 3): ${ids.length} check(s) ran on keys the input brought itself, none pinned by you (${shown}); pin ${pins.join('; ')}`;
}

/** The verdict fields every verify command's --json carries: verified only when anchored with no failure (issue 32). */
export function verdictFields(r: Verdictable) {
  const verdict = verdictOf(r);
  return { verdict, verified: verdict === 'verified', anchored: r.anchored, unanchored: r.unanchored };
}

interface Verdictable {
  verified: boolean;
  anchored: boolean;
  unanchored: string[];
  checks?: Array<{ id: string; valid: boolean | null }>;
}

/** A status (revocation, suspension: PROTOCOL 8.7) that could not be read is unknown, never good. */
const statusUnknown = (r: Verdictable) => (r.checks ?? []).some((c) => c.id.startsWith('status') && c.valid === null);

function verdictOf(r: Verdictable): 'failed' | 'unanchored' | 'status unknown' | 'verified' {
  if (!r.verified) return 'failed';
  if (!r.anchored) return 'unanchored';
  return statusUnknown(r) ? 'status unknown' : 'verified';
}

/** The exit code of a verdict (DESIGN): 0 verified, 1 a check failed (false beats unknown), 3 unanchored or status unknown. */
export const verdictExit = (r: Verdictable) => (verdictOf(r) === 'failed' ? 1 : verdictOf(r) === 'verified' ? 0 : 3);
