// `akas verify serve`: the offline verifier behind a small VC-API adapter (the W3C CCG's
// VC API, "Verify Credential" and "Verify Presentation"), so the
// W3C test suites' verifier tests (docs/W3C-SUITES.md) can be pointed at akas. Loopback only,
// node:http only (it runs from the single-file verifier too):
//
// - POST /credentials/verify   {verifiableCredential, options?}
// - POST /presentations/verify {verifiablePresentation, options?: {challenge?, domain?}}
//
// 200 {verified: true, verdict: "verified", anchoredOn, status, anchored: true, unanchored: [],
// checks, warnings, errors: []} when every check that ran holds, every issuer was one the
// adapter was started pinning (--trust FILE, --issuer DID) and the status of every credential
// that names a status list was read and is clear; 400 {verified: false, verdict, ...,
// errors: [ProblemDetails]} otherwise: a check that does not hold, an unanchored verdict (no
// issuer pinned: an `UNANCHORED` problem names what to pin, issue 32), a credential revoked or
// suspended (a problem naming the purpose, the reason and the time), a status that could not be
// read (STATUS_RETRIEVAL_ERROR: status unknown is never good, PROTOCOL 8.7), a body that is not
// strict JSON with that field as an object. 404 for another path, 405 for another method, 413
// for a body over 1 MiB, 415 for a body that is not application/json. `verdict` is the
// verifier's one verdict (verifier/report.ts): verified, not verified, unanchored or status
// unknown. `checks` names every check that held; `warnings` those that could not run.
//
// Status (PROTOCOL 8.7, issue 47): the lists a credential names are fetched over HTTP(S), with
// the status head of each list's node, by cli/commands/verify/status-check.ts readStatusLists (the CLI's one
// bounded reader: cli/kit/http1.ts boundedGet, STATUS_LIST_CAPS and STATUS_HEAD_CAPS, redirects
// within the list's own origin only), and only for a credential whose proof and pinned issuer
// held: an unsigned or unpinned document sends the adapter nowhere. Any origin a credential of
// a pinned issuer names may be read (the suites name their own list URLs; the pinned issuer,
// not the caller, chose it). What was read is kept for the list's `ttl`
// (credentialSubject.ttl, ms; none, or 0: not kept), never longer than STATUS_CACHE_MAX_MS, in
// at most STATUS_CACHE_ENTRIES sets of lists; an unreadable list is never kept.
//
// Loopback is not enough on its own (issue 30): any web page the user opens can POST to
// 127.0.0.1 (a text/plain form post needs no preflight), and a page of a name rebound to
// 127.0.0.1 reaches it as its own origin. So a request whose Host is not a loopback name, or
// whose Origin is not this adapter's own, is refused with 403 before its body is read; and only
// application/json is read, which no form can send. The verifier checks each document's proofs
// against one canonical form per distinct proof context (verifier/credential.ts) and refuses a
// document of more than MAX_PROOFS_PER_DOCUMENT proofs.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseStrictJson } from '../../../src/core/strict-json.js';
import type { CredentialReport } from '../../../verifier/credential.js';
import { verifyCredential, verifyPresentation, type Check, type IssuerTrust } from '../../../verifier/index.js';
import { Checks, credentialCheckId, isStatusCheck, ownCheckId, verdictOf, type Report, type StatusSummary, type Verdict } from '../../../verifier/report.js';
import { credentialStatusChecks, statusEntries, type StatusVerdict } from '../../../verifier/status-list.js';
import { readStatusLists, type StatusContext, type StatusInputs } from './status-check.js';

export const SERVE_BODY_LIMIT = 1 << 20;

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The host name of a Host header value (`name`, `name:port`, `[v6]:port`), lower-cased; null when it is not one. */
function hostName(host: string): string | null {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}

/** Why a request may not reach the adapter (403), or null: a Host that is not loopback, an Origin that is not the adapter's own. */
export function refusedCaller(headers: IncomingMessage['headers'], port: number): string | null {
  const host = headers.host;
  const name = typeof host === 'string' ? hostName(host) : null;
  if (name === null || !LOOPBACK_NAMES.has(name))
    return `Host ${JSON.stringify(host ?? null)} is not a loopback name (127.0.0.1, localhost, [::1]): the adapter answers local clients only`;
  const origin = headers.origin;
  if (origin === undefined) return null;
  let url: URL | null = null;
  try {
    url = new URL(origin);
  } catch {
    url = null;
  }
  const own = url !== null && url.protocol === 'http:' && LOOPBACK_NAMES.has(url.hostname) && Number(url.port || 80) === port;
  return own ? null : `Origin ${JSON.stringify(origin.slice(0, 200))} is not this adapter's own: a web page may not post to it`;
}

