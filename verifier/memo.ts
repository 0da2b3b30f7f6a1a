// Signature verdicts remembered (issue 50: a reader that checks every read before it uses it).
// A read with full evidence (PROTOCOL 10.7) asks for some twenty signatures, and much of them
// again within the read (its checkpoint opened for the publication and for each status list's
// entry; the log key's endorsement for the read and for its status) and across reads (the same
// judges' signatures and credentials each time a node is read again, the same checkpoint and
// status lists for every hit of a search). A verdict is a pure function of the key, the bytes
// signed and the signature, so it is kept under those three (the bytes by their SHA-256) and
// answered again without the curve arithmetic; a verdict, true or false, is never guessed.
import type { Checking, SignatureCheck } from '../src/core/checking.js';
import { sha256 } from '../src/core/crypto.js';

const hex = (b: Uint8Array) => {
  let s = '';
  for (let i = 0; i < b.length; i++) s += b[i].toString(16).padStart(2, '0');
  return s;
};

/** The verdicts a reader keeps: the most recently used `capacity` of them (a few hundred bytes each). */
export class SignatureMemo {
  private readonly kept = new Map<string, boolean>();
  constructor(readonly capacity = 10_000) {}

  /** The key of a signature check: its algorithm, key, signature and the SHA-256 of what it signs. */
  static key(s: SignatureCheck): string {
    return `${s.algorithm ?? 'Ed25519'}:${s.publicKey.toLowerCase()}:${hex(s.signature)}:${hex(sha256(s.message))}`;
  }

  get(key: string): boolean | undefined {
    const v = this.kept.get(key);
    if (v !== undefined) {
      this.kept.delete(key);
      this.kept.set(key, v);
    }
    return v;
  }

  set(key: string, verdict: boolean): void {
    this.kept.delete(key);
    this.kept.set(key, verdict);
    if (this.kept.size > this.capacity) this.kept.delete(this.kept.keys().next().value as string);
  }

  get size(): number {
    return this.kept.size;
  }
}

/** A check that asks the memo first, and asks for (then keeps) only the verdicts it does not hold. */
export function* memoized<T>(check: Checking<T>, memo: SignatureMemo): Checking<T> {
  let step = check.next();
  while (!step.done) {
    const key = SignatureMemo.key(step.value);
    let verdict = memo.get(key);
    if (verdict === undefined) {
      verdict = yield step.value;
      memo.set(key, verdict);
    }
    step = check.next(verdict);
  }
  return step.value;
}
