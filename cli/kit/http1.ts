// One HTTP/1.1 exchange over a plain TCP socket (or a TLS one for https://): the CLI's JSON
// calls to a node, and every read it makes on a node's or a credential's word (tiles,
// checkpoints, status lists), each within caps on its bytes and its time.
//
// Why not node:http: a short CLI process pays for it cold. Loading node:http and running
// its client path once costs about 12 ms here against 6 ms for node:net and this file, and
// `akas me` is budgeted at 1.5 times `node -e 0` (bench/coldstart.ts prints both paths).
// The exchange is the simplest HTTP/1.1 has: one request with `Connection: close`, the
// whole answer read until the node closes, then parsed per RFC 9112 (status line, header
// fields, a body framed by Transfer-Encoding: chunked, by Content-Length, or by the close).
// node:tls is loaded only for an https:// URL (and node:zlib only for a gzip answer).
//
// Caps (FetchCaps): the answer's bytes, the time until its head is in (connect included) and
// the time until all of it is in; a read on someone's word (boundedGet) also follows at most
// MAX_REDIRECTS redirects, all to its own origin: one to another origin is refused, never
// followed (a credential or a node must not send the reader to fetch from a third party).
import { connect, isIP, type Socket } from 'node:net';

export interface Http1Response {
  status: number;
  /** Header fields by lowercase name; repeated fields joined with ', '. */
  headers: Map<string, string>;
  body: Buffer;
}

/** What one read may cost: its body's bytes (once gzip is undone), and its time. */
export interface FetchCaps {
  /** Bytes of the body; an answer over it is refused (FetchError too_large), never held. */
  maxBytes: number;
  /** ms from the request's start until the status line and header fields are in (connect included). */
  headersMs: number;
  /** ms from the request's start until the whole answer is in. */
  totalMs: number;
}

/** Answers larger than this are refused rather than held (a CLI answer is a JSON document). */
export const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/** The caps of the CLI's JSON calls to a node (cli/kit/client.ts): 256 MiB, a head within 60 s, the whole within 5 minutes. */
export const JSON_ANSWER_CAPS: FetchCaps = { maxBytes: MAX_RESPONSE_BYTES, headersMs: 60_000, totalMs: 300_000 };

/** Bytes of an answer's status line and header fields (1xx interim answers included). */
export const MAX_HEAD_BYTES = 64 * 1024;

/** Redirects boundedGet follows, each to the origin first asked (RFC 9110 15.4). */
export const MAX_REDIRECTS = 3;

/** The framing a body's bytes may come with on the wire beyond its cap (chunk sizes, gzip's header and trailer). */
const FRAMING_SLACK = 64 * 1024;

export type FetchProblem = 'timeout' | 'too_large' | 'redirect_refused' | 'too_many_redirects' | 'bad_encoding';

/**
 * A read refused by its caps. Told apart by name, not instanceof: the bundle may carry this
 * class in more than one lazily loaded chunk (scripts/bundle.mjs).
 */
export class FetchError extends Error {
  constructor(
    readonly code: FetchProblem,
    readonly url: string,
    message: string,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

export const isFetchError = (e: unknown): e is FetchError => e instanceof Error && e.name === 'FetchError' && typeof (e as FetchError).code === 'string';

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The request bytes; throws on a header that could split the request (CR, LF or NUL in it). */
export function formatRequest(url: URL, method: string, headers: Record<string, string>, body?: Buffer): Buffer {
  if (!TOKEN.test(method)) throw new TypeError(`not an HTTP method: ${method}`);
  const lines = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'host' || lower === 'connection' || lower === 'content-length') continue;
    if (!TOKEN.test(name) || /[\r\n\0]/.test(value)) throw new TypeError(`header ${JSON.stringify(name)} cannot be sent as it is`);
    lines.push(`${name}: ${value}`);
  }
  if (body !== undefined) lines.push(`Content-Length: ${body.length}`);
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
  return body ? Buffer.concat([head, body]) : head;
}

/** Decodes a chunked body (RFC 9112 7.1); throws on a malformed or truncated one. */
export function decodeChunked(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at, 'latin1');
    if (eol < 0) throw new Error('truncated chunked body');
    const sizeText = data.toString('latin1', at, eol).split(';')[0].trim();
    if (!/^[0-9a-fA-F]{1,12}$/.test(sizeText)) throw new Error('malformed chunk size');
    const size = parseInt(sizeText, 16);
    at = eol + 2;
    if (size === 0) return Buffer.concat(parts); // trailer fields, if any, are ignored
    if (at + size + 2 > data.length) throw new Error('truncated chunked body');
    parts.push(data.subarray(at, at + size));
    if (data[at + size] !== 0x0d || data[at + size + 1] !== 0x0a) throw new Error('malformed chunk');
    at += size + 2;
  }
}

