// The signature memo a reader keeps across reads (verifier/memo.ts; issue 50): a verdict is asked
// for once per key, signature and signed bytes, and answered again as it was, true or false; the
// same signature over other bytes, or under another key, is asked for afresh.
import { describe, expect, it } from 'vitest';
import { ed25519Hex, runNow, type Checking, type SignatureCheck } from '../../src/core/checking.js';
import { generateKeyPair, sign } from '../../src/core/index.js';
import { memoized, SignatureMemo } from '../../verifier/memo.js';

/** Checks each (key, message, signature) in turn; answers the verdicts. */
function* checks(items: Array<[string, string, string]>): Checking<boolean[]> {
  const out: boolean[] = [];
  for (const [key, message, signature] of items) out.push(yield* ed25519Hex(key, message, signature));
  return out;
}

/** Runs a check through the memo, counting the signatures it hands on to be verified. */
function run<T>(check: Checking<T>, memo: SignatureMemo): { value: T; asked: SignatureCheck[] } {
  const asked: SignatureCheck[] = [];
  function* counting(): Checking<T> {
    const inner = memoized(check, memo);
    let step = inner.next();
    while (!step.done) {
      asked.push(step.value);
      step = inner.next(yield step.value);
    }
    return step.value;
  }
  return { value: runNow(counting()), asked };
}

describe('SignatureMemo', () => {
  const a = generateKeyPair();
  const b = generateKeyPair();
  const good = sign(a.privateKey, 'checkpoint');

  it('asks for a verdict once, and answers it again as it was, true or false', () => {
    const memo = new SignatureMemo();
    const items: Array<[string, string, string]> = [
      [a.publicKey, 'checkpoint', good],
      [a.publicKey, 'checkpoint', good],
      [a.publicKey, 'changed', good],
      [a.publicKey, 'changed', good],
    ];
    const first = run(checks(items), memo);
    expect(first.value).toEqual([true, true, false, false]);
    expect(first.asked).toHaveLength(2);
    const again = run(checks(items), memo);
    expect(again.value).toEqual([true, true, false, false]);
    expect(again.asked).toHaveLength(0);
  });

  it('asks afresh for the same signature under another key, and keeps at most its capacity', () => {
    const memo = new SignatureMemo(2);
    expect(run(checks([[b.publicKey, 'checkpoint', good]]), memo)).toMatchObject({ value: [false], asked: [expect.anything()] });
    run(checks([[a.publicKey, 'checkpoint', good]]), memo);
    run(checks([[a.publicKey, 'other', sign(a.privateKey, 'other')]]), memo);
    expect(memo.size).toBe(2);
    // The oldest (b's) went first: asked again.
    expect(run(checks([[b.publicKey, 'checkpoint', good]]), memo).asked).toHaveLength(1);
  });
});
