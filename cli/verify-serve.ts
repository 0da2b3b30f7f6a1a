// `akas verify serve`: the offline verifier behind a small VC-API adapter (the W3C CCG's
// VC API, "Verify Credential" and "Verify Presentation"), so the
// W3C test suites' verifier tests (docs/W3C-SUITES.md) can be pointed at akas. Loopback only,
// node:http only (it runs from the single-file verifier too), nothing kept between requests:
//
// - POST /credentials/verify   {verifiableCredential, options?}
// - POST /presentations/verify {verifiablePresentation, options?: {challenge?, domain?}}
//
// 200 {verified: true, checks, warnings, errors: []} when every check that ran holds; 400
// {verified: false, checks, warnings, errors: [ProblemDetails]} when one does not, or the body
// is not strict JSON with that field; 404 for another path, 405 for another method, 413 for a
// body over 1 MiB. `checks` names every check that held; `warnings` those that could not run.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseStrictJson } from '../src/core/strict-json.js';
import { verifyCredential, verifyPresentation, type Check, type IssuerTrust } from '../verifier/index.js';

export const SERVE_BODY_LIMIT = 1 << 20;

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

/** A VC-API answer from the verifier's checks: ProblemDetails (VC DM 2.0 §7.2) for each that failed. */
function answer(res: ServerResponse, checks: Check[]) {
  const failed = checks.filter((c) => c.valid === false);
  const body = {
    verified: failed.length === 0,
    checks: checks.filter((c) => c.valid === true).map((c) => (c.subject ? `${c.id} (${c.subject})` : c.id)),
    warnings: checks.filter((c) => c.valid === null).map((c) => ({ type: 'https://www.w3.org/TR/vc-data-model#VERIFICATION_NOT_PERFORMED', title: c.id, detail: c.why ?? c.what })),
    errors: failed.map((c) => ({ type: problemType(c), title: c.id, detail: `${c.what}: ${c.why ?? 'does not hold'}`, ...(c.subject ? { subject: c.subject } : {}) })),
  };
  send(res, failed.length ? 400 : 200, body);
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
  send(res, 400, { verified: false, checks: [], warnings: [], errors: [{ type: 'https://www.w3.org/TR/vc-data-model#PARSING_ERROR', title: 'invalid request', detail }] });

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
  const server = createServer(async (req, res) => {
    try {
      const path = (req.url ?? '/').split('?')[0];
      const route = path === '/credentials/verify' ? 'verifiableCredential' : path === '/presentations/verify' ? 'verifiablePresentation' : null;
      if (!route) return send(res, 404, { errors: [{ type: 'about:blank', title: 'not found', detail: 'POST /credentials/verify or /presentations/verify' }] });
      if (req.method !== 'POST') return send(res, 405, { errors: [{ type: 'about:blank', title: 'method not allowed', detail: 'POST only' }] }, { allow: 'POST' });
      const bytes = await readBody(req);
      if (bytes === null) return send(res, 413, { errors: [{ type: 'about:blank', title: 'too large', detail: `bodies are at most ${SERVE_BODY_LIMIT} bytes` }] }, { connection: 'close' });
      const parsed = parseStrictJson(bytes);
      if (!parsed.ok) return badRequest(res, `the body is not strict JSON: ${parsed.reason}`);
      const body = parsed.value;
      if (!isObject(body) || body[route] === undefined) return badRequest(res, `the body is not {${route}, options}`);
      const options = isObject(body.options) ? body.options : {};
      const common = { at: opts.at, issuer: opts.issuer, trust: opts.trust };
      if (route === 'verifiableCredential') return answer(res, verifyCredential(body[route], common).checks);
      const challenge = typeof options.challenge === 'string' ? options.challenge : undefined;
      const domain = typeof options.domain === 'string' || Array.isArray(options.domain) ? (options.domain as string | string[]) : undefined;
      return answer(res, verifyPresentation(body[route], { ...common, challenge, domain }).checks);
    } catch (e) {
      send(res, 500, { errors: [{ type: 'about:blank', title: 'internal error', detail: (e as Error).message }] });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
