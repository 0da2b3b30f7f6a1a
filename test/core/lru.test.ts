// The bounded least-recently-used map of src/core/lru.ts.
import { describe, expect, it } from 'vitest';
import { Lru } from '../../src/core/index.js';

describe('Lru', () => {
  it('drops the least recently used entry past its capacity, a read or a store counting as a use', () => {
    const lru = new Lru<number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([1, undefined, 3]);
    lru.set('a', 10); // stored again: most recent, c is next to go
    lru.set('d', 4);
    expect([lru.get('a'), lru.get('c'), lru.get('d'), lru.size]).toEqual([10, undefined, 4, 2]);
    lru.delete('a');
    expect([lru.get('a'), lru.size]).toEqual([undefined, 1]);
    lru.clear();
    expect(lru.size).toBe(0);
  });

  it('takes keys of any type, and refuses a capacity that is not a positive integer', () => {
    const byObject = new Lru<string, object>(1);
    const k = {};
    byObject.set(k, 'x');
    expect(byObject.get(k)).toBe('x');
    expect(() => new Lru(0)).toThrow(RangeError);
    expect(() => new Lru(1.5)).toThrow(RangeError);
  });
});
