// The knowledge tree under load (issue 12), on a synthetic tree (bench/search-corpus.ts):
//
// 1. The search library, chosen by measurement: MiniSearch (the node's), Orama and FlexSearch
//    over the same 100,000 documents, each in a process of its own (bench/search-lib.ts):
//    build time, the heap and RSS the index holds, query latency (median and p99 over six
//    kinds of query, one misspelt), and whether the misspelt word's document is found. Ratios
//    to MiniSearch.
// 2. Search latency over HTTP at 10,000 and 100,000 published nodes (a node in its own process,
//    bench/search-node.ts, sequential requests): median and p99, as ratios to GET /healthz in
//    the same run; target: the 100,000 median within 3 times the 10,000 one.
// 3. Node reads: GET /api/knowledge/node/... throughput for each kind as a ratio to
//    GET /api/agent/v1/me on the same node (bench/http.ts's load generator); target >= 0.7.
// 4. The start of a node holding 100,000 published nodes: the index rebuild (start time minus
//    an empty node's, as a ratio to one plain scan of the nodes), and its RSS (target < 400 MiB).
//
// The tree is written straight through the store with publishToTree (what judging calls when a
// proposal publishes), not through judging: 100,000 judged proposals would take an hour.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { KnowledgeNodes, publishToTree, treeLocks } from '../src/domain/knowledge/tree.js';
import { processSearch } from '../src/domain/knowledge/search.js';
import { proposalLock, Proposals, type ProposalRecord } from '../src/domain/records.js';
import { openLevelStore } from '../src/store/index.js';
import { header, line } from './lib.js';
import { load, type Target, type TargetResult } from './http.js';
import { corpus, queries, type Query } from './search-corpus.js';

const SMALL = 10_000;
const LARGE = 100_000;
const LATENCY_TARGET = 3;
const READ_TARGET = 0.7;
const RSS_TARGET_MIB = 400;
const PER_QUERY = 100;
const LIB_SCRIPT = fileURLToPath(new URL('./search-lib.js', import.meta.url));
const NODE_SCRIPT = fileURLToPath(new URL('./search-node.js', import.meta.url));

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
const p99 = (xs: number[]) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];
const us = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} ms` : `${Math.round(x)} µs`);
const mib = (x: number) => `${Math.round(x)} MiB`;

interface LibResult {
  lib: string;
  buildMs: number;
  heapMiB: number;
  rssMiB: number;
  queries: Array<{ name: string; q: string; samplesUs: number[]; hits: number; found?: boolean }>;
}

function child(script: string, args: string[], nodeArgs: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [...nodeArgs, script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    c.on('error', reject);
    c.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} exited ${code}: ${out}`))));
  });
}

async function libraries() {
  console.log(`  1. the library, at ${LARGE.toLocaleString('en-US')} documents (a process each; ratios to MiniSearch, the node's index)`);
  const names = { minisearch: 'MiniSearch', orama: 'Orama', flexsearch: 'FlexSearch' } as const;
  const results: LibResult[] = [];
  for (const lib of Object.keys(names))
    results.push(JSON.parse(await child(LIB_SCRIPT, [JSON.stringify({ lib, n: LARGE })], ['--expose-gc', '--max-old-space-size=4096'])));
  const [base] = results;
  const all = (r: LibResult) => r.queries.flatMap((q) => q.samplesUs);
  for (const r of results) {
    const name = names[r.lib as keyof typeof names];
    const typo = r.queries.find((q) => q.q === base.queries.at(-1)!.q)!;
    const pair = r.queries.find((q) => q.name.startsWith('two words'))!;
    line(`${name}: index build`, `${(r.buildMs / 1000).toFixed(1)} s`, r.buildMs / base.buildMs);
    line(`${name}: heap held by the index`, mib(r.heapMiB), r.heapMiB / base.heapMiB);
    line(`${name}: RSS grown by the build`, mib(r.rssMiB), r.rssMiB / base.rssMiB);
    line(`${name}: query median (all six kinds)`, us(median(all(r))), median(all(r)) / median(all(base)));
    line(`${name}: query p99`, us(p99(all(r))), p99(all(r)) / p99(all(base)));
    line(`${name}: misspelt word's node in the first 10`, typo.found ? 'yes' : 'NO');
    line(`${name}: two words of a title: that node in the first 10`, pair.found ? 'yes' : 'NO');
  }
  console.log(`  per query: median latency / hits (${results.map((r) => names[r.lib as keyof typeof names]).join(' | ')})`);
  for (const [i, q] of base.queries.entries()) {
    console.log(
      `    ${`${q.name}: "${q.q}"`.padEnd(56)} ${results
        .map((r) => `${us(median(r.queries[i].samplesUs)).padStart(9)} / ` + `${String(r.queries[i].hits).padStart(5)}`)
        .join('  |')}`,
    );
  }
}