/** Parses a whole answer (everything read until the close) into status, headers and body. */
export function parseResponse(data: Buffer, method = 'GET'): Http1Response {
  let start = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', start, 'latin1');
    if (end < 0) throw new Error('the node closed the connection before a whole answer arrived');
    const lines = data.toString('latin1', start, end).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0]);
    if (!m) throw new Error('not an HTTP/1.1 answer');
    const status = Number(m[1]);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) throw new Error('malformed header field');
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
    }
    const rest = data.subarray(end + 4);
    // 1xx answers are interim: the real one follows.
    if (status >= 100 && status < 200) {
      start = end + 4;
      continue;
    }
    if (method === 'HEAD' || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
    if (/\bchunked\b/i.test(headers.get('transfer-encoding') ?? '')) return { status, headers, body: decodeChunked(rest) };
    const length = headers.get('content-length');
    if (length !== undefined) {
      if (!/^\d+$/.test(length)) throw new Error('malformed Content-Length');
      const n = Number(length);
      if (rest.length < n) throw new Error('the node closed the connection before the whole body arrived');
      return { status, headers, body: rest.subarray(0, n) };
    }
    return { status, headers, body: rest };
  }
}

// True when the bytes so far hold the head and a Content-Length body in full.
function complete(chunks: Buffer[], size: number): boolean {
  const data = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  if (chunks.length > 1) chunks.splice(0, chunks.length, data);
  const end = data.indexOf('\r\n\r\n', 0, 'latin1');
  if (end < 0) return false;
  const head = data.toString('latin1', 0, end);
  if (!/^HTTP\/1\.[01] [2-5]\d\d/.test(head) || /\r\ntransfer-encoding:/i.test(head)) return false;
  const m = /\r\ncontent-length:[ \t]*(\d+)[ \t]*(?:\r\n|$)/i.exec(head);
  return m !== null && size >= end + 4 + Number(m[1]);
}

/** The socket of a URL: TCP for http://, TLS (the host's certificate checked, SNI sent) for https://. */
async function open(url: URL): Promise<{ socket: Socket; ready: string }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol === 'https:') {
    const tls = await import('node:tls');
    const socket = tls.connect({ host, port: Number(url.port || 443), servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'] });
    return { socket, ready: 'secureConnect' };
  }
  if (url.protocol !== 'http:') throw new TypeError(`not an http:// or https:// URL: ${url.href}`);
  return { socket: connect({ host, port: Number(url.port || 80) }), ready: 'connect' };
}

/**
 * Sends one request to an http:// or https:// URL and answers the parsed response, within
 * `caps` (the JSON calls' by default). Network errors reject with the socket's error (its
 * `code`, e.g. ECONNREFUSED); a cap reached rejects with a FetchError (timeout, too_large).
 */
export async function http1Request(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: string,
  caps: FetchCaps = JSON_ANSWER_CAPS,
): Promise<Http1Response> {
  const payload = body === undefined ? undefined : Buffer.from(body, 'utf8');
  const request = formatRequest(url, method, headers, payload);
  const { socket, ready } = await open(url);
  const what = `${method} ${url.href}`;
  // The wire may carry the head, the body's cap and its framing: no more is read.
  const wireCap = MAX_HEAD_BYTES + caps.maxBytes + FRAMING_SLACK;
  return new Promise((resolve, reject) => {
    socket.setNoDelay(true);
    const chunks: Buffer[] = [];
    let size = 0;
    let headIn = false;
    let done = false;
    // Timers of the global setTimeout (a test's fake timers drive them); neither keeps a CLI alive.
    const timers = [
      setTimeout(() => fail(new FetchError('timeout', url.href, `${what}: no answer within ${caps.headersMs / 1000} s`)), caps.headersMs),
      setTimeout(() => fail(new FetchError('timeout', url.href, `${what}: the answer did not arrive whole within ${caps.totalMs / 1000} s`)), caps.totalMs),
    ];
    for (const t of timers) t.unref?.();
    const settle = () => {
      done = true;
      for (const t of timers) clearTimeout(t);
      socket.destroy();
    };
    const fail = (e: Error) => {
      if (done) return;
      settle();
      reject(e);
    };
    const finish = () => {
      if (done) return;
      settle();
      let res: Http1Response;
      try {
        res = parseResponse(Buffer.concat(chunks), method);
      } catch (e) {
        return reject(e);
      }
      // A coded body (gzip) is checked again once inflated (boundedGet): here its framing may add to it.
      if (res.body.length > caps.maxBytes + (res.headers.has('content-encoding') ? FRAMING_SLACK : 0)) return reject(tooLarge(url, what, caps));
      resolve(res);
    };
    socket.on(ready, () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > wireCap) return fail(tooLarge(url, what, caps));
      chunks.push(chunk);
      if (!headIn) {
        headIn = chunk.includes('\r\n\r\n') || Buffer.concat(chunks).includes('\r\n\r\n');
        if (headIn) clearTimeout(timers[0]);
        else if (size > MAX_HEAD_BYTES) return fail(new FetchError('too_large', url.href, `${what}: a head of over ${MAX_HEAD_BYTES} bytes`));
      }
      // A body framed by Content-Length is whole once that many bytes are in: no need to
      // wait for the close (a node that keeps the connection open is still answered).
      if (complete(chunks, size)) finish();
    });
    socket.on('error', fail);
    socket.on('end', finish);
  });
}

