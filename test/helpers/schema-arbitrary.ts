// fast-check arbitraries from the JSON Schemas of /openapi.json: values that fit a schema
// (valid requests), and mutations of them that do not (wrong types, missing and extra
// fields, huge strings and numbers, deep nesting, lone surrogates). The fuzzer
// (test/http/fuzz.test.ts) builds every request it sends from these.
import fc from 'fast-check';

export type Schema = Record<string, unknown>;

/** Resolves `#/components/schemas/X` and fastify's `X#` references. */
export function resolver(components: Record<string, Schema>) {
  return function resolve(s: Schema): Schema {
    const ref = s.$ref as string | undefined;
    if (!ref) return s;
    const name = ref.startsWith('#/components/schemas/') ? ref.slice('#/components/schemas/'.length) : ref.replace(/#$/, '');
    const target = components[name];
    if (!target) throw new Error(`unresolved $ref ${ref}`);
    return resolve(target);
  };
}

const MAX_STRING = 40;
const MAX_ITEMS = 4;

/** Values that fit the schema (as far as the keywords the node uses go). */
export function valid(schema: Schema, resolve: (s: Schema) => Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  for (const k of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[k])) return fc.oneof(...(s[k] as Schema[]).map((x) => valid(x, resolve, depth + 1)));
  }
  if (Array.isArray(s.allOf)) return valid(Object.assign({}, ...(s.allOf as Schema[]).map(resolve)), resolve, depth + 1);
  const type = Array.isArray(s.type) ? fc.constantFrom(...(s.type as string[])) : fc.constant(s.type as string | undefined);
  return type.chain((t) => validOfType(t, s, resolve, depth));
}

function validOfType(t: string | undefined, s: Schema, resolve: (s: Schema) => Schema, depth: number): fc.Arbitrary<unknown> {
  switch (t) {
    case 'string': {
      const min = (s.minLength as number) ?? 0;
      const max = Math.max(min, Math.min((s.maxLength as number) ?? MAX_STRING, MAX_STRING));
      if (typeof s.pattern === 'string') {
        return fc.stringMatching(new RegExp(s.pattern)).filter((x) => x.length >= min && x.length <= ((s.maxLength as number) ?? Infinity));
      }
      return fc.string({ minLength: min, maxLength: max });
    }
    case 'integer': {
      const min = Math.max((s.minimum as number) ?? -1e9, Number.MIN_SAFE_INTEGER);
      const max = Math.min((s.maximum as number) ?? 1e9, Number.MAX_SAFE_INTEGER);
      return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
    }
    case 'number':
      return fc.double({ min: (s.minimum as number) ?? -1e6, max: (s.maximum as number) ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const items = s.items ? valid(s.items as Schema, resolve, depth + 1) : fc.jsonValue({ maxDepth: 1 });
      const min = (s.minItems as number) ?? 0;
      return fc.array(items, { minLength: min, maxLength: Math.max(min, Math.min((s.maxItems as number) ?? MAX_ITEMS, MAX_ITEMS)) });
    }
    case 'object':
    case undefined: {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      if (t === undefined && !s.properties) return fc.jsonValue({ maxDepth: 2 });
      if (depth > 6) return fc.constant({});
      const required = new Set((s.required as string[]) ?? []);
      const model = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, valid(v, resolve, depth + 1)]));
      const record = fc.record(model, { requiredKeys: Object.keys(props).filter((k) => required.has(k)) });
      if (s.additionalProperties && typeof s.additionalProperties === 'object') {
        const extra = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), valid(s.additionalProperties as Schema, resolve, depth + 1), { maxKeys: 3 });
        return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...r }));
      }
      return record;
    }
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

/** Values no schema of the node accepts where a typed one was expected. */
const wrongType = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 8 }),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.constant({ nested: { deeper: true } }),
);

/** Strings that break naive handling: lone surrogates, NUL, control characters, right-to-left marks, traversal. */
export const nastyString = fc.oneof(
  fc.constant('\ud800'),
  fc.constant('a\udc00b'),
  fc.constant('\u0000'),
  fc.constant('\u202e\u0007\u001b[2J'),
  fc.constant('../../../../etc/passwd'),
  fc.constant('%2e%2e%2f%2e%2e%2f'),
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the log4shell probe, meant literally
  fc.constant('${jndi:ldap://x}'),
  fc.constant('<script>alert(1)</script>'),
  fc.constant('__proto__'),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);

/** Numbers at and past every edge. */
const nastyNumber = fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -(2 ** 53) - 1, -0, 5e-324, 0.1 + 0.2, 1e21);

/** A JSON text nested `depth` levels deep. */
export const deeplyNested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

/** One mutation of a valid value: what a confused or hostile client sends instead. */
export function mutated(schema: Schema, resolve: (s: Schema) => Schema): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  const base = valid(s, resolve);
  const props = Object.keys((s.properties ?? {}) as object);
  const required = (s.required as string[]) ?? [];
  const options: Array<fc.Arbitrary<unknown>> = [wrongType, fc.constant('x'.repeat(100_000)), nastyNumber, nastyString];
  if (props.length) {
    const asObject = base.filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v));
    if (required.length)
      options.push(fc.tuple(asObject, fc.constantFrom(...required)).map(([v, k]) => Object.fromEntries(Object.entries(v).filter(([key]) => key !== k))));
    options.push(fc.tuple(asObject, fc.constantFrom(...props), wrongType).map(([v, k, w]) => ({ ...v, [k]: w })));
    options.push(fc.tuple(asObject, fc.constantFrom(...props), nastyString).map(([v, k, w]) => ({ ...v, [k]: w })));
    options.push(fc.tuple(asObject, fc.constantFrom(...props), nastyNumber).map(([v, k, w]) => ({ ...v, [k]: w })));
    options.push(fc.tuple(asObject, fc.constantFrom(...props)).map(([v, k]) => ({ ...v, [k]: 'y'.repeat(200_000) })));
    options.push(asObject.map((v) => ({ ...v, constructor: { prototype: { polluted: true } }, unexpected: [1, 2, 3], ['x'.repeat(300)]: 1 })));
  }
  return fc.oneof(...options);
}
