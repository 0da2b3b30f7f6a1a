// RFC 8785 (JCS) conformance of src/core/jcs.ts against the cyberphone reference test data
// (test/vectors/cyberphone-json-canonicalization, see its README).
import { readdirSync, readFileSync } from 'node:fs';
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
