// Search on PostgreSQL at 100,000 and 1,000,000 published nodes (issue 35): the synthetic tree
// of bench/search-corpus.ts written with COPY into a throwaway cluster this bench starts and
// removes (its rows as publishing writes them: the node in akas_kv, its document in
// akas_search, its words in akas_search_words), the text indexes then built as `akas store
// migrate` builds them (CREATE INDEX CONCURRENTLY, timed), and the existing query mix (a
// misspelt word among them) asked over HTTP of one `akas serve --store` process, one request
// at a time, and GET /healthz on the same process as the baseline of the same run. Prints per size, exactly:
//   search on PostgreSQL, N nodes: p50 A ms, p95 B ms, node RSS C MiB
// with the index sizes, the build time, each query's total (and whether estimated), and the process's start time against an empty
// store's (the same at any size: it holds no index). Targets at 1,000,000: p95 <= 50 ms, RSS
// <= 250 MiB, the misspelt word's node in the first 10. Then, on a process with the default
// token bucket, one address's burst of the costliest queries against another address's
// /healthz and search (bench/search-burst.ts: under 1 s and 2 s). The load average is printed
// with it: the machine may be shared.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, createWriteStream, mkdtempSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { textDocOf } from '../src/domain/knowledge/search-doc.js';
import { TEXT_INDEX_VERSION } from '../src/domain/knowledge/search-store.js';
import { migratePg, openPgStore } from '../src/store/postgres/index.js';
import { startTempCluster } from '../src/store/postgres/cluster.js';
import { MIGRATIONS } from '../src/store/postgres/schema.js';
import { docWords, fieldsJson, tsvectorText } from '../src/store/postgres/search.js';
import { header, line, serveProcess } from './lib.js';
import { latencies, populate, startBenchNode } from './search.js';
import { burst } from './search-burst.js';
import { corpus, generate, queries, type Query } from './search-corpus.js';

const SIZES = (process.env.AKAS_BENCH_SEARCH_PG_SIZES ?? '100000,1000000').split(',').map(Number);
const PER_QUERY = 100;
const P95_TARGET_MS = 50;
const RSS_TARGET_MIB = 250;
const OPEN = ['--rate-limit', '1000000000:1000000000', '--allow-same-ip', '--registration-cap', '100000000'];

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const pct = (xs: number[], p: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const mib = (bytes: number) => bytes / 1024 / 1024;

/** A COPY text-format field: backslash, tab, newline and carriage return escaped. */
const field = (s: string) => s.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);
const bytea = (s: string) => `\\\\x${Buffer.from(s, 'utf8').toString('hex')}`;

/** Writes with backpressure (a million rows must not wait in memory). */
async function write(out: WriteStream, text: string) {
  if (!out.write(text)) await new Promise<void>((r) => out.once('drain', () => r()));
}
const closed = (out: WriteStream) => new Promise<void>((r, j) => out.end((e?: Error | null) => (e ? j(e) : r())));

interface Serve {
  url: string;
  child: ChildProcess;
  startMs: number;
  stop(): Promise<void>;
}

/** The node secret of every process on the bench's schemas (they must agree: the node keys are in the database). */
const NODE_SECRET = 'bench-search-pg-node-secret-0123456789';
const serve = (store: string): Promise<Serve> => serveProcess(['--store', store, ...OPEN], NODE_SECRET);

/** The resident memory of a process, in MiB (Linux). */
const rssOf = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

/** Writes the first n nodes of the corpus as COPY files (akas_kv, akas_search, akas_search_words) in dir. */
async function copyFiles(dir: string, n: number) {
  const kv = createWriteStream(join(dir, 'kv.tsv'));
  const search = createWriteStream(join(dir, 'search.tsv'));
  const words = new Set<string>();
  for (const { doc, proposal } of generate(n)) {
    const node = {
      path: doc.id,
      kind: doc.kind,
      title: doc.title,
      spec: doc.spec || doc.tldr || '',
      proposalId: proposal.proposalId,
      version: 1,
      publishedAt: 1_767_268_800_000,
    };
    await write(kv, `knowledge-nodes\t${bytea(doc.id)}\t${field(JSON.stringify(node))}\n`);
    const text = textDocOf(doc.kind, doc.title, { title: doc.title, path: doc.path, spec: doc.spec, tldr: doc.tldr, core: doc.core, deep: doc.deep });
    await write(search, `${field(doc.id)}\t${field(doc.kind)}\t${field(doc.title)}\t${field(fieldsJson(text))}\t${field(tsvectorText(text))}\n`);
    for (const w of docWords(text)) words.add(w);
  }
  const marker = { version: TEXT_INDEX_VERSION, nodes: n, at: Date.now() };
  await write(kv, `knowledge-search-state\t${bytea('backfill')}\t${field(JSON.stringify(marker))}\n`);
  await Promise.all([closed(kv), closed(search)]);
  const w = createWriteStream(join(dir, 'words.tsv'));
  for (const word of words) await write(w, `${field(word)}\n`);
  await closed(w);
  return words.size;
}

