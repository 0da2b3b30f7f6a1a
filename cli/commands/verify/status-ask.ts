// What a verify command asks of a credential's status (PROTOCOL 8.7; issue 47): read it from the
// node (--status), from saved lists (--status-list), skip it on purpose (--no-status), or say
// it was not checked: a credential that names a status list is never good unread. Light on
// purpose (no network code): every verify command loads it; cli/commands/verify/status-check.ts reads the lists.
import type { Check, StatusSummary } from '../../../verifier/report.js';
import { statusEntries, type ReadList } from '../../../verifier/status-list.js';
import { usageError } from '../../kit/index.js';

/** How a verify command was told to treat status: read from the node, from saved files, skipped, or not said. */
export interface StatusAsk {
  fetch: boolean;
  files: string[];
  /** --no-status: the reader's explicit, printed choice not to check it. */
  skip: boolean;
}

/** `--status`, `--status-list` and `--no-status`: the first two go together, the third with neither. */
export function statusAskOf(opts: { status?: boolean; statusList?: string[]; noStatus?: boolean }): StatusAsk {
  const ask = { fetch: Boolean(opts.status), files: opts.statusList ?? [], skip: Boolean(opts.noStatus) };
  if (ask.skip && (ask.fetch || ask.files.length)) throw usageError('--no-status skips the status check: leave out --status and --status-list, or --no-status');
  return ask;
}

/** Whether a credential names a status list (a credentialStatus entry). */
export const namesStatus = (credential: unknown) => statusEntries(credential).length > 0;

/**
 * The check of a credential that names a status list when the reader gave no way to read it:
 * status unknown, never good, saying how to check it (PROTOCOL 8.7).
 */
export function statusNotAsked(subject?: string): Check {
  const check: Check = {
    id: 'status',
    layer: 'L1',
    what: "the credential's status (revocation, suspension: Bitstring Status List)",
    valid: null,
    why: 'status unknown: not checked; --status reads the lists from the node, --status-list FILE... takes saved ones, --no-status skips it',
  };
  if (subject !== undefined) check.subject = subject;
  return check;
}

/** What the verdict's status says: where the lists came from, which versions, as of when; null when no credential names one. */
export function statusSummaryOf(ask: StatusAsk, ctx: { lists: Map<string, ReadList> } | undefined, named: boolean, checks: Check[]): StatusSummary | null {
  if (!named) return null;
  if (ask.skip) return { checked: false, source: 'skipped', lists: [] };
  const source = ask.fetch ? 'node' : ask.files.length ? 'saved' : 'none';
  const lists = [...(ctx?.lists.values() ?? [])].map((l) => ({
    purpose: l.purpose,
    ...(l.version !== undefined ? { version: l.version } : {}),
    at: l.head ? new Date(l.head.at).toISOString() : l.validFrom,
  }));
  const checked = source !== 'none' && !checks.some((c) => c.valid === null && (c.id === 'status' || c.id.startsWith('status.')));
  return { checked, source, lists };
}
