// Status as a browser reads it (PROTOCOL 8.7; issue 32, 4): the status lists a page fetched from
// the node at each credential's statusListCredential, checked here with the same checks as
// `akas verify credential --status` (status-list.ts: the list's eddsa-jcs-2022 proof under the
// pinned issuer, its type, purpose and length, its GZIP inflated by the platform's
// DecompressionStream), then each credential's entries read in them. A list that could not be
// fetched, or does not verify, leaves the entries that name it "status unknown", never good.
// The verifier does no network itself: the page hands in what it fetched.
import { runAsync, type Checking } from '../src/core/checking.js';
import type { IssuerTrust } from './issuer-keys.js';
import { Checks, type Check, type StatusSummary } from './report.js';
import {
  bindHeads,
  credentialStatusChecks,
  preinflated,
  statusEntries,
  statusHeadChecking,
  statusListChecking,
  type ReadList,
  type StatusVerdict,
} from './status-list.js';

/** What a list's versions say changed (GET {list}/versions): the reason and time a bit was set. */
export interface StatusVersionRecord {
  version: number;
  at: number;
  reason: string;
  changes: Array<{ index: number }>;
}

/** One list as the page fetched it from the URL a credential names: its document, or why it could not be. */
export interface FetchedStatusList {
  url: string;
  doc?: unknown;
  error?: string;
  /** The version the node says it served (X-Status-List-Version): a label, the signed list is what counts. */
  version?: number;
  /** Its version records, when the page read them (to name the reason and time of a bit set). */
  versions?: StatusVersionRecord[];
}

export interface StatusOptions {
  /** The issuer keys a list may be signed by: the page's pinned issuer, followed through the node's signed rotations. */
  trust?: IssuerTrust;
  /** Without trust: the DIDs a list may be issued by. */
  issuers?: string[];
  /** The instant validity windows are checked at (ms); now by default. */
  at?: number;
  /** The node's status head as the page fetched it (GET /credentials/status/head): what makes a list the newest, not just a version (PROTOCOL 8.7). */
  head?: unknown;
}

export interface CredentialStatus {
  /** The credential's judgment id (the last part of its subject id), or its subject id. */
  subject: string;
  /** The checks of its entries (null for an entry whose list could not be read or did not verify). */
  checks: Check[];
  verdicts: Array<StatusVerdict & { version?: number }>;
}

export interface StatusReport {
  /** The checks of the lists themselves (status.list). */
  lists: Check[];
  credentials: CredentialStatus[];
  /** Whether a bit is set for one of the credentials in a list whose versions were not given: read them and ask again for the reason. */
  needsVersions: string[];
}

const subjectOf = (credential: unknown): string => {
  const s = (credential as { credentialSubject?: { id?: unknown } } | null)?.credentialSubject?.id;
  return typeof s === 'string' ? (s.split(':').at(-1) ?? s) : '(a credential without subject id)';
};

function* statusChecking(
  credentials: unknown[],
  fetched: FetchedStatusList[],
  options: StatusOptions & { inflate: Parameters<typeof statusListChecking>[2]['inflate'] },
): Checking<StatusReport> {
  const c = new Checks();
  const lists = new Map<string, ReadList>();
  const unreadable = new Map<string, string>();
  const byUrl = new Map(fetched.map((f) => [f.url, f]));
  for (const f of fetched) {
    if (f.error !== undefined || f.doc === undefined) {
      unreadable.set(f.url, f.error ?? 'not fetched');
      continue;
    }
    const before = c.list.length;
    const list = yield* statusListChecking(c, f.doc, { at: options.at, issuers: options.issuers, trust: options.trust, inflate: options.inflate });
    if (!list) unreadable.set(f.url, `the list served there does not verify: ${c.list.slice(before).find((k) => k.valid === false)?.why ?? 'unknown'}`);
    else if (list.url !== f.url) unreadable.set(f.url, `the list served there names itself ${list.url}`);
    else lists.set(f.url, list);
  }
  // A list speaks for now only under a head that names it; without one, a list made before a credential says nothing of it.
  if (options.head !== undefined) {
    const head = yield* statusHeadChecking(c, options.head, { trust: options.trust, issuers: options.issuers });
    if (head) bindHeads(c, lists, [head]);
  }
  const reasons = (url: string, index: number) => {
    const last = [...(byUrl.get(url)?.versions ?? [])].reverse().find((v) => v.changes.some((ch) => ch.index === index));
    return last ? { reason: last.reason, at: last.at, version: last.version } : undefined;
  };
  const needsVersions = new Set<string>();
  const out: CredentialStatus[] = credentials.map((credential) => {
    const subject = subjectOf(credential);
    // A list that does not verify leaves its entries unknown (null), never good: its own failed
    // check is in `lists`, and its reason in each entry's.
    const own = new Checks();
    const verdicts = credentialStatusChecks(own, credential, lists, { unreadable, reasons, subject }).map((v) => {
      if (v.state === 'set' && !byUrl.get(v.list)?.versions) needsVersions.add(v.list);
      // The version a status head bound the list to, else the one the node said it served.
      const version = lists.get(v.list)?.version ?? byUrl.get(v.list)?.version;
      return version === undefined ? v : { ...v, version };
    });
    return { subject, checks: own.list, verdicts };
  });
  return { lists: c.list, credentials: out, needsVersions: [...needsVersions] };
}

