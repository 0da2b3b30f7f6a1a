// The status of each credential a page shows (PROTOCOL 8.7; issues 32 and 47), read in this
// browser: every judgment credential on a page (a proposal's judgments, the judgments in a list
// of log entries, an entry's page) fetched with the node's records of its status, checked under
// the issuer this browser pinned, then the status lists its credentialStatus entries name,
// fetched from this node (the path of the URL the entry names, on this origin: the list's own id
// must then be that URL) with the node's status head, checked by the verifier's browser build
// (verifyStatus: the list's proof, type, purpose and length, the head naming its version; GZIP by
// the platform's DecompressionStream). Each credential says "active", "revoked" or "suspended"
// with the reason, time and list version (status-words.ts), or "status unknown: why" — never good
// when a list could not be read or does not verify. The Verify page reads the reason and time of
// a bit set from the list's versions (GET {list}/versions), read only then.
import type * as VerifierModule from '../../../verifier/browser.js';
import { checkedStatusWords, nodeStatusWords, type NodeStatus, type StatusState } from './status-words.js';
import { $$, getJson, type Json } from './dom.js';
import type { Keys } from './keys.js';
import { setState, type Check, type State } from './results.js';
import type { Verifier } from './verifier.js';

/** The path and query of a list's URL, asked of this origin (the page's CSP allows no other). */
const onThisOrigin = (url: string) => {
  const u = new URL(url, location.origin);
  return u.pathname + u.search;
};

async function fetchList(url: string): Promise<VerifierModule.FetchedStatusList> {
  try {
    // Revalidated, not taken from the HTTP cache: the reader asks what the status is now.
    const res = await fetch(onThisOrigin(url), { cache: 'no-cache', headers: { accept: 'application/json' } });
    if (!res.ok) return { url, error: `the node answered ${res.status}` };
    const version = res.headers.get('x-status-list-version');
    return { url, doc: await res.json(), ...(version !== null && /^\d+$/.test(version) ? { version: Number(version) } : {}) };
  } catch (err) {
    return { url, error: (err as Error).message };
  }
}

/** The node's status head (which version of each list is the newest at its checkpoint), or undefined when it cannot be read. */
async function fetchHead(): Promise<unknown> {
  try {
    const res = await fetch('/credentials/status/head', { cache: 'no-cache', headers: { accept: 'application/json' } });
    return res.ok ? await res.json() : undefined;
  } catch {
    return undefined;
  }
}

/** Every version record of a list (pages of at most 100), or none when they cannot be read (the reason is then "not given"). */
async function versionsOf(url: string): Promise<VerifierModule.StatusVersionRecord[]> {
  const out: VerifierModule.StatusVersionRecord[] = [];
  try {
    for (let from = 0; ; ) {
      const page = await getJson<{ versions?: VerifierModule.StatusVersionRecord[] }>(`${onThisOrigin(url)}/versions?from=${from}`);
      const got = page.versions ?? [];
      out.push(...got);
      if (got.length < 100) return out;
      from = got[got.length - 1].version + 1;
    }
  } catch {
    return out;
  }
}

/** What the page fetched to read the credentials' status: each list, and the node's status head. */
export interface StatusSources {
  lists: VerifierModule.FetchedStatusList[];
  head?: unknown;
}

/**
 * The status of credentials in the lists their entries name, read from this node and checked by
 * the verifier (under options.trust, or by the issuers named), with the reason and time of a bit
 * set read from the list's versions (unless `versions` is false: the page has the node's records).
 * Answers the report and what was fetched, which the verifier's verifyCredential takes as `status`.
 */
export async function readStatus(
  V: Verifier,
  credentials: Json[],
  options: VerifierModule.StatusOptions,
  versions = true,
): Promise<VerifierModule.StatusReport & { sources: StatusSources }> {
  const urls = new Set<string>();
  for (const c of credentials) {
    const s = c.credentialStatus;
    for (const e of (Array.isArray(s) ? s : s === undefined ? [] : [s]) as Json[])
      if (typeof e?.statusListCredential === 'string') urls.add(e.statusListCredential);
  }
  const [head, ...lists] = await Promise.all([fetchHead(), ...[...urls].map(fetchList)]);
  const sources: StatusSources = head === undefined ? { lists } : { lists, head };
  options = head === undefined ? options : { ...options, head };
  const report = await V.verifyStatus(credentials, lists, options);
  if (!versions || !report.needsVersions.length) return { ...report, sources };
  // A bit is set: the list's versions name the reason and the time; checked again with them.
  for (const l of lists) if (report.needsVersions.includes(l.url)) l.versions = await versionsOf(l.url);
  return { ...(await V.verifyStatus(credentials, lists, options)), sources };
}

