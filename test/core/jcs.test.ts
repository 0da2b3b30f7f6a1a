// RFC 8785 (JCS) conformance of src/core/jcs.ts against the cyberphone reference test data
// (test/vectors/cyberphone-json-canonicalization, see its README), and against the `canonicalize`
// package (the one @digitalbazaar/eddsa-jcs-2022-cryptosuite uses) on the same vectors and on
// generated values.
import { readdirSync, readFileSync } from 'node:fs';
import canonicalizePackage from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, canonicalize } from '../../src/core/jcs.js';
import { vectorPath } from '../helpers/vectors.js';

const VECTORS = vectorPath('cyberphone-json-canonicalization') + '/';

const read = (rel: string) => readFileSync(VECTORS + rel);
const names = readdirSync(VECTORS + 'input')
  .filter((f) => f.endsWith('.json'))
  .map((f) => f.slice(0, -'.json'.length))
  .sort();

/** The double whose IEEE-754 bits are `hex` (1 to 16 hex digits). */
function doubleFromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt('0x' + hex));
  return view.getFloat64(0);
}

describe('canonicalize (RFC 8785)', () => {
  it('has all six cyberphone input files to check', () => {
    expect(names).toEqual(['arrays', 'french', 'structures', 'unicode', 'values', 'weird']);
  });

  describe.each(names)('the cyberphone %s vector', (name) => {
    const input = JSON.parse(read(`input/${name}.json`).toString('utf8'));
    const expected = read(`output/${name}.json`);

    it('canonicalizes to output/X.json byte for byte', () => {
      expect(canonicalBytes(input).equals(expected)).toBe(true);
      expect(canonicalize(input)).toBe(expected.toString('utf8'));
    });

    it('produces the bytes listed in outhex/X.txt', () => {
      const hex = read(`outhex/${name}.txt`).toString('ascii').trim().split(/\s+/).join('');
      expect(canonicalBytes(input).toString('hex')).toBe(hex.toLowerCase());
    });
  });

  describe('ES6 number serialization (es6-numbers-10000.txt)', () => {
    const lines = read('es6-numbers-10000.txt')
      .toString('ascii')
      .split('\n')
      .filter((l) => l.length > 0);

    it('has 10,000 lines', () => {
      expect(lines).toHaveLength(10_000);
    });

    it('prints every double as the expected text', () => {
      const mismatches: string[] = [];
      for (const [i, line] of lines.entries()) {
        const comma = line.indexOf(',');
        const bits = line.slice(0, comma);
        const expected = line.slice(comma + 1);
        const got = canonicalize(doubleFromBits(bits));
        if (got !== expected) mismatches.push(`line ${i + 1}: bits ${bits} expected ${expected} got ${got}`);
      }
      expect(mismatches.slice(0, 20)).toEqual([]);
    });

    it('prints the same text for a number inside an object as alone', () => {
      const [bits, expected] = lines[2].split(',');
      expect(canonicalize({ n: doubleFromBits(bits) })).toBe(`{"n":${expected}}`);
    });
  });

  describe('when a value has no JSON representation', () => {
    it('throws a TypeError rather than answering undefined', () => {
      expect(() => canonicalize(undefined)).toThrow(TypeError);
      expect(() => canonicalize(() => 1)).toThrow(TypeError);
    });
  });
});

const reference = canonicalizePackage as unknown as (value: unknown) => string;

