// The transparency log's append path, on the domain layer (no HTTP): entries appended per
// second end to end as attestations are (32 writers in flight, each submitting an item and
// waiting for it on disk; one appender writing batches, checkpoints every second), as a ratio to
// durable single-put LevelDB transactions per second with 32 in flight, measured in the same
// run; the same rate with 1,000,000 entries already in the log (flat within 20 percent); and
// the latency of an inclusion proof at 1,000,000 entries. The events of judgments go through
// an outbox written in the judgment's own transaction, then the same batches: shown too.
// Targets: appends >= 0.5 of durable writes; rate at 1,000,000 within 20 percent of the rate
// at 10,000. Durable writes are shown
// two ways: group-committed with 32 in flight (the same concurrency as the appends: the strict
// comparison), and one synced write at a time (what a single durable LevelDB write costs).
import { cryptoRandom, FakeClock, freshNodeKeys, systemClock } from '../src/core/index.js';
import { enqueueLogEntry, LogOutbox, TransparencyLog } from '../src/domain/log.js';
import { openTempStore, space, type Store } from '../src/store/index.js';
import { concurrentRate, header, line, perSec, rate, type Rate } from './lib.js';

const TARGET = 0.5;
const FLAT = 0.2;
const SMALL = 10_000;
const LARGE = 1_000_000;
const CONCURRENCY = 32;
const Solo = space<{ n: number }>('bench-solo');

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

interface Bench {
  store: Store;
  log: TransparencyLog;
  dispose: () => Promise<void>;
}

async function open(): Promise<Bench> {
  const { store, dispose } = await openTempStore();
  const log = new TransparencyLog({ store, clock: systemClock, keys: freshNodeKeys(cryptoRandom) }, { checkpointEveryMs: 1000 });
  return { store, log, dispose: async () => (await log.close(), await dispose()) };
}

let n = 0;
const item = () => ({ kind: 'pipeline.facet.v1', tier: 'pipeline' as const, agent: 'ak_benchagt', body: { schemaVersion: '1.0.0', step: `step-${n++}`, subjectSha256: 'ab'.repeat(32), at: Date.now() } });
const ctx = { clock: new FakeClock(Date.now()), random: cryptoRandom };

/** Fills the log to `target` entries fast: large outbox batches, drained by the appender. */
async function fill(b: Bench, target: number) {
  for (;;) {
    const size = (await b.log.head()).size;
    if (size >= target) return;
    const count = Math.min(5000, target - size);
    await b.store.transact(['bench-fill'], async (tx) => {
      for (let i = 0; i < count; i++) enqueueLogEntry(tx, ctx, item());
    }, { durable: false });
    await b.log.drain();
  }
}

/** Appends per second, end to end, as attestations are appended: 32 writers each submit and wait for their entry on disk. */
function appendRate(b: Bench, seconds = 2): Promise<Rate> {
  return concurrentRate('appends', () => b.log.submit(item()), CONCURRENCY, seconds);
}

/**
 * The same through the outbox, as the events of judgments and decisions are appended: each
 * writer's own durable transaction puts the item in the outbox, then the appender's batch.
 */
function outboxRate(b: Bench, seconds = 2): Promise<Rate> {
  let k = 0;
  return concurrentRate(
    'outbox appends',
    async () => {
      const id = await b.store.transact([`w:${k++ % CONCURRENCY}`], async (tx) => enqueueLogEntry(tx, ctx, item()));
      await b.log.appended(id);
    },
    CONCURRENCY,
    seconds,
  );
}

export async function run() {
  header(`log: appends/s with checkpointing (32 writers) vs durable single-put transactions/s (32 in flight); ${SMALL.toLocaleString('en-US')} vs ${LARGE.toLocaleString('en-US')} entries`);
  const t0 = performance.now();
  const small = await open();
  const large = await open();
  try {
    const fillStart = performance.now();
    await fill(small, SMALL);
    await fill(large, LARGE);
    const fillS = (performance.now() - fillStart) / 1000;
    const durable: number[] = [];
    const sequential: number[] = [];
    const atSmall: number[] = [];
    const atLarge: number[] = [];
    const viaOutbox: number[] = [];
    for (let round = 0; round < 3; round++) {
      sequential.push((await rate('durable put, one at a time', () => small.store.transact(['solo'], async (tx) => tx.put(Solo, 'x', { n: 1 })), 1)).opsPerSec);
      durable.push((await concurrentRate('durable put', () => small.store.transact([`solo:${cryptoRandom(2).readUInt16BE(0) % CONCURRENCY}`], async (tx) => tx.put(Solo, 'x', { n: 1 })), CONCURRENCY, 1.5)).opsPerSec);
      const [a, b2] = round % 2 ? [large, small] : [small, large];
      const ra = await appendRate(a);
      const rb = await appendRate(b2);
      (a === small ? atSmall : atLarge).push(ra.opsPerSec);
      (b2 === small ? atSmall : atLarge).push(rb.opsPerSec);
      viaOutbox.push((await outboxRate(small)).opsPerSec);
    }
    if ((await small.store.list(LogOutbox, { limit: 1 })).length) throw new Error('the outbox did not drain');
    const base = med(durable);
    console.log(`  (3 interleaved rounds, medians; fill of ${LARGE.toLocaleString('en-US')} entries in ${fillS.toFixed(1)} s, ${Math.round((LARGE + SMALL) / fillS).toLocaleString('en-US')} appends/s in batches)`);
    line('durable single-put transactions, 32 in flight', perSec({ opsPerSec: base } as Rate), 1);
    const seq = med(sequential);
    line('durable single-put transactions, one at a time', perSec({ opsPerSec: seq } as Rate), seq / base);
    line(`appends with checkpointing, ${SMALL.toLocaleString('en-US')} entries`, perSec({ opsPerSec: med(atSmall) } as Rate), med(atSmall) / base, `>= ${TARGET}`, med(atSmall) / base >= TARGET);
    line(`appends with checkpointing, ${LARGE.toLocaleString('en-US')} entries`, perSec({ opsPerSec: med(atLarge) } as Rate), med(atLarge) / base, `>= ${TARGET}`, med(atLarge) / base >= TARGET);
    line(`  the same, as a ratio to one-at-a-time durable writes`, perSec({ opsPerSec: med(atSmall) } as Rate), med(atSmall) / seq);
    line(`appends through the outbox (judgment events), ${SMALL.toLocaleString('en-US')}`, perSec({ opsPerSec: med(viaOutbox) } as Rate), med(viaOutbox) / base);
    const flat = med(atLarge) / med(atSmall);
    line(`rate at ${LARGE.toLocaleString('en-US')} / rate at ${SMALL.toLocaleString('en-US')}`, `${flat.toFixed(2)}x`, flat, `${1 - FLAT}..${1 + FLAT}`, Math.abs(1 - flat) <= FLAT);

    // Inclusion proofs at 1,000,000 entries, random indexes, one at a time.
    const size = (await large.log.head()).size;
    const ms: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const index = cryptoRandom(4).readUInt32BE(0) % size;
      const s = performance.now();
      await large.log.inclusion(index, size);
      ms.push(performance.now() - s);
    }
    line(`inclusion proof at ${size.toLocaleString('en-US')} entries, median`, `${(med(ms) * 1000).toFixed(0)} µs`);
    line(`inclusion proof at ${size.toLocaleString('en-US')} entries, p99`, `${(pct(ms, 99) * 1000).toFixed(0)} µs`);
    console.log(`  (total ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  } finally {
    await small.dispose();
    await large.dispose();
  }
}
