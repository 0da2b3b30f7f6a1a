// Scale-out on PostgreSQL (ARCHITECTURE 7), against a throwaway cluster started for the run
// (fsync on, like LevelDB's sync writes). Every figure is a ratio to a baseline measured in
// the same run:
//  1. GET /api/agent/v1/me req/s of `akas serve` processes (the built binary): one on
//     PostgreSQL, two on one database (the load generator's connections split between them),
//     each as a ratio to the LevelDB node, the three loaded in alternating slices.
//  2. Judgments recorded per second over HTTP (signed judge bodies, 32 in flight), the same
//     three set-ups, each as a ratio to the LevelDB node, runs alternating.
//  3. watch propagation: the delay from a commit returning in this process to the watcher of
//     another process (a child) being called, as a ratio to the durable commit itself.
//  4. The choices behind the store: one key-value table against a table per space (batched
//     upserts, point reads, range scans), and content-store blobs as bytea chunks, as large
//     objects or as files in a (shared) folder (10 MiB written durably, then read back).
// AKAS_BENCH_PG=me,judging,watch,layout,blobs runs only those sections; AKAS_BENCH_PG_INFLIGHT
// sets the judgments in flight (default 32).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { canonicalize, sign } from '../src/core/index.js';
import { loadPools } from '../src/domain/calibration/scoring.js';
import { BlobStore, space } from '../src/store/index.js';
import { startTempCluster, type TempCluster } from '../src/store/postgres/cluster.js';
import { openPgStore, type PgStore } from '../src/store/postgres/index.js';
import { briefPayload, header, line, perSec, type Rate, serveProcess } from './lib.js';

const LOAD_SCRIPT = fileURLToPath(new URL('./http-load.js', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const WATCHER_FLAG = '--pg-bench-watcher';
const SECRET = `bench-node-secret-${randomBytes(8).toString('hex')}`;
const MiB = 1024 * 1024;

const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ps = (x: number) => perSec({ name: '', opsPerSec: x, ops: 0, ms: 0 });
const fmtMs = (x: number) => `${x.toFixed(2)} ms`;
const fmtMBps = (x: number) => `${x >= 100 ? Math.round(x) : x.toFixed(1)} MB/s`;

// ---------------------------------------------------------------------------------------
// Nodes: `akas serve` processes.

interface Proc {
  url: string;
  child: ChildProcess;
  stop: () => Promise<void>;
}

const serve = (args: string[]): Promise<Proc> => serveProcess(args, SECRET);

/** A node under test: one LevelDB process, or one or two processes on one PostgreSQL schema. */
interface Setup {
  name: string;
  shared: boolean;
  urls: string[];
  procs: Proc[];
}

// No limits in the way, and a client IP per proposer (X-Forwarded-For), as the per-IP propose caps expect.
const OPEN = [
  '--allow-same-ip',
  '--trust-proxy',
  '--public-url',
  'https://akas.example.org',
  '--allow-demo-calibration',
  '--registration-cap',
  '100000000',
  '--rate-limit',
  '1000000000:1000000000',
];

async function levelSetup(dir: string): Promise<Setup> {
  const p = await serve(['--data', dir, ...OPEN]);
  return { name: 'LevelDB, 1 process', shared: false, urls: [p.url], procs: [p] };
}

async function pgSetup(url: string, n: number): Promise<Setup> {
  const first = await serve(['--store', url, ...OPEN]);
  const rest = await Promise.all(Array.from({ length: n - 1 }, () => serve(['--store', url, ...OPEN])));
  const procs = [first, ...rest];
  return { name: `PostgreSQL, ${n} process${n > 1 ? 'es' : ''}`, shared: true, urls: procs.map((p) => p.url), procs };
}

async function post(url: string, path: string, body: unknown, key?: string, ip?: string): Promise<any> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...(ip ? { 'x-forwarded-for': ip } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

/** The expected answers of a calibration pool (a top score: the agent may judge and propose). */
const poolAnswers = (poolId: string) => Object.fromEntries(loadPools()[poolId as 'A' | 'B'].map((q) => [q.id, q.expected]));

interface Agent {
  tag: string;
  apiKey: string;
  privateKey: string;
  ip: string;
}

/** n agents registered and calibrated (top score) through the API, spread over the processes. */
async function agents(s: Setup, n: number): Promise<Agent[]> {
  const out: Agent[] = [];
  for (let i = 0; i < n; i++) {
    const url = s.urls[i % s.urls.length];
    const r = await post(url, '/api/agent/v1/register', undefined);
    await post(url, '/api/agent/v1/calibrate', { answers: poolAnswers(r.calibrationPoolId) }, r.apiKey);
    out.push({ tag: r.tag, apiKey: r.apiKey, privateKey: r.signing.privateKey, ip: `10.${40 + Math.floor(i / 65536)}.${(i >> 8) & 255}.${i & 255}` });
  }
  return out;
}

/** CPU seconds used so far by these processes (Linux /proc; 0 elsewhere). */
function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // gone, or not Linux
    }
  }
  return ticks / 100;
}

