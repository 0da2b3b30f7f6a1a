// The shape every offline check reports in: a list of named checks, each under its trust
// layer, with a verdict and the reason. A failed check is a result, not an exception; a check
// that could not run (no pinned issuer, no blob given) is reported with `valid: null` and is
// never counted as verified.

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
}

export interface Report {
  /** Every check that ran holds (unchecked ones do not count either way). */
  verified: boolean;
  checks: Check[];
}

/** Collects checks in order. */
export class Checks {
  readonly list: Check[] = [];

  add(id: string, layer: Layer, what: string, valid: boolean | null, why?: string, subject?: string): boolean | null {
    this.list.push({ id, layer, what, valid, ...(why !== undefined ? { why } : {}), ...(subject !== undefined ? { subject } : {}) });
    return valid;
  }

  get failed(): Check[] {
    return this.list.filter((c) => c.valid === false);
  }

  report(): Report {
    return { verified: this.failed.length === 0, checks: this.list };
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
