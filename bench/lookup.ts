// The verifiable index (PROTOCOL 9.10, docs/INDEX.md) at N entries (`npm run bench -- index [N]`,
// 1,000,000 by default), on the domain layer of one LevelDB node, in one line:
//
//   index at N entries: lookup p50 A ms, p95 B ms, proof C bytes, appends D of the log without the index, rebuild E entries/s
//
// - lookup: the node's answer for a key (its indices read, the map proof) and the root entry's
//   inclusion proof under the newest checkpoint, over keys drawn at random, after a warm-up;
// - proof: the bytes a verifier checks for a key with at most 10 entries (the map proof and the
//   root entry's inclusion proof), the largest among those drawn;
// - appends: entries appended per second end to end as attestations are (32 writers in flight,
//   each waiting for its entry on disk) with the index following the log, as a ratio to the same
//   log without it, measured alternately in this run at the same size (the index closed and opened
//   again between runs);
// - rebuild: entries per second `akas monitor --index` indexes again from their leaves, the bytes
//   the tiles serve (fetching them is not counted), its roots compared: read on a worker thread,
//   indexed on this one, as the monitor does.
// Targets at 1,000,000 entries: p95 <= 10 ms, proof <= 2 KiB, appends >= 0.7, rebuild >= 100,000/s.
import { cryptoRandom, entryLeaf, FakeClock, freshNodeKeys, systemClock } from '../src/core/index.js';
import { enqueueLogEntry, LookupIndex, TransparencyLog } from '../src/domain/log/index.js';
import { openTempStore } from '../src/store/index.js';
import { IndexRebuildInWorker } from '../cli/commands/monitor/index-rebuild-worker.js';
import { concurrentRate, type Rate } from './lib.js';

const DEFAULT_N = 1_000_000;
const CONCURRENCY = 32;
const AGENTS = 1000;
const PATHS = 5000;
const LOOKUPS = 2000;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const fmt = (x: number, digits = 2) => x.toFixed(digits);

/** Entry n of the workload: one of 1,000 agents, an artifact digest every 3 entries share, one of 5,000 paths. */
let n = 0;
function item() {
  const i = n++;
  return {
    kind: 'pipeline.facet.v1',
    tier: 'pipeline' as const,
    agent: `ak_bench${String(i % AGENTS).padStart(3, '0')}`,
    body: {
      schemaVersion: '1.0.0',
      step: `step-${i}`,
      subjectSha256: Math.floor(i / 3)
        .toString(16)
        .padStart(64, '0'),
      path: `/bench/p${i % PATHS}`,
    },
  };
}
const ctx = { clock: new FakeClock(Date.now()), random: cryptoRandom };

/** Fills the log to `target` entries fast: large outbox batches, drained by the appender. */
async function fill(store: Awaited<ReturnType<typeof openTempStore>>['store'], log: TransparencyLog, target: number) {
  for (;;) {
    const size = (await log.head()).size;
    if (size >= target) return;
    const count = Math.min(5000, target - size);
    await store.transact(
      ['bench-fill'],
      async (tx) => {
        for (let i = 0; i < count; i++) enqueueLogEntry(tx, ctx, item());
      },
      { durable: false },
    );
    await log.drain();
  }
}

const appendRate = (log: TransparencyLog): Promise<Rate> => concurrentRate('appends', () => log.submit(item()), CONCURRENCY, 3);

export async function run() {
  const arg = process.argv.slice(2).find((a) => /^\d+$/.test(a));
  const N = arg ? Number(arg) : DEFAULT_N;
  const { store, dispose } = await openTempStore();
  const keys = { ...freshNodeKeys(cryptoRandom), hmac: [{ signingKeyId: 'hk_bench', key: Buffer.alloc(32, 7), createdAt: 0 }] };
  const log = new TransparencyLog({ store, clock: systemClock, keys }, { checkpointEveryMs: 1000 });
  await fill(store, log, N);

  // Appends without the index and with it following the log, alternately, 3 runs of each (the
  // median of each compared): the log grows by a few percent between them, and what the store does
  // after the index's writes (LevelDB's compactions) falls on both sides. Before each run with the
  // index, it is opened over the log as it stands (read back from the store, caught up, a root
  // appended) and left a few seconds to settle; it is closed (its items written) before each run without.
  const without: number[] = [];
  const withIndex: number[] = [];
  let live: LookupIndex | undefined;
  for (let round = 0; round < 3; round++) {
    without.push((await appendRate(log)).opsPerSec);
    live = new LookupIndex(log, () => Date.now(), { everyMs: 1000 });
    await live.publish();
    await new Promise((r) => setTimeout(r, 3000));
    withIndex.push((await appendRate(log)).opsPerSec);
    if (round < 2) await live.close();
  }
  if (!live) throw new Error('no round ran');
  await live.publish();
  const appends = pct(withIndex, 50) / pct(without, 50);

  // Lookups: keys drawn at random among those the workload mentions.
  const draw = () => {
    const r = Math.random();
    const i = Math.floor(Math.random() * N);
    if (r < 0.6)
      return `sha256:${Math.floor(i / 3)
        .toString(16)
        .padStart(64, '0')}`;
    if (r < 0.8) return `path:/bench/p${i % PATHS}`;
    return `agent:ak_bench${String(i % AGENTS).padStart(3, '0')}`;
  };
  const lookupOnce = async (key: string) => {
    const a = await live.lookup(key);
    const cp = await log.checkpoint();
    const inclusion = await log.inclusion(a.published.entry.seq, cp.size);
    return { a, inclusion };
  };
  for (let i = 0; i < 200; i++) await lookupOnce(draw());
  const ms: number[] = [];
  let proof = 0;
  for (let i = 0; i < LOOKUPS; i++) {
    const key = draw();
    const t = performance.now();
    const { a, inclusion } = await lookupOnce(key);
    ms.push(performance.now() - t);
    if (a.indices.length <= 10) proof = Math.max(proof, Buffer.from(a.proof, 'base64').length + inclusion.length * 32);
  }

  // Rebuild: the leaves as the tiles hold them (bundles of 256, read beforehand: fetching is not
  // counted), indexed again and every logged root compared, with the node's index closed.
  await live.close();
  const size = (await log.head()).size;
  const bundles: Array<{ bytes: Buffer; starts: number[]; ends: number[] }> = [];
  for (let start = 0; start < size; start += 256) {
    const leaves = (await log.entries(start, Math.min(size, start + 256))).map((e) => entryLeaf(e));
    let at = 0;
    const ends = leaves.map((l) => (at += l.length));
    bundles.push({ bytes: Buffer.concat(leaves), starts: [0, ...ends.slice(0, -1)], ends });
  }
  // As akas monitor --index does: the leaves read on a worker thread, the map kept on this one.
  const t = performance.now();
  const reading = new IndexRebuildInWorker();
  for (const b of bundles) await reading.add(b.bytes, b.starts, b.ends);
  const rebuild = await reading.finish();
  rebuild.root();
  const rebuildRate = size / ((performance.now() - t) / 1000);
  const wrong = rebuild.roots.filter((r) => r.held === false).length;
  if (wrong) throw new Error(`the rebuild found ${wrong} logged root(s) the entries do not give`);

  await log.close();
  await dispose();
  console.log(
    `index at ${N} entries: lookup p50 ${fmt(pct(ms, 50))} ms, p95 ${fmt(pct(ms, 95))} ms, proof ${proof} bytes, ` +
      `appends ${fmt(appends)} of the log without the index, rebuild ${Math.round(rebuildRate)} entries/s`,
  );
}
