// The test-time contract of every answer (PROTOCOL 11.2): with `checkResponses` on (tests turn
// it on; a running node never does), each JSON answer is validated against what its route
// documents for that status (route-docs.ts). An answer that does not fit (a field the schema
// lacks, a refusal code the route never declared, a status it does not document) is replaced by
// a 500 naming the mismatch, so any test that reaches it fails and says why. That is how the
// document stays true without the serializer dropping fields (openapi.ts).
import type { ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createAjv } from '../domain/common/ajv.js';
import { documentedResponses } from './route-docs.js';
import { SHARED_SCHEMAS } from './schemas.js';

export interface ResponseViolation {
  method: string;
  route: string;
  status: number;
  problems: string[];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every answer that did not fit its documented schema (checkResponses only). */
    akasResponseViolations: ResponseViolation[];
  }
}

/** The media type of a content-type header, lowercased. */
const mediaOf = (ct: unknown) =>
  String(ct ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();

// One Ajv and one validator per distinct schema for the whole process: the suites build a node
// per test, and compiling the meta-schema and every route's answers again for each was about
// half of what making a test node cost. Keyed by the schema's text, not its object, since
// route documents are built per app.
let sharedAjv: ReturnType<typeof createAjv> | undefined;
const bySchemaText = new Map<string, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  const text = JSON.stringify(schema);
  let fn = bySchemaText.get(text);
  if (!fn) {
    if (!sharedAjv) {
      sharedAjv = createAjv('response');
      for (const s of SHARED_SCHEMAS) sharedAjv.addSchema(s as object);
    }
    fn = sharedAjv.compile(schema);
    bySchemaText.set(text, fn);
  }
  return fn;
}

export function registerResponseCheck(app: FastifyInstance) {
  const compiled = new Map<string, Map<string, ValidateFunction | null>>();
  const violations: ResponseViolation[] = [];
  app.decorate('akasResponseViolations', violations);

  /** The validators of a route's documented responses, compiled on first use. */
  function validators(request: FastifyRequest): Map<string, ValidateFunction | null> {
    const key = `${request.method} ${request.routeOptions.url}`;
    let byStatus = compiled.get(key);
    if (!byStatus) {
      byStatus = new Map();
      const route = { method: request.method, url: request.routeOptions.url ?? '', schema: request.routeOptions.schema, config: request.routeOptions.config };
      for (const [status, r] of Object.entries(documentedResponses(route as never))) {
        const schema = r.schema ?? (r.content?.['application/json']?.schema as object | undefined);
        byStatus.set(status, schema ? validatorFor(schema) : null);
      }
      compiled.set(key, byStatus);
    }
    return byStatus;
  }

  function check(request: FastifyRequest, reply: FastifyReply, payload: unknown): string[] {
    const status = reply.statusCode;
    if (status === 304 || status === 204) return [];
    const byStatus = validators(request);
    const key = byStatus.has(String(status)) ? String(status) : `${String(status)[0]}xx`;
    if (!byStatus.has(key)) return [`status ${status} is not documented (documented: ${[...byStatus.keys()].join(', ')})`];
    const validate = byStatus.get(key);
    const media = mediaOf(reply.getHeader('content-type'));
    if (!media.endsWith('json') || !validate || typeof payload !== 'string') return [];
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      return ['the body is not JSON'];
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`);
  }

  app.addHook('onSend', (request, reply, payload, done) => {
    // The not-found handler (no route) and HEAD answers are not routes' documented answers.
    if (!request.routeOptions.url || request.method === 'HEAD') return done(null, payload);
    const problems = check(request, reply, payload);
    if (problems.length === 0) return done(null, payload);
    const violation = { method: request.method, route: request.routeOptions.url, status: reply.statusCode, problems };
    violations.push(violation);
    reply.code(500).type('application/json; charset=utf-8');
    done(null, JSON.stringify({ error: 'The answer does not fit the schema its route documents.', code: 'internal_error', violation, answer: payload }));
  });
}
