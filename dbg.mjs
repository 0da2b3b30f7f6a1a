import { cryptoRandom, FakeClock, freshNodeKeys } from './dist/src/core/index.js';
import { enqueueLogEntry } from './dist/src/domain/log.js';
import { createApp } from './dist/src/http/app.js';
import { openTempStore } from './dist/src/store/index.js';
const { store, dispose } = await openTempStore();
const clock = new FakeClock();
const app = await createApp({ store, clock, keys: freshNodeKeys(cryptoRandom), config: { rateLimit: { burst: 1e6, refillPerSecond: 1e6 } } });
await app.ready();
await app.listen({ port: 0, host: '127.0.0.1' });
const ids = [];
for (let i = 0; i < 10; i++) ids.push(await store.transact([`t:a${i}`], async (tx) => enqueueLogEntry(tx, app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { step: `a${i}` } })));
console.log('enqueued');
for (const id of ids) { const e = await Promise.race([app.akas.log.appended(id), new Promise((r) => setTimeout(() => r('TIMEOUT'), 2000))]); console.log('got', typeof e === 'string' ? e : e.seq); }
await app.close(); await dispose();
