/** Per-key async mutexes. Keys are taken in sorted order so two holders never deadlock. */
export class KeyLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async acquire(keys: string[]): Promise<() => void> {
    const sorted = [...new Set(keys)].sort();
    const releases: Array<() => void> = [];
    for (const key of sorted) {
      const prev = this.tails.get(key);
      let release!: () => void;
      const mine = new Promise<void>((resolve) => (release = resolve));
      const tail = prev ? prev.then(() => mine) : mine;
      this.tails.set(key, tail);
      if (prev) await prev;
      releases.push(() => {
        release();
        if (this.tails.get(key) === tail) this.tails.delete(key);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const r of releases.reverse()) r();
    };
  }

  /** Number of keys with a holder or waiters (tests use it to see that nothing leaks). */
  get size() {
    return this.tails.size;
  }
}
