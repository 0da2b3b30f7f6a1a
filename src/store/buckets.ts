// Token buckets held by the one process of a store it holds alone (an embedded store): in memory
// for speed, and written behind to the store (not synced) every few seconds and at close, so a
// restart does not hand every caller a fresh burst. Atomic because nothing else draws from them:
// the refill and the take of a draw run with no await between. A node on a shared store draws
// from the store's buckets instead (SharedStore.buckets); src/node/strategies.ts chooses.
//
// A bucket that has refilled to its burst carries no information, so buckets full again are
// swept from memory and from the store (sweep, every few minutes by the rate limiter): one stored
// record per caller seen would otherwise grow the store for good (every IP that ever sent one
// request).
import type { Clock } from '../core/index.js';
import { space, type Drawn, type Store, type TokenBucketStore } from './types.js';

interface Bucket {
  tokens: number;
  at: number;
}

/** The buckets written behind (the same space the rate limiter wrote before it moved here). */
const Buckets = space<Bucket>('buckets');
/** Past this many buckets in memory, a flush drops the full ones (they carry no information). */
const HELD_MAX = 50_000;

export class HeldBuckets implements TokenBucketStore {
  private readonly buckets = new Map<string, Bucket>();
  private readonly dirty = new Set<string>();
  private readonly timer?: NodeJS.Timeout;
  /** The capacity and rate of the last draw: a flush that trims memory refills by them. */
  private shape = { burst: Infinity, refillPerSecond: 0 };

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    flushEveryMs = 5000,
  ) {
    if (flushEveryMs > 0) {
      this.timer = setInterval(() => void this.flush(), flushEveryMs);
      this.timer.unref();
    }
  }

  draw(key: string, burst: number, refillPerSecond: number, now: number, take: boolean | number): Drawn | Promise<Drawn> {
    this.shape = { burst, refillPerSecond };
    const count = take === true ? 1 : take === false ? 0 : take;
    const held = this.buckets.get(key);
    if (held) return this.takeFrom(held, key, now, count);
    return this.load(key, burst, now).then((b) => this.takeFrom(b, key, now, count));
  }

  /** Refill and take with no await between: no other draw of this process (the only one) comes between. */
  private takeFrom(b: Bucket, key: string, now: number, count: number): Drawn {
    refill(b, now, this.shape);
    if (count === 0) return { tokens: b.tokens, taken: false };
    this.dirty.add(key);
    if (b.tokens < count) return { tokens: b.tokens, taken: false };
    b.tokens -= count;
    return { tokens: b.tokens, taken: true };
  }

  private async load(key: string, burst: number, now: number): Promise<Bucket> {
    const stored = (await this.store.get(Buckets, key)) ?? { tokens: burst, at: now };
    // Another draw of the same key may have loaded it while this one read.
    const b = this.buckets.get(key) ?? stored;
    this.buckets.set(key, b);
    return b;
  }

  /**
   * Forgets every bucket full again (in memory and in the store); answers how many stored
   * records went. A bucket drawn since its last flush stays (the flush writes it).
   */
  async sweep(burst: number, refillPerSecond: number, now: number): Promise<number> {
    const shape = { burst, refillPerSecond };
    for (const [k, b] of this.buckets) {
      if (this.dirty.has(k)) continue;
      refill(b, now, shape);
      if (b.tokens >= burst) this.buckets.delete(k);
    }
    const full: string[] = [];
    for await (const [k, stored] of this.store.iterate(Buckets)) {
      if (this.buckets.has(k) || this.dirty.has(k)) continue;
      const b = { ...stored };
      refill(b, now, shape);
      if (b.tokens >= burst) full.push(k);
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

  /** Writes the buckets drawn since the last flush, not synced (a crash may forget a few draws). */
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
    if (this.buckets.size > HELD_MAX) {
      const now = this.clock.now();
      for (const [k, b] of this.buckets) {
        refill(b, now, this.shape);
        if (b.tokens >= this.shape.burst) this.buckets.delete(k);
      }
    }
  }

  async close() {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}

function refill(b: Bucket, now: number, shape: { burst: number; refillPerSecond: number }) {
  const elapsed = Math.max(0, now - b.at) / 1000;
  b.tokens = Math.min(shape.burst, b.tokens + elapsed * shape.refillPerSecond);
  b.at = now;
}