/**
 * Writes proposals [from, to) into the tree as publishing does, 500 to a transaction (and, with
 * `records`, the proposal records themselves, which the explorer's pages link to).
 */
export async function populate(dir: string, proposals: ProposalRecord[], from: number, to: number, records = false) {
  const store = await openLevelStore(dir);
  try {
    for (let i = from; i < to; i += 500) {
      const batch = proposals.slice(i, Math.min(to, i + 500));
      const locks = [...new Set(batch.flatMap((p) => [...treeLocks(p), ...(records ? [proposalLock(p.proposalId)] : [])]))];
      await store.transact(
        locks,
        async (tx) => {
          for (const p of batch) {
            await publishToTree(tx, p, 1_767_268_800_000, processSearch);
            if (records) tx.put(Proposals, p.proposalId, p);
          }
        },
        { durable: false },
      );
    }
    // The baseline of the rebuild: one plain scan of every node.
    const t = performance.now();
    let n = 0;
    for await (const _ of store.iterate(KnowledgeNodes)) n++;
    return { scanMs: performance.now() - t, nodes: n };
  } finally {
    await store.close();
  }
}

interface Memory {
  rssMiB: number;
  /** The main thread's heap in use (after a collection), and committed. */
  heapMiB: number;
  heapTotalMiB: number;
  /** The worker threads' heaps (the index's, not collected first), in use and committed. */
  workerHeapMiB: number;
  workerHeapTotalMiB: number;
  /** Resident anonymous memory (heaps, malloc) and file-backed (the node binary, LevelDB's mapped tables). */
  anonMiB: number;
  fileMiB: number;
  peakRssMiB: number;
}

interface RunningBenchNode extends Memory {
  url: string;
  /** From start to listening. */
  listenMs: number;
  /** From start to the first search answered (the index rebuilt). */
  indexedMs: number;
  memory(): Promise<Memory>;
  stop(): Promise<void>;
}

