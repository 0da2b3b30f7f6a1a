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
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { canonicalize, cryptoRandom, encodeTileIndex, FakeClock, freshNodeKeys, generateKeyPair, sign, systemClock, type NodeKeys } from '../src/core/index.js';
import { enqueueLogEntry, LogOutbox, parseWitnessSpec, TransparencyLog, WitnessClient } from '../src/domain/log/index.js';
import { strategiesFor } from '../src/node/strategies.js';
import { createApp } from '../src/http/app.js';
import { openTempStore, space, type OpenedStore } from '../src/store/index.js';
import { handleWitnessRequest, Witness } from '../src/witness/index.js';
import { CONNECTIONS, CYCLES, load, SLICE_MS, type Target, type TargetResult } from './http.js';
import { calibrateForBench, concurrentRate, header, line, perSec, rate, type Rate } from './lib.js';

const TARGET = 0.5;
const FLAT = 0.2;
const SMALL = 10_000;
const LARGE = 1_000_000;
const CONCURRENCY = 32;
const Solo = space<{ n: number }>('bench-solo');

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

interface Bench {
  store: OpenedStore;
  log: TransparencyLog;
  keys: NodeKeys;
  dispose: () => Promise<void>;
}

async function open(): Promise<Bench> {
  const { store, dispose } = await openTempStore();
  const keys = { ...freshNodeKeys(cryptoRandom), hmac: [{ signingKeyId: 'hk_bench', key: Buffer.alloc(32, 7), createdAt: 0 }] };
  const log = new TransparencyLog({ store, clock: systemClock, keys }, { checkpointEveryMs: 1000 });
  return { store, log, keys, dispose: async () => (await log.close(), await dispose()) };
}

let n = 0;
const item = () => ({
  kind: 'pipeline.facet.v1',
  tier: 'pipeline' as const,
  agent: 'ak_benchagt',
  body: { schemaVersion: '1.0.0', step: `step-${n++}`, subjectSha256: 'ab'.repeat(32), at: Date.now() },
});
const ctx = { clock: new FakeClock(Date.now()), random: cryptoRandom };

