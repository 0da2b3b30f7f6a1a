// A map whose entries live about one period after their last use: two generations, the young
// one taking every entry set or found, swapped out once a period has passed (the old one is
// dropped whole). Every step is O(1), and what it holds is what was used in the last one to two
// periods, whatever the number of keys in use over a day.
//
// The caches of the read path used a map cleared whole at 10,000 entries instead: the /me
// bodies and node answers, each good for one second, were kept until the map filled (10,000
// stale bodies of 2 KiB for agents that polled once), and the auth snapshots of every agent
// seen, so the node's heap grew with the agents and the paths read, then fell at the clear.
export class Generations<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private swapAt: number;

  /**
   * @param periodMs how long an unused entry stays, at least (at most twice that)
   * @param max the most entries kept at once (a bound on a burst of new keys within a period)
   * @param dropped told of the entries that leave (an index beside the map follows it)
   */
  constructor(
    private readonly periodMs: number,
    private readonly max: number,
    now: number,
    private readonly dropped?: (entries: Map<K, V>) => void,
  ) {
    this.swapAt = now + periodMs;
  }

  private tick(now: number) {
    if (now < this.swapAt) return;
    // Two periods without a use: nothing of the young generation either is worth keeping.
    if (now < this.swapAt + this.periodMs) this.swap();
    else {
      this.swap();
      this.swap();
    }
    this.swapAt = now + this.periodMs;
  }

  private swap() {
    const gone = this.old;
    this.old = this.young;
    this.young = new Map();
    if (gone.size) this.dropped?.(gone);
  }

  get(key: K, now: number): V | undefined {
    this.tick(now);
    const hit = this.young.get(key);
    if (hit !== undefined) return hit;
    const old = this.old.get(key);
    if (old !== undefined) {
      this.old.delete(key);
      this.young.set(key, old);
    }
    return old;
  }

  /** The entry, if held, without counting it as a use. */
  peek(key: K): V | undefined {
    return this.young.get(key) ?? this.old.get(key);
  }

  set(key: K, value: V, now: number) {
    this.tick(now);
    this.old.delete(key);
    if (this.young.size >= this.max) this.swap();
    this.young.set(key, value);
  }

  delete(key: K) {
    this.young.delete(key);
    this.old.delete(key);
  }

  clear() {
    this.young.clear();
    this.old.clear();
  }

  get size() {
    return this.young.size + this.old.size;
  }
}
