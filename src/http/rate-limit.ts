// The token bucket of PROTOCOL 1.4 (120 burst, 2/s refill by default; per Bearer, else per IP).
// On an embedded store, buckets live in memory for speed and are written behind to the store
// (not synced) every few seconds and at close, so a restart does not hand every caller a
// fresh burst. On a store that several processes share (Store.buckets), every draw is one
// atomic step in the store, so a burst split between processes is limited as one.
//
// A bucket that has refilled to its burst carries no information, so buckets full again are
// swept from memory and from the store every few minutes: one stored record per caller seen
// would otherwise grow the store for good (every IP that ever sent one request).
import { ServiceError, type Clock } from '../core/index.js';
import { space, type Store } from '../store/index.js';

interface Bucket {
  tokens: number;
  at: number;
}

const Buckets = space<Bucket>('buckets');

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly dirty = new Set<string>();
  private timer?: NodeJS.Timeout;
  private sweeper?: NodeJS.Timeout;
  private sweeping?: Promise<number>;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    readonly burst: number,
    readonly refillPerSecond: number,
    flushEveryMs = 5000,
    sweepEveryMs = 10 * 60_000,
  ) {
    if (flushEveryMs > 0 && !store.buckets) {
      this.timer = setInterval(() => void this.flush(), flushEveryMs);
      this.timer.unref();
    }
    if (sweepEveryMs > 0) {
      this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), sweepEveryMs);
      this.sweeper.unref();
    }
  }

  /**
   * Forgets every bucket full again (in memory and in the store); answers how many stored
   * records went. A bucket drawn since its last flush stays (the flush writes it).
   */
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepOnce().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<number> {
    const now = this.clock.now();
    if (this.store.buckets) return this.store.buckets.sweep(this.burst, this.refillPerSecond, now);
    for (const [k, b] of this.buckets) {
      if (this.dirty.has(k)) continue;
      this.refill(b, now);
      if (b.tokens >= this.burst) this.buckets.delete(k);
    }
    const full: string[] = [];
    for await (const [k, stored] of this.store.iterate(Buckets)) {
      if (this.buckets.has(k) || this.dirty.has(k)) continue;
      const b = { ...stored };
      this.refill(b, now);
      if (b.tokens >= this.burst) full.push(k);
    }
    for (let i = 0; i < full.length; i += 1000) {
      const batch = full.slice(i, i + 1000);
      await this.store.transact(
        batch.map((k) => `bucket:${k}`),
        async (tx) => {
          // A caller that came back while the sweep read holds its bucket in memory now: keep it.
          for (const k of batch) if (!this.buckets.has(k)) tx.del(Buckets, k);
        },
        { durable: false },
      );
    }
    return full.length;
  }

  private refill(b: Bucket, now: number) {
    const elapsed = Math.max(0, now - b.at) / 1000;
    b.tokens = Math.min(this.burst, b.tokens + elapsed * this.refillPerSecond);
    b.at = now;
  }

  private async bucket(key: string): Promise<Bucket> {
    let b = this.buckets.get(key);
    if (!b) {
      b = (await this.store.get(Buckets, key)) ?? { tokens: this.burst, at: this.clock.now() };
      // Another request for the same key may have loaded it while we waited.
      b = this.buckets.get(key) ?? b;
      this.buckets.set(key, b);
    }
    return b;
  }

  /** Tokens left for key, without taking one (preview's remainingBucket). */
  async peek(key: string): Promise<number> {
    if (this.store.buckets) return Math.floor((await this.store.buckets.draw(key, this.burst, this.refillPerSecond, this.clock.now(), false)).tokens);
    const b = await this.bucket(key);
    this.refill(b, this.clock.now());
    return Math.floor(b.tokens);
  }

  /**
   * Takes `count` tokens (one per request; a costly search more: PROTOCOL 1.4), all or none, or
   * throws the 429 of PROTOCOL 1.4 (scope per-bearer or per-ip). A bucket
   * this process holds in memory is drawn at once: nothing is returned, or the 429 is thrown,
   * with no promise on the way (the hot path of every request); a promise only when the bucket
   * must be read first (from the store, or drawn in a shared one).
   */
  take(key: string, scope: 'per-bearer' | 'per-ip', note?: string, count = 1): Promise<void> | undefined {
    // Never more than a full bucket holds (a node run with a tiny burst), or the draw could never succeed.
    if (count > 1) count = Math.max(1, Math.min(count, Math.floor(this.burst)));
    if (this.store.buckets) {
      return this.store.buckets.draw(key, this.burst, this.refillPerSecond, this.clock.now(), count).then((drawn) => {
        if (!drawn.taken) throw this.limited(drawn.tokens, scope, note, count);
      });
    }
    const held = this.buckets.get(key);
    if (held) return this.takeFrom(held, key, scope, note, count);
    return this.bucket(key).then((b) => this.takeFrom(b, key, scope, note, count));
  }

  private takeFrom(b: Bucket, key: string, scope: 'per-bearer' | 'per-ip', note: string | undefined, count: number): undefined {
    this.refill(b, this.clock.now());
    this.dirty.add(key);
    if (b.tokens < count) throw this.limited(b.tokens, scope, note, count);
    b.tokens -= count;
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

  async flush() {
    if (this.dirty.size === 0) return;
    const keys = [...this.dirty];
    this.dirty.clear();
    await this.store
      .transact(
        keys.map((k) => `bucket:${k}`),
        async (tx) => {
          for (const k of keys) {
            const b = this.buckets.get(k);
            if (b) tx.put(Buckets, k, b);
          }
        },
        { durable: false },
      )
      .catch(() => undefined); // the store is closing; counts are best-effort by design
    // Keep memory bounded: full buckets carry no information.
    if (this.buckets.size > 50_000) {
      const now = this.clock.now();
      for (const [k, b] of this.buckets) {
        this.refill(b, now);
        if (b.tokens >= this.burst) this.buckets.delete(k);
      }
    }
  }

  async close() {
    if (this.timer) clearInterval(this.timer);
    if (this.sweeper) clearInterval(this.sweeper);
    await this.sweeping?.catch(() => undefined);
    await this.flush();
  }
}
