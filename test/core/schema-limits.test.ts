// The size-limits pass (src/core/schema-limits.ts): it keeps only maxItems, maxLength and
// maxProperties and the structure leading to them, refuses nothing the full schema accepts, and
// the error cap keeps a refusal's list short and small.
import AjvModule from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capErrors, limitsSchema } from '../../src/core/index.js';
import { MAX_ERRORS_LISTED, UNKNOWN_KEYS_NAMED } from '../../src/core/schema-limits.js';

const Ajv = AjvModule as unknown as typeof AjvModule.default;
const ajv = new Ajv({ allErrors: true, strict: false });

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['list'],
  properties: {
    list: { type: 'array', maxItems: 3, items: { type: 'object', properties: { s: { type: 'string', maxLength: 5 } } } },
    either: { anyOf: [{ type: 'string', maxLength: 2 }, { type: 'number' }] },
    both: {
      anyOf: [
        { type: 'string', maxLength: 2 },
        { type: 'array', maxItems: 1 },
      ],
    },
    map: { type: 'object', patternProperties: { '^k': { type: 'string', maxLength: 4 } }, maxProperties: 2 },
  },
};

describe('limitsSchema', () => {
  it('keeps the size keywords and the structure that leads to them, without types', () => {
    expect(limitsSchema(schema)).toEqual({
      properties: {
        list: { maxItems: 3, items: { properties: { s: { maxLength: 5 } } } },
        both: { allOf: [{ anyOf: [{ maxLength: 2 }, { maxItems: 1 }] }] },
        map: { maxProperties: 2, patternProperties: { '^k': { maxLength: 4 } } },
      },
    });
    expect(limitsSchema({ type: 'object', properties: { a: { type: 'integer' } } })).toBe(true);
  });

  it('bounds a closed object by its declared keys plus 50 when asked', () => {
    expect(limitsSchema({ type: 'object', additionalProperties: false, properties: { a: {}, b: {} } }, { closedObjectsBounded: true })).toEqual({
      maxProperties: 2 + UNKNOWN_KEYS_NAMED,
    });
  });

  it('never refuses a value the full schema accepts', () => {
    const full = ajv.compile(schema);
    const sizes = ajv.compile(limitsSchema(schema, { closedObjectsBounded: true }) as object);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.jsonValue({ maxDepth: 3 }), (list, other) => {
        for (const v of [list, { list }, { list, either: other, both: other, map: other }]) if (full(v)) expect(sizes(v)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('capErrors', () => {
  it('lists the first 50, cuts long strings, and counts them all', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({ field: `f${i}`.padEnd(2000, 'x'), reason: 'is wrong' }));
    const { errors, errorCount } = capErrors(many);
    expect(errorCount).toBe(10_000);
    expect(errors.length).toBeLessThanOrEqual(MAX_ERRORS_LISTED);
    expect(JSON.stringify(errors).length).toBeLessThan(16 * 1024);
    expect(errors[0].field.length).toBeLessThan(400);
  });
});
