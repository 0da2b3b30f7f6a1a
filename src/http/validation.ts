// fastify validates with two ajv instances: bodies strictly (no type coercion), and query
// strings, params and headers with coercion, since those arrive as strings. Unknown body
// fields are dropped, not refused: the protocol closes only tool inputs (PROTOCOL 1.1, 4.4),
// which the domain validates itself (src/domain/common/validate.ts). Dropping them also keeps
// them out of stored records.
//
// allErrors: a refusal names every failing field, not only the first (PROTOCOL 1.3). That is
// kept cheap by checking a body's size limits first (src/core/schema-limits.ts): every string
// and array of every route schema has a maximum, and a body that breaks one is refused naming
// that limit before any item of it is validated; within the limits the number of errors is
// bounded by the schema. The errors a refusal lists are capped again by the error handler.
import type { FastifySchemaCompiler } from 'fastify';
import { ajvOnFirstUse } from '../domain/common/ajv.js';
import { bounded } from '../domain/common/bounded-validate.js';

// Their options (strict numbers, unknown fields removed, defaults filled) are the 'body' and
// 'params' presets of the one ajv factory.
const strict = ajvOnFirstUse('body');
const coercing = ajvOnFirstUse('params');

// A body declared as raw bytes (`format: binary`, the content store's upload) reaches its
// handler as a stream: the schema documents it (PROTOCOL 11.2); the handler counts and hashes it.
const rawBytes = () => true;

type Validate = ReturnType<FastifySchemaCompiler<unknown>>;

// One validator per distinct schema for the whole process, not per app: fastify hands each app
// its own copy of a route's schema, so ajv's own cache (keyed by the object) never hits, and the
// suites build a node per test. A validator keeps no state between calls that matters here:
// fastify reads its `errors` right after the call that set them.
const compiled = new Map<string, Validate>();

function compile(schema: object, httpPart: string | undefined): Validate {
  if (httpPart === 'body' && (schema as { format?: string }).format === 'binary') return rawBytes;
  if (httpPart !== 'body') return coercing().compile(schema);
  // Query strings, path parameters and headers are bounded by the URL and header limits; a
  // body (up to 1 MiB) is where a hostile request could hold thousands of bad items.
  return bounded(strict().compile(schema), schema) as Validate;
}

// Compiled on a route's first request, not when the route is added: a node starts with the
// schemas of some ninety routes, most of which a given process (a test, a short-lived node) never
// validates against. fastify calls the validator, then reads `errors` from it, so the stand-in
// hands on the real validator's.
function onFirstUse(make: () => Validate): Validate {
  let fn: Validate | undefined;
  const stand = ((data: unknown) => {
    fn ??= make();
    return fn(data);
  }) as Validate & { errors?: unknown };
  Object.defineProperty(stand, 'errors', { get: () => (fn as { errors?: unknown } | undefined)?.errors ?? null });
  return stand;
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const key = `${httpPart === 'body' ? 'body' : 'params'} ${JSON.stringify(schema)}`;
  let fn = compiled.get(key);
  if (!fn) {
    fn = onFirstUse(() => compile(schema as object, httpPart));
    compiled.set(key, fn);
  }
  return fn;
};
