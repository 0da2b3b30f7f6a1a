// src/core/strict-json.ts reads text with no backslash and no surrogate (a signed document,
// nearly always) by comparing each key in place with the keys before it in its object; any other
// text by decoding its keys. These tests hold the first path to the second's answers: the same
// text put beside a string with an escape ("\n") goes the other way, and must be judged alike.
import { describe, expect, it } from 'vitest';
import { parseStrictJson, strictJsonProblem } from '../../src/core/strict-json.js';

/** The same text read by the path for text with escapes: one array item more, with a backslash. */
const escaped = (text: string) => `[${text},"\\n"]`;

function reasonOf(text: string): string | null {
  const r = parseStrictJson(text);
  return r.ok ? null : r.reason;
}

// A small deterministic generator: few key names, so duplicates come often; objects past 16 keys.
function* texts(count: number): Generator<string> {
  let seed = 53;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const names = ['a', 'b', 'ab', 'ba', 'id', 'type', 'k0', 'k1', 'proof', '@context'];
  const value = (depth: number): string => {
    const pick = depth > 3 ? next(3) : next(6);
    if (pick === 0) return String(next(100));
    if (pick === 1) return `"${names[next(names.length)]}:x"`;
    if (pick === 2) return next(2) ? 'true' : 'null';
    if (pick === 3) return `[${Array.from({ length: next(4) }, () => value(depth + 1)).join(',')}]`;
    const wide = depth < 2 && next(8) === 0;
    const size = wide ? 17 + next(12) : next(5);
    const keys = Array.from({ length: size }, (_, i) => (wide && next(40) !== 0 ? `w${i}` : names[next(names.length)]));
    return `{${keys.map((k) => `"${k}":${value(depth + 1)}`).join(',')}}`;
  };
  for (let i = 0; i < count; i++) yield value(0);
}

describe('parseStrictJson on text with no escape', () => {
  it('judges 3,000 generated texts as it judges them with an escape beside', () => {
    let refused = 0;
    for (const text of texts(3000)) {
      const plain = reasonOf(text);
      expect(plain, text).toBe(reasonOf(escaped(text)));
      expect(strictJsonProblem(text), text).toBe(plain);
      if (plain !== null) refused++;
    }
    // Both kinds were met: the comparison above is not of accepted texts only.
    expect(refused).toBeGreaterThan(300);
    expect(refused).toBeLessThan(2700);
  });

  it('compares a key with those of its own object only, nested objects closed', () => {
    expect(reasonOf('{"a":{"b":1,"c":2},"b":2,"c":{"a":1}}')).toBeNull();
    expect(reasonOf('{"a":{"b":1,"c":2},"a":3}')).toBe('duplicate key "a"');
    expect(reasonOf('{"ab":1,"ba":2,"ab ":3,"ab":4}')).toBe('duplicate key "ab"');
    expect(reasonOf('[{"a":1},[{"a":2},{"b":1,"b":2}]]')).toBe('duplicate key "b"');
  });

  it('finds a duplicate in an object past 16 keys, of a key before or after the 16th', () => {
    const keys = Array.from({ length: 30 }, (_, i) => `"k${i}":${i}`);
    expect(reasonOf(`{${keys.join(',')}}`)).toBeNull();
    expect(reasonOf(`{${keys.join(',')},"k2":0}`)).toBe('duplicate key "k2"');
    expect(reasonOf(`{${keys.join(',')},"k25":0}`)).toBe('duplicate key "k25"');
    // A text refused inside a wide object leaves nothing behind for the next one read.
    expect(reasonOf(`{"x":{${keys.join(',')},"k25":0}}`)).toBe('duplicate key "k25"');
    expect(reasonOf(`{"x":{"k25":0,"y":1}}`)).toBeNull();
    expect(reasonOf(`{"x":{${keys.slice(0, 20).join(',')}},"y":{"k0":1,"k1":2}}`)).toBeNull();
  });
});
