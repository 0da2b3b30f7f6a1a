// An answer whose idempotency record cannot be written is still the first answer (PROTOCOL 1.5):
// the chaos harness found a propose answered 200 while PostgreSQL restarted, its record lost, and
// the replay to another process made a second proposal (seed 5 of test/chaos/regressions.json).
// Here two apps share one store with claims, as two processes on one database do, and the store
// refuses the records' writes (storage_unavailable) while the domain's writes go through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/index.js';
import { Proposals } from '../../src/domain/records.js';
import { createApp } from '../../src/http/app.js';
import { strategiesFor } from '../../src/node/strategies.js';
import type { OpenedStore } from '../../src/store/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { testKeys, type TestNode } from '../helpers/app.js';
import { agent, proposeAs } from '../helpers/flows.js';
import { openTestStore } from '../helpers/stores.js';

let failRecords = false;
/** The store, refusing while failRecords a put of an idempotency record (an answer: it has a fingerprint). */
function recordsFailing(store: OpenedStore): OpenedStore {
  const tx = (t: object) =>
    new Proxy(t, {
      get(target, p) {
        const v = Reflect.get(target, p);
        if (p !== 'put') return typeof v === 'function' ? v.bind(target) : v;
        return (space: unknown, key: string, value: unknown) => {
          if (failRecords && typeof value === 'object' && value !== null && 'fingerprint' in value)
            throw Object.assign(new Error('the database is restarting'), { code: 'storage_unavailable' });
          return v.call(target, space, key, value);
        };
      },
    });
  return new Proxy(store, {
    get(target, p) {
      const v = Reflect.get(target, p);
      if (p !== 'transact') return typeof v === 'function' ? v.bind(target) : v;
      return (locks: string[], fn: (t: object) => Promise<unknown>, o?: unknown) => v.call(target, locks, (t: object) => fn(tx(t)), o);
    },
  });
}

let one: TestNode;
let two: TestNode;
let dispose: () => Promise<void>;
beforeAll(async () => {
  const opened = await openTestStore();
  dispose = opened.dispose;
  const store = recordsFailing(opened.store);
  const keys = testKeys();
  const clock = new FakeClock();
  const make = async () => {
    // Claims, as two processes on one database hold a key (src/node/strategies.ts on PostgreSQL).
    const app = await createApp({
      store,
      clock,
      keys,
      strategies: { ...strategiesFor(opened.store), idempotency: 'claims' },
      config: { sameIpCollusionCheck: false },
    });
    await app.ready();
    return { app, store, clock, keys, dir: opened.dir, close: () => app.close() } as TestNode;
  };
  one = await make();
  two = await make();
});
afterAll(async () => {
  await one.close();
  await two.close();
  await dispose();
});

async function proposalsOf(tag: string) {
  let n = 0;
  for await (const [, p] of one.store.iterate(Proposals)) if (p.proposer?.tag === tag) n++;
  return n;
}

describe('an answer whose record could not be written', () => {
  it('is replayed by its process from memory, waited for by another, and never run twice', async () => {
    const a = await agent(one, 0.8, 100);
    const headers = { 'idempotency-key': 'held-answer' };
    failRecords = true;
    const first = await proposeAs(one, a, 'capability', samplePayload('capability', 901), headers);
    expect(first.statusCode, first.body).toBe(200);
    const again = await proposeAs(one, a, 'capability', samplePayload('capability', 901), headers);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    // Another process waits on the claim, which stays the first request's, while the record cannot be written ...
    const elsewhere = proposeAs(two, a, 'capability', samplePayload('capability', 901), headers);
    let answered = false;
    void elsewhere.then(() => (answered = true));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    // ... and replays the first answer once it is written.
    failRecords = false;
    const replayed = await elsewhere;
    expect(replayed.statusCode).toBe(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json().proposalId).toBe(first.json().proposalId);
    expect(await proposalsOf(a.tag)).toBe(1);
  });
});
