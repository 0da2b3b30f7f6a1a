// What a body may hold (src/core/body-bounds.ts) and the pass that counts it before parsing
// (jsonShape, src/core/strict-json.ts): the pass counts exactly what JSON.parse would build,
// and the bounds derived from a schema hold the largest value the schema accepts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BODY_SLACK, jsonShape, MAX_JSON_DEPTH, routeBodyBounds, schemaBounds } from '../../src/core/index.js';
import { MAP_VALUE, roundCount } from '../../src/core/body-bounds.js';
import { attestationKinds } from '../../src/domain/log/attestations.js';
import { PAYLOAD_SCHEMAS } from '../../src/domain/proposals/kinds.js';
import { TOOLS } from '../../src/domain/challenges/tools/index.js';

/** The keys of the widest object of a parsed value. */
function widest(v: unknown): number {
  if (Array.isArray(v)) return Math.max(0, ...v.map(widest));
  if (v && typeof v === 'object') return Math.max(Object.keys(v).length, ...Object.values(v).map(widest));
  return 0;
}

/** Object members and array elements of a parsed value, at every depth. */
function members(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + 1 + members(x), 0);
  if (v && typeof v === 'object') return Object.values(v).reduce((n: number, x) => n + 1 + members(x), 0);
  return 0;
}

describe('jsonShape', () => {
  it('counts the members and elements JSON.parse builds, compact or pretty-printed, whatever the strings hold', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(undefined, 2, '\t'), (v, indent) => {
        const text = JSON.stringify(v, null, indent);
        expect(jsonShape(text)).toMatchObject({ members: members(JSON.parse(text)), keys: widest(JSON.parse(text)) });
      }),
      { numRuns: 300 },
    );
    expect(jsonShape('{"a:":"[1,2]","b\\"":[[],[1],{}],"c":{"d":","}}')).toEqual({ depth: 3, members: 8, keys: 3 });
    expect(jsonShape(' [ ] ')).toEqual({ depth: 1, members: 0, keys: 0 });
  });

  it('stops once past a bound of members, of keys or of depth', () => {
    const wide = `{${Array.from({ length: 1000 }, (_, i) => `"k${i}":0`).join(',')}}`;
    expect(jsonShape(wide)).toMatchObject({ members: 1000, keys: 1000 });
    expect(jsonShape(wide, { members: 10 }).members).toBe(11);
    expect(jsonShape(wide, { keys: 10 }).keys).toBe(11);
    expect(jsonShape('['.repeat(10_000) + ']'.repeat(10_000)).depth).toBe(MAX_JSON_DEPTH + 1);
  });
});

// The largest value a schema accepts, as the derivation reads schemas: every array full, every
// map at maxProperties with keys of 128 characters, every string at its longest with each
// character sent as a \u escape, pretty-printed.
function largest(s: unknown): unknown {
  if (!s || typeof s !== 'object') return { free: true };
  const o = s as Record<string, any>;
  if ('const' in o) return o.const;
  if (Array.isArray(o.enum)) return o.enum.reduce((a: unknown, b: unknown) => (JSON.stringify(b).length > JSON.stringify(a).length ? b : a));
  const branches = (o.anyOf ?? o.oneOf) as unknown[] | undefined;
  if (branches) {
    const values = branches.map(largest);
    return values.reduce((a, b) => (members(b) * 1e7 + JSON.stringify(b).length > members(a) * 1e7 + JSON.stringify(a).length ? b : a));
  }
  const type = Array.isArray(o.type) ? o.type[0] : (o.type ?? (o.properties ? 'object' : o.items ? 'array' : 'string'));
  if (type === 'string') return 'é'.repeat(o.maxLength ?? 64);
  if (type === 'number' || type === 'integer') return -1.234567890123456e-300;
  if (type === 'boolean') return false;
  if (type === 'null') return null;
  if (type === 'array') return Array.from({ length: o.maxItems }, () => largest(o.items));
  const out: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(o.properties ?? {})) out[k] = largest(p);
  const valueSchema = typeof o.additionalProperties === 'object' ? o.additionalProperties : Object.values(o.patternProperties ?? {})[0];
  const value = valueSchema ? largest(valueSchema) : 'x'.repeat(1000);
  if (o.additionalProperties !== false && typeof o.maxProperties === 'number') for (let i = 0; i < o.maxProperties; i++) out[`${'m'.repeat(120)}${i}`] = value;
  return out;
}