/** Fills the log to `target` entries fast: large outbox batches, drained by the appender. */
async function fill(b: Bench, target: number) {
  for (;;) {
    const size = (await b.log.head()).size;
    if (size >= target) return;
    const count = Math.min(5000, target - size);
    await b.store.transact(
      ['bench-fill'],
      async (tx) => {
        for (let i = 0; i < count; i++) enqueueLogEntry(tx, ctx, item());
      },
      { durable: false },
    );
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
  header(
    `log: appends/s with checkpointing (32 writers) vs durable single-put transactions/s (32 in flight); ${SMALL.toLocaleString('en-US')} ` +
      `vs ${LARGE.toLocaleString('en-US')} entries`,
  );
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
      durable.push(
        (
          await concurrentRate(
            'durable put',
            () => small.store.transact([`solo:${cryptoRandom(2).readUInt16BE(0) % CONCURRENCY}`], async (tx) => tx.put(Solo, 'x', { n: 1 })),
            CONCURRENCY,
            1.5,
          )
        ).opsPerSec,
      );
      const [a, b2] = round % 2 ? [large, small] : [small, large];
      const ra = await appendRate(a);
      const rb = await appendRate(b2);
      (a === small ? atSmall : atLarge).push(ra.opsPerSec);
      (b2 === small ? atSmall : atLarge).push(rb.opsPerSec);
      viaOutbox.push((await outboxRate(small)).opsPerSec);
    }
    if ((await small.store.list(LogOutbox, { limit: 1 })).length) throw new Error('the outbox did not drain');
    const base = med(durable);
    console.log(
      `  (3 interleaved rounds, medians; fill of ${LARGE.toLocaleString('en-US')} entries in ${fillS.toFixed(1)} s, ` +
        `${Math.round((LARGE + SMALL) / fillS).toLocaleString('en-US')} appends/s in batches)`,
    );
    line('durable single-put transactions, 32 in flight', perSec({ opsPerSec: base } as Rate), 1);
    const seq = med(sequential);
    line('durable single-put transactions, one at a time', perSec({ opsPerSec: seq } as Rate), seq / base);
    line(
      `appends with checkpointing, ${SMALL.toLocaleString('en-US')} entries`,
      perSec({ opsPerSec: med(atSmall) } as Rate),
      med(atSmall) / base,
      `>= ${TARGET}`,
      med(atSmall) / base >= TARGET,
    );
    line(
      `appends with checkpointing, ${LARGE.toLocaleString('en-US')} entries`,
      perSec({ opsPerSec: med(atLarge) } as Rate),
      med(atLarge) / base,
      `>= ${TARGET}`,
      med(atLarge) / base >= TARGET,
    );
    line(`  the same, as a ratio to one-at-a-time durable writes`, perSec({ opsPerSec: med(atSmall) } as Rate), med(atSmall) / seq);
    line(
      `appends through the outbox (judgment events), ${SMALL.toLocaleString('en-US')}`,
      perSec({ opsPerSec: med(viaOutbox) } as Rate),
      med(viaOutbox) / base,
    );
    const flat = med(atLarge) / med(atSmall);
    line(
      `rate at ${LARGE.toLocaleString('en-US')} / rate at ${SMALL.toLocaleString('en-US')}`,
      `${flat.toFixed(2)}x`,
      flat,
      `${1 - FLAT}..${1 + FLAT}`,
      Math.abs(1 - flat) <= FLAT,
    );

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
    await tilesVsNodeRead(large);
    await witnessesAndAppends();
    console.log(`  (total ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  } finally {
    await small.dispose();
    await large.dispose();
  }
}

const TILE_TARGET = 0.7;
const rateOf = (r: TargetResult) => perSec({ name: '', opsPerSec: (r.ok / r.ms) * 1000, ops: r.ok, ms: r.ms });

/**
 * C2SP tiles served over HTTP on the 1,000,000-entry log, as a ratio to a node read (GET
 * /api/knowledge/node/{path} of a published capability) on the same node, both loaded by the
 * child-process load generator of bench/http.ts in alternating slices. The tiles are 32 full
 * level-0 tiles spread over the log (one per connection), made once before the run (a tile is
 * made from the stored tree on its first read, then kept); the cost of that first read is shown.
 */
async function tilesVsNodeRead(large: Bench) {
  const app = await createApp({
    store: large.store,
    strategies: strategiesFor(large.store),
    keys: large.keys,
    config: { rateLimit: { burst: 1e9, refillPerSecond: 1e9 } },
    logger: false,
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    // A published capability to read: one proposer, three judges on IPs of their own.
    const agents = [];
    for (let i = 0; i < 4; i++) {
      const res = await app.inject({ method: 'POST', url: '/api/agent/v1/register', remoteAddress: `10.78.0.${i + 1}` });
      const a = res.json() as { apiKey: string; tag: string; signing: { privateKey: string } };
      await calibrateForBench(app.akas, a.tag, 0.9, 1000);
      agents.push({ ...a, ip: `10.78.0.${i + 1}` });
    }
    const [proposer, ...judges] = agents;
    const path = '/bench/tiles-vs-node';
    const payload = {
      path,
      title: 'Read-through cache',
      spec: 'Keep a cache in front of the store when reads dominate.',
      payload: {
        trigger: 'repeated reads',
        alternative: 'read through',
        cost: 'memory',
        whenNot: 'writes dominate',
        recipe: ['cache on read', 'drop on write'],
      },
    };
    const p = await app.inject({
      method: 'POST',
      url: '/api/knowledge/cap/propose',
      payload,
      headers: { authorization: `Bearer ${proposer.apiKey}` },
      remoteAddress: proposer.ip,
    });
    const id = (p.json() as { proposalId: string }).proposalId;
    for (const j of judges) {
      const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
      const signature = sign(
        j.signing.privateKey,
        canonicalize({ type: 'akas.judgment.v1', kind: 'capability', proposalId: id, judge: j.tag, scores, rationale: 'Accurate.' }),
      );
      const r = await app.inject({
        method: 'POST',
        url: `/api/knowledge/judge/${id}`,
        payload: { scores, rationale: 'Accurate.', signature },
        headers: { authorization: `Bearer ${j.apiKey}` },
        remoteAddress: j.ip,
      });
      if (r.statusCode !== 200) throw new Error(`judge answered ${r.statusCode}: ${r.body}`);
    }
    const size = (await app.akas.log.head()).size;
    const fullTiles = Math.floor(size / 256);
    const tilePaths = Array.from({ length: CONNECTIONS }, (_, i) => `/log/tile/0/${encodeTileIndex(Math.floor(((i + 0.5) * fullTiles) / CONNECTIONS))}`);
    const tileUrls = tilePaths.map((p) => `${base}${p}`);
    // The first read of each makes it from the stored tree (256 entries read and hashed), then keeps it.
    const firstMs: number[] = [];
    for (const u of tileUrls) {
      const s0 = performance.now();
      const r = await fetch(u);
      const bytes = (await r.arrayBuffer()).byteLength;
      firstMs.push(performance.now() - s0);
      if (r.status !== 200 || bytes !== 8192) throw new Error(`${u} answered ${r.status} with ${bytes} bytes`);
    }
    const nodeRes = await fetch(`${base}/api/knowledge/node${path}`);
    const nodeBytes = (await nodeRes.arrayBuffer()).byteLength;
    if (nodeRes.status !== 200) throw new Error(`the node read answered ${nodeRes.status}`);
    const targets: Target[] = [
      { name: `GET /api/knowledge/node${path} (${nodeBytes} B)`, url: `${base}/api/knowledge/node${path}` },
      { name: `GET /log/tile/0/<N> at ${size.toLocaleString('en-US')} entries (8192 B, ${CONNECTIONS} tiles)`, url: tileUrls[0], paths: tilePaths },
      { name: 'GET /log/checkpoint', url: `${base}/log/checkpoint` },
    ];
    const [node, tile, checkpoint] = await load(targets);
    const ratios = (r: TargetResult) => r.perCycle.map((x, i) => x / node.perCycle[i]);
    const ratio = med(ratios(tile));
    console.log(
      `  (tiles vs a node read: median over ${CYCLES} cycles of req/s divided by the node read's in the same cycle, ${CONNECTIONS} in ` +
        `flight, ${SLICE_MS} ms slices)`,
    );
    line(targets[0].name, rateOf(node), 1);
    line(targets[1].name, rateOf(tile), ratio, `>= ${TILE_TARGET}`, ratio >= TILE_TARGET);
    line(targets[2].name, rateOf(checkpoint), med(ratios(checkpoint)));
    line("  a full tile's first read (made from the stored tree, then kept), median", `${med(firstMs).toFixed(1)} ms`);
  } finally {
    await app.close();
  }
}