/** A judgment credential the node serves, with its records of the credential's status (GET /explore/credentials). */
interface Served {
  judgmentId: string;
  credential: Json;
  status: NodeStatus;
}

/** The credentials of some judgments, 50 a request (the route's bound), by judgment id. */
async function servedCredentials(ids: string[]): Promise<Map<string, Served>> {
  const out = new Map<string, Served>();
  for (let i = 0; i < ids.length; i += 50) {
    const page = await getJson<{ items: Served[] }>(`/explore/credentials?ids=${ids.slice(i, i + 50).join(',')}`);
    for (const item of page.items) out.set(item.judgmentId, item);
  }
  return out;
}

const STATES: Record<StatusState, State> = { active: 'ok', revoked: 'bad', suspended: 'bad', unknown: 'unchecked' };
const mark = (c: Check) => (c.valid === true ? '✓' : c.valid === false ? '✗' : '–');

/**
 * The status of each judgment credential the page shows ([data-verify-status=JUDGMENT_ID] not
 * yet checked, under `root`): the credential as the node serves it, checked under the pinned
 * issuer, then its entries read in the lists the node serves and checked by the verifier, the
 * node's records naming the reason and time of a change. Answers the status checks (for a
 * page's count), or undefined when the page shows no credential or they could not be read.
 */
export async function checkStatus(V: Verifier, keys: Keys, root: ParentNode = document): Promise<Check[] | undefined> {
  const targets = $$('[data-verify-status]', root).filter((e) => e.dataset.state === 'off');
  if (!targets.length) return undefined;
  for (const e of targets) setState(e, 'pending', 'reading the status lists…');
  try {
    const served = await servedCredentials([...new Set(targets.map((e) => e.dataset.verifyStatus!))]);
    const trust = await V.trustIssuerKeys(keys.issuer, keys.issuerKeys);
    // A credential's status speaks for it only if it is the issuer's: its proof first (status skipped here, read below).
    const credentials = [...served.values()].map((s) => s.credential);
    const own = await Promise.all(credentials.map((c) => V.verifyCredential(c, { trust, status: 'skip' })));
    const report = await readStatus(
      V,
      credentials.filter((_, i) => own[i].verdict === 'verified'),
      { trust },
      false,
    );
    for (const e of targets) {
      const id = e.dataset.verifyStatus!;
      const item = served.get(id);
      const i = credentials.indexOf(item?.credential as Json);
      const broken = i < 0 ? undefined : own[i].checks.find((c) => c.valid === false || (c.anchor && c.valid === null));
      if (!item) setState(e, 'unchecked', `status unknown: this node serves no credential of ${id}`);
      else if (broken) setState(e, 'bad', `not verified: the credential does not hold under the pinned issuer (${broken.why ?? broken.what})`);
      else {
        const mine = report.credentials.find((c) => c.subject === id);
        const unknown = mine?.checks.find((c) => c.valid === null)?.why?.replace(/^status unknown:\s*/, '');
        const v = checkedStatusWords(mine?.verdicts ?? [], item.status, unknown);
        const detail = [
          ...(mine?.checks ?? []).map((c) => `${mark(c)} ${c.what}: ${c.why ?? ''}`),
          ...report.lists.filter((c) => c.valid === false).map((c) => `✗ ${c.subject ?? ''}: ${c.why ?? c.what}`),
          `the node's records: ${nodeStatusWords(item.status).text}`,
        ];
        setState(e, STATES[v.state], v.text, detail.join('\n'));
      }
    }
    return report.credentials.flatMap((c) => c.checks);
  } catch (err) {
    for (const e of targets) setState(e, 'unchecked', `status unknown: ${(err as Error).message}`);
    return undefined;
  }
}

let pageStatus: Promise<Check[] | undefined> | null = null;

/** The status of the credentials this page shows, checked once (the proposal's count awaits the same). */
export const statusOfPage = (V: Verifier, keys: Keys) => (pageStatus ??= checkStatus(V, keys));