/** JSON with every non-ASCII character as a \u escape, as Python's json.dumps sends it. */
const escaped = (v: unknown) => JSON.stringify(v, null, 2).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

describe('schemaBounds', () => {
  it('holds the largest value of every proposal payload, attestation kind and tool input', () => {
    const schemas: Array<[string, unknown]> = [
      ...Object.entries(PAYLOAD_SCHEMAS).filter(([k]) => k !== 'graph'),
      ...[...attestationKinds().values()].map((k): [string, unknown] => [k.kind, k.schema]),
      ...Object.entries(TOOLS).map(([name, t]): [string, unknown] => [name, t.input]),
    ];
    for (const [name, schema] of schemas) {
      const b = schemaBounds(schema);
      const text = escaped(largest(schema));
      expect(jsonShape(text).members, name).toBeLessThanOrEqual(b.members);
      expect(jsonShape(text).keys, name).toBeLessThanOrEqual(b.keys);
      expect(Buffer.byteLength(text), name).toBeLessThanOrEqual(b.bytes);
    }
  });

  it('is infinite where the schema sets no bound: an array without maxItems, a free value, a map without maxProperties', () => {
    expect(schemaBounds({ type: 'array', items: { type: 'number' } }).members).toBe(Infinity);
    expect(schemaBounds({}).members).toBe(Infinity);
    expect(schemaBounds({ type: 'object', additionalProperties: { type: 'string', maxLength: 3 } }).members).toBe(Infinity);
    // A graph's conditions are free-form in its schema, but a map of one key each: the route adds what propose allows.
    expect(schemaBounds(PAYLOAD_SCHEMAS.graph).members).toBeLessThan(32 * 500);
  });

  it('counts declared members exactly, a bounded map as small values, and unknown keys not at all', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      properties: {
        list: { type: 'array', maxItems: 3, items: { type: 'object', properties: { s: { type: 'string', maxLength: 5 } } } },
        either: {
          anyOf: [
            { type: 'string', maxLength: 2 },
            { type: 'array', maxItems: 4, items: { type: 'number' } },
          ],
        },
        map: { type: 'object', maxProperties: 2 },
      },
    };
    // list 1 + 3 × (1 + 1); either 1 + 4; map 1 + 2 × (1 + MAP_VALUE); three keys at the top, a
    // map value's inside the map.
    expect(schemaBounds(schema)).toMatchObject({ members: 7 + 5 + 1 + 2 * (1 + MAP_VALUE.members), keys: Math.max(3, MAP_VALUE.keys) });
  });

  it("rounds a route's bounds up to round counts and powers of two, within the node's byte limit", () => {
    expect([1, 2, 3, 73, 100, 101, 16_864].map(roundCount)).toEqual([1, 2, 5, 100, 100, 200, 20_000]);
    expect(routeBodyBounds({ members: 9, keys: 4, bytes: 3000 }, 1024 * 1024)).toEqual({
      members: roundCount(9 + BODY_SLACK.members),
      keys: roundCount(4 + BODY_SLACK.keys),
      bytes: 4096,
    });
    expect(routeBodyBounds({ members: 9, keys: 4, bytes: 5000 }, 1024 * 1024).bytes).toBe(8192);
    expect(routeBodyBounds({ members: 9, keys: 4, bytes: Infinity }, 1024 * 1024).bytes).toBe(1024 * 1024);
  });
});