/**
 * The status of each credential (its credentialStatus entries) in the lists the page fetched.
 * Answers per credential its checks (`status.revocation`, `status.suspension`: true not set,
 * false set or malformed, null status unknown) and what each entry says.
 */
export async function verifyStatusAsync(credentials: unknown[], fetched: FetchedStatusList[], options: StatusOptions = {}): Promise<StatusReport> {
  const inflate = await preinflated(fetched.map((f) => f.doc));
  return runAsync(statusChecking(credentials, fetched, { ...options, inflate }));
}

/**
 * What a verifier of the browser build is given of a credential's status: the lists (and the
 * status head) the page fetched from the URLs its entries name, or 'skip', the reader's explicit
 * choice not to read it (`--no-status`). Not given, a credential that names a list is "status
 * unknown" (PROTOCOL 8.7; issue 47), never verified.
 */
export type StatusGiven = { lists: FetchedStatusList[]; head?: unknown } | 'skip';

const STATUS_WHAT = "the credential's status: not revoked, not suspended (Bitstring Status List §3.2; PROTOCOL 8.7)";
const LIST_LEVEL = new Set(['status.list', 'status.head', 'status.fresh']);

/**
 * The status checks of one credential for its report, and the status its verdict speaks for. A
 * list, head or version that does not hold leaves the status unknown (its check kept, `valid`
 * null, its reason said), never failed and never good: what fails a credential is its own bit set.
 */
export async function credentialStatusAsync(
  doc: unknown,
  given: StatusGiven | undefined,
  options: Omit<StatusOptions, 'head'>,
): Promise<{ checks: Check[]; status: StatusSummary | null }> {
  if (!statusEntries(doc).length) return { checks: [], status: null };
  if (given === 'skip') return { checks: [], status: { checked: false, source: 'skipped', lists: [] } };
  if (given === undefined)
    return {
      checks: [
        {
          id: 'status',
          layer: 'L1',
          what: STATUS_WHAT,
          valid: null,
          why:
            'status unknown: no status list was given: fetch the lists its credentialStatus names (and the status head) and give them, ' +
            'or skip status on purpose',
        },
      ],
      status: { checked: false, source: 'none', lists: [] },
    };
  const r = await verifyStatusAsync([doc], given.lists, { ...options, head: given.head });
  const lists = r.lists
    .filter((c) => LIST_LEVEL.has(c.id))
    .map((c) => (c.valid === false ? { ...c, valid: null, why: `status unknown: ${c.why ?? c.what}` } : c));
  const own = r.credentials[0];
  const verdicts = own?.verdicts ?? [];
  const checks = [...lists, ...(own?.checks ?? [])];
  return {
    checks,
    status: {
      checked: verdicts.length > 0 && verdicts.every((v) => v.state === 'clear' || v.state === 'set'),
      source: 'node',
      lists: verdicts.flatMap((v) => (v.asOf ? [{ purpose: v.purpose, ...(v.version !== undefined ? { version: v.version } : {}), at: v.asOf }] : [])),
    },
  };
}