/** The server processes of the cluster: the postmaster (its pid heads postmaster.pid) and its children. */
function clusterPids(cluster: TempCluster): number[] {
  try {
    const postmaster = Number(readFileSync(join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const pids = [postmaster];
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) pids.push(Number(pid));
      } catch {
        // gone
      }
    }
    return pids;
  } catch {
    return [];
  }
}

let benchCluster: TempCluster | undefined;

// ---------------------------------------------------------------------------------------
// 1. GET /me.

interface LoadResult {
  ok: number;
  bad: number;
  ms: number;
  statuses: Record<string, number>;
  perCycle: number[];
}

function load(targets: Array<{ name: string; urls: string[]; headers: Record<string, string> }>, cycles: number): Promise<LoadResult[]> {
  const args = JSON.stringify({
    targets: targets.map((t) => ({ url: t.urls[0], urls: t.urls, headers: t.headers })),
    connections: 32,
    sliceMs: 500,
    cycles,
    warmupMs: 500,
  });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOAD_SCRIPT, args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited ${code}`));
      const results = (JSON.parse(out) as { targets: LoadResult[] }).targets;
      for (const [i, r] of results.entries()) if (r.bad > 0) reject(new Error(`${targets[i].name}: statuses ${JSON.stringify(r.statuses)}`));
      resolve(results);
    });
  });
}

async function meSection(setups: Setup[]) {
  const CYCLES = 10;
  header(`postgres: GET /api/agent/v1/me req/s (32 connections, targets alternating in 500 ms slices x ${CYCLES}), ratio to the LevelDB node`);
  const targets = [];
  for (const s of setups) {
    const [a] = await agents(s, 1);
    targets.push({ name: s.name, urls: s.urls.map((u) => `${u}/api/agent/v1/me`), headers: { authorization: `Bearer ${a.apiKey}` } });
  }
  const results = await load(targets, CYCLES);
  const base = results[0];
  for (const [i, r] of results.entries()) {
    const ratio = mid(r.perCycle.map((x, c) => x / base.perCycle[c]));
    line(`GET /me, ${setups[i].name}`, ps((r.ok / r.ms) * 1000), ratio);
  }
}

// ---------------------------------------------------------------------------------------
// 2. Judgments.

const SCORES = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
const RATIONALE = 'Accurate and well sourced; the core answers the question directly.';

interface JudgeRig {
  setup: Setup;
  proposers: Agent[];
  judges: Agent[];
  round: number;
  /** Cores used during each run: akas serve processes, PostgreSQL, this load generator. */
  cores: Array<[number, number, number]>;
}

async function runPool<T>(items: T[], concurrency: number, fn: (item: T, i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}

/** n fresh proposals (untimed), then their 3n signed judgments with 32 in flight, spread over the processes. */
async function judgeRound(rig: JudgeRig, n: number): Promise<Rate> {
  const { setup } = rig;
  const base = rig.round;
  rig.round += n;
  const ids: string[] = new Array(n);
  await runPool([...Array(n).keys()], 16, async (i) => {
    const p = rig.proposers[(base + i) % rig.proposers.length];
    ids[i] = (await post(setup.urls[i % setup.urls.length], '/api/knowledge/propose', briefPayload('pg-bench'), p.apiKey, p.ip)).proposalId;
  });
  const tasks: Array<{ id: string; judge: Agent; body: unknown }> = [];
  for (let k = 0; k < 3; k++) {
    for (let i = 0; i < n; i++) {
      const judge = rig.judges[(3 * (base + i) + k) % rig.judges.length];
      const signature = sign(
        judge.privateKey,
        canonicalize({ type: 'akas.judgment.v1', kind: 'brief', proposalId: ids[i], judge: judge.tag, scores: SCORES, rationale: RATIONALE }),
      );
      tasks.push({ id: ids[i], judge, body: { scores: SCORES, rationale: RATIONALE, signature } });
    }
  }
  const servers = setup.procs.map((p) => p.child.pid!);
  const db = benchCluster ? clusterPids(benchCluster) : [];
  const cpu0 = [cpuSeconds(servers), cpuSeconds(db), process.cpuUsage()] as const;
  const start = performance.now();
  await runPool(tasks, INFLIGHT, (t, i) => post(setup.urls[i % setup.urls.length], `/api/knowledge/judge/${t.id}`, t.body, t.judge.apiKey));
  const ms = performance.now() - start;
  const own = process.cpuUsage(cpu0[2]);
  rig.cores.push([
    (cpuSeconds(servers) - cpu0[0]) / (ms / 1000),
    setup.shared ? (cpuSeconds(db) - cpu0[1]) / (ms / 1000) : 0,
    (own.user + own.system) / 1000 / ms,
  ]);
  return { name: setup.name, opsPerSec: (tasks.length / ms) * 1000, ops: tasks.length, ms };
}

const INFLIGHT = Number(process.env.AKAS_BENCH_PG_INFLIGHT ?? 32);
const wants = (section: string) => !process.env.AKAS_BENCH_PG || process.env.AKAS_BENCH_PG.split(',').includes(section);

async function judgingSection(setups: Setup[]) {
  const RUNS = 5;
  const PER_RUN = 150;
  header(
    `postgres: judgments recorded/s over HTTP (signed bodies, ${INFLIGHT} in flight, ${PER_RUN} fresh proposals x 3 per run, ${RUNS} runs ` +
      `alternating), ratio to the LevelDB node`,
  );
  const rigs: JudgeRig[] = [];
  for (const s of setups) rigs.push({ setup: s, proposers: await agents(s, 24), judges: await agents(s, 90), round: 0, cores: [] });
  for (const rig of rigs) await judgeRound(rig, 30); // warm-up
  const rates = rigs.map(() => [] as number[]);
  const ratios = rigs.map(() => [] as number[]);
  for (let r = 0; r < RUNS; r++) {
    const order = rigs.map((_, i) => (i + r) % rigs.length);
    const got: number[] = [];
    for (const i of order) got[i] = (await judgeRound(rigs[i], PER_RUN)).opsPerSec;
    for (const [i, x] of got.entries()) {
      rates[i].push(x);
      ratios[i].push(x / got[0]);
    }
  }
  console.log(`  per-run judgments/s: ${rigs.map((rig, i) => `${rig.setup.name}: ${rates[i].map(ps).join(', ')}`).join('; ')}`);
  for (const [i, rig] of rigs.entries()) line(`judgments, ${rig.setup.name}`, ps(mid(rates[i])), mid(ratios[i]));
  const cores = (rig: JudgeRig, k: number) => mid(rig.cores.slice(1).map((c) => c[k])).toFixed(2);
  console.log(`  cores busy while judging (median; akas serve / PostgreSQL / this load generator; the machine has ${availableParallelism()}):`);
  for (const rig of rigs) console.log(`    ${rig.setup.name.padEnd(26)} ${cores(rig, 0)} / ${cores(rig, 1)} / ${cores(rig, 2)}`);
  const twoOverOne = mid(ratios[2].map((x, r) => x / ratios[1][r]));
  line('two processes / one process on PostgreSQL', `${twoOverOne.toFixed(2)}x`, twoOverOne, '> 1', twoOverOne > 1);
}

// ---------------------------------------------------------------------------------------
// 3. watch propagation.

const Watched = space<{ n: number }>('bench-watch');

/** The child: watches the space and prints when each key arrives (wall clock, sub-millisecond). */
async function watcherMain(url: string) {
  const store = await openPgStore(url);
  store.watch(Watched, (key) => process.stdout.write(`${key} ${performance.timeOrigin + performance.now()}\n`));
  process.stdout.write('ready\n');
  process.stdin.resume();
  process.stdin.on('end', () => void store.close().then(() => process.exit(0)));
}

async function watchSection(url: string) {
  const N = 300;
  header(`postgres: watch propagation, commit in this process -> watcher called in another (median of ${N}), ratio to the durable commit`);
  const store = await openPgStore(url);
  const child = spawn(process.execPath, [SELF, WATCHER_FLAG, url], { stdio: ['pipe', 'pipe', 'inherit'] });
  const arrivals = new Map<string, number>();
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  createInterface({ input: child.stdout! }).on('line', (l) => {
    if (l === 'ready') return ready();
    const [key, at] = l.split(' ');
    arrivals.set(key, Number(at));
  });
  await isReady;
  const commits: number[] = [];
  const delays: number[] = [];
  for (let i = 0; i < N; i++) {
    const key = `k${i}`;
    const t0 = performance.now();
    await store.transact([key], async (tx) => tx.put(Watched, key, { n: i }));
    const done = performance.timeOrigin + performance.now();
    commits.push(performance.now() - t0);
    const deadline = Date.now() + 5000;
    while (!arrivals.has(key) && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    if (!arrivals.has(key)) throw new Error(`the watcher never heard of ${key}`);
    delays.push(arrivals.get(key)! - done);
    await new Promise((r) => setTimeout(r, 2));
  }
  child.stdin!.end();
  await new Promise((r) => child.once('exit', r));
  await store.close();
  const c = mid(commits);
  const d = mid(delays);
  const sorted = [...delays].sort((a, b) => a - b);
  line('durable commit, 1 key (transact, sync commit)', fmtMs(c), 1);
  line("commit returned -> other process's watcher called (median)", fmtMs(d), d / c);
  line('  95th percentile', fmtMs(sorted[Math.floor(sorted.length * 0.95)]), sorted[Math.floor(sorted.length * 0.95)] / c);
}

// ---------------------------------------------------------------------------------------
// 4. The choices: table layout, blob storage.

async function layoutSection(store: PgStore) {
  const SPACES = 20;
  const ROWS = 5000;
  const ROUNDS = 5;
  header(
    `postgres: one key-value table vs a table per space (${SPACES} spaces x ${ROWS} rows; upserts in batches of 100, point reads, scans of ` +
      `100; 8 in flight; median of ${ROUNDS}, alternating which goes first)`,
  );
  const doc = (i: number) =>
    JSON.stringify({ tag: `ak_${i}`, balance: i * 3, calibration: { score: 0.8, attempts: 1 }, keys: ['a'.repeat(44)], createdAt: 1_700_000_000_000 + i });
  const key = (i: number) => Buffer.from(`k${String(i).padStart(7, '0')}`);
  const layouts = {
    'one table (space, key)': {
      setup: [
        'DROP TABLE IF EXISTS $schema.bench_one',
        'CREATE TABLE $schema.bench_one (space text COLLATE "C", key bytea, value text, PRIMARY KEY (space, key))',
      ],
      put: (s: number) =>
        [
          `INSERT INTO $schema.bench_one SELECT $1, k, v FROM unnest($2::bytea[], $3::text[]) AS t(k, v) ON CONFLICT (space, key) DO UPDATE ` +
            `SET value = excluded.value`,
          (keys: Buffer[], vals: string[]) => [`space-${s}`, keys, vals],
        ] as const,
      get: (s: number) => [`SELECT value FROM $schema.bench_one WHERE space = $1 AND key = $2`, (k: Buffer) => [`space-${s}`, k]] as const,
      scan: (s: number) =>
        [`SELECT key, value FROM $schema.bench_one WHERE space = $1 AND key >= $2 ORDER BY key LIMIT 100`, (k: Buffer) => [`space-${s}`, k]] as const,
    },
    'a table per space': {
      setup: Array.from({ length: SPACES }, (_, s) => [
        `DROP TABLE IF EXISTS $schema.bench_s${s}`,
        `CREATE TABLE $schema.bench_s${s} (key bytea PRIMARY KEY, value text)`,
      ]).flat(),
      put: (s: number) =>
        [
          `INSERT INTO $schema.bench_s${s} SELECT k, v FROM unnest($1::bytea[], $2::text[]) AS t(k, v) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
          (keys: Buffer[], vals: string[]) => [keys, vals],
        ] as const,
      get: (s: number) => [`SELECT value FROM $schema.bench_s${s} WHERE key = $1`, (k: Buffer) => [k]] as const,
      scan: (s: number) => [`SELECT key, value FROM $schema.bench_s${s} WHERE key >= $1 ORDER BY key LIMIT 100`, (k: Buffer) => [k]] as const,
    },
  };
  const results: Record<string, { put: number[]; get: number[]; scan: number[] }> = {};
  for (let round = 0; round < ROUNDS; round++) {
    const entries = Object.entries(layouts);
    for (const [name, L] of round % 2 ? entries.reverse() : entries) {
      for (const sql of L.setup) await store.sql(sql);
      const r = (results[name] ??= { put: [], get: [], scan: [] });
      let t = performance.now();
      await runPool([...Array((SPACES * ROWS) / 100).keys()], 8, async (b) => {
        const s = b % SPACES;
        const from = Math.floor(b / SPACES) * 100;
        const keys = Array.from({ length: 100 }, (_, j) => key(from + j));
        const [text, values] = L.put(s);
        await store.sql(
          text,
          values(
            keys,
            keys.map((_, j) => doc(from + j)),
          ),
        );
      });
      r.put.push((SPACES * ROWS) / ((performance.now() - t) / 1000));
      await store.sql('ANALYZE');
      t = performance.now();
      await runPool([...Array(10_000).keys()], 8, async (i) => {
        const [text, values] = L.get(i % SPACES);
        JSON.parse((await store.sql<{ value: string }>(text, values(key((i * 7919) % ROWS))))[0].value);
      });
      r.get.push(10_000 / ((performance.now() - t) / 1000));
      t = performance.now();
      await runPool([...Array(1000).keys()], 8, async (i) => {
        const [text, values] = L.scan(i % SPACES);
        for (const row of await store.sql<{ value: string }>(text, values(key((i * 7919) % (ROWS - 100))))) JSON.parse(row.value);
      });
      r.scan.push(100_000 / ((performance.now() - t) / 1000));
    }
  }
  for (const sql of ['DROP TABLE IF EXISTS $schema.bench_one', ...Array.from({ length: SPACES }, (_, s) => `DROP TABLE IF EXISTS $schema.bench_s${s}`)])
    await store.sql(sql);
  const { 'one table (space, key)': one, 'a table per space': per } = results;
  for (const what of ['put', 'get', 'scan'] as const) {
    const label = { put: 'rows upserted', get: 'point reads', scan: 'rows scanned' }[what];
    line(`${label}: one table`, ps(mid(one[what])), 1);
    line(`${label}: a table per space`, ps(mid(per[what])), mid(per[what]) / mid(one[what]));
  }
}

