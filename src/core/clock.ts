/** Time comes from here, never from Date.now() in handlers, so tests can move a day forward. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class FakeClock implements Clock {
  constructor(private t = Date.UTC(2026, 0, 1, 12)) {}
  now() {
    return this.t;
  }
  advance(ms: number) {
    this.t += ms;
  }
  set(t: number) {
    this.t = t;
  }
}

export const DAY_MS = 24 * 60 * 60 * 1000;
/** Start of the next UTC day after t (the reset of per-day counters). */
export const nextUtcMidnight = (t: number) => (Math.floor(t / DAY_MS) + 1) * DAY_MS;
/** The UTC day number of t (counter keys). */
export const utcDay = (t: number) => Math.floor(t / DAY_MS);
