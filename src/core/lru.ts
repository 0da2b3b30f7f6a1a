// A bounded map that forgets the least recently used entry first, on top of Map's insertion
// order (a hit or a store moves the key to the end; an insert past the capacity drops the
// first, oldest, key): the caches of keys, proofs and tool results that are made once and read
// many times, and the counts a node holds in memory.

/** A bounded map that forgets the least recently used entry first. */
export class Lru<V, K = string> {
  private readonly map = new Map<K, V>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('Lru capacity must be a positive integer');
  }

  /** The value for key (and marks it most recently used), or undefined. */
  get(key: K): V | undefined {
    if (!this.map.has(key)) return undefined;
    const v = this.map.get(key) as V;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  /** Stores key -> value as the most recently used entry. */
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  /** How many entries are held. */
  get size(): number {
    return this.map.size;
  }

  /** Forgets every entry. */
  clear(): void {
    this.map.clear();
  }
}