async function blobSection(store: PgStore) {
  const SIZE = 10 * MiB;
  const PIECE = 64 * 1024;
  const ROUNDS = 3;
  header(
    `postgres: content-store blobs, 10 MiB written durably (${PIECE / 1024} KiB pieces, as off a socket) and read back; median of ${ROUNDS}, ratio to files`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'akas-pg-bench-blobs-'));
  const files = await BlobStore.open(dir);
  const chunks = await store.blobs();
  const results: Record<string, { write: number[]; read: number[] }> = {
    files: { write: [], read: [] },
    bytea: { write: [], read: [] },
    lo: { write: [], read: [] },
  };
  const mbps = (ms: number) => SIZE / MiB / (ms / 1000);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, blobs] of [
        ['files', files],
        ['bytea', chunks],
      ] as const) {
        const bytes = randomBytes(SIZE);
        let t = performance.now();
        const up = blobs.begin(undefined, SIZE);
        for (let i = 0; i < SIZE; i += PIECE) await up.write(bytes.subarray(i, i + PIECE));
        const sha = up.sha256();
        await up.place();
        await up.discard();
        results[name].write.push(mbps(performance.now() - t));
        t = performance.now();
        const reader = (await blobs.open(sha))!;
        let n = 0;
        for await (const c of reader.stream()) n += (c as Buffer).length;
        if (n !== SIZE) throw new Error(`${name}: read ${n} bytes`);
        results[name].read.push(mbps(performance.now() - t));
      }
      // Large objects: lo_put per 1 MiB gathered (synchronous_commit off but the last, whose
      // synchronous commit flushes them all, as the bytea chunks do); read with lo_get per 1 MiB.
      const bytes = randomBytes(SIZE);
      let t = performance.now();
      const [{ oid }] = await store.sql<{ oid: number }>('SELECT lo_create(0) AS oid');
      let held: Buffer[] = [];
      let heldBytes = 0;
      let off = 0;
      const flush = async (last: boolean) => {
        const buf = Buffer.concat(held);
        held = [];
        heldBytes = 0;
        await store.sql(last ? 'SELECT lo_put($1, $2, $3)' : `SELECT set_config('synchronous_commit', 'off', true), lo_put($1, $2, $3)`, [oid, off, buf]);
        off += buf.length;
      };
      for (let i = 0; i < SIZE; i += PIECE) {
        held.push(bytes.subarray(i, i + PIECE));
        heldBytes += PIECE;
        if (heldBytes >= MiB) await flush(i + PIECE >= SIZE);
      }
      if (heldBytes) await flush(true);
      results.lo.write.push(mbps(performance.now() - t));
      t = performance.now();
      let n = 0;
      for (let o = 0; o < SIZE; o += MiB) n += (await store.sql<{ b: Buffer }>('SELECT lo_get($1, $2, $3) AS b', [oid, o, MiB]))[0].b.length;
      if (n !== SIZE) throw new Error(`large objects: read ${n} bytes`);
      results.lo.read.push(mbps(performance.now() - t));
      await store.sql('SELECT lo_unlink($1)', [oid]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const f = results.files;
  for (const [name, label] of [
    ['files', 'files (temp file, fsync, link), a folder shared by every process'],
    ['bytea', 'bytea chunks of 1 MiB (akas_blob_chunks), the chosen'],
    ['lo', 'large objects (lo_put / lo_get of 1 MiB)'],
  ] as const) {
    line(`write 10 MiB: ${label}`, fmtMBps(mid(results[name].write)), mid(results[name].write) / mid(f.write));
    line(`read 10 MiB: ${label}`, fmtMBps(mid(results[name].read)), mid(results[name].read) / mid(f.read));
  }
}

