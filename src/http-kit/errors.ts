// One error handler turns every failure into a PROTOCOL 1.3 envelope: ServiceError from the
// domain, fastify's own validation / parsing errors, and anything unexpected (a 500 that
// never leaks a stack trace; the error is logged with the request id).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { capErrors, ERROR_CODES, isServiceError, ServiceError } from '../core/index.js';
import { orientationUrls, originOf } from './urls.js';

interface AjvLikeError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

// With allErrors, a union reports each branch's failure and then its own; one line per
// distinct (field, reason) is enough for a caller.
function dedupe(items: Array<{ field: string; reason: string }>) {
  const seen = new Set<string>();
  return items.filter((i) => {
    const k = `${i.field}\u0000${i.reason}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Turns ajv errors into PROTOCOL 1.3's ValidationError items {field, reason}. */
export function validationItems(errors: AjvLikeError[], context = 'body') {
  return errors.map((e) => {
    let field = (e.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
    let reason = e.message ?? 'is invalid';
    if (e.keyword === 'required' && e.params?.missingProperty) {
      field = field ? `${field}.${e.params.missingProperty}` : String(e.params.missingProperty);
      reason = 'is required';
    } else if (e.keyword === 'additionalProperties' && e.params?.additionalProperty) {
      field = field ? `${field}.${e.params.additionalProperty}` : String(e.params.additionalProperty);
      reason = 'is not a known field';
    }
    return { field: field || context, reason };
  });
}

export function validationError(items: Array<{ field: string; reason: string }>, message = 'The request failed validation.') {
  return new ServiceError('validation_failed', message, { errors: dedupe(items), hint: 'Fix each field listed in errors[] and send the request again.' });
}

/** The body of an error reply, by the envelope of PROTOCOL 1.3 for its status. */
export function envelope(request: FastifyRequest, err: ServiceError): Record<string, unknown> {
  const base: Record<string, unknown> = { error: err.message, code: err.code, ...err.extra };
  // Whoever built the list, a refusal names at most 50 errors, each of bounded size, and says
  // how many there were (PROTOCOL 1.3): no answer grows with the errors its request holds.
  if (Array.isArray(base.errors)) {
    const capped = capErrors(base.errors);
    base.errors = capped.errors;
    // A list capped where it was built says how many there were (the dry run's, for an attestation).
    base.errorCount = Math.max(capped.errorCount, typeof base.errorCount === 'number' ? base.errorCount : 0);
  }
  if (Array.isArray(base.details)) base.details = capErrors(base.details).errors;
  if (err.status === 401) {
    base.hint ??= 'Register (no sign-up) for an api key and send it as Authorization: Bearer <apiKey>.';
    base.orientation = orientationUrls(originOf(request));
  }
  if (err.status === 429) {
    const origin = originOf(request);
    return {
      type: `${origin}/errors#rate_limited`,
      title: 'Too Many Requests',
      status: 429,
      detail: err.message,
      instance: request.url,
      ...base,
    };
  }
  return base;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: ServiceError) {
  // A write refused while the storage fails: when to try again (PROTOCOL 13).
  if (err.code === 'storage_unavailable') reply.header('retry-after', String(err.extra.retryAfter ?? 5));
  // A search stopped at its timeout (PROTOCOL 10.6).
  if (err.code === 'search_busy') reply.header('retry-after', String(err.extra.retryAfter ?? 1));
  if (err.status === 429) {
    const retryAfter = Number(err.extra.retryAfter ?? 1);
    reply.header('retry-after', String(Math.max(1, Math.ceil(retryAfter))));
    if (err.extra.scope) reply.header('x-ratelimit-scope', String(err.extra.scope));
    reply.type('application/problem+json');
  }
  return reply.code(err.status).send(envelope(request, err));
}

/** Bytes as people read them: 16 KiB, 1 MiB, 700 bytes. */
const bytesText = (n: number) => (n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`);

/** The 413 of a body over its route's byte limit (PROTOCOL 1.1, 14), naming the limit. */
export function bodyTooLarge(maxBytes: number | undefined) {
  return new ServiceError(
    'body_too_large',
    maxBytes ? `The request body is over this route's limit of ${bytesText(maxBytes)}.` : 'The request body is over the limit for this route.',
    {
      ...(maxBytes ? { maxBytes } : {}),
      hint: 'Send a smaller body: PROTOCOL 14 lists what each route takes. Large content goes to the content store (POST /api/cas); send its sha256.',
    },
  );
}