/** Whether a Content-Type header names application/json (parameters such as charset allowed). */
const isJson = (type: string | undefined) => typeof type === 'string' && type.split(';')[0].trim().toLowerCase() === 'application/json';

export interface ServeOptions {
  port: number;
  /** Pin the issuer (with trust: the key list followed from it). */
  issuer?: string;
  trust?: IssuerTrust;
  at?: number;
  /** What the pins were, for the verdict's `anchoredOn` (the trust file, the DID); null when nothing was pinned. */
  anchoredOn?: string | null;
  /** The status cache's clock (ms); Date.now by default. Tests move it. */
  now?: () => number;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** The problem type of an unanchored verdict: the checks held, but on an issuer nobody pinned. */
export const UNANCHORED_PROBLEM = 'urn:akas:problem:unanchored';
/** The problem types of a credential whose status bit is set (no W3C error type says "revoked": it is a verdict, not a processing error). */
export const REVOKED_PROBLEM = 'urn:akas:problem:revoked';
export const SUSPENDED_PROBLEM = 'urn:akas:problem:suspended';
export const STATUS_SET_PROBLEM = 'urn:akas:problem:status-set';
/** Bitstring Status List v1.0's processing errors (§3.x). */
const STATUS_LIST_ERRORS = 'https://www.w3.org/ns/credentials/status-list#';

/** The sets of lists kept read at once (each set: the lists one credential names). */
export const STATUS_CACHE_ENTRIES = 64;
/** The longest a read list is kept, whatever its ttl says (akas's own lists say 300,000 ms). */
export const STATUS_CACHE_MAX_MS = 300_000;

/** What the status of one credential said, beside its checks: for the problems of a set bit. */
type SetBits = Map<Check, StatusVerdict>;

interface Verdicted {
  checks: Check[];
  verified: boolean;
  anchored: boolean;
  unanchored: string[];
  status: StatusSummary | null;
  set: SetBits;
}

/**
 * The status lists read, by the set of list URLs a credential names (and its issuer): each kept
 * for its lists' smallest ttl, at most STATUS_CACHE_MAX_MS, at most STATUS_CACHE_ENTRIES sets
 * (the oldest dropped first); a read in flight is shared; one that left a list unread or refused
 * is not kept, so the next request reads again.
 */
export class StatusCache {
  private readonly kept = new Map<string, { read: Promise<StatusContext>; until: number }>();
  constructor(
    private readonly now: () => number,
    private readonly inputs: Pick<StatusInputs, 'trust' | 'at'>,
  ) {}

