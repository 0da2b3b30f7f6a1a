// fastify validates with two ajv instances: bodies strictly (no type coercion, unknown
// fields refused where a schema says additionalProperties: false), and query strings,
// params and headers with coercion, since those arrive as strings.
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const Ajv = AjvModule as unknown as typeof AjvModule.default;
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function make(coerce: boolean) {
  // strictNumbers: JSON.parse reads 1e400 as Infinity, which JSON (and so JCS) cannot hold.
  const ajv = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: true, coerceTypes: coerce ? 'array' : false, strict: false, strictNumbers: true });
  addFormats(ajv);
  return ajv;
}

const strict = make(false);
const coercing = make(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile(schema as object);
