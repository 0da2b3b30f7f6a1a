// The shape every offline check reports in: a list of named checks, each under its trust
// layer, with a verdict and the reason. A failed check is a result, not an exception; a check
// that could not run (no pinned issuer, no blob given) is reported with `valid: null` and is
// never counted as verified. A check marked `anchor` ties the verdict to a key the auditor
// pinned (an issuer, a log key): when one could not run, the verdict is unanchored (issue 32),
// checked only against keys the input brought itself, and is never a pass (exit 3).

/**
 * `content` holds the checks that what was judged is what is published (PROTOCOL 6.10): the
 * content hash recomputed, the decision recomputed, the judgments, credentials and log events
 * one set, the content hashes named by the content. The layers' own signatures over the content
 * hash (a judge's v2 signature, a credential, a log event) are checked under their layer.
 */
export type Layer = 'input' | 'content' | 'L1' | 'L2' | 'L3' | 'CAS';

export interface Check {
  /** Stable name, e.g. `proof.signature`. */
  id: string;
  layer: Layer;
  /** What was checked, for people. */
  what: string;
  /** true holds, false does not, null could not be checked. */
  valid: boolean | null;
  /** Why it failed or could not be checked (and, for some passes, what it found). */
  why?: string;
  /** What the check was about when a report holds many (a judgment id, a file, a sha256). */
  subject?: string;
  /** The check ties the verdict to a key the auditor pinned (an issuer, a log key); absent otherwise. */
  anchor?: true;
}

export interface Report {
  /** Every check that ran holds (unchecked ones do not count either way). A verdict needs `anchored` too: verdictOf. */
  verified: boolean;
  /** No anchor check was left unchecked: the keys the checks ran on are keys the auditor pinned. */
  anchored: boolean;
  /** The anchor checks that could not run, as `id` or `id (subject)`, each once. */
  unanchored: string[];
  checks: Check[];
}

/**
 * The verdict of every verifier (DESIGN: one verdict for every verifier): not verified beats
 * unanchored beats status unknown (false beats unknown), and only an anchored report with no
 * failure, whose credentials' status was read (or skipped by the reader's explicit choice), is
 * verified.
 */
export type Verdict = 'verified' | 'not verified' | 'unanchored' | 'status unknown';

/** A check's result in words: what `--json` carries beside its id and layer. */
export type CheckResult = 'held' | 'failed' | 'not checked';
export const resultOf = (valid: boolean | null): CheckResult => (valid === true ? 'held' : valid === false ? 'failed' : 'not checked');

/** A check about the status of a credential (revocation, suspension; PROTOCOL 8.7). */
export const isStatusCheck = (id: string) => id === 'status' || id.startsWith('status.');

/** The verdict of a report's checks: a failed check, an anchor left unchecked, a status left unknown, or none of these. */
export function verdictOf(r: { verified: boolean; anchored: boolean; checks?: Check[] }): Verdict {
  if (!r.verified) return 'not verified';
  if (!r.anchored) return 'unanchored';
  return r.checks?.some((c) => c.valid === null && isStatusCheck(c.id)) ? 'status unknown' : 'verified';
}

/** The exit code of a verdict (DESIGN, PROTOCOL 8.6): 0 verified, 1 not verified, 3 unanchored or status unknown. */
export const exitOfVerdict = (v: Verdict): 0 | 1 | 3 => (v === 'verified' ? 0 : v === 'not verified' ? 1 : 3);
export const exitOf = (r: { verified: boolean; anchored: boolean; checks?: Check[] }): 0 | 1 | 3 => exitOfVerdict(verdictOf(r));

/** The status a verdict speaks for: read (from where, which versions, as of when), skipped on purpose, or not read. */
export interface StatusSummary {
  /** Every list the credentials name was read and checked. */
  checked: boolean;
  /** node: read from the node now; saved: from files; stapled: from the bundle; skipped: --no-status; none: not given. */
  source: 'node' | 'saved' | 'stapled' | 'skipped' | 'none';
  /** Each list read: its purpose, its version where known, the time it speaks for (ISO). */
  lists: Array<{ purpose: string; version?: number; at: string }>;
}

