// What a route documents about itself (PROTOCOL 11.2): its declared schemas, plus what follows
// from its config. One function answers, for the OpenAPI document and for the test-time check of
// every answer (response-check.ts) alike, every response a route can give: its own success
// and refusal schemas, and the refusals every route of its sort shares (a Bearer route's 401, a
// rate-limited route's 429, a route with an Idempotency-Key surface's 409 ...). The codes of each
// refusal come from the one registry (src/core/errors.ts).
import type { RouteOptions } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '../core/index.js';
import { ref } from './schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The refusals this route answers beyond those its config implies (route-docs.ts), by code. */
    errors?: ErrorCode[];
    /**
     * A body the handler checks itself (with its own refusal codes, as recover's missing_fields),
     * documented but not validated by fastify.
     */
    documentedBody?: unknown;
    /** The body may be left out (register: "no body needed"); the document says so. */
    bodyOptional?: boolean;
  }
}

/** The parts of a route this module reads (fastify's RouteOptions, or what onRoute hands out). */
export type DocumentedRoute = Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config'>;

export interface DocumentedResponse {
  description: string;
  /** A JSON schema of the body, or `content` by media type (non-JSON answers). */
  schema?: Record<string, unknown>;
  content?: Record<string, { schema: unknown }>;
  /** The codes a refusal may carry. */
  codes?: ErrorCode[];
}

type RouteSchema = { body?: unknown; querystring?: unknown; params?: unknown; response?: Record<string, unknown> };

const methodsOf = (route: DocumentedRoute) => (Array.isArray(route.method) ? route.method : [route.method]).map(String);

/** Every code a route can refuse with: those its config and schemas imply, and those it declares. */
export function routeErrorCodes(route: DocumentedRoute): ErrorCode[] {
  const config = (route.config ?? {}) as NonNullable<RouteOptions['config']>;
  const schema = (route.schema ?? {}) as RouteSchema;
  // The HTTP layer answers these for any request, before a route runs (PROTOCOL 1.3): headers
  // too large, a request too slow, malformed HTTP or no Host, an Expect not met; and for a path with parameters, a segment
  // longer than the router takes.
  const codes = new Set<ErrorCode>(['internal_error', 'headers_too_large', 'request_timeout', 'bad_request', 'expectation_failed']);
  // A write while the storage fails (a full disk, a database gone) is refused with 503; on a
  // shared database a read, or drawing a token, needs the database too (PROTOCOL 13).
  codes.add('storage_unavailable');
  // A request that reaches a node once it has begun to close (closing.ts).
  codes.add('shutting_down');
  if (/[:*]/.test(route.url ?? '')) codes.add('uri_too_long');
  // fastify parses a DELETE's body as well, so it can be refused the same ways.
  const takesBody = methodsOf(route).some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH' || m === 'DELETE');
  const binaryBody = (schema.body as { content?: unknown } | undefined)?.content !== undefined;
  if ((schema.body && !binaryBody) || schema.querystring || schema.params) codes.add('validation_failed');
  if (takesBody && !binaryBody) {
    codes.add('invalid_json');
    codes.add('body_too_large');
    codes.add('too_many_members');
  }
  const auth = config.auth ?? 'none';
  if (auth !== 'none') {
    codes.add('unauthorized');
    codes.add('key_rotated');
    if (!config.banExempt) codes.add('banned');
  }
  codes.add('rate_limited');
  if (config.idempotency) {
    codes.add('invalid_idempotency_key');
    codes.add('idempotency_conflict');
  }
  for (const c of config.errors ?? []) codes.add(c);
  return [...codes];
}

/** The schema of a refusal with these codes under one status. */
function errorSchema(status: number, codes: ErrorCode[]): Record<string, unknown> {
  if (status === 401) return ref('AgentOrientation');
  if (status === 429) return ref('Problem');
  const variants: Record<string, unknown>[] = [];
  if (codes.includes('validation_failed')) variants.push(ref('ValidationError'));
  if (codes.includes('id_conflict')) variants.push(ref('IdConflict'));
  // The general envelope, with its code narrowed to those of this status on this route.
  variants.push({ allOf: [ref('ErrorEnvelope'), { type: 'object', properties: { code: { enum: codes } } }] });
  return variants.length === 1 ? variants[0] : { anyOf: variants };
}

/**
 * Every response of a route by status: the route's own `schema.response` entries (success
 * answers, and refusals it describes itself), and one entry per status of its refusal codes.
 */
export function documentedResponses(route: DocumentedRoute): Record<string, DocumentedResponse> {
  const schema = (route.schema ?? {}) as RouteSchema;
  const out: Record<string, DocumentedResponse> = {};
  for (const [status, s] of Object.entries(schema.response ?? {})) {
    const r = s as Record<string, unknown>;
    const description = String(r.description ?? (Number(status) < 400 ? 'Success.' : 'Refused.'));
    if (r.content) out[status] = { description, content: r.content as DocumentedResponse['content'] };
    else out[status] = { description, schema: r };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrorCodes(route)) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    if (out[status]) {
      out[status].codes = codes;
      out[status].description = `${out[status].description || 'Refused.'} Codes: ${codes.join(', ')}.`;
      continue;
    }
    out[status] = {
      description: codes.map((c) => `${c}: ${ERROR_CODES[c].doc}`).join(' | '),
      schema: errorSchema(status, codes),
      codes,
    };
  }
  return out;
}
