// The time-bounded map behind the read path's caches (src/http/generations.ts).
import { describe, expect, it } from 'vitest';
import { Generations } from '../../src/http/generations.js';

describe('Generations', () => {
  it('keeps an entry while it is used, and lets it go one to two periods after its last use', () => {
    const gone: string[] = [];
    const g = new Generations<string, number>(1000, 100, 0, (m) => gone.push(...m.keys()));
    g.set('used', 1, 0);
    g.set('idle', 2, 0);
    for (let t = 500; t <= 5000; t += 500) expect(g.get('used', t)).toBe(1);
    expect(g.peek('idle')).toBeUndefined();
    expect(gone).toEqual(['idle']);
    expect(g.get('used', 8000)).toBeUndefined(); // unused for more than two periods
  });

  it('holds at most twice its bound of entries, whatever the number of keys within a period', () => {
    const g = new Generations<number, number>(60_000, 10, 0);
    for (let i = 0; i < 1000; i++) g.set(i, i, 0);
    expect(g.size).toBeLessThanOrEqual(20);
    expect(g.get(999, 0)).toBe(999);
  });

  it('forgets a deleted entry in either generation, and a peek is not a use', () => {
    const g = new Generations<string, number>(1000, 100, 0);
    g.set('a', 1, 0);
    g.get('a', 1000); // now in the young generation again
    g.set('b', 2, 1000);
    g.delete('a');
    expect(g.get('a', 1000)).toBeUndefined();
    expect(g.peek('b')).toBe(2);
    expect(g.get('b', 2500)).toBe(2);
  });
});
