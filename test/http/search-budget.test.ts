// What a search may cost one caller (src/http/search-budget.ts, PROTOCOL 1.4, 10.6): the
// surcharge of a costly query, and at most two searches running per caller, the others
// waiting their turn while another caller's start at once.
import { describe, expect, it } from 'vitest';
import { CallerGate, SEARCHES_PER_CALLER, searchSurcharge } from '../../src/http/search-budget.js';

/** A call the test ends when it wants. */
function held() {
  let end!: () => void;
  const done = new Promise<string>((resolve) => (end = () => resolve('done')));
  return { fn: () => done, end };
}

describe('the search budget of one caller', () => {
  it('charges one token more per typo lookup after the first: nothing for short or exact words, 3 at most', () => {
    expect(searchSurcharge('pdf')).toBe(0);
    expect(searchSurcharge('quaternion')).toBe(0);
    expect(searchSurcharge('quaternion interpolator')).toBe(1);
    expect(searchSurcharge('the quaternion of an interpolator')).toBe(1); // function words are left out
    expect(searchSurcharge(Array.from({ length: 33 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}`).join(' '))).toBe(3);
  });

  it(`runs ${SEARCHES_PER_CALLER} calls of a caller at once; the next waits for one of them, while another caller's runs at once`, async () => {
    const gate = new CallerGate();
    const a = [held(), held(), held()];
    const started: string[] = [];
    const run = (key: string, name: string, call: { fn: () => Promise<string> }) =>
      gate.run(key, () => {
        started.push(name);
        return call.fn();
      });
    const answers = a.map((c, i) => run('ip:a', `a${i}`, c));
    await Promise.resolve();
    expect(started).toEqual(['a0', 'a1']);
    expect(gate.load('ip:a')).toEqual({ running: 2, waiting: 1 });
    const b = held();
    const bAnswer = run('ip:b', 'b0', b);
    expect(started).toEqual(['a0', 'a1', 'b0']);
    b.end();
    expect(await bAnswer).toBe('done');
    a[1].end();
    expect(await answers[1]).toBe('done');
    expect(started).toEqual(['a0', 'a1', 'b0', 'a2']);
    a[0].end();
    a[2].end();
    await Promise.all(answers);
    // Nothing kept for a caller with nothing running.
    expect(gate.load('ip:a')).toEqual({ running: 0, waiting: 0 });
  });

  it('passes the place of a call that failed to the next', async () => {
    const gate = new CallerGate(1);
    const failing = gate.run('ip:a', () => Promise.reject(new Error('stopped')));
    const next = gate.run('ip:a', async () => 'ran');
    await expect(failing).rejects.toThrow('stopped');
    expect(await next).toBe('ran');
  });
});
