// The security headers of every answer (PROTOCOL 1.9), as helmet computes them for the node's
// policy: helmet runs once, at start, and its headers are set from that list.
//
// Two sets, by what the answer is. Nearly every answer is JSON (or bytes, or an event stream),
// which a browser never renders as a page: it needs only that no browser sniff it into HTML
// (X-Content-Type-Options: nosniff) and, were it opened as a document, that it loads nothing and
// is never framed (Content-Security-Policy: default-src 'none'; frame-ancestors 'none'), plus HSTS
// over https. The rest of helmet's headers (the page's own policy with its styles and images,
// COOP, Origin-Agent-Cluster, X-Frame-Options, Referrer-Policy, X-DNS-Prefetch-Control,
// X-Download-Options, X-Permitted-Cross-Domain-Policies, X-XSS-Protection) govern documents: they
// go on HTML answers only. Setting all eleven on every answer cost about a quarter of a plain
// read (`npm run bench -- http` prints each hook's cost per request): each header is validated,
// stored and written, and they were 500 of a JSON answer's 700 header bytes.
//
// The JSON set is set first thing (onRequest), so refusals before any route (401, 429) carry it
// too, and a route that writes its answer itself (the MCP endpoint, the log's event stream)
// hijacks through hijackWithHeaders, which moves what was set onto the raw response; an HTML
// answer gets the document set as it is sent (onSend sees its content type), but for the policy
// of a scope that set its own (the explorer's, src/explorer/index.ts). A route called in-process
// for an MCP tool (inner-call.ts) answers no browser: it gets none.
//
// They are set as fastify's reply headers, not on the raw response: a header set on the raw
// response before writeHead sends every other header of the answer down Node's "progressive"
// path (each validated again by setHeader and stored apart), which cost a plain read more than
// the headers themselves (`npm run bench -- http`).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { isInnerCall } from './inner-call.js';

/** The headers helmet sets for these options, in its order. */
export function helmetHeaders(options: HelmetOptions): Array<[string, string]> {
  const headers = new Map<string, string>();
  const res = {
    setHeader: (name: string, value: unknown) => headers.set(name.toLowerCase(), String(value)),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  };
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
  });
  return [...headers];
}

/**
 * The node's policy: its HTML pages are self-contained (inline styles, images of their own or
 * data: URLs, no scripts) and never framed; HSTS only when the node is published over https (a
 * browser ignores it over http anyway, and a local node has none). Public data is read with a
 * Bearer header, never a cookie: no ambient credential for a cross-origin read to ride on, and
 * blobs may be embedded anywhere (Cross-Origin-Resource-Policy: cross-origin).
 */
export function nodeHelmetOptions(publicUrl?: string): HelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: ["'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        baseUri: ["'none'"],
        formAction: ["'none'"],
        frameAncestors: ["'none'"],
      },
    },
    hsts: publicUrl?.startsWith('https://') ? { maxAge: 31_536_000 } : false,
    referrerPolicy: { policy: 'no-referrer' },
    frameguard: { action: 'deny' },
    crossOriginResourcePolicy: { policy: 'cross-origin' },
  };
}

/** The policy of an answer no browser renders: it loads nothing and is never framed. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** The two sets: every answer's, and the rest for HTML pages (helmet's own, CSP included). */
export function securityHeaderSets(options: HelmetOptions): { api: Array<[string, string]>; page: Array<[string, string]> } {
  const all = helmetHeaders(options);
  const hsts = all.filter(([name]) => name === 'strict-transport-security');
  const api: Array<[string, string]> = [['content-security-policy', API_CSP], ['x-content-type-options', 'nosniff'], ...hsts];
  const page = all.filter(([name]) => name !== 'x-content-type-options' && name !== 'strict-transport-security');
  return { api, page };
}

/** Sets them: the API set on every answer, first thing; the page set on HTML answers as they are sent. */
export function registerSecurityHeaders(app: FastifyInstance, options: HelmetOptions) {
  const { api, page } = securityHeaderSets(options);
  const apiHeaders = Object.fromEntries(api);
  app.addHook('onRequest', (request, reply, done) => {
    if (!isInnerCall(request)) reply.headers(apiHeaders);
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('text/html') && !isInnerCall(request)) {
      for (const [name, value] of page) {
        // A scope with a policy of its own (the explorer's pages, with their scripts) keeps it.
        if (name === 'content-security-policy' && reply.getHeader(name) !== API_CSP) continue;
        reply.header(name, value);
      }
    }
    done(null, payload);
  });
}

/**
 * reply.hijack() for a route that writes its answer on the raw response itself: the headers set
 * on the reply so far (the security headers among them) go onto the raw response first, where
 * its writeHead keeps them.
 */
export function hijackWithHeaders(reply: FastifyReply) {
  reply.hijack();
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
}