/** The object every verify command's --json carries, the same on each (issue 47). */
export interface VerdictObject {
  verdict: Verdict;
  /** What the verdict was anchored on (a trust file, a pinned DID or log key), null when nothing was pinned. */
  anchoredOn: string | null;
  /** The status it speaks for; null where no credential names a status list. */
  status: StatusSummary | null;
  checks: Array<{ id: string; layer: Layer; result: CheckResult; what: string; why?: string; subject?: string }>;
}

/** The checks as --json shows them: each with its result in words. */
export function checksOut(checks: Check[]): VerdictObject['checks'] {
  return checks.map((c) => {
    const out: VerdictObject['checks'][number] = { id: c.id, layer: c.layer, result: resultOf(c.valid), what: c.what };
    if (c.why !== undefined) out.why = c.why;
    if (c.subject !== undefined) out.subject = c.subject;
    return out;
  });
}

const VERDICT_WORDS: Record<Verdict, string> = {
  verified: 'VERIFIED',
  'not verified': 'NOT VERIFIED',
  unanchored: 'UNANCHORED',
  'status unknown': 'STATUS UNKNOWN',
};

/** What a status summary says, for the verdict line. */
export function statusText(s: StatusSummary | null): string | undefined {
  if (!s) return undefined;
  if (s.source === 'skipped') return 'status not checked (--no-status)';
  const lists = s.lists.map((l) => `${l.purpose}${l.version !== undefined ? ` v${l.version}` : ''} as of ${l.at}`).join(', ');
  const from = { node: 'read from the node', saved: 'from the saved lists', stapled: 'stapled in the bundle', none: '' }[s.source];
  if (!s.checked)
    return `status unknown${lists ? ` (${lists}${from ? `, ${from}` : ''})` : ''}: check it with --status (asks the node) or --status-list FILE (saved lists)`;
  return `status ${lists}${from ? `, ${from}` : ''}`;
}

/**
 * The one line every verify command ends with: the verdict, what it was anchored on, the status
 * it speaks for, and, when it is not VERIFIED, what to do or what failed.
 */
export function verdictLine(v: Pick<VerdictObject, 'verdict' | 'anchoredOn' | 'status'> & { failed?: string[]; unanchoredHint?: string }): string {
  const parts: string[] = [];
  if (v.verdict === 'not verified' && v.failed?.length)
    parts.push(`failed: ${[...new Set(v.failed)].slice(0, 6).join(', ')}${v.failed.length > 6 ? ', ...' : ''}`);
  if (v.verdict === 'unanchored') parts.push(`${v.unanchoredHint ?? 'anchored on nothing you pinned'}${v.anchoredOn ? ` (pinned: ${v.anchoredOn})` : ''}`);
  else parts.push(v.anchoredOn ? `anchored on ${v.anchoredOn}` : 'anchored on nothing you pinned');
  const status = statusText(v.status);
  if (status) parts.push(status);
  return `${VERDICT_WORDS[v.verdict]} — ${parts.join('; ')}`;
}

/** The anchor checks of a list that could not run, each named once. */
export function unanchoredOf(checks: Check[]): string[] {
  let out: Set<string> | undefined; // made only when there is one: most reports have none
  for (const c of checks) if (c.anchor && c.valid === null) (out ??= new Set()).add(c.subject ? `${c.id} (${c.subject})` : c.id);
  return out ? [...out] : [];
}

/** Collects checks in order. */
export class Checks {
  readonly list: Check[] = [];

  add(id: string, layer: Layer, what: string, valid: boolean | null, why?: string, subject?: string, anchor?: boolean): boolean | null {
    // Fields set one by one, not spread from temporary objects: a batch of 10,000 credentials
    // adds some 200,000 checks (issue 32, 6: the spreads were a tenth of the run's garbage).
    const check: Check = { id, layer, what, valid };
    if (why !== undefined) check.why = why;
    if (subject !== undefined) check.subject = subject;
    if (anchor) check.anchor = true;
    this.list.push(check);
    return valid;
  }

  get failed(): Check[] {
    return this.list.filter((c) => c.valid === false);
  }

  report(): Report {
    const unanchored = unanchoredOf(this.list);
    return { verified: !this.list.some((c) => c.valid === false), anchored: unanchored.length === 0, unanchored, checks: this.list };
  }
}

/** Totals of a report: how many held, failed and could not be checked. */
export function tally(checks: Check[]) {
  return {
    held: checks.filter((c) => c.valid === true).length,
    failed: checks.filter((c) => c.valid === false).length,
    unchecked: checks.filter((c) => c.valid === null).length,
  };
}