/**
 * Appends with two witnesses vs without: the same 32 writers submitting and waiting for their
 * entries on disk, checkpoints every 100 ms, each checkpoint sent to two witnesses on loopback
 * that take 50 ms to answer (a round trip to a remote witness). Rounds run beside the log, so
 * the append rate and latency should not move.
 */
async function witnessesAndAppends() {
  const DELAY_MS = 50;
  const servers: Array<{ spec: string; close: () => Promise<void>; dispose: () => Promise<void> }> = [];
  const plain = await open();
  const { store, dispose } = await openTempStore();
  const keys = { ...freshNodeKeys(cryptoRandom), hmac: [{ signingKeyId: 'hk_bench', key: Buffer.alloc(32, 7), createdAt: 0 }] };
  const log = new TransparencyLog({ store, clock: systemClock, keys }, { checkpointEveryMs: 100 });
  const plainFast = new TransparencyLog({ store: plain.store, clock: systemClock, keys: plain.keys }, { checkpointEveryMs: 100 });
  for (let i = 0; i < 2; i++) {
    const ws = await openTempStore();
    const witness = new Witness({
      store: ws.store,
      clock: systemClock,
      key: { name: `w${i}.bench/witness`, seed: generateKeyPair().privateKey },
      logs: [keys.log.verifierKey],
    });
    const server = createServer((req, res) => void new Promise((r) => setTimeout(r, DELAY_MS)).then(() => handleWitnessRequest(witness, req, res)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    servers.push({
      spec: `${witness.verifierKey}@http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())),
      dispose: ws.dispose,
    });
  }
  const client = new WitnessClient(
    log,
    servers.map((s) => parseWitnessSpec(s.spec)),
    systemClock,
  );
  try {
    const latencies = { with: [] as number[], without: [] as number[] };
    const rates = { with: [] as number[], without: [] as number[] };
    const timed = (l: TransparencyLog, into: number[]) => async () => {
      const s0 = performance.now();
      await l.submit(item());
      into.push(performance.now() - s0);
    };
    for (let round = 0; round < 3; round++) {
      rates.without.push((await concurrentRate('appends', timed(plainFast, latencies.without), CONCURRENCY, 2)).opsPerSec);
      rates.with.push((await concurrentRate('appends', timed(log, latencies.with), CONCURRENCY, 2)).opsPerSec);
    }
    const status = await client.status();
    const cosigned = Math.min(...status.map((s) => s.cosignedSize));
    console.log(
      `  (appends with two witnesses answering in ${DELAY_MS} ms, checkpoints every 100 ms: 3 interleaved rounds of 2 s, medians; the ` +
        `witnesses cosigned up to ${cosigned.toLocaleString('en-US')} of ${(await log.head()).size.toLocaleString('en-US')} entries)`,
    );
    line('appends without witnesses', perSec({ opsPerSec: med(rates.without) } as Rate), 1);
    line(
      'appends with two witnesses',
      perSec({ opsPerSec: med(rates.with) } as Rate),
      med(rates.with) / med(rates.without),
      '>= 0.9',
      med(rates.with) / med(rates.without) >= 0.9,
    );
    line('append latency without witnesses, median / p99', `${med(latencies.without).toFixed(2)} / ${pct(latencies.without, 99).toFixed(2)} ms`);
    line(
      'append latency with two witnesses, median / p99',
      `${med(latencies.with).toFixed(2)} / ${pct(latencies.with, 99).toFixed(2)} ms`,
      med(latencies.without) / med(latencies.with),
    );
    if (cosigned === 0) throw new Error(`the witnesses cosigned nothing: ${JSON.stringify(status)}`);
  } finally {
    await client.close();
    await log.close();
    await plainFast.close();
    await dispose();
    await plain.dispose();
    for (const s of servers) await s.close(), await s.dispose();
  }
}
