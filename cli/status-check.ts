// `akas verify credential --status | --status-list FILE` (PROTOCOL 8.7): the lists the
// credentials name, read from the node (the one network call the verifier makes, and only when
// asked) or from files, checked by verifier/status-list.ts; then each credential's entries.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { runNow } from '../src/core/checking.js';
import { parseStrictJson } from '../src/core/strict-json.js';
import { Checks, type Check } from '../verifier/report.js';
import type { IssuerTrust } from '../verifier/issuer-keys.js';
import { credentialStatusChecks, statusEntries, statusListChecking, type Inflate, type ReadList, type StatusReasons } from '../verifier/status-list.js';

/** node:zlib's gunzip, bounded: a list that inflates past maxBytes is refused, never held. */
export const inflateNode: Inflate = (gz, maxBytes) => new Uint8Array(gunzipSync(gz, { maxOutputLength: maxBytes }));

const FETCH_TIMEOUT_MS = 15_000;

interface VersionRecord {
  version: number;
  at: number;
  reason: string;
  changes: Array<{ index: number }>;
}

async function getJson(url: string): Promise<unknown> {
  const r = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
  if (!r.ok) throw new Error(`HTTP ${r.status}`);
  const parsed = parseStrictJson(new Uint8Array(await r.arrayBuffer()));
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.value;
}

export interface StatusInputs {
  /** Fetch each list the credentials name. */
  fetch: boolean;
  /** List credentials saved to files (offline). */
  files: string[];
  issuers: string[];
  trust?: IssuerTrust;
  at?: number;
}

export interface StatusContext {
  lists: Map<string, ReadList>;
  unreadable: Map<string, string>;
  /** The checks of the lists themselves. */
  listChecks: Check[];
  /** Those of listChecks that failed, found once. */
  failedLists?: Check[];
  reasons: StatusReasons;
}

/** Reads and checks the lists the credentials name (fetched) or the files give. */
export async function readStatusLists(credentials: unknown[], inputs: StatusInputs): Promise<StatusContext> {
  const c = new Checks();
  const lists = new Map<string, ReadList>();
  const unreadable = new Map<string, string>();
  const docs: unknown[] = [];
  for (const file of inputs.files) {
    const parsed = parseStrictJson(readFileSync(file));
    if (parsed.ok) docs.push(parsed.value);
    else c.add('status.list', 'input', 'a status list file is strict JSON', false, `${file}: ${parsed.reason}`, file);
  }
  const urls = new Set<string>();
  for (const cred of credentials)
    for (const e of statusEntries(cred))
      if (typeof (e as { statusListCredential?: unknown }).statusListCredential === 'string')
        urls.add((e as { statusListCredential: string }).statusListCredential);
  if (inputs.fetch) {
    for (const url of urls) {
      try {
        docs.push(await getJson(url));
      } catch (e) {
        unreadable.set(url, `${url}: ${(e as Error).message}`);
      }
    }
  }
  for (const doc of docs) {
    const list = runNow(statusListChecking(c, doc, { at: inputs.at, issuers: inputs.issuers, trust: inputs.trust, inflate: inflateNode }));
    if (list) lists.set(list.url, list);
    else {
      const id = (doc as { id?: unknown })?.id;
      if (typeof id === 'string') unreadable.set(id, 'the list does not verify');
    }
  }
  // Why a bit is set: the list's version records (fetched only when a bit is set, and only with --status).
  const versions = new Map<string, VersionRecord[]>();
  if (inputs.fetch) {
    for (const list of lists.values()) {
      if (!list.bits.some((b) => b !== 0)) continue;
      const records: VersionRecord[] = [];
      for (let from = 1; ; ) {
        const page = (await getJson(`${list.url}/versions?from=${from}`).catch(() => undefined)) as { versions?: VersionRecord[] } | undefined;
        if (!page?.versions?.length) break;
        records.push(...page.versions);
        from = page.versions[page.versions.length - 1].version + 1;
        if (page.versions.length < 100) break;
      }
      versions.set(list.url, records);
    }
  }
  const reasons: StatusReasons = (url, index) => {
    const last = [...(versions.get(url) ?? [])].reverse().find((v) => v.changes.some((ch) => ch.index === index));
    return last ? { reason: last.reason, at: last.at, version: last.version } : undefined;
  };
  return { lists, unreadable, listChecks: c.list, reasons };
}

/** The status checks of one credential: its entries, and the failed check of any list it names that did not verify. */
export function statusChecksOf(credential: unknown, ctx: StatusContext, subject?: string): Check[] {
  const c = new Checks();
  // Looked up only when a list failed (once per batch, not per credential, when none did).
  const failedLists = (ctx.failedLists ??= ctx.listChecks.filter((k) => k.valid === false));
  if (failedLists.length) {
    const named = new Set(statusEntries(credential).map((e) => (e as { statusListCredential?: unknown }).statusListCredential));
    for (const k of failedLists) if (named.has(k.subject)) c.list.push(k);
  }
  credentialStatusChecks(c, credential, ctx.lists, { unreadable: ctx.unreadable, reasons: ctx.reasons, subject });
  return c.list;
}
