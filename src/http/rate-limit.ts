// The token bucket of PROTOCOL 1.4 (120 burst, 2/s refill by default; per Bearer, else per IP).
// Where the buckets live is chosen where the node is assembled (Strategies.buckets,
// src/node/strategies.ts): held in this process's memory and written behind, when it holds its
// store alone (src/store/buckets.ts); in a store several processes share, every draw one atomic
// step there, so a burst split between processes is limited as one (SharedStore.buckets). This
// file shapes the draws into PROTOCOL 1.4's answers, and sweeps the buckets full again every
// few minutes (one stored record per caller seen would otherwise grow the store for good).
import { ServiceError, type Clock } from '../core/index.js';
import type { Drawn, TokenBucketStore } from '../store/index.js';

export class TokenBuckets {
  private sweeper?: NodeJS.Timeout;
  private sweeping?: Promise<number>;

  constructor(
    private readonly buckets: TokenBucketStore,
    private readonly clock: Clock,
    readonly burst: number,
    readonly refillPerSecond: number,
    sweepEveryMs = 10 * 60_000,
  ) {
    if (sweepEveryMs > 0) {
      this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), sweepEveryMs);
      this.sweeper.unref();
    }
  }

  /** Forgets every bucket full again; answers how many stored records went. */
  sweep(): Promise<number> {
    this.sweeping ??= this.buckets.sweep(this.burst, this.refillPerSecond, this.clock.now()).finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Tokens left for key, without taking one (preview's remainingBucket). */
  async peek(key: string): Promise<number> {
    return Math.floor((await this.buckets.draw(key, this.burst, this.refillPerSecond, this.clock.now(), false)).tokens);
  }

  /**
   * Takes `count` tokens (one per request; a costly search more: PROTOCOL 1.4), all or none, or
   * throws the 429 of PROTOCOL 1.4 (scope per-bearer or per-ip). A bucket this process holds in
   * memory is drawn at once: nothing is returned, or the 429 is thrown, with no promise on the
   * way (the hot path of every request); a promise only when the bucket must be read first (from
   * the store, or drawn in a shared one).
   */
  take(key: string, scope: 'per-bearer' | 'per-ip', note?: string, count = 1): Promise<void> | undefined {
    // Never more than a full bucket holds (a node run with a tiny burst), or the draw could never succeed.
    if (count > 1) count = Math.max(1, Math.min(count, Math.floor(this.burst)));
    const drawn = this.buckets.draw(key, this.burst, this.refillPerSecond, this.clock.now(), count);
    if (drawn instanceof Promise) return drawn.then((d) => this.check(d, scope, note, count));
    return this.check(drawn, scope, note, count);
  }

  private check(drawn: Drawn, scope: 'per-bearer' | 'per-ip', note: string | undefined, count: number): undefined {
    if (!drawn.taken) throw this.limited(drawn.tokens, scope, note, count);
    return undefined;
  }

  /** The 429 of a draw of `count`; `note` says why this bucket was drawn (an uncalibrated agent's is its IP's). */
  private limited(tokens: number, scope: 'per-bearer' | 'per-ip', note: string | undefined, count: number): ServiceError {
    const retryAfter = Math.ceil((count - tokens) / this.refillPerSecond);
    return new ServiceError('rate_limited', `Too many requests: the bucket holds ${this.burst} and refills ${this.refillPerSecond} per second.`, {
      scope,
      retryAfter,
      hint: `Wait ${retryAfter} s (the retry-after header) and go on; bursts up to ${this.burst} are fine.${note ? ` ${note}` : ''}`,
    });
  }

  /** Writes what only this process's memory holds of the buckets (the held ones: written behind every few seconds anyway). */
  flush(): Promise<void> {
    return this.buckets.flush();
  }

  async close() {
    if (this.sweeper) clearInterval(this.sweeper);
    await this.sweeping?.catch(() => undefined);
    await this.buckets.close();
  }
}
