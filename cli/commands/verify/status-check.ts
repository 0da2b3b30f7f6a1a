// `akas verify credential --status | --status-list FILE` (PROTOCOL 8.7): the lists the
// credentials name, read from the node (the one network call the verifier makes, and only when
// asked) or from files, checked by verifier/status-list.ts; then each credential's entries.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { runNow } from '../../../src/core/checking.js';
import { parseStrictJson } from '../../../src/core/strict-json.js';
import { Checks, type Check } from '../../../verifier/report.js';
import type { IssuerTrust } from '../../../verifier/issuer-keys.js';
import { STATUS_HEAD_PATH, STATUS_HEAD_TYPE } from '../../../src/core/status-list.js';
import {
  bindHeads,
  credentialStatusChecks,
  statusEntries,
  statusHeadChecking,
  statusListChecking,
  type Inflate,
  type ReadList,
  type StatusReasons,
} from '../../../verifier/status-list.js';
import { boundedGet, type FetchCaps } from '../../kit/index.js';

/** node:zlib's gunzip, bounded: a list that inflates past maxBytes is refused, never held. */
export const inflateNode: Inflate = (gz, maxBytes) => new Uint8Array(gunzipSync(gz, { maxOutputLength: maxBytes }));

/**
 * A status list credential: its encodedList is GZIP of at most 2 MiB of bits (verifier/status-list.ts
 * MAX_LIST_BYTES), in base64url; 4 MiB holds that with the credential around it. A head within
 * 15 s, all of it within 30 s.
 */
export const STATUS_LIST_CAPS: FetchCaps = { maxBytes: 4 * 1024 * 1024, headersMs: 15_000, totalMs: 30_000 };
/** A status head (PROTOCOL 8.7): two lists named, a few hundred bytes; 64 KiB, in the same time. */
export const STATUS_HEAD_CAPS: FetchCaps = { maxBytes: 64 * 1024, headersMs: 15_000, totalMs: 30_000 };
/** One page of a list's /versions (at most 100 versions, each its changes and reason): 8 MiB, in the same time. */
export const VERSIONS_PAGE_CAPS: FetchCaps = { maxBytes: 8 * 1024 * 1024, headersMs: 15_000, totalMs: 30_000 };
/** Versions a /versions page holds at most (PROTOCOL 8.7): a page of fewer is the last. */
const VERSIONS_PER_PAGE = 100;
/**
 * The most /versions pages read for one list, whatever the list says (10,000 versions); fewer
 * when the node says which version the list is (x-status-list-version): no page past it is read.
 * And the most bytes all pages of one list may hold.
 */
export const MAX_VERSIONS_PAGES = 100;
export const MAX_VERSIONS_BYTES = 32 * 1024 * 1024;

interface VersionRecord {
  version: number;
  at: number;
  reason: string;
  changes: Array<{ index: number }>;
}

/** GET of a URL a credential names, within `caps` (cli/kit/http1.ts boundedGet: same-origin redirects only), as strict JSON. */
async function getJson(url: string, caps: FetchCaps): Promise<{ value: unknown; headers: Map<string, string>; bytes: number }> {
  const r = await boundedGet(url, caps, { accept: 'application/json' });
  if (r.status < 200 || r.status > 299) throw new Error(`HTTP ${r.status}`);
  const parsed = parseStrictJson(new Uint8Array(r.body));
  if (!parsed.ok) throw new Error(parsed.reason);
  return { value: parsed.value, headers: r.headers, bytes: r.body.length };
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
  /** Each list's `ttl` (credentialSubject.ttl, ms), where it gives one: how long a reader may keep it (akas verify serve). */
  ttls?: Map<string, number>;
}

const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
};

const sameOrigin = (a: string, b: string) => {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
};

const isVersionRecord = (v: unknown): v is VersionRecord =>
  typeof v === 'object' &&
  v !== null &&
  Number.isSafeInteger((v as VersionRecord).version) &&
  Array.isArray((v as VersionRecord).changes) &&
  (v as VersionRecord).changes.every((ch) => typeof ch === 'object' && ch !== null);

/**
 * The version records of a list (its /versions pages, oldest first), bounded: no page past the
 * version the node says the list is (`said`), at most MAX_VERSIONS_PAGES pages and
 * MAX_VERSIONS_BYTES in all, each page going forward from the last; a page that does not, or a
 * record past `said`, ends the reading with what was read (they only give reasons).
 */