  read(credential: unknown, issuer: string): Promise<StatusContext> {
    const urls = [...new Set(statusEntries(credential).map((e) => (isObject(e) && typeof e.statusListCredential === 'string' ? e.statusListCredential : '')))];
    const key = `${issuer}\n${urls.sort().join('\n')}`;
    const now = this.now();
    const hit = this.kept.get(key);
    if (hit && hit.until > now) return hit.read;
    this.kept.delete(key);
    const read = readStatusLists([credential], { fetch: true, files: [], issuers: [issuer], ...this.inputs });
    const entry = { read, until: Number.POSITIVE_INFINITY }; // in flight: shared until it settles
    this.kept.set(key, entry);
    while (this.kept.size > STATUS_CACHE_ENTRIES) this.kept.delete(this.kept.keys().next().value as string);
    read.then(
      (ctx) => {
        const ttl = keepFor(ctx, urls);
        if (ttl > 0) entry.until = this.now() + ttl;
        else if (this.kept.get(key) === entry) this.kept.delete(key);
      },
      () => this.kept.get(key) === entry && this.kept.delete(key),
    );
    return read;
  }
}

/** How long a read may be kept: the smallest ttl of its lists, capped; 0 when any list is missing, refused or says no ttl. */
function keepFor(ctx: StatusContext, urls: string[]): number {
  if (ctx.unreadable.size || ctx.listChecks.some((c) => c.valid === false)) return 0;
  let ttl = STATUS_CACHE_MAX_MS;
  for (const url of urls) {
    const t = ctx.ttls?.get(url);
    if (!ctx.lists.has(url) || t === undefined) return 0;
    ttl = Math.min(ttl, t);
  }
  return ttl;
}

/** The status checks of one credential in the lists read, each set bit's verdict kept beside its check. */
function statusChecks(credential: unknown, ctx: StatusContext, set: SetBits, subject?: string): Check[] {
  const c = new Checks();
  const named = new Set(statusEntries(credential).map((e) => (isObject(e) ? e.statusListCredential : undefined)));
  // The lists it names, held (named among `checks`) or refused (a failure of this credential's status).
  for (const k of ctx.listChecks) if (named.has(k.subject)) c.list.push(k);
  const start = c.list.length;
  const verdicts = credentialStatusChecks(c, credential, ctx.lists, { unreadable: ctx.unreadable, reasons: ctx.reasons, subject });
  for (const [i, v] of verdicts.entries()) if (v.state === 'set') set.set(c.list[start + i], v);
  return c.list;
}

/** The status summary of the lists read for these credentials (VerdictObject.status). */
function summaryOf(contexts: StatusContext[], checks: Check[]): StatusSummary {
  const lists = new Map<string, StatusSummary['lists'][number]>();
  for (const ctx of contexts)
    for (const l of ctx.lists.values())
      lists.set(l.url, {
        purpose: l.purpose,
        ...(l.version !== undefined ? { version: l.version } : {}),
        at: l.head ? new Date(l.head.at).toISOString() : l.validFrom,
      });
  const read = contexts.length > 0 && !checks.some((c) => c.valid === null && isStatusCheck(ownCheckId(c.id)));
  return { checked: read, source: read || contexts.length ? 'node' : 'none', lists: [...lists.values()] };
}

/**
 * Reads the status of each credential that names a status list and whose own checks held on a
 * pinned issuer (nothing is fetched for one that failed or is unanchored); its checks are
 * added to the report, named `credential.ID` when `nested` (a presentation's: PROTOCOL 8.8).
 */
async function withStatus(
  report: Report,
  credentials: Array<{ doc: unknown; report: CredentialReport; subject?: string }>,
  cache: StatusCache,
  nested = false,
): Promise<Verdicted> {
  const set: SetBits = new Map();
  const checks = [...report.checks];
  const contexts: StatusContext[] = [];
  let named = false;
  for (const { doc, report: r, subject } of credentials) {
    if (!statusEntries(doc).length) continue;
    named = true;
    if (!r.verified || !r.anchored || r.issuer === undefined) continue;
    const ctx = await cache.read(doc, r.issuer);
    contexts.push(ctx);
    for (const k of statusChecks(doc, ctx, set, subject)) {
      const check = nested ? { ...k, id: credentialCheckId(k.id) } : k;
      if (set.has(k)) set.set(check, set.get(k)!);
      checks.push(check);
    }
  }
  const verified = !checks.some((c) => c.valid === false);
  return { checks, verified, anchored: report.anchored, unanchored: report.unanchored, status: named ? summaryOf(contexts, checks) : null, set };
}

const isStatus = (c: Check) => isStatusCheck(ownCheckId(c.id));

/**
 * A VC-API answer from the verifier's checks: ProblemDetails (VC DM 2.0 §7.2) for each that failed,
 * for a status unknown, and one for an unanchored verdict.
 */
function answer(res: ServerResponse, v: Verdicted, anchoredOn: string | null) {
  const { checks, unanchored } = v;
  // A presentation's credentials' checks are named credential.*: the verdict reads their status checks as such.
  const verdict: Verdict = verdictOf({ ...v, checks: checks.map((c) => (isStatus(c) ? { ...c, id: ownCheckId(c.id) } : c)) });
  const failed = checks.filter((c) => c.valid === false);
  const unknown = checks.filter((c) => c.valid === null && isStatus(c));
  const body = {
    verified: verdict === 'verified',
    verdict,
    anchoredOn,
    status: v.status,
    anchored: v.anchored,
    unanchored,
    checks: checks.filter((c) => c.valid === true).map((c) => (c.subject ? `${c.id} (${c.subject})` : c.id)),
    warnings: checks
      .filter((c) => c.valid === null && !isStatus(c))
      .map((c) => ({ type: 'https://www.w3.org/TR/vc-data-model#VERIFICATION_NOT_PERFORMED', title: c.id, detail: c.why ?? c.what })),
    errors: [
      ...failed.map((c) => problemOf(c, v.set.get(c))),
      ...unknown.map((c) => ({
        type: `${STATUS_LIST_ERRORS}STATUS_RETRIEVAL_ERROR`,
        title: c.id,
        detail: `${c.what}: ${c.why ?? 'status unknown'} (status unknown is never good: PROTOCOL 8.7)`,
        ...(c.subject ? { subject: c.subject } : {}),
      })),
    ] as Json[],
  };
  if (verdict === 'unanchored')
    body.errors.push({
      type: UNANCHORED_PROBLEM,
      title: 'unanchored',
      detail: `the checks held, but on an issuer nobody pinned (${unanchored.join(', ')}): start akas verify serve with --trust FILE or --issuer DID`,
    });
  send(res, body.verified ? 200 : 400, body);
}

/** The ProblemDetails of a failed check; a set status bit names its purpose, the reason and the time where the list's versions say. */
function problemOf(c: Check, set: StatusVerdict | undefined): Json {
  const base: Json = { type: problemType(c), title: c.id, detail: `${c.what}: ${c.why ?? 'does not hold'}`, ...(c.subject ? { subject: c.subject } : {}) };
  if (!set) return base;
  const type = set.purpose === 'revocation' ? REVOKED_PROBLEM : set.purpose === 'suspension' ? SUSPENDED_PROBLEM : STATUS_SET_PROBLEM;
  return {
    ...base,
    type,
    statusPurpose: set.purpose,
    statusListCredential: set.list,
    statusListIndex: String(set.index),
    ...(set.reason !== undefined ? { reason: set.reason } : {}),
    ...(set.at !== undefined ? { changedAt: new Date(set.at).toISOString() } : {}),
  };
}

// The error types of VC DM 2.0 §7.2 (Problem Details), Data Integrity §4.7 and Bitstring Status List §3.
function problemType(c: Check): string {
  if (c.id === 'shape') return 'https://www.w3.org/TR/vc-data-model#PARSING_ERROR';
  if (c.id.endsWith('proof.challenge')) return 'https://w3id.org/security#INVALID_CHALLENGE_ERROR';
  if (c.id.endsWith('proof.domain')) return 'https://w3id.org/security#INVALID_DOMAIN_ERROR';
  if (isStatus(c)) {
    const named = /\((RANGE_ERROR|STATUS_LIST_LENGTH_ERROR|STATUS_VERIFICATION_ERROR)\)/.exec(c.why ?? '')?.[1];
    if (named) return `${STATUS_LIST_ERRORS}${named}`;
    if ((c.why ?? '').includes('MALFORMED_VALUE_ERROR')) return 'https://www.w3.org/TR/vc-data-model#MALFORMED_VALUE_ERROR';
    return `${STATUS_LIST_ERRORS}STATUS_VERIFICATION_ERROR`;
  }
  if (c.id.includes('proof') || c.id.includes('controller') || c.id.includes('issuer.key')) return 'https://w3id.org/security#PROOF_VERIFICATION_ERROR';
  return 'https://www.w3.org/TR/vc-data-model#MALFORMED_VALUE_ERROR';
}

const badRequest = (res: ServerResponse, detail: string) =>
  send(res, 400, {
    verified: false,
    verdict: 'not verified',
    checks: [],
    warnings: [],
    errors: [{ type: 'https://www.w3.org/TR/vc-data-model#PARSING_ERROR', title: 'invalid request', detail }],
  });

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > SERVE_BODY_LIMIT) {
        // Keep reading (and dropping) so the 413 can be answered, then close the connection.
        chunks.length = 0;
        resolve(null);
      } else chunks.push(c);
    });
    req.on('end', () => resolve(size > SERVE_BODY_LIMIT ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const kindOf = (v: unknown) => (Array.isArray(v) ? 'an array' : `a JSON ${v === null ? 'null' : typeof v}`);

/**
 * The challenge and domain a presentation's proof must carry (Data Integrity §4.4 steps 5 and
 * 6), from the request's options; a string saying why when they are given but are not strings
 * (a challenge of another type was ignored before issue 47: the proof was then never held to it).
 */
function presentationOptions(options: Json): { challenge?: string; domain?: string | string[] } | string {
  const { challenge, domain } = options;
  if (challenge !== undefined && typeof challenge !== 'string') return `options.challenge is ${kindOf(challenge)}, not a string`;
  if (domain !== undefined && typeof domain !== 'string' && !(Array.isArray(domain) && domain.length > 0 && domain.every((d) => typeof d === 'string')))
    return `options.domain is ${kindOf(domain)}, not a string or a non-empty array of strings`;
  return { challenge, domain: domain as string | string[] | undefined };
}

/** Starts the adapter on 127.0.0.1; answers its URL and a stop function. */
export async function serveVerifier(opts: ServeOptions): Promise<{ url: string; close(): Promise<void> }> {
  let port = 0;
  const cache = new StatusCache(opts.now ?? Date.now, { trust: opts.trust, at: opts.at });
  const anchoredOn = opts.anchoredOn ?? null;
  const server = createServer(async (req, res) => {
    try {
      const refused = refusedCaller(req.headers, port);
      if (refused) return send(res, 403, { errors: [{ type: 'about:blank', title: 'forbidden', detail: refused }] }, { connection: 'close' });
      const path = (req.url ?? '/').split('?')[0];
      const route = path === '/credentials/verify' ? 'verifiableCredential' : path === '/presentations/verify' ? 'verifiablePresentation' : null;
      if (!route) return send(res, 404, { errors: [{ type: 'about:blank', title: 'not found', detail: 'POST /credentials/verify or /presentations/verify' }] });
      if (req.method !== 'POST')
        return send(res, 405, { errors: [{ type: 'about:blank', title: 'method not allowed', detail: 'POST only' }] }, { allow: 'POST' });
      if (!isJson(req.headers['content-type'])) {
        const got = req.headers['content-type'] === undefined ? 'no Content-Type' : `Content-Type ${JSON.stringify(req.headers['content-type'].slice(0, 100))}`;
        return send(
          res,
          415,
          { errors: [{ type: 'about:blank', title: 'unsupported media type', detail: `the body must be Content-Type: application/json, not ${got}` }] },
          { connection: 'close' },
        );
      }
      const bytes = await readBody(req);
      if (bytes === null)
        return send(
          res,
          413,
          { errors: [{ type: 'about:blank', title: 'too large', detail: `bodies are at most ${SERVE_BODY_LIMIT} bytes` }] },
          { connection: 'close' },
        );
      const parsed = parseStrictJson(bytes);
      if (!parsed.ok) return badRequest(res, `the body is not strict JSON: ${parsed.reason}`);
      const body = parsed.value;
      if (!isObject(body) || body[route] === undefined) return badRequest(res, `the body is not {${route}, options}`);
      // The document itself, never a string holding one (the verifier reads a string as a file's text).
      const doc = body[route];
      if (!isObject(doc)) return badRequest(res, `${route} is ${kindOf(doc)}, not a JSON object`);
      if (body.options !== undefined && !isObject(body.options)) return badRequest(res, `options is ${kindOf(body.options)}, not a JSON object`);
      const options = isObject(body.options) ? body.options : {};
      const common = { at: opts.at, issuer: opts.issuer, trust: opts.trust };
      if (route === 'verifiableCredential') {
        const r = verifyCredential(doc, common);
        return answer(res, await withStatus(r, [{ doc, report: r }], cache), anchoredOn);
      }
      const asked = presentationOptions(options);
      if (typeof asked === 'string') return badRequest(res, asked);
      const r = verifyPresentation(doc, { ...common, ...asked });
      // The credentials carried, each beside its report (the verifier reports the objects among them, in order).
      const carried = (Array.isArray(doc.verifiableCredential) ? doc.verifiableCredential : [doc.verifiableCredential])
        .map((vc, i) => ({ vc, i }))
        .filter((x) => isObject(x.vc));
      const credentials = carried.map((x, j) => ({ doc: x.vc, report: r.credentials[j], subject: `verifiableCredential[${x.i}]` })).filter((x) => x.report);
      return answer(res, await withStatus(r, credentials, cache, true), anchoredOn);
    } catch (e) {
      send(res, 500, { errors: [{ type: 'about:blank', title: 'internal error', detail: (e as Error).message }] });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
