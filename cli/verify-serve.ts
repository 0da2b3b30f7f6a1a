// `akas verify serve`: the offline verifier behind a small VC-API adapter (the W3C CCG's
// VC API, "Verify Credential" and "Verify Presentation"), so the
// W3C test suites' verifier tests (docs/W3C-SUITES.md) can be pointed at akas. Loopback only,
// node:http only (it runs from the single-file verifier too), nothing kept between requests:
//
// - POST /credentials/verify   {verifiableCredential, options?}
// - POST /presentations/verify {verifiablePresentation, options?: {challenge?, domain?}}
//
// 200 {verified: true, anchored: true, unanchored: [], checks, warnings, errors: []} when every
// check that ran holds and every issuer was one the adapter was started pinning (--trust FILE,
// --issuer DID); 400 {verified: false, anchored, unanchored, checks, warnings, errors:
// [ProblemDetails]} when a check does not hold, when the verdict is unanchored (no issuer
// pinned: an `UNANCHORED` problem names what to pin, issue 32; never verified: true), or the
// body is not strict JSON with that field as an object; 404 for another path, 405 for another
// method, 413 for a body over 1 MiB, 415 for a body that is not application/json. `checks`
// names every check that held; `warnings` those that could not run.
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
import { parseStrictJson } from '../src/core/strict-json.js';
import { verifyCredential, verifyPresentation, type Check, type IssuerTrust } from '../verifier/index.js';

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

/** A VC-API answer from the verifier's checks: ProblemDetails (VC DM 2.0 §7.2) for each that failed, and one for an unanchored verdict. */
function answer(res: ServerResponse, report: { checks: Check[]; unanchored: string[] }) {
  const { checks, unanchored } = report;
  const failed = checks.filter((c) => c.valid === false);
  const anchored = unanchored.length === 0;
  const body = {
    verified: failed.length === 0 && anchored,
    anchored,
    unanchored,
    checks: checks.filter((c) => c.valid === true).map((c) => (c.subject ? `${c.id} (${c.subject})` : c.id)),
    warnings: checks
      .filter((c) => c.valid === null)
      .map((c) => ({ type: 'https://www.w3.org/TR/vc-data-model#VERIFICATION_NOT_PERFORMED', title: c.id, detail: c.why ?? c.what })),
    errors: failed.map((c) => ({
      type: problemType(c),
      title: c.id,
      detail: `${c.what}: ${c.why ?? 'does not hold'}`,
      ...(c.subject ? { subject: c.subject } : {}),
    })),
  };
  if (failed.length === 0 && !anchored)
    body.errors.push({
      type: UNANCHORED_PROBLEM,
      title: 'unanchored',
      detail: `the checks held, but on an issuer nobody pinned (${unanchored.join(', ')}): start akas verify serve with --trust FILE or --issuer DID`,
    });
  send(res, body.verified ? 200 : 400, body);
}

// The error types of VC DM 2.0 §7.2 (Problem Details) and Data Integrity §4.7.
function problemType(c: Check): string {
  if (c.id === 'json' || c.id === 'shape') return 'https://www.w3.org/TR/vc-data-model#PARSING_ERROR';
  if (c.id.endsWith('proof.challenge')) return 'https://w3id.org/security#INVALID_CHALLENGE_ERROR';
  if (c.id.endsWith('proof.domain')) return 'https://w3id.org/security#INVALID_DOMAIN_ERROR';
  if (c.id.includes('proof') || c.id.includes('controller') || c.id.includes('issuer.key')) return 'https://w3id.org/security#PROOF_VERIFICATION_ERROR';
  return 'https://www.w3.org/TR/vc-data-model#MALFORMED_VALUE_ERROR';
}

const badRequest = (res: ServerResponse, detail: string) =>
  send(res, 400, {
    verified: false,
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

/** Starts the adapter on 127.0.0.1; answers its URL and a stop function. */
export async function serveVerifier(opts: ServeOptions): Promise<{ url: string; close(): Promise<void> }> {
  let port = 0;
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
      if (!isObject(body[route]))
        return badRequest(
          res,
          `${route} is ${Array.isArray(body[route]) ? 'an array' : `a JSON ${body[route] === null ? 'null' : typeof body[route]}`}, not a JSON object`,
        );
      const options = isObject(body.options) ? body.options : {};
      const common = { at: opts.at, issuer: opts.issuer, trust: opts.trust };
      if (route === 'verifiableCredential') return answer(res, verifyCredential(body[route], common));
      const challenge = typeof options.challenge === 'string' ? options.challenge : undefined;
      const domain = typeof options.domain === 'string' || Array.isArray(options.domain) ? (options.domain as string | string[]) : undefined;
      return answer(res, verifyPresentation(body[route], { ...common, challenge, domain }));
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
