// src/core/strict-json.ts: the JSON a signed document may be, and isDateTimeStamp of
// src/core/credential.ts.
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/core/index.js';
import { isDateTimeStamp, timeOf } from '../../src/core/credential.js';
import { parseDidKeyUrl } from '../../src/core/didkey.js';
import { hasLoneSurrogate, jsonDepth, parseStrictJson } from '../../src/core/strict-json.js';

describe('parseStrictJson', () => {
  it('reads what JSON.parse reads when it is strict', () => {
    expect(parseStrictJson('{"a":[1,{"b":"c"}],"d":"\\u00e9\\ud83d\\ude00"}')).toEqual({ ok: true, value: { a: [1, { b: 'c' }], d: 'é😀' } });
    expect(parseStrictJson(Buffer.from('\ufeff[1]'))).toEqual({ ok: true, value: [1] });
    // The same key in two different objects is fine.
    expect(parseStrictJson('[{"a":1},{"a":2}]').ok).toBe(true);
    expect(parseStrictJson('{"a":{"a":1}}').ok).toBe(true);
  });

  it('refuses duplicate keys, even spelled with escapes', () => {
    expect(parseStrictJson('{"a":1,"a":2}')).toMatchObject({ ok: false, reason: 'duplicate key "a"' });
    expect(parseStrictJson('{"x":{"b":1,"c":[{"k":1,"\\u006b":2}]}}')).toMatchObject({ ok: false, reason: 'duplicate key "k"' });
  });

  it('refuses lone surrogates, escaped or raw, in keys and values, and bytes that are not UTF-8', () => {
    expect(parseStrictJson('{"a":"\\ud800"}').ok).toBe(false);
    expect(parseStrictJson('{"\\udc00":1}').ok).toBe(false);
    expect(parseStrictJson('["x\ud800y"]').ok).toBe(false);
    expect(parseStrictJson(Buffer.from([0x5b, 0x22, 0xc3, 0x28, 0x22, 0x5d]))).toEqual({ ok: false, reason: 'not UTF-8' });
    expect(hasLoneSurrogate('\ud83d\ude00')).toBe(false);
    expect(hasLoneSurrogate('\ude00\ud83d')).toBe(true);
  });

  it('refuses JSON nested deeper than MAX_JSON_DEPTH', () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(parseStrictJson(nest(MAX_JSON_DEPTH)).ok).toBe(true);
    expect(parseStrictJson(nest(MAX_JSON_DEPTH + 1))).toEqual({ ok: false, reason: `nested ${MAX_JSON_DEPTH + 1} levels deep (at most ${MAX_JSON_DEPTH})` });
    expect(parseStrictJson(`{"a":${nest(20_000)}}`).ok).toBe(false);
  });

  it('names the depth, not a duplicate key found on the way, of JSON both too deep and not strict', () => {
    const deep = `{"a":1,"a":2,"b":${'['.repeat(MAX_JSON_DEPTH + 5)}${']'.repeat(MAX_JSON_DEPTH + 5)}}`;
    expect(parseStrictJson(deep)).toEqual({ ok: false, reason: `nested ${MAX_JSON_DEPTH + 6} levels deep (at most ${MAX_JSON_DEPTH})` });
  });

  it('finds a duplicate among many keys of one object, as among few', () => {
    const keys = Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`);
    expect(parseStrictJson(`{${keys.join(',')}}`).ok).toBe(true);
    expect(parseStrictJson(`{${keys.join(',')},"k3":0}`)).toMatchObject({ ok: false, reason: 'duplicate key "k3"' });
    expect(parseStrictJson(`{${keys.slice(0, 5).join(',')},"k3":0}`)).toMatchObject({ ok: false, reason: 'duplicate key "k3"' });
  });

  it('counts nesting outside strings only, escaped quotes and backslashes included', () => {
    expect(jsonDepth('1')).toBe(0);
    expect(jsonDepth('{"a":[1,{"b":[]}],"c":{}}')).toBe(4);
    expect(jsonDepth('["[[[{{{"]')).toBe(1);
    expect(jsonDepth(String.raw`["a\\"," [[[ \" [[[ ",[]]`)).toBe(2);
    expect(jsonDepth(String.raw`{"k\\\"[[":[[]]}`)).toBe(3);
  });

  it('refuses what is not JSON at all', () => {
    expect(parseStrictJson('{"a":1').ok).toBe(false);
    expect(parseStrictJson('').ok).toBe(false);
  });
});

describe('isDateTimeStamp', () => {
  it('takes XML Schema dateTimeStamps: a real date and time, with a zone', () => {
    for (const ok of [
      '2026-01-01T00:00:00Z',
      '2026-01-01T12:30:45.123Z',
      '2024-02-29T23:59:59+14:00',
      '2026-12-31T24:00:00Z',
      '2026-12-31T24:00:00.000Z',
      '-0044-03-15T12:00:00-05:30',
      '12026-04-30T00:00:00-00:00',
      '2000-02-29T01:02:03.4+01:00',
    ])
      expect(isDateTimeStamp(ok), ok).toBe(true);
  });
  it('refuses a missing zone, impossible dates and times, and other shapes', () => {
    for (const bad of [
      '2026-01-01T00:00:00',
      '2025-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-01-01T25:00:00Z',
      '2026-01-01T24:00:01Z',
      '2026-01-01 00:00:00Z',
      '2026-01-01T00:00:00+15:00',
      '2026-01-01T00:00:00+14:30',
      '2026-01-01T00:00:00+13:60',
      '2026-01-01T24:00:00.5Z',
      '2026-04-31T00:00:00Z',
      '1900-02-29T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-01-00T00:00:00Z',
      '2026-01-01T00:60:00Z',
      '2026-01-01T00:00:60Z',
      '2026-01-01',
      1767225600000,
    ]) {
      expect(isDateTimeStamp(bad), String(bad)).toBe(false);
    }
  });
});

describe('parseDidKeyUrl', () => {
  const mb = 'z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2';
  it('reads the key of did:key:<mb>#<mb>', () => {
    expect(parseDidKeyUrl(`did:key:${mb}#${mb}`)).toEqual({
      did: `did:key:${mb}`,
      multibase: mb,
      publicKey: 'b00d8d938e7f773d51565aad36a623f5344f7f5d1960f9cf3e8e12620ea2810f',
    });
  });
  it('refuses another fragment, no fragment, another method or a broken key', () => {
    for (const bad of [`did:key:${mb}#key-1`, `did:key:${mb}`, `did:web:example.com#${mb}`, `did:key:${mb.slice(0, -1)}#${mb.slice(0, -1)}`, 42])
      expect(parseDidKeyUrl(bad)).toBeNull();
  });
});

describe('isDateTimeStamp and timeOf, with the last stamps they remember', () => {
  it('answer each value for itself when valid and invalid stamps, and stamps read for their time, alternate', () => {
    const valid = ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.005Z', '2024-02-29T23:59:59+14:00'];
    const invalid = ['2026-01-01T00:00:00', '2025-02-29T00:00:00Z', '2026-01-01T00:00:00.005', undefined, 17];
    for (let round = 0; round < 3; round++)
      for (const [i, v] of valid.entries()) {
        expect(isDateTimeStamp(v), v).toBe(true);
        expect(isDateTimeStamp(invalid[i]), String(invalid[i])).toBe(false);
        expect(timeOf(v), v).toBe(Date.parse(v));
        expect(timeOf(invalid[(i + round) % invalid.length])).toBeNaN();
        expect(timeOf(`${v}`.slice(0, -1)), v).toBeNaN();
        expect(timeOf(v), v).toBe(Date.parse(v));
      }
  });
});