async function versionRecords(listUrl: string, said: number | undefined): Promise<VersionRecord[]> {
  const records: VersionRecord[] = [];
  const pages = Math.min(MAX_VERSIONS_PAGES, said === undefined ? MAX_VERSIONS_PAGES : Math.ceil((said + 1) / VERSIONS_PER_PAGE));
  let budget = MAX_VERSIONS_BYTES;
  let from = 0;
  for (let page = 0; page < pages && budget > 0; page++) {
    const caps = { ...VERSIONS_PAGE_CAPS, maxBytes: Math.min(VERSIONS_PAGE_CAPS.maxBytes, budget) };
    const r = await getJson(`${listUrl}/versions?from=${from}`, caps).catch(() => undefined);
    if (!r) break;
    budget -= r.bytes;
    const got = (r.value as { versions?: unknown } | null)?.versions;
    if (!Array.isArray(got) || got.length === 0 || got.length > VERSIONS_PER_PAGE) break;
    for (const v of got) {
      if (!isVersionRecord(v) || v.version < from || (said !== undefined && v.version > said)) return records;
      records.push(v);
      from = v.version + 1;
    }
    if (got.length < VERSIONS_PER_PAGE) break;
  }
  return records;
}

/** The status list URLs a credential names. */
export function statusListUrls(credential: unknown): string[] {
  const urls = new Set<string>();
  for (const e of statusEntries(credential))
    if (typeof (e as { statusListCredential?: unknown }).statusListCredential === 'string')
      urls.add((e as { statusListCredential: string }).statusListCredential);
  return [...urls];
}

/** Reads and checks the lists the credentials name (fetched) or the files give. */
export async function readStatusLists(credentials: unknown[], inputs: StatusInputs): Promise<StatusContext> {
  const c = new Checks();
  const lists = new Map<string, ReadList>();
  const unreadable = new Map<string, string>();
  const docs: unknown[] = [];
  // Status heads (PROTOCOL 8.7): saved beside the lists, or read from each list's node with --status.
  const heads: unknown[] = [];
  for (const file of inputs.files) {
    const parsed = parseStrictJson(readFileSync(file));
    if (!parsed.ok) c.add({ id: 'status.list', what: 'a status list file is strict JSON', valid: false, why: `${file}: ${parsed.reason}`, subject: file });
    else if ((parsed.value as { type?: unknown } | null)?.type === STATUS_HEAD_TYPE) heads.push(parsed.value);
    else docs.push(parsed.value);
  }
  const urls = new Set(credentials.flatMap(statusListUrls));
  // Each list fetched: the URL it was read from and the version the node says it is.
  const fetched = new Map<unknown, { url: string; version?: number }>();
  if (inputs.fetch) {
    for (const url of urls) {
      try {
        const r = await getJson(url, STATUS_LIST_CAPS);
        docs.push(r.value);
        const said = r.headers.get('x-status-list-version');
        fetched.set(r.value, { url, version: said !== undefined && /^(0|[1-9][0-9]{0,15})$/.test(said) ? Number(said) : undefined });
      } catch (e) {
        unreadable.set(url, `${url}: ${(e as Error).message}`);
      }
    }
    // One head per node the lists are on: which version of each list is the newest at its checkpoint.
    for (const origin of new Set([...urls].map(originOf).filter((o): o is string => o !== undefined))) {
      const head = await getJson(`${origin}${STATUS_HEAD_PATH}`, STATUS_HEAD_CAPS).catch(() => undefined);
      if (head) heads.push(head.value);
    }
  }
  // The version records of the lists fetched, read on their own origin only.
  const readFrom = new Map<string, { url: string; version?: number }>();
  const ttls = new Map<string, number>();
  for (const doc of docs) {
    const list = runNow(statusListChecking(c, doc, { at: inputs.at, issuers: inputs.issuers, trust: inputs.trust, inflate: inflateNode }));
    const from = fetched.get(doc);
    if (list && from && sameOrigin(list.url, from.url)) readFrom.set(list.url, from);
    const ttl = (doc as { credentialSubject?: { ttl?: unknown } }).credentialSubject?.ttl;
    if (list && typeof ttl === 'number' && Number.isSafeInteger(ttl) && ttl >= 0) ttls.set(list.url, ttl);
    if (list) lists.set(list.url, list);
    else {
      const id = (doc as { id?: unknown })?.id;
      if (typeof id === 'string') unreadable.set(id, 'the list does not verify');
    }
  }
  // A list a head names speaks as of the head; one the head does not name (an older version) is refused.
  const readHeads = heads.map((h) => runNow(statusHeadChecking(c, h, { trust: inputs.trust, issuers: inputs.issuers }))).filter((h) => h !== undefined);
  for (const [url, list] of lists) list.version ??= readFrom.get(url)?.version;
  if (readHeads.length) bindHeads(c, lists, readHeads);
  // Why a bit is set: the list's version records (fetched only when a bit is set, and only with --status).
  const versions = new Map<string, VersionRecord[]>();
  for (const list of lists.values()) {
    const from = readFrom.get(list.url);
    if (from && list.bits.some((b) => b !== 0)) versions.set(list.url, await versionRecords(list.url, from.version));
  }
  const reasons: StatusReasons = (url, index) => {
    const last = [...(versions.get(url) ?? [])].reverse().find((v) => v.changes.some((ch) => ch.index === index));
    return last ? { reason: last.reason, at: last.at, version: last.version } : undefined;
  };
  return { lists, unreadable, listChecks: c.list, reasons, ttls };
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
