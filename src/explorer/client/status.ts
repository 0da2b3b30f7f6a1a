// The status of each credential a page shows (PROTOCOL 8.7; issue 32, 4), read in this browser:
// the status lists its credentialStatus entries name, fetched from this node (the path of the
// URL the entry names, on this origin: the list's own id must then be that URL), checked by the
// verifier's browser build under the issuer this browser pinned (verifyStatus: the list's
// proof, type, purpose and length; GZIP by the platform's DecompressionStream). Each credential
// says "not revoked · not suspended", "revoked: reason, time", "suspended: …", or "status
// unknown: why" — never good when a list could not be read or does not verify. The reason and
// time of a bit set come from the list's versions (GET {list}/versions), read only then.
import type * as VerifierModule from '../../../verifier/browser.js';
import { $$, getJson, type Json } from './dom.js';
import type { Keys } from './keys.js';
import { setState, type Check, type State } from './results.js';
import type { Verifier } from './verifier.js';

type Verdict = VerifierModule.StatusReport['credentials'][number]['verdicts'][number];

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

const when = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
const word = (purpose: string) => (purpose === 'revocation' ? 'revoked' : purpose === 'suspension' ? 'suspended' : `set for ${purpose}`);

/** What one credential's entries say, as a badge's state and text. */
function shown(verdicts: Verdict[], checks: Check[]): { state: State; text: string } {
  const set = verdicts.filter((v) => v.state === 'set');
  if (set.length)
    return {
      state: 'bad',
      text: set.map((v) => `${word(v.purpose)}: ${v.reason ?? 'reason not given'}, ${v.at ? when(v.at) : `at or before ${v.asOf}`}`).join(' · '),
    };
  const broken = checks.find((c) => c.valid === false);
  if (broken) return { state: 'bad', text: `status not readable: ${broken.why ?? broken.what}` };
  const unknown = checks.find((c) => c.valid === null);
  if (unknown || !verdicts.length)
    return { state: 'unchecked', text: (unknown?.why ?? 'status unknown').replace(/^(status unknown)?:?\s*/, 'status unknown: ') };
  const lists = verdicts.map((v) => (v.version !== undefined ? `${v.purpose} list version ${v.version}` : `${v.purpose} list of ${v.asOf}`)).join(', ');
  return { state: 'ok', text: `${verdicts.map((v) => `not ${word(v.purpose)}`).join(' · ')} (${lists}, checked in your browser)` };
}

/**
 * The status of credentials in the lists their entries name, read from this node and checked by
 * the verifier (under options.trust, or by the issuers named), with the reason and time of a bit
 * set read from the list's versions.
 */
export async function readStatus(V: Verifier, credentials: Json[], options: VerifierModule.StatusOptions): Promise<VerifierModule.StatusReport> {
  const urls = new Set<string>();
  for (const c of credentials) {
    const s = c.credentialStatus;
    for (const e of (Array.isArray(s) ? s : s === undefined ? [] : [s]) as Json[])
      if (typeof e?.statusListCredential === 'string') urls.add(e.statusListCredential);
  }
  const [head, ...lists] = await Promise.all([fetchHead(), ...[...urls].map(fetchList)]);
  options = head === undefined ? options : { ...options, head };
  const report = await V.verifyStatus(credentials, lists, options);
  if (!report.needsVersions.length) return report;
  // A bit is set: the list's versions name the reason and the time; checked again with them.
  for (const l of lists) if (report.needsVersions.includes(l.url)) l.versions = await versionsOf(l.url);
  return V.verifyStatus(credentials, lists, options);
}

/**
 * The status of the credentials given (a proposal's, from its bundle) on each badge
 * [data-verify-status=JUDGMENT_ID]; answers their checks (for the page's count), or undefined
 * when the page shows no credential's status.
 */
export async function checkStatus(V: Verifier, keys: Keys, credentials: Json[]): Promise<Check[] | undefined> {
  const targets = $$('[data-verify-status]');
  if (!targets.length) return undefined;
  for (const e of targets) setState(e, 'pending', 'reading the status lists…');
  try {
    const report = await readStatus(V, credentials, { trust: await V.trustIssuerKeys(keys.issuer, keys.issuerKeys) });
    for (const e of targets) {
      const mine = report.credentials.find((c) => c.subject === e.dataset.verifyStatus);
      if (!mine) {
        setState(e, 'unchecked', 'status unknown: the credential is not in the bundle');
        continue;
      }
      const v = shown(mine.verdicts, mine.checks);
      const listProblems = report.lists.filter((c) => c.valid === false).map((c) => `✗ ${c.subject ?? ''}: ${c.why ?? c.what}`);
      const detail = [...mine.checks.map((c) => `${c.valid === true ? '✓' : c.valid === false ? '✗' : '–'} ${c.what}: ${c.why ?? ''}`), ...listProblems];
      setState(e, v.state, v.text, detail.join('\n'));
    }
    return report.credentials.flatMap((c) => c.checks);
  } catch (err) {
    for (const e of targets) setState(e, 'unchecked', `status unknown: ${(err as Error).message}`);
    return undefined;
  }
}