export async function run() {
  header('search-pg: search and suggest answered by PostgreSQL (tsvector, GIN, pg_trgm), 100,000 and 1,000,000 nodes, one akas serve --store process');
  let cluster: Awaited<ReturnType<typeof startTempCluster>>;
  try {
    cluster = await startTempCluster();
  } catch (e) {
    console.log(`  skipped: no PostgreSQL server could be started here (${(e as Error).message.split('\n')[0]})`);
    return;
  }
  // The COPY files are read by the server, which runs as another user when this runs as root.
  const dir = mkdtempSync(join(tmpdir(), 'akas-bench-search-pg-'));
  chmodSync(dir, 0o755);
  // The queries of bench/search.ts, picked within the first 100,000 nodes: the same queries at both sizes.
  const small = corpus(100_000);
  const qs = queries(small, 100_000);
  try {
    const emptyUrl = `${cluster.url}?schema=empty`;
    await migratePg(emptyUrl);
    const bare = await serve(emptyUrl);
    const bareRss = rssOf(bare.child.pid!);
    await bare.stop();
    line('empty store: akas serve listening, RSS', `${Math.round(bare.startMs)} ms, ${Math.round(bareRss)} MiB`);
    for (const n of SIZES) {
      const url = `${cluster.url}?schema=n${n}`;
      await migratePg(url);
      const store = await openPgStore(url);
      try {
        const t0 = performance.now();
        const distinct = await copyFiles(dir, n);
        const genMs = performance.now() - t0;
        // Rows first, indexes after (as `akas store migrate` builds them on a store copied without).
        for (const ix of MIGRATIONS.flatMap((m) => m.online ?? [])) await store.sql(`DROP INDEX $schema.${ix.name}`);
        const t1 = performance.now();
        for (const [table, file] of [
          ['akas_kv (space, key, value)', 'kv.tsv'],
          ['akas_search (id, kind, title, fields, tsv)', 'search.tsv'],
          ['akas_search_words (word)', 'words.tsv'],
        ])
          await store.sql(`COPY $schema.${table} FROM '${join(dir, file)}'`);
        const copyMs = performance.now() - t1;
        const t2 = performance.now();
        const built = await migratePg(url);
        const buildMs = performance.now() - t2;
        const t3 = performance.now();
        await store.sql('VACUUM ANALYZE $schema.akas_search');
        await store.sql('VACUUM ANALYZE $schema.akas_search_words');
        const vacuumMs = performance.now() - t3;
        const [sizes] = await store.sql<{ table: string; tsv: string; title: string; words: string; kv: string }>(
          `SELECT pg_total_relation_size('$schema.akas_search') AS table, pg_relation_size('$schema.akas_search_tsv') AS tsv, ` +
            `pg_relation_size('$schema.akas_search_title') AS title, ` +
            `pg_total_relation_size('$schema.akas_search_words') AS words, pg_total_relation_size('$schema.akas_kv') AS kv`,
        );
        const label = `${n.toLocaleString('en-US')} nodes`;
        line(`${label}: corpus generated and written as COPY files`, `${(genMs / 1000).toFixed(1)} s (${distinct.toLocaleString('en-US')} distinct words)`);
        line(`${label}: COPY into akas_kv, akas_search, akas_search_words`, `${(copyMs / 1000).toFixed(1)} s`);
        line(
          `${label}: text indexes built (akas store migrate: ${built.indexes.join(', ')}, CONCURRENTLY)`,
          `${(buildMs / 1000).toFixed(1)} s (then VACUUM ANALYZE ${(vacuumMs / 1000).toFixed(1)} s)`,
        );
        line(
          `${label}: sizes: akas_search with its indexes, its GIN index alone, its title index, the words with theirs, akas_kv`,
          [sizes.table, sizes.tsv, sizes.title, sizes.words, sizes.kv].map((b) => `${Math.round(mib(Number(b)))} MiB`).join(', '),
        );
      } finally {
        await store.close();
      }
      const node = await serve(url);
      try {
        const paths = (q: Query) => `/api/knowledge/search?${new URLSearchParams({ q: q.q, limit: '20' })}`;
        const load1 = loadavg()[0];
        const lat = await latencies(node.url, qs.map(paths), PER_QUERY);
        // The baseline, in the same run: a request the process answers without searching (the machine may be shared).
        const [health] = (await latencies(node.url, ['/healthz'], PER_QUERY)).map((xs) => xs.map((us) => us / 1000));
        const rss = rssOf(node.child.pid!);
        const all = lat.flat().map((us) => us / 1000);
        const [p50, p95] = [pct(all, 0.5), pct(all, 0.95)];
        console.log(
          `search on PostgreSQL, ${n.toLocaleString('en-US')} nodes: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, node RSS ${Math.round(rss)} MiB`,
        );
        const label = `${n.toLocaleString('en-US')} nodes`;
        line(
          `${label}: akas serve listening (an empty store's: ${Math.round(bare.startMs)} ms)`,
          `${Math.round(node.startMs)} ms`,
          node.startMs / bare.startMs,
        );
        line(`${label}: GET /healthz on the same process (baseline): p50, p95`, `${pct(health, 0.5).toFixed(1)} ms, ${pct(health, 0.95).toFixed(1)} ms`);
        line(`${label}: search p50 against the baseline's`, `${p50.toFixed(1)} ms`, p50 / pct(health, 0.5));
        line(`${label}: p95`, `${p95.toFixed(1)} ms`, p95 / pct(health, 0.95), `<= ${P95_TARGET_MS} ms at 1,000,000`, n < 1_000_000 || p95 <= P95_TARGET_MS);
        line(`${label}: node RSS after the queries`, `${Math.round(rss)} MiB`, rss / bareRss, `<= ${RSS_TARGET_MIB} MiB`, rss <= RSS_TARGET_MIB);
        for (const q of qs.filter((x) => x.expect)) {
          const r = (await (await fetch(`${node.url}${paths(q)}`)).json()) as { items: Array<{ path: string }>; total: number; totalIsEstimate?: true };
          const found = r.items.slice(0, 10).some((i) => i.path === q.expect);
          line(`${label}: ${q.name}: its node in the first 10`, found ? 'yes' : 'NO', undefined, 'yes', found);
        }
        for (const [i, q] of qs.entries()) {
          const r = (await (await fetch(`${node.url}${paths(q)}`)).json()) as { total: number; totalIsEstimate?: true };
          console.log(
            `    ${`${q.name}: "${q.q}"`.padEnd(60)} p50 ${(pct(lat[i], 0.5) / 1000).toFixed(1)} ms, p95 ${(pct(lat[i], 0.95) / 1000).toFixed(1)} ms, ` +
              `total ${r.total.toLocaleString('en-US')}${r.totalIsEstimate ? ' (estimated)' : ''}`,
          );
        }
        console.log(
          `    (load average while querying: ${load1.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end, on ` +
            `${availableParallelism()} cores shared with others)`,
        );
      } finally {
        await node.stop();
      }
      await burst(url, NODE_SECRET, qs.find((q) => q.name.startsWith('misspelt'))!.q, `${n.toLocaleString('en-US')} nodes`);
    }
    await embedded(small.proposals);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await cluster.stop();
  }
}

