// fastify validates with two ajv instances: bodies strictly (no type coercion), and query
// strings, params and headers with coercion, since those arrive as strings. Unknown body
// fields are dropped, not refused: the protocol closes only tool inputs (PROTOCOL 1.1, 4.4),
// which the domain validates itself (src/domain/shared/validate.ts). Dropping them also keeps
// them out of stored records.
//
// allErrors: a refusal names every failing field, not only the first (PROTOCOL 1.3). That is
// kept cheap by checking a body's size limits first (src/core/schema-limits.ts): every string
// and array of every route schema has a maximum, and a body that breaks one is refused naming
// that limit before any item of it is validated; within the limits the number of errors is
// bounded by the schema. The errors a refusal lists are capped again by the error handler.
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { bounded } from '../domain/shared/bounded-validate.js';

const Ajv = AjvModule as unknown as typeof AjvModule.default;
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function make(coerce: boolean) {
  // strictNumbers: JSON.parse reads 1e400 as Infinity, which JSON (and so JCS) cannot hold.
  // removeAdditional: true removes what a schema with additionalProperties: false does not
  // name (our unions are of literals or open objects, where ajv's removal is exact).
  const ajv = new Ajv({ allErrors: true, removeAdditional: true, useDefaults: true, coerceTypes: coerce ? 'array' : false, strict: false, strictNumbers: true });
  addFormats(ajv);
  return ajv;
}

const strict = make(false);
const coercing = make(true);

// A body declared as raw bytes (`format: binary`, the content store's upload) reaches its
// handler as a stream: the schema documents it (PROTOCOL 11.2); the handler counts and hashes it.
const rawBytes = () => true;

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  if (httpPart === 'body' && (schema as { format?: string }).format === 'binary') return rawBytes;
  if (httpPart !== 'body') return coercing.compile(schema as object);
  // Query strings, path parameters and headers are bounded by the URL and header limits; a
  // body (up to 1 MiB) is where a hostile request could hold thousands of bad items.
  return bounded(strict.compile(schema as object), schema as object);
};
