// A route called in-process on behalf of a request that already drew its token: an MCP tool call
// runs its route this way (PROTOCOL 12.3). The call goes through fastify's own routing
// (`app.routing`, the function the HTTP server calls for every request): the route's hooks (auth,
// bans, idempotency, security headers), its schema validation, handler, error handler, serializer
// and onSend/onResponse hooks all run as over HTTP, so a tool answers what the route answers.
//
// Why not app.inject: light-my-request builds a full http.ServerResponse on a mock socket,
// validates its options, renders the header block and copies headers and payload several times:
// a small read took about 90 µs in-process that way, about 20 µs through routing with this
// minimal request and response (bench/mcp.ts measures the whole tool call). They implement what fastify uses of node's IncomingMessage and
// ServerResponse for a JSON route: headers, method, url, socket address, a body read by 'data'
// and 'end' events; writeHead, setHeader and friends, write/end and 'finish'.
//
// An inner call is recognised by its raw request being an InnerRequest, an object no socket
// can produce: no request from outside can pass for one (it draws no second token: caller.ts).
import { EventEmitter } from 'node:events';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The fake socket: where fastify reads the client address and TLS from. */
class InnerSocket extends EventEmitter {
  readonly remotePort = 0;
  constructor(
    readonly remoteAddress: string,
    readonly encrypted: boolean,
  ) {
    super();
  }
}

class InnerRequest extends EventEmitter {
  readonly httpVersion = '1.1';
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  readonly aborted = false;
  readonly complete = true;
  readonly destroyed = false;
  readonly socket: InnerSocket;
  constructor(
    readonly method: string,
    public url: string,
    readonly headers: Record<string, string>,
    ip: string,
    encrypted: boolean,
    private body: Buffer | undefined,
  ) {
    super();
    this.socket = new InnerSocket(ip, encrypted);
  }
  /** Older readers (proxy-addr) look here. */
  get connection() {
    return this.socket;
  }
  /** fastify's body reader attaches 'data' and 'end' listeners, then resumes the stream. */
  resume() {
    const body = this.body;
    this.body = undefined;
    process.nextTick(() => {
      if (body !== undefined && body.length > 0) this.emit('data', body);
      this.emit('end');
    });
    return this;
  }
  pause() {
    return this;
  }
  setEncoding() {
    return this;
  }
}

export interface InnerResponse {
  statusCode: number;
  headers: Record<string, number | string | string[]>;
  body: string;
}

class InnerServerResponse extends EventEmitter {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  writableLength = 0;
  private readonly head: Record<string, number | string | string[]> = {};
  private readonly chunks: Array<string | Buffer> = [];
  constructor(private readonly settle: (res: InnerResponse | Error) => void) {
    super();
  }
  setHeader(name: string, value: number | string | string[]) {
    this.head[name.toLowerCase()] = value;
    return this;
  }
  getHeader(name: string) {
    return this.head[name.toLowerCase()];
  }
  getHeaders() {
    return { ...this.head };
  }
  getHeaderNames() {
    return Object.keys(this.head);
  }
  hasHeader(name: string) {
    return name.toLowerCase() in this.head;
  }
  removeHeader(name: string) {
    delete this.head[name.toLowerCase()];
  }
  writeHead(statusCode: number, headers?: Record<string, number | string | string[] | undefined>) {
    if (this.headersSent) throw Object.assign(new Error('Cannot write headers after they are sent'), { code: 'ERR_HTTP_HEADERS_SENT' });
    this.statusCode = statusCode;
    if (headers) for (const name of Object.keys(headers)) if (headers[name] !== undefined) this.head[name.toLowerCase()] = headers[name]!;
    this.headersSent = true;
    return this;
  }
  write(chunk: string | Buffer) {
    this.headersSent = true;
    this.chunks.push(chunk);
    return true;
  }
  end(chunk?: string | Buffer | null) {
    if (this.writableEnded) return this;
    if (chunk !== undefined && chunk !== null) this.chunks.push(chunk);
    this.headersSent = true;
    this.writableEnded = true;
    const body =
      this.chunks.length === 1 && typeof this.chunks[0] === 'string'
        ? this.chunks[0]
        : Buffer.concat(this.chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))).toString('utf8');
    this.settle({ statusCode: this.statusCode, headers: this.head, body });
    // As node does, 'finish' (fastify's onResponse hooks) comes after end() has returned.
    process.nextTick(() => {
      this.writableFinished = true;
      this.emit('finish');
    });
    return this;
  }
  destroy(error?: Error) {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.settle(error ?? new Error('The route destroyed its response before answering.'));
    process.nextTick(() => this.emit('close'));
    return this;
  }
}

export interface InnerCall {
  method: 'GET' | 'POST';
  /** Path and query string. */
  url: string;
  /** Request headers, lowercase names. */
  headers: Record<string, string>;
  /** The client address the route sees (request.ip). */
  ip: string;
  /** Whether the call stands for a TLS request (request.protocol). */
  encrypted?: boolean;
  /** A JSON body (sent with its content-type and content-length). */
  payload?: string;
}

/** Runs one route of app in-process, through fastify's routing, and answers what it sent. */
export function innerCall(app: FastifyInstance, call: InnerCall): Promise<InnerResponse> {
  const headers = { ...call.headers };
  let body: Buffer | undefined;
  if (call.payload !== undefined) {
    body = Buffer.from(call.payload);
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(body.length);
  }
  return new Promise((resolve, reject) => {
    const req = new InnerRequest(call.method, call.url, headers, call.ip, call.encrypted ?? false, body);
    let settled = false;
    const res = new InnerServerResponse((out) => {
      if (settled) return;
      settled = true;
      if (out instanceof Error) reject(out);
      else resolve(out);
    });
    app.routing(req as never, res as never);
  });
}

/** True for a request made in-process by innerCall. */
export const isInnerCall = (request: FastifyRequest) => request.raw instanceof InnerRequest;