// ---------------------------------------------------------------------------------------

export async function run() {
  const t0 = performance.now();
  let cluster: TempCluster;
  try {
    cluster = await startTempCluster({ fsync: true });
    benchCluster = cluster;
  } catch (e) {
    console.log(`\npostgres: skipped, no PostgreSQL server could be started here (${(e as Error).message.split('\n')[0]})`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'akas-pg-bench-level-'));
  const setups: Setup[] = [];
  try {
    setups.push(await levelSetup(dir));
    setups.push(await pgSetup(`${cluster.url}?schema=bench_one`, 1));
    setups.push(await pgSetup(`${cluster.url}?schema=bench_two`, 2));
    if (wants('me')) await meSection(setups);
    if (wants('judging')) await judgingSection(setups);
    await Promise.all(setups.flatMap((s) => s.procs.map((p) => p.stop())));
    setups.length = 0;

    const store = await openPgStore(`${cluster.url}?schema=bench_choices`);
    try {
      if (wants('watch')) await watchSection(`${cluster.url}?schema=bench_choices`);
      if (wants('layout')) await layoutSection(store);
      if (wants('blobs')) await blobSection(store);
    } finally {
      await store.close();
    }
    console.log(`  (total ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  } finally {
    await Promise.all(setups.flatMap((s) => s.procs.map((p) => p.stop())));
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === WATCHER_FLAG) void watcherMain(process.argv[3]);