export function startBenchNode(dir: string): Promise<RunningBenchNode> {
  const c: ChildProcess = spawn(process.execPath, ['--expose-gc', NODE_SCRIPT, dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = (type: string) =>
    new Promise<Record<string, number & string>>((resolve) => {
      const on = (m: { type: string }) => {
        if (m.type !== type) return;
        c.off('message', on);
        resolve(m as never);
      };
      c.on('message', on);
    });
  return new Promise((resolve, reject) => {
    c.once('exit', (code) => reject(new Error(`bench node exited ${code}`)));
    void next('listening').then(({ url, listenMs, indexedMs, ...memory }) =>
      resolve({
        url,
        listenMs,
        indexedMs,
        ...(memory as unknown as Memory),
        memory: async () => {
          c.send({ type: 'memory' });
          return next('memory') as unknown as Promise<Memory>;
        },
        stop: () =>
          new Promise((done) => {
            c.removeAllListeners('exit');
            c.once('exit', () => done());
            c.send({ type: 'stop' });
          }),
      }),
    );
  });
}

/** Sequential GETs (one connection, one request at a time): latency in µs per request. */
export async function latencies(url: string, paths: string[], each: number, headers: Record<string, string> = {}): Promise<number[][]> {
  const pool = new Pool(url, { connections: 1 });
  try {
    const out: number[][] = [];
    for (const path of paths) {
      const samples: number[] = [];
      for (let i = 0; i < each + 10; i++) {
        const t = performance.now();
        const res = await pool.request({ method: 'GET', path, headers });
        await res.body.dump();
        if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}`);
        if (i >= 10) samples.push((performance.now() - t) * 1000);
      }
      out.push(samples);
    }
    return out;
  } finally {
    await pool.close();
  }
}

const searchPath = (q: Query) => `/api/knowledge/search?${new URLSearchParams({ q: q.q, limit: '20' })}`;

export async function run() {
  header('search: the knowledge tree at 10,000 and 100,000 nodes (library choice, search latency over HTTP, node reads vs GET /me, index rebuild and RSS)');
  await libraries();

  const c = corpus(LARGE);
  const qs = queries(c, SMALL);
  const empty = mkdtempSync(join(tmpdir(), 'akas-bench-search-empty-'));
  const dir = mkdtempSync(join(tmpdir(), 'akas-bench-search-'));
  try {
    // The baselines: an empty node's start, memory and GET /healthz latency.
    const bare = await startBenchNode(empty);
    const [health] = await latencies(bare.url, ['/healthz'], PER_QUERY * 3);
    await bare.stop();

    const small = await populate(dir, c.proposals, 0, SMALL);
    let node = await startBenchNode(dir);
    const smallStart = node.indexedMs;
    const smallLat = await latencies(node.url, qs.map(searchPath), PER_QUERY);
    await node.stop();

    const large = await populate(dir, c.proposals, SMALL, LARGE);
    node = await startBenchNode(dir);
    const largeLat = await latencies(node.url, qs.map(searchPath), PER_QUERY);

    console.log(
      `\n  2. search over HTTP (sequential; ${PER_QUERY} requests per query; ratios to GET /healthz, median ${us(median(health))}, p99 ${us(p99(health))})`,
    );
    for (const [label, lat] of [
      [SMALL, smallLat],
      [LARGE, largeLat],
    ] as const) {
      const all = lat.flat();
      line(`search at ${label.toLocaleString('en-US')} nodes: median`, us(median(all)), median(all) / median(health));
      line(`search at ${label.toLocaleString('en-US')} nodes: p99`, us(p99(all)), p99(all) / p99(health));
    }
    const growth = median(largeLat.flat()) / median(smallLat.flat());
    line(
      `median at ${LARGE.toLocaleString('en-US')} / median at ${SMALL.toLocaleString('en-US')}`,
      '',
      growth,
      `<= ${LATENCY_TARGET}`,
      growth <= LATENCY_TARGET,
    );
    for (const [i, q] of qs.entries())
      console.log(`    ${`${q.name}: "${q.q}"`.padEnd(56)} ${us(median(smallLat[i])).padStart(9)} -> ${us(median(largeLat[i])).padStart(9)}`);

    // 3. Node reads against /me, one of each kind and a branch with 25 children.
    const reg = await fetch(`${node.url}/api/agent/v1/register`, { method: 'POST' });
    const { apiKey } = (await reg.json()) as { apiKey: string };
    const byKind = (kind: string) => c.docs.find((d) => d.kind === kind)!.id;
    const branch = byKind('leaf-capability').split('/').slice(0, 2).join('/');
    const nodeUrl = (path: string) => `${node.url}/api/knowledge/node${path}`;
    const targets: Target[] = [
      { name: 'GET /api/agent/v1/me', url: `${node.url}/api/agent/v1/me`, headers: { authorization: `Bearer ${apiKey}` } },
      { name: 'GET node: leaf-capability', url: nodeUrl(byKind('leaf-capability')) },
      { name: 'GET node: leaf-decision', url: nodeUrl(byKind('leaf-decision')) },
      { name: 'GET node: leaf-brief (signed manifest)', url: nodeUrl(byKind('leaf-brief')) },
      { name: 'GET node: leaf-artifact (manifest, evals)', url: nodeUrl(byKind('leaf-artifact')) },
      { name: `GET node: a branch (${branch}, its children)`, url: nodeUrl(branch) },
    ];
    const results = await load(targets);
    const [me] = results;
    const ratios = (r: TargetResult) => r.perCycle.map((x, i) => x / me.perCycle[i]);
    console.log(
      `\n  3. node reads at ${LARGE.toLocaleString('en-US')} nodes (child-process undici load; ratio = median over cycles of req/s / GET ` +
        `/me req/s in the same cycle)`,
    );
    line(targets[0].name, `${Math.round((me.ok / me.ms) * 1000).toLocaleString('en-US')}/s`, 1);
    for (const [i, r] of results.entries()) {
      if (i === 0) continue;
      const ratio = median(ratios(r));
      line(targets[i].name, `${Math.round((r.ok / r.ms) * 1000).toLocaleString('en-US')}/s`, ratio, `>= ${READ_TARGET}`, ratio >= READ_TARGET);
    }

    const after = await node.memory();
    await node.stop();
    console.log(
      `\n  4. a node starting on ${large.nodes.toLocaleString('en-US')} tree nodes (${LARGE.toLocaleString('en-US')} published; the rest implicit branches)`,
    );
    const rebuild = node.indexedMs - bare.indexedMs;
    line('empty node: listening, first search answered (baseline)', `${Math.round(bare.listenMs)}, ${Math.round(bare.indexedMs)} ms`);
    line(`${LARGE.toLocaleString('en-US')} published: listening`, `${Math.round(node.listenMs)} ms`, node.listenMs / bare.listenMs);
    line(
      `index rebuild at start, ${SMALL.toLocaleString('en-US')} published`,
      `${((smallStart - bare.indexedMs) / 1000).toFixed(2)} s`,
      (smallStart - bare.indexedMs) / small.scanMs,
    );
    line(`index rebuild at start, ${LARGE.toLocaleString('en-US')} published`, `${(rebuild / 1000).toFixed(2)} s`, rebuild / large.scanMs);
    console.log(
      `    (rebuild = time to the first search answer minus the empty node's; ratios to one plain scan of the nodes in the store: ` +
        `${Math.round(small.scanMs)} ms and ${Math.round(large.scanMs)} ms)`,
    );
    line('RSS with the index built', mib(node.rssMiB), node.rssMiB / bare.rssMiB, `< ${RSS_TARGET_MIB} MiB`, node.rssMiB < RSS_TARGET_MIB);
    line('RSS after the benches above', mib(after.rssMiB), after.rssMiB / bare.rssMiB, `< ${RSS_TARGET_MIB} MiB`, after.rssMiB < RSS_TARGET_MIB);
    line('peak RSS (during the rebuild and the benches)', mib(after.peakRssMiB), after.peakRssMiB / bare.peakRssMiB);
    console.log(`    (after a collection of the main thread; ratios to an empty node's: RSS ${mib(bare.rssMiB)}, peak ${mib(bare.peakRssMiB)})`);
    for (const [label, m] of [
      ['empty node', bare],
      ['index built', node],
      ['after the benches', after],
    ] as const) {
      console.log(
        `    ${`${label}:`.padEnd(19)} heap in use / committed: main thread ${mib(m.heapMiB)} / ${mib(m.heapTotalMiB)}, index thread ` +
          `${mib(m.workerHeapMiB)} / ${mib(m.workerHeapTotalMiB)}; resident: anonymous ${mib(m.anonMiB)}, file-backed ${mib(m.fileMiB)}`,
      );
    }
    console.log('    (file-backed: the node binary, and the LevelDB tables the rebuild read, which LevelDB maps into memory)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  }
}
