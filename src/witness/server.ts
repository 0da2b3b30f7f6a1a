// The witness over HTTP (node:http, nothing else): POST /add-checkpoint, GET /<origin
// hash>/checkpoint, and GET / (what this witness is). One prefix serves as both the
// submission and the monitoring prefix, which tlog-witness allows.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Witness, WitnessAnswer } from './witness.js';

/** Largest add-checkpoint body read: a checkpoint note (at most 1 MiB) and 63 proof lines. */
export const MAX_BODY_BYTES = (1 << 20) + 64 * 64;

function send(res: ServerResponse, a: WitnessAnswer, extra: Record<string, string> = {}) {
  res.writeHead(a.status, { 'content-type': a.contentType, 'content-length': Buffer.byteLength(a.body), 'cache-control': 'no-store', ...extra });
  res.end(a.body);
}

const plain = (status: number, body: string): WitnessAnswer => ({ status, contentType: 'text/plain; charset=utf-8', body: `${body}\n` });

/** Reads a request body up to `limit` bytes; null when it is longer. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > limit) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Routes one request to the witness; answers errors plainly, never with a stack. */
export async function handleWitnessRequest(witness: Witness, req: IncomingMessage, res: ServerResponse, onError?: (e: unknown) => void) {
  try {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/add-checkpoint') {
      // "The request MUST be an HTTP POST."
      if (req.method !== 'POST') return send(res, plain(405, 'add-checkpoint takes POST'), { allow: 'POST' });
      const body = await readBody(req, MAX_BODY_BYTES);
      if (body === null) return send(res, plain(413, 'the body is too large for a checkpoint and its proof'));
      return send(res, await witness.addCheckpoint(body));
    }
    const m = /^\/([0-9a-f]{64})\/checkpoint$/.exec(path);
    if (m) {
      // "The request MUST be an HTTP GET."
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, plain(405, 'the checkpoint takes GET'), { allow: 'GET' });
      return send(res, await witness.latest(m[1]));
    }
    if (path === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
      const s = await witness.status();
      return send(res, { status: 200, contentType: 'application/json', body: JSON.stringify(s, null, 2) + '\n' });
    }
    return send(res, plain(404, 'not found: POST /add-checkpoint, GET /<sha256 of the origin>/checkpoint, GET /'));
  } catch (e) {
    onError?.(e);
    if (!res.headersSent) send(res, plain(500, 'the witness failed; nothing was cosigned'));
    else res.destroy();
  }
}

/** Starts the witness on host:port (0 picks a free port); answers its URL and a close function. */
export async function serveWitness(
  witness: Witness,
  opts: { host: string; port: number; onError?: (e: unknown) => void },
): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const server = createServer((req, res) => void handleWitnessRequest(witness, req, res, opts.onError));
  // "Clients SHOULD use, and witnesses SHOULD support, HTTP keep-alive".
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
