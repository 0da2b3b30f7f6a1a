// One HTTP/1.1 exchange over a plain TCP socket: the CLI's JSON calls to an http:// node.
//
// Why not node:http: a short CLI process pays for it cold. Loading node:http and running
// its client path once costs about 12 ms here against 6 ms for node:net and this file, and
// `akas me` is budgeted at 1.5 times `node -e 0` (bench/coldstart.ts prints both paths).
// The exchange is the simplest HTTP/1.1 has: one request with `Connection: close`, the
// whole answer read until the node closes, then parsed per RFC 9112 (status line, header
// fields, a body framed by Transfer-Encoding: chunked, by Content-Length, or by the close).
// https:// nodes still go through node:https (cli/client.ts).
import { connect } from 'node:net';

export interface Http1Response {
  status: number;
  /** Header fields by lowercase name; repeated fields joined with ', '. */
  headers: Map<string, string>;
  body: Buffer;
}

/** Answers larger than this are refused rather than held (a CLI answer is a JSON document). */
export const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

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

/** Sends one request to an http:// URL and answers the parsed response. Network errors reject with the socket's error (its `code`, e.g. ECONNREFUSED). */
export function http1Request(url: URL, method: string, headers: Record<string, string>, body?: string): Promise<Http1Response> {
  const payload = body === undefined ? undefined : Buffer.from(body, 'utf8');
  const request = formatRequest(url, method, headers, payload);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 80) });
    socket.setNoDelay(true);
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      try {
        resolve(parseResponse(Buffer.concat(chunks), method));
      } catch (e) {
        reject(e);
      }
    };
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) return socket.destroy(new Error(`the answer is over ${MAX_RESPONSE_BYTES} bytes`));
      chunks.push(chunk);
      // A body framed by Content-Length is whole once that many bytes are in: no need to
      // wait for the close (a node that keeps the connection open is still answered).
      if (complete(chunks, size)) finish();
    });
    socket.on('error', (e) => {
      if (done) return;
      done = true;
      reject(e);
    });
    socket.on('end', finish);
  });
}
