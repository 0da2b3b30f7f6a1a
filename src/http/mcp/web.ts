// The SDK's web-standard face (a Request in, a Response out) on fastify's request and raw
// response, at the cost of what the SDK reads.
//
// In: fastify has parsed and bounded the body already, and the SDK takes it as `parsedBody`, in
// which case it reads no body from the Request (the transport, isLegacyRequest and
// createMcpHandler read one only when none is passed): it reads the method, the headers and, on
// the 2026-07-28 leg, the signal (which here aborts when the client hangs up). So the Request is a lightweight one, as the SDK's own Node adapter
// (@modelcontextprotocol/node's NodeStreamableHTTPServerTransport, through @hono/node-server)
// hands the transport: an object of Request's prototype answering method, url, headers and
// signal itself, and building a real (body-less) Request only if anything else is asked.
// @modelcontextprotocol/node's toWebRequest would build a full Request with its AbortSignal and
// serialize the parsed body again into a body stream nobody reads: about a seventh of the server
// CPU of an MCP ping.
//
// Out: the SDK's Response is read through its reader (cheaper than arrayBuffer()) and written
// with its Content-Length, not chunked.
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';

const kRequest = Symbol('fastify request');
const kResponse = Symbol('raw response');
const kHeaders = Symbol('headers');
const kAbort = Symbol('abort controller');
const kNative = Symbol('native request');

interface LightRequest {
  [kRequest]: FastifyRequest;
  [kResponse]: ServerResponse;
  [kHeaders]?: Headers;
  [kAbort]?: AbortController;
  [kNative]?: Request;
}

/** The headers, but none that describe a body on the wire: this Request carries none. */
function headersOf(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding' || name === 'content-encoding' || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  return headers;
}

function urlOf(request: FastifyRequest): string {
  const url = `${request.protocol}://${request.headers.host ?? 'localhost'}${request.url}`;
  return URL.canParse(url) ? url : `http://localhost${request.url.startsWith('/') ? request.url : '/'}`;
}

/** The client hanging up before the answer is out aborts the signal (the SDK tears the exchange down on it). */
function abortOf(self: LightRequest): AbortController {
  if (!self[kAbort]) {
    const controller = new AbortController();
    self[kAbort] = controller;
    const res = self[kResponse];
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
  }
  return self[kAbort];
}

function nativeOf(self: LightRequest): Request {
  const request = self[kRequest];
  self[kNative] ??= new Request(urlOf(request), { method: request.method, headers: lightHeaders(self), signal: abortOf(self).signal });
  return self[kNative];
}

const lightHeaders = (self: LightRequest) => (self[kHeaders] ??= headersOf(self[kRequest]));

// Made at the first MCP request, not when this module loads: Request is a global that Node
// makes on first read by loading its fetch (undici), about 40 ms of every node's start otherwise.
let lightPrototype: object | undefined;
const lightPrototypeOf = (): object =>
  (lightPrototype ??= Object.create(Request.prototype, {
    method: {
      get(this: LightRequest) {
        return this[kRequest].method;
      },
    },
    url: {
      get(this: LightRequest) {
        return urlOf(this[kRequest]);
      },
    },
    headers: {
      get(this: LightRequest) {
        return lightHeaders(this);
      },
    },
    signal: {
      get(this: LightRequest) {
        return abortOf(this).signal;
      },
    },
    // Anything else is the real (body-less) Request's.
    ...Object.fromEntries(
      ['body', 'bodyUsed', 'cache', 'credentials', 'destination', 'duplex', 'integrity', 'keepalive', 'mode', 'redirect', 'referrer', 'referrerPolicy'].map(
        (name) => [
          name,
          {
            get(this: LightRequest) {
              return (nativeOf(this) as unknown as Record<string, unknown>)[name];
            },
          },
        ],
      ),
    ),
    ...Object.fromEntries(
      ['arrayBuffer', 'blob', 'bytes', 'clone', 'formData', 'json', 'text'].map((name) => [
        name,
        {
          value(this: LightRequest) {
            const native = nativeOf(this) as unknown as Record<string, () => unknown>;
            return native[name]();
          },
        },
      ]),
    ),
  }));

/** The Request the SDK is given for this fastify request (its body goes as parsedBody), answered on raw. */
export function webRequestOf(request: FastifyRequest, raw: ServerResponse): Request {
  const light = Object.create(lightPrototypeOf()) as LightRequest;
  light[kRequest] = request;
  light[kResponse] = raw;
  return light as unknown as Request;
}

/** Writes the SDK's Response on the raw response: a stream piped, anything else sent whole with its length. */
export async function sendWebResponse(raw: ServerResponse, res: Response): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [k, v] of res.headers) headers[k] = v;
  if (res.body && (headers['content-type'] ?? '').includes('text/event-stream')) {
    raw.writeHead(res.status, headers);
    Readable.fromWeb(res.body as never).pipe(raw);
    return;
  }
  const chunks: Uint8Array[] = [];
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
  }
  const body = chunks.length === 1 ? Buffer.from(chunks[0].buffer, chunks[0].byteOffset, chunks[0].byteLength) : Buffer.concat(chunks);
  if (res.status !== 204 && res.status !== 304) headers['content-length'] = String(body.length);
  raw.writeHead(res.status, headers);
  raw.end(body.length ? body : undefined);
}
