// Request bodies (PROTOCOL 1.1): one JSON parser for every route, and what each route's body
// may hold. Every content type is read as JSON: an empty body is "no body" (register needs
// none); proto poisoning is refused; `curl -X POST -d ''` labels an empty body as a form, and
// agents often send JSON as text/plain, so anything that is not JSON is 400 invalid_json.
// Every body is strict JSON, as the offline verifier reads signed documents: UTF-8 (never a
// U+FFFD silently put in place of bad bytes), no duplicate key, no lone surrogate. What the
// node accepts it may sign, hash (JCS is defined on I-JSON only, RFC 8785) and append to its
// log, and every independent verifier must read it the same way.
//
// Each route's body is bounded in bytes and in members (object members and array elements),
// both derived from its schema when the route is declared (src/core/body-bounds.ts), and
// counted before anything builds the body: fastify stops reading at the route's byte limit,
// and one pass over the text counts members and depth before JSON.parse, the strict scan,
// validation and the idempotency fingerprint each walk every value. A body of one object with
// 90,000 keys cost the node about 14 times what the same bytes as one string cost, on any
// route, from anyone holding a token (issue 30).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import {
  BODY_SLACK,
  decodeUtf8Strict,
  jsonShape,
  MAX_JSON_DEPTH,
  MIN_BODY_BYTES,
  routeBodyBounds,
  schemaBounds,
  ServiceError,
  strictJsonProblem,
  type Bounds,
} from '../core/index.js';
import { bodyTooLarge, tooManyMembers } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * What bounds this route's body where its schema leaves a part free-form: `shape`, a schema
     * to derive the bounds from in place of the body schema (the one the domain checks that
     * part with); `extra`, members and bytes added to what the schema derives (the keys of one
     * object stay as derived); `anyRoute`, as much as the largest route takes (the MCP
     * endpoint, whose calls carry any tool's body).
     */
    body?: { shape?: unknown; extra?: Pick<Bounds, 'members' | 'bytes'>; anyRoute?: true };
    /** The bounds of this route's body, set when the route is declared (registerBodies). */
    bodyBounds?: Bounds;
  }
}

/** A route that declares no body (withdraw) still gets one read: this much. */
export const NO_BODY: Bounds = { members: BODY_SLACK.members, keys: BODY_SLACK.keys, bytes: MIN_BODY_BYTES };

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The 400 of a body that parses but is not strict JSON (PROTOCOL 1.1). */
const invalidJson = (why: string) =>
  new ServiceError('invalid_json', `The body is not strict JSON: ${why}.`, {
    hint: 'Send UTF-8 JSON (I-JSON, RFC 7493): no duplicate keys in an object, no lone surrogates (\\ud800-\\udfff not in a pair).',
  });

/** The bounds of the route a request reached. */
export const bodyBoundsOf = (request: FastifyRequest): Bounds => request.routeOptions.config?.bodyBounds ?? NO_BODY;

function parseJsonBody(request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) {
  // A path no route serves answers 404 whatever its body: nothing reads it.
  if (request.is404) return done(null, undefined);
  const bounds = bodyBoundsOf(request);
  // fastify stopped reading at the route's bodyLimit; a route without a declared body is read
  // up to the node's, and refused here.
  if (body.length > bounds.bytes) return done(bodyTooLarge(bounds.bytes), undefined);
  const text = typeof body === 'string' ? body : decodeUtf8Strict(body);
  if (text === undefined) return done(invalidJson('its bytes are not UTF-8'), undefined);
  if (text.trim() === '') return done(null, undefined);
  // Refused before parsing: what walks a parsed body recursively (the idempotency hash,
  // validation) would overflow the stack on thousands of levels, and every member costs each
  // reader that walks it.
  const shape = jsonShape(text, { members: bounds.members, keys: bounds.keys });
  if (shape.depth > MAX_JSON_DEPTH) {
    return done(
      new ServiceError('invalid_json', `The body nests deeper than ${MAX_JSON_DEPTH} levels.`, {
        hint: 'Send a flatter JSON body: no request of this node nests more than a few levels.',
      }),
      undefined,
    );
  }
  if (shape.members > bounds.members || shape.keys > bounds.keys) return done(tooManyMembers(bounds, shape.keys > bounds.keys), undefined);
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return done(
      new ServiceError('invalid_json', 'The body is not valid JSON.', { hint: 'Send a JSON body (Content-Type: application/json), or no body at all.' }),
      undefined,
    );
  }
  const problem = strictJsonProblem(text);
  if (problem) return done(invalidJson(problem), undefined);
  done(null, value);
}

/**
 * Installs the JSON parser for every content type, and bounds each route declared from now on:
 * its config gets `bodyBounds`, and its `bodyLimit` (unless it sets its own) the byte bound. A
 * route whose schema leaves its body unbounded and says nothing of it (config.body) is refused
 * at start: every body has a bound, derived or declared.
 */
export function registerBodies(app: FastifyInstance, maxBytes: number) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonBody);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, parseJsonBody);

  // The MCP endpoint's bound: the largest of every route's, updated as routes are declared
  // (read at each request, once all are).
  const largest: Bounds = { ...NO_BODY, bytes: maxBytes };
  app.addHook('onRoute', (route) => {
    if (![route.method].flat().some((m) => BODY_METHODS.has(m))) return;
    // A body the handler checks itself (recover's) is bounded by the schema it documents.
    const schema = ((route.schema as { body?: unknown } | undefined)?.body ?? route.config?.documentedBody) as { content?: unknown } | undefined;
    const declared = route.config?.body;
    // Raw bytes (the content store's upload) are counted by their handler, against their own limit.
    if (schema?.content !== undefined || (schema === undefined && !declared)) return;
    let bounds: Bounds;
    if (declared?.anyRoute) bounds = largest;
    else {
      const derived = schemaBounds(declared?.shape ?? schema);
      if (declared?.extra) {
        derived.members += declared.extra.members;
        derived.bytes += declared.extra.bytes;
      }
      if (!Number.isFinite(derived.members) || !Number.isFinite(derived.keys)) {
        throw new Error(
          `${[route.method].flat().join(',')} ${route.url}: its body schema leaves the number of members unbounded (an array without ` +
            `maxItems, a free-form value, a map without maxProperties); bound it, or declare config.body (src/http-kit/bodies.ts)`,
        );
      }
      bounds = routeBodyBounds(derived, maxBytes);
      largest.members = Math.max(largest.members, bounds.members);
      largest.keys = Math.max(largest.keys, bounds.keys);
    }
    // A route that sets its own byte limit (the explorer's form) keeps it, when smaller.
    if (route.bodyLimit !== undefined && route.bodyLimit < bounds.bytes) bounds = { ...bounds, bytes: route.bodyLimit };
    route.config = { ...route.config, bodyBounds: bounds };
    route.bodyLimit = bounds.bytes;
  });
}
