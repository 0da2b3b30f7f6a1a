// What the verify subcommands share: the --at, --issuer, --trust and --witness arguments, the
// mark a report line starts with, how every one of them ends (finish: the verdict object, the
// verdict line, the exit code: 0 verified, 1 not verified, 3 unanchored or status unknown), and
// stdin read whole (akas log watch and gate take --witness too).
// The checks themselves live in verifier/, never here.
import { readFileSync } from 'node:fs';
import type { CheckId, StatusSummary } from '../../../verifier/report.js';
import { CliError, reasonOf, usageError } from '../../kit/index.js';
import type { Cli } from '../../program.js';

export interface CheckLike {
  /** An id of the registry (verifier/report.ts CHECKS, PROTOCOL 8.8), here too for the checks a command builds itself. */
  id: CheckId;
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

/**
 * Runs a verifier on the input named `path` (- for stdin). Input it cannot read, so has no
 * verdict for (NotCheckableError: not strict JSON, or not the kind of document it checks;
 * PROTOCOL 8.8), is exit 2 with the error's code (invalid_json, not_checkable): answered here,
 * for every verify command.
 */
export async function checkable<T>(path: string, run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    const { NotCheckableError } = await import('../../../verifier/report.js');
    if (NotCheckableError.is(e)) throw new CliError(e.code, `${path === '-' ? 'stdin' : path}: ${e.message}`, { path });
    throw e;
  }
}

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
    throw new CliError('unreadable', `Cannot read ${path}: ${reasonOf(e)}`, { path });
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
    if (e instanceof TrustFileError) throw new CliError('not_a_trust_file', `${path} is not a trust file: ${e.message}`, { path });
    throw e;
  }
}

/** What to pin, for an unanchored verdict: which checks could not be tied to a pinned key, and the options that would. */
export function anchorHint(unanchored: string[]): string {
  const ids = unanchored;
  const issuer = ids.some((id) => id.includes('issuer'));
  const log = ids.some((id) => id.startsWith('log.'));
  const judges = ids.some((id) => id.startsWith('judge.key'));
  const pins = [
    issuer || log
      ? `--trust FILE (akas trust pin > trust.json)${issuer ? ', or --issuer DID' : ''}${log ? `${issuer ? ' and' : ', or'} --log-key KEY` : ''}`
      : '',
    judges ? '--agent-file PROFILE.json for each judge (akas agents TAG --json): its keys and their windows' : '',
  ].filter(Boolean);
  const shown = ids.length > 4 ? `${ids.slice(0, 4).join(', ')} and ${ids.length - 4} more` : ids.join(', ');
  return `${ids.length} check(s) ran on keys the input brought itself, none pinned by you (${shown}); pin ${pins.join('; ')}`;
}

/** What a verdict is anchored on, from the pins the command was given; null when nothing was pinned. */
export function anchoredOnOf(p: {
  trust?: string;
  issuer?: string;
  issuerKeys?: string;
  logKey?: string | string[];
  key?: string;
  agents?: string[];
}): string | null {
  if (p.trust !== undefined) return `the trust file ${p.trust}`;
  const parts = [
    p.issuer ? `issuer ${p.issuer}${p.issuerKeys ? ` (rotations from ${p.issuerKeys})` : ''}` : '',
    p.logKey ? `log key ${Array.isArray(p.logKey) ? p.logKey.join(', ') : p.logKey}` : '',
    p.key ? `the key ${p.key}` : '',
    p.agents?.length ? `the judges' profiles ${p.agents.join(', ')}` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(' and ') : null;
}

interface Verdictable {
  verified: boolean;
  anchored: boolean;
  unanchored: string[];
  checks: CheckLike[];
}

export interface Finish {
  /** What the verdict was anchored on (anchoredOnOf); null when nothing was pinned. */
  anchoredOn: string | null;
  /** The status it speaks for; null where no credential names a status list. */
  status: StatusSummary | null;
  /** List every check, not only those that failed or could not run. */
  verbose?: boolean;
  /** The command's own lines, printed before the checks. */
  head?: string[];
  /** The command's own lines, printed after the checks and before the verdict. */
  tail?: string[];
  /** The command's own --json fields besides the verdict object (a function: made only under --json). */
  extra?: Record<string, unknown> | (() => Record<string, unknown>);
  /** The hint of an unanchored verdict, when the command knows better than anchorHint. */
  unanchoredHint?: string;
  /** Checks are listed by the command itself (a report of many subjects): print none here. */
  ownChecks?: boolean;
}

/**
 * How every verify command ends (issue 47: one verdict, one shape): with --json, one object
 * {verdict, anchoredOn, status, checks[{id, layer, result, ...}], ...the command's own fields};
 * on a terminal, the command's lines, the checks that did not hold (every check with
 * --verbose), a tally, and the one verdict line last. Answers the exit code: 0 verified, 1 not
 * verified, 3 unanchored or status unknown.
 */
export async function finish(cli: Cli, report: Verdictable, f: Finish): Promise<0 | 1 | 3> {
  const { verdictOf, exitOfVerdict, checksOut, verdictLine, tally } = await import('../../../verifier/report.js');
  const verdict = verdictOf(report as never);
  const t = tally(report.checks as never);
  const out = cli.output();
  // The object is made only under --json: a batch of 10,000 credentials holds some 170,000 checks.
  const object = () => ({
    ...t,
    ...(typeof f.extra === 'function' ? f.extra() : f.extra),
    verdict,
    verified: verdict === 'verified',
    anchored: report.anchored,
    unanchored: report.unanchored,
    anchoredOn: f.anchoredOn,
    status: f.status,
    checks: checksOut(report.checks as never),
  });
  out.result(out.json ? object() : undefined, () => {
    const lines = [...(f.head ?? [])];
    if (!f.ownChecks) {
      const seen = new Set<string>();
      for (const c of report.checks) {
        if (c.valid === true && !f.verbose) continue;
        const text = c.valid === true ? c.what : (c.why ?? c.what);
        // A reason a check could not run is said once, not once per subject (unless --verbose).
        if (c.valid === null && !f.verbose) {
          if (seen.has(c.id + text)) continue;
          seen.add(c.id + text);
        }
        lines.push(
          `  ${mark(c.valid)}  ${c.layer.padEnd(7)} ${c.id.padEnd(24)} ${c.subject && (f.verbose || c.valid === false) ? `${c.subject}  ` : ''}${text}`,
        );
      }
    }
    lines.push(...(f.tail ?? []));
    lines.push(`held ${t.held}, failed ${t.failed}, not checked ${t.unchecked} (never counted as verified)${f.verbose ? '' : '; --verbose lists every check'}`);
    lines.push(
      verdictLine({
        verdict,
        anchoredOn: f.anchoredOn,
        status: f.status,
        failed: report.checks.filter((c) => c.valid === false).map((c) => c.id),
        unanchoredHint: verdict === 'unanchored' ? (f.unanchoredHint ?? anchorHint(report.unanchored)) : undefined,
      }),
    );
    return lines.join('\n');
  });
  return exitOfVerdict(verdict);
}
