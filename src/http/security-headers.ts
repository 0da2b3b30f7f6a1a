// The security headers of every answer (PROTOCOL 11), as helmet computes them for the node's
// policy: helmet runs once, at start, and its headers are set on each response from that list.
// (@fastify/helmet rebuilt helmet's middleware, CSP parsing included, on every request: about
// 5% of a plain read's CPU.) Set on the raw response, so hijacked answers (the MCP endpoint, the
// log's event stream) carry them too. A route called in-process for an MCP tool (inner-call.ts)
// answers no browser, and its headers go nowhere: it gets none.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { isInnerCall } from './inner-call.js';

/** The headers helmet sets for these options, in its order. */
export function helmetHeaders(options: HelmetOptions): Array<[string, string]> {
  const headers = new Map<string, string>();
  const res = {
    setHeader: (name: string, value: unknown) => headers.set(name, String(value)),
    removeHeader: (name: string) => headers.delete(name),
  };
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
  });
  return [...headers];
}

/** Sets them on every answer, first thing (before the caller hook, whose 401 and 429 carry them too). */
export function registerSecurityHeaders(app: FastifyInstance, options: HelmetOptions) {
  const headers = helmetHeaders(options);
  app.addHook('onRequest', (request, reply, done) => {
    if (!isInnerCall(request)) for (const [name, value] of headers) reply.raw.setHeader(name, value);
    done();
  });
}