const tooLarge = (url: URL, what: string, caps: FetchCaps) =>
  new FetchError('too_large', url.href, `${what}: the answer is over ${caps.maxBytes} bytes, more than it may be (refused)`);

/** The body as sent (identity) or with gzip undone, bounded by the cap; any other coding is refused. */
async function decodedBody(res: Http1Response, url: URL, caps: FetchCaps): Promise<Buffer> {
  const coding = (res.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  if (coding === 'identity' || coding === '') return res.body;
  if (coding !== 'gzip' && coding !== 'x-gzip') throw new FetchError('bad_encoding', url.href, `GET ${url.href}: a body in ${coding}, which was not asked for`);
  const { gunzipSync } = await import('node:zlib');
  try {
    return gunzipSync(res.body, { maxOutputLength: caps.maxBytes });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(url, `GET ${url.href}`, caps);
    throw new FetchError('bad_encoding', url.href, `GET ${url.href}: its gzip body does not inflate (${(e as Error).message})`);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * GET of a URL given on someone's word (a node's tiles, a credential's status list), within
 * `caps` for each request: redirects to the same origin are followed (at most MAX_REDIRECTS),
 * one to another origin is refused (FetchError redirect_refused) and nothing is asked of it;
 * a gzip body is inflated within the byte cap. Answers the final URL read.
 */
export async function boundedGet(href: string, caps: FetchCaps, headers: Record<string, string> = {}): Promise<Http1Response & { url: string }> {
  const first = new URL(href);
  let url = first;
  for (let hops = 0; ; hops++) {
    const res = await http1Request(url, 'GET', headers, undefined, caps);
    const location = res.headers.get('location');
    if (!REDIRECTS.has(res.status) || location === undefined) return { ...res, body: await decodedBody(res, url, caps), url: url.href };
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new FetchError('redirect_refused', url.href, `GET ${url.href} redirects to ${JSON.stringify(location)}, which is not a URL`);
    }
    if (next.origin !== first.origin)
      throw new FetchError('redirect_refused', url.href, `GET ${url.href} redirects to another origin (${next.origin}, not ${first.origin}): not followed`);
    if (hops >= MAX_REDIRECTS) throw new FetchError('too_many_redirects', url.href, `GET ${first.href}: more than ${MAX_REDIRECTS} redirects`);
    url = next;
  }
}

/** The shape of cli/kit/client.ts's Transport (kept structural: cli/kit/client.ts imports this file). */
type BoundedTransport = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{ status: number; headers: { get(name: string): string | null }; text(): Promise<string> }>;

/**
 * A transport for AkasClient whose every call keeps within `caps` (GETs through boundedGet:
 * same-origin redirects only), for the commands that read a node on its word for long
 * (`akas monitor`, `akas log watch`). A cap reached rejects with the FetchError, its `code`
 * what the client's unreachable message names.
 */
export function boundedTransport(caps: FetchCaps): BoundedTransport {
  return async (href, init) => {
    const res =
      init.method === 'GET' && init.body === undefined
        ? await boundedGet(href, caps, init.headers)
        : await http1Request(new URL(href), init.method, init.headers, init.body, caps);
    const text = res.body.toString('utf8');
    return { status: res.status, headers: { get: (name: string) => res.headers.get(name.toLowerCase()) ?? null }, text: async () => text };
  };
}
