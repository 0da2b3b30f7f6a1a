// One strict ajv 8 instance ('answer', ajv.ts) for the domain's own JSON Schemas (tool inputs, challenge answers,
// calibration answer schemas), with errors turned into PROTOCOL 1.3 items {field, reason}.
// src/domain may not import src/http, so this does not share fastify's instance.
import type { ErrorObject } from 'ajv';
import { ajvOnFirstUse } from './ajv.js';
import { bounded, type BoundedValidate } from './bounded-validate.js';

/** A plain JSON Schema object (draft-07 style, as ajv 8 takes it). */
export type JSONSchema = Record<string, unknown>;

/** One field-level problem, as in PROTOCOL 1.3's ValidationError. */
export interface FieldError {
  field: string;
  reason: string;
}

/** The result of a validation: ok, or the list of field problems. */
export type Validation = { ok: true } | { ok: false; errors: FieldError[] };

// All errors so a client can fix every field at once; no coercion and no defaults written
// into the caller's object.
const ajv = ajvOnFirstUse('answer');
const compiled = new WeakMap<object, BoundedValidate>();
const compiledSizesFirst = new WeakMap<object, BoundedValidate>();

// ajv compiles a schema once; the WeakMaps key on the schema object so callers need no ids.
// With sizesFirst, the schema's size limits are checked first (bounded-validate.ts): a tool
// input of 5,000 unknown keys gets one error, not one per key. Without, every field is listed
// (a challenge answer, small and worth a full list to the agent who wrote it).
function compile(schema: JSONSchema, sizesFirst: boolean): BoundedValidate {
  const cache = sizesFirst ? compiledSizesFirst : compiled;
  let fn = cache.get(schema);
  if (!fn) {
    fn = sizesFirst ? bounded(ajv().compile(schema), schema, { closedObjectsBounded: true }) : ajv().compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

// ajv's instancePath (/a/0/b) as a dotted field name under `root`, with required and
// additionalProperties errors pointing at the named property.
function toFieldError(e: ErrorObject, root: string): FieldError {
  const parts = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let reason = e.message ?? 'is invalid';
  if (e.keyword === 'required') {
    parts.push(String(e.params.missingProperty));
    reason = 'is required';
  } else if (e.keyword === 'additionalProperties') {
    parts.push(String(e.params.additionalProperty));
    reason = 'is not a known field';
  } else if (e.keyword === 'enum') {
    reason = `must be one of: ${(e.params.allowedValues as unknown[]).join(', ')}`;
  }
  return { field: [root, ...parts].filter(Boolean).join('.') || 'value', reason };
}

/**
 * Validates `value` against `schema` (ajv 8, all errors, no coercion, no defaults written).
 * Field names are dotted paths under `root` (e.g. root 'answer' gives 'answer.model.family');
 * a problem with the value itself is named `root`, or 'value' when root is empty.
 */
export function validateWithSchema(schema: JSONSchema, value: unknown, root = '', opts: { sizesFirst?: boolean } = {}): Validation {
  const fn = compile(schema, Boolean(opts.sizesFirst));
  if (fn(value)) return { ok: true };
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const e of fn.errors ?? []) {
    const item = toFieldError(e, root);
    const key = `${item.field}\u0000${item.reason}`;
    if (!seen.has(key)) {
      seen.add(key);
      errors.push(item);
    }
  }
  return { ok: false, errors };
}
