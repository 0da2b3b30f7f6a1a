// Validators that report every error (every HTTP body, src/http/validation.ts; the attestation
// and propose dry runs; tool inputs) check a value's size limits first (PROTOCOL 1.3,
// src/core/schema-limits.ts): a value over a limit is refused naming that limit alone, before
// any of its items is validated, so the work and the errors of a hostile value stay bounded.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { limitsSchema, type LimitsOptions } from '../../core/index.js';
import { ajvOnFirstUse } from './ajv.js';

// Stops at the first limit broken; changes nothing in the value.
const limits = ajvOnFirstUse('limits');

/** A validator like ajv's (call it, then read `errors`), with the size-limits pass run first. */
export type BoundedValidate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Wraps a compiled validator of `schema` with the size-limits pass of that schema. */
export function bounded(full: ValidateFunction, schema: object, opts: LimitsOptions = {}): BoundedValidate {
  const bounds = limitsSchema(schema, opts);
  if (bounds === true) return full;
  const sizes = limits().compile(bounds);
  const validate: BoundedValidate = (data) => {
    if (!sizes(data)) {
      validate.errors = sizes.errors;
      return false;
    }
    const ok = full(data);
    validate.errors = full.errors;
    return ok;
  };
  return validate;
}