/** A small deterministic generator (mulberry32), so a failure names a seed that reproduces it. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Names and strings that sort and escape differently: array-index names, escapes, non-ASCII, pairs.
const NAMES = ['a', 'b', 'B', '0', '1', '10', '9', '01', 'é', '€', '\u{1f600}', 'a"b', 'a\\b', '\n', ' ', 'proof', '@context', 'z', 'aa', '\u00e9t'];
const STRINGS = ['', 'x', 'é', '\u{1f600}', '\u0000', '\u001f', '"', '\\', '\u2028', 'line\nbreak', 'tab\t', '\u007f', 'did:key:z6Mk'];
const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789012345680000, 5e-324, 1.7976931348623157e308, 0.30000000000000004, 333333333.3333333];

function randomValue(next: () => number, depth: number): unknown {
  const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)];
  const r = next();
  if (depth > 3 || r < 0.35) return pick<unknown>([null, true, false, pick(NUMBERS), pick(STRINGS), next() * 1e6 - 5e5]);
  if (r < 0.6) return Array.from({ length: Math.floor(next() * 5) }, () => randomValue(next, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 6); i > 0; i--) o[pick(NAMES)] = randomValue(next, depth + 1);
  return o;
}

describe('canonicalize against the canonicalize package', () => {
  it('writes every cyberphone vector as the package does', () => {
    for (const name of names) {
      const input = JSON.parse(read(`input/${name}.json`).toString('utf8'));
      expect(canonicalize(input), name).toBe(reference(input));
    }
  });

  it('writes 2,000 generated values as the package does (names that are array indexes, escapes, pairs, numbers)', () => {
    const next = rng(53);
    for (let i = 0; i < 2000; i++) {
      const value = randomValue(next, 0);
      expect(canonicalize(value), JSON.stringify(value)).toBe(reference(value));
    }
  });

  it('writes objects of many names as the package does: a few (sorted by insertion), over 32 (by Array.sort), past the names kept quoted', () => {
    const next = rng(8785);
    for (const size of [2, 7, 32, 33, 120, 1500]) {
      const value: Record<string, unknown> = {};
      for (let i = 0; i < size; i++) value[`${NAMES[i % NAMES.length]}${Math.floor(next() * 1e6)}`] = i;
      expect(canonicalize(value), String(size)).toBe(reference(value));
      expect(canonicalize({ a: value, '\u00e9': [value] }), String(size)).toBe(reference({ a: value, '\u00e9': [value] }));
    }
  });

  it('leaves out undefined members and writes undefined array items as null, as the package does', () => {
    const value = { b: undefined, a: [1, undefined, { d: undefined, c: 2 }] };
    expect(canonicalize(value)).toBe('{"a":[1,null,{"c":2}]}');
    expect(canonicalize(value)).toBe(reference(value));
  });

  it('refuses NaN and the infinities anywhere, as the package does', () => {
    for (const bad of [Number.NaN, { a: [Number.POSITIVE_INFINITY] }, [{ b: Number.NEGATIVE_INFINITY }]]) {
      expect(() => canonicalize(bad)).toThrow();
      expect(() => reference(bad)).toThrow();
    }
  });

  it("follows a value's toJSON, as the package does", () => {
    const value = { when: new Date(Date.UTC(2026, 0, 1)), z: { toJSON: () => ({ y: 1, x: 2 }) } };
    expect(canonicalize(value)).toBe('{"when":"2026-01-01T00:00:00.000Z","z":{"x":2,"y":1}}');
    expect(canonicalize(value)).toBe(reference(value));
  });
});

describe('canonicalize with changes to the top object', () => {
  const doc = { type: 'T', proof: { proofValue: 'z1', b: 1 }, '@context': ['a'], '10': 1 };

  it('leaves out a member changed to undefined, without touching the value', () => {
    const { proof: _proof, ...rest } = doc;
    expect(canonicalize(doc, { proof: undefined })).toBe(reference(rest));
    expect(doc.proof).toEqual({ proofValue: 'z1', b: 1 });
  });

  it('takes only the changes own members: a document may have members named as those every object inherits', () => {
    const named = { constructor: 1, toString: 'x', hasOwnProperty: [true], proof: { b: 1 } };
    expect(canonicalize(named, { proof: undefined })).toBe('{"constructor":1,"hasOwnProperty":[true],"toString":"x"}');
  });

  it('leaves the changes aside for a value that is not an object, as for one that has them all', () => {
    expect(canonicalize(['a', 'b'], { proof: undefined })).toBe('["a","b"]');
    expect(canonicalize('did:key:z6Mk', { proof: undefined })).toBe('"did:key:z6Mk"');
    expect(canonicalize({ proof: 1 }, { proof: undefined })).toBe('{}');
  });

  it('writes a changed or added member in its place in the order', () => {
    expect(canonicalize(doc, { '@context': ['b', 'c'], proof: undefined, added: true })).toBe(
      reference({ '10': 1, '@context': ['b', 'c'], added: true, type: 'T' }),
    );
  });
});
