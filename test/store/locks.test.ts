// KeyLocks (src/store/locks.ts): per-key async mutexes under Store.transact.
import { describe, expect, it } from 'vitest';
import { KeyLocks } from '../../src/store/locks.js';

// Lets every promise that can settle now settle (ordering, not timing).
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Starts acquire(keys) and exposes whether it has been granted yet. */
function request(locks: KeyLocks, keys: string[]) {
  const state = { granted: false, release: undefined as undefined | (() => void) };
  const done = locks.acquire(keys).then((release) => {
    state.granted = true;
    state.release = release;
    return release;
  });
  return { state, done };
}

describe('KeyLocks', () => {
  it('grants a free key at once', async () => {
    const locks = new KeyLocks();
    const release = await locks.acquire(['a']);
    expect(locks.size).toBe(1);
    release();
    expect(locks.size).toBe(0);
  });

  it('makes a second holder of the same key wait until the first releases', async () => {
    const locks = new KeyLocks();
    const first = await locks.acquire(['a']);
    const second = request(locks, ['a']);
    await settle();
    expect(second.state.granted).toBe(false);
    first();
    (await second.done)();
    expect(second.state.granted).toBe(true);
    expect(locks.size).toBe(0);
  });

  it('grants waiters of one key in the order they asked', async () => {
    const locks = new KeyLocks();
    const order: number[] = [];
    const first = await locks.acquire(['a']);
    const waiters = [1, 2, 3, 4].map((i) =>
      locks.acquire(['a']).then((release) => {
        order.push(i);
        release();
      }),
    );
    first();
    await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3, 4]);
    expect(locks.size).toBe(0);
  });

  it('lets holders of disjoint keys hold them at the same time', async () => {
    const locks = new KeyLocks();
    const a = await locks.acquire(['a']);
    const b = request(locks, ['b', 'c']);
    await settle();
    expect(b.state.granted).toBe(true);
    expect(locks.size).toBe(3);
    a();
    b.state.release!();
    expect(locks.size).toBe(0);
  });

  it('makes a multi-key request wait for any one key it shares', async () => {
    const locks = new KeyLocks();
    const c = await locks.acquire(['c']);
    const abc = request(locks, ['a', 'b', 'c']);
    await settle();
    expect(abc.state.granted).toBe(false);
    c();
    (await abc.done)();
    expect(locks.size).toBe(0);
  });

  it('takes a key listed twice once, without waiting on itself', async () => {
    const locks = new KeyLocks();
    const release = await locks.acquire(['a', 'b', 'a']);
    expect(locks.size).toBe(2);
    release();
    expect(locks.size).toBe(0);
  });

  it('takes an empty key list at once', async () => {
    const locks = new KeyLocks();
    (await locks.acquire([]))();
    expect(locks.size).toBe(0);
  });

  it('ignores a second call of the same release (it never frees a later holder)', async () => {
    const locks = new KeyLocks();
    const first = await locks.acquire(['a']);
    const second = request(locks, ['a']);
    const third = request(locks, ['a']);
    first();
    await second.done;
    first(); // again: must not let the third in while the second holds the key
    await settle();
    expect(third.state.granted).toBe(false);
    second.state.release!();
    (await third.done)();
    expect(locks.size).toBe(0);
  });

  it('never deadlocks on overlapping key sets asked in different orders, and leaks nothing', async () => {
    const locks = new KeyLocks();
    const names = ['w', 'x', 'y', 'z'];
    const held = new Set<string>();
    let overlaps = 0;
    const jobs = Array.from({ length: 200 }, async (_, i) => {
      const subset = names.filter((_, j) => ((i + 1) >> j) & 1 || j === i % 4);
      const keys = i % 2 ? [...subset].reverse() : subset;
      const release = await locks.acquire(keys);
      for (const k of subset) {
        if (held.has(k)) overlaps++;
        held.add(k);
      }
      await settle();
      for (const k of subset) held.delete(k);
      release();
    });
    await Promise.all(jobs);
    expect(overlaps).toBe(0);
    expect(locks.size).toBe(0);
  });
});