/**
 * The 413 of a body with more members and elements, or an object of more keys, than its route
 * takes (PROTOCOL 1.1, 14), refused before it is parsed; `wide` when an object's keys were over.
 */
export function tooManyMembers(bounds: { members: number; keys: number }, wide = false) {
  const error = wide
    ? `An object of the body holds more than ${bounds.keys} keys; this route takes at most ${bounds.keys} in one object.`
    : `The body holds more than ${bounds.members} object members and array elements together; this route takes at most ${bounds.members}.`;
  return new ServiceError('too_many_members', error, {
    maxMembers: bounds.members,
    maxKeys: bounds.keys,
    hint: "Send only the fields the route's schema names (GET /openapi.json; unknown fields are dropped anyway). PROTOCOL 14 lists what each route takes.",
  });
}

const FASTIFY_CODES: Record<string, (request?: FastifyRequest) => ServiceError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (request) => bodyTooLarge(request?.routeOptions.bodyLimit),
  // Only a Content-Type header that is not a media type at all gets here (every type is read
  // as JSON): the protocol has no 415 (PROTOCOL 1.1), so it is the body's 400.
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new ServiceError('invalid_json', 'The Content-Type header is malformed.', {
      hint: 'Send Content-Type: application/json with a JSON body, or no body at all.',
    }),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ServiceError('invalid_json', 'The Content-Length does not match the body.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ServiceError('invalid_json', 'The body is empty but declared as JSON.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ServiceError('invalid_json', 'The body is not valid JSON.'),
  // A path with a malformed percent-escape (e.g. a tree path `/api/knowledge/node/%E0%A4%A`).
  FST_ERR_BAD_URL: () => validationError([{ field: 'url', reason: 'has a malformed percent-escape' }], 'The request URL is not a valid URL component.'),
};

export function toServiceError(error: unknown, request?: FastifyRequest): ServiceError | null {
  if (isServiceError(error)) return error;
  const fe = error as FastifyError & { validation?: AjvLikeError[]; validationContext?: string };
  if (fe?.validation) return validationError(validationItems(fe.validation, fe.validationContext));
  if (fe?.code && FASTIFY_CODES[fe.code]) return FASTIFY_CODES[fe.code](request);
  if (fe?.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ServiceError('validation_failed', fe.message, {}, fe.statusCode);
  }
  return null;
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const se = toServiceError(error, request);
  if (se) {
    // A storage failure is logged once, when it starts and when it ends (server.ts), not per request.
    if (se.status >= 500 && se.code !== 'storage_unavailable') request.log.error({ code: se.code, err: error }, se.message);
    return sendError(request, reply, se);
  }
  request.log.error({ err: error }, 'unexpected error');
  return reply.code(500).send({
    error: 'The node failed to answer this request.',
    code: 'internal_error',
    hint: `Quote request id ${request.id} to the operator.`,
  });
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  return sendError(
    request,
    reply,
    new ServiceError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`, {
      hint: 'GET /openapi.json lists every route; GET /api/agent/v1/wakeup orients a new agent.',
    }),
  );
}

/**
 * What the HTTP parser refuses before any route runs (headers over 16 KiB, malformed HTTP, a
 * client too slow to send its request): the PROTOCOL 1.3 envelope written on the socket,
 * which is then closed. A reset connection gets nothing (nobody is listening).
 */
export function clientError(err: NodeJS.ErrnoException, socket: import('node:stream').Duplex) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, error] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'The request headers are over 16 KiB together.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request did not arrive in time.']
        : [400, 'bad_request', 'The request is not well-formed HTTP.'];
  const body = JSON.stringify({ error, code, hint: ERROR_CODES[code as keyof typeof ERROR_CODES].action });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\n` +
        `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** An Expect header other than 100-continue (RFC 9110 10.1.1): 417 in the envelope, the connection closed. */
export function expectationFailed(res: import('node:http').ServerResponse) {
  const body = JSON.stringify({
    error: 'This node meets no expectation but 100-continue.',
    code: 'expectation_failed',
    hint: ERROR_CODES.expectation_failed.action,
  });
  res.writeHead(417, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    connection: 'close',
  });
  res.end(body);
}

export { ERROR_CODES };
