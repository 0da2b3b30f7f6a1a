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

/** The verdict of a report: failed beats unanchored (false beats unknown), and only an anchored report with no failure is verified. */
export type Verdict = 'verified' | 'failed' | 'unanchored';

export function verdictOf(r: { verified: boolean; anchored: boolean }): Verdict {
  return !r.verified ? 'failed' : r.anchored ? 'verified' : 'unanchored';
}

/** The exit code of a verdict (DESIGN): 0 verified, 1 a check failed, 3 could not be anchored. */
export const exitOf = (r: { verified: boolean; anchored: boolean }): 0 | 1 | 3 => ({ verified: 0, failed: 1, unanchored: 3 })[verdictOf(r)] as 0 | 1 | 3;

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
