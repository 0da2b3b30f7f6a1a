// The shared reader of the event streams (src/http/event-feed.ts), over a store whose reads and
// change notices the test controls.
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/core/index.js';
import { EventFeed } from '../../src/http/event-feed.js';
import type { Store } from '../../src/store/index.js';

function fakeStore() {
  const reads: Array<{ gte: string; done: (rows: Array<[string, LogEntry]>) => void }> = [];
  let notify: (() => void) | undefined;
  let watchers = 0;
  const store = {
    list: (_space: unknown, range: { gte: string }) => new Promise((done) => reads.push({ gte: range.gte, done })),
    watch: (_space: unknown, listener: () => void) => {
      watchers += 1;
      notify = listener;
      return () => void (watchers -= 1);
    },
  } as unknown as Store;
  return { store, reads, notify: () => notify?.(), watchers: () => watchers };
}

const entry = (seq: number) => ({ seq, id: `e${seq}` }) as unknown as LogEntry;
const row = (seq: number): [string, LogEntry] => [String(seq), entry(seq)];

describe('EventFeed', () => {
  it('shares one read among the streams asking from the same entry, and serialises each entry once', async () => {
    const s = fakeStore();
    let serialised = 0;
    const feed = new EventFeed(s.store, (e) => (serialised++, `id: ${e.seq}\n\n`));
    const asks = [feed.from(0), feed.from(0), feed.from(0)];
    expect(s.reads).toHaveLength(1);
    s.reads[0].done([row(0), row(1)]);
    for (const got of await Promise.all(asks)) expect(got.map((f) => f.event)).toEqual(['id: 0\n\n', 'id: 1\n\n']);
    expect(serialised).toBe(2);
    // Held in memory now: no second read.
    expect((await feed.from(1)).map((f) => f.entry.seq)).toEqual([1]);
    expect(s.reads).toHaveLength(1);
  });

  it('never lets a stream woken by an append join a read that began before it', async () => {
    const s = fakeStore();
    const feed = new EventFeed(s.store, (e) => String(e.seq));
    const woken: number[] = [];
    const stop = feed.subscribe(() => woken.push(1));
    const early = feed.from(5); // began before entry 5 landed: it will find nothing
    s.notify(); // entry 5 is appended
    expect(woken).toHaveLength(1);
    const late = feed.from(5);
    expect(s.reads).toHaveLength(2);
    s.reads[0].done([]);
    s.reads[1].done([row(5)]);
    expect(await early).toEqual([]);
    expect((await late).map((f) => f.entry.seq)).toEqual([5]);
    stop();
    expect(s.watchers()).toBe(0);
  });
});