/**
 * What the embedded node needs for the same tree (README: its limits): a LevelDB node's RSS
 * with its MiniSearch index built, empty and at 100,000 published nodes, and how long the
 * index takes to rebuild at start (bench/search.ts's node, in a process of its own).
 */
async function embedded(proposals: Parameters<typeof populate>[1]) {
  const level = mkdtempSync(join(tmpdir(), 'akas-bench-search-pg-level-'));
  try {
    const empty = await startBenchNode(level);
    await empty.stop();
    const { nodes } = await populate(level, proposals, 0, proposals.length);
    const node = await startBenchNode(level);
    await node.stop();
    const perHundredK = ((node.rssMiB - empty.rssMiB) / proposals.length) * 100_000;
    line('embedded node (LevelDB, MiniSearch): RSS empty', `${Math.round(empty.rssMiB)} MiB`);
    line(
      `embedded node: RSS at ${proposals.length.toLocaleString('en-US')} published (${nodes.toLocaleString('en-US')} tree nodes), index built`,
      `${Math.round(node.rssMiB)} MiB (${Math.round(perHundredK)} MiB per 100,000 more; index thread heap ${Math.round(node.workerHeapMiB)} MiB)`,
      node.rssMiB / empty.rssMiB,
    );
    line('embedded node: index rebuilt at start (first search answered, minus the empty node)', `${((node.indexedMs - empty.indexedMs) / 1000).toFixed(1)} s`);
  } finally {
    rmSync(level, { recursive: true, force: true });
  }
}
