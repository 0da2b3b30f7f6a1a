// `npm run bench -- load` (and `-- soak`): a real `akas serve` (the built binary, a child
// process on a temp folder) under a mixed read/write workload of many agents over loopback
// HTTP (bench/workload.ts): requests per second, p50/p99 latency per operation, answers by
// status, and the node's peak RSS. The only refusals expected are the 429s of the token
// bucket (each agent has 120 requests of burst and 2 per second); anything else is listed.
// The baseline of the same run is GET /healthz at the same concurrency, so the mixed rate
// reads as a share of what the node answers when it does nothing.
//
// `soak` runs the same load for minutes (SOAK_MINUTES, default 5, at least 3) and reports RSS drift:
// the median RSS of each minute, and the last minute's against the middle one's (once the
// bounded caches are full, RSS must stop climbing but for the data the load keeps writing).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent as Dispatcher, request } from 'undici';
import { header, line } from './lib.js';
import { MIXED_MIX, seeded, Workload, type Answer } from './workload.js';

const CLI = fileURLToPath(new URL('../bin/main.cjs', import.meta.url));
const CONCURRENCY = 32;
const AGENTS = 1000;

interface Served {
  url: string;
  child: ChildProcess;
  dir: string;
  /** Where the node writes its diagnostic reports (SIGUSR2). */
  reports: string;
  stop: () => Promise<void>;
}

/** node flags for the served process (the soak caps its heap: see soak()). */
async function serve(nodeFlags: string[] = []): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'akas-bench-load-'));
  const reports = mkdtempSync(join(tmpdir(), 'akas-bench-reports-'));
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      '--report-on-signal',
      `--report-directory=${reports}`,
      CLI,
      'serve',
      '--data',
      dir,
      '--port',
      '0',
      '--log-level',
      'warn',
      '--trust-proxy',
      '--public-url',
      'https://akas.example.org',
      '--allow-demo-calibration',
      '--registration-cap',
      '1000000',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`akas serve exited with ${code}: ${out}`)));
  });
  return {
    url,
    child,
    dir,
    reports,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
      rmSync(reports, { recursive: true, force: true });
    },
  };
}

/**
 * The node's resident memory now and at its peak, in MiB (Linux /proc), and the two kinds the
 * RSS is made of: anonymous (the JavaScript heaps, malloc: what the process holds) and
 * file-backed (the node binary, and the pages of LevelDB's table files it maps and has read:
 * page cache the kernel takes back under pressure, growing with the data as the load writes).
 */
function rssOf(pid: number): { rss: number; peak: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024, anon: kb('RssAnon') / 1024, file: (kb('RssFile') + kb('RssShmem')) / 1024 };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))] : NaN;
};

// GET /healthz draws a token like every route (issue 22): the baseline spreads its requests
// over 2,000 client addresses (the node trusts the bench as its proxy), so it measures answers,
// not the bucket's 429s.
async function healthzRate(url: string, seconds: number): Promise<number> {
  const d = new Dispatcher({ connections: CONCURRENCY });
  let n = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const i = n % 2000;
        const r = await request(`${url}/healthz`, { dispatcher: d, headers: { 'x-forwarded-for': `172.16.${i >> 8}.${i & 255}` } });
        await r.body.dump();
        n++;
      }
    }),
  );
  await d.close();
  return n / seconds;
}

function report(answers: Answer[], seconds: number, baseline: number) {
  const total = answers.length;
  const rps = total / seconds;
  line('GET /healthz, same concurrency (baseline)', `${Math.round(baseline).toLocaleString('en-US')}/s`, 1);
  line(`mixed workload, ${CONCURRENCY} in flight`, `${Math.round(rps).toLocaleString('en-US')}/s`, rps / baseline);
  const ms = answers.map((a) => a.ms);
  line('latency, all requests, p50 / p99', `${pct(ms, 50).toFixed(1)} / ${pct(ms, 99).toFixed(1)} ms`);
  const byOp = new Map<string, Answer[]>();
  for (const a of answers) {
    const xs = byOp.get(a.op);
    if (xs) xs.push(a);
    else byOp.set(a.op, [a]);
  }
  for (const [op, xs] of [...byOp].sort()) {
    const t = xs.map((x) => x.ms);
    line(`  ${op} (${xs.length})`, `${pct(t, 50).toFixed(1)} / ${pct(t, 99).toFixed(1)} ms`);
  }
  const byStatus = new Map<number, number>();
  for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
  console.log(
    `  answers by status: ${[...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s} × ${n.toLocaleString('en-US')}`)
      .join(', ')}`,
  );
  const unexpected = answers.filter((a) => a.status >= 300 && a.status !== 429);
  const byOpStatus = new Map<string, number>();
  for (const a of unexpected) {
    const k = `${a.op} ${a.status}${a.code ? ` ${a.code}` : ''}`;
    byOpStatus.set(k, (byOpStatus.get(k) ?? 0) + 1);
  }
  console.log(
    `  refusals other than 429: ${unexpected.length ? [...byOpStatus].map(([k, n]) => `${k} × ${n}`).join(', ') : 'none'}  ${unexpected.length ? '✗' : '✓'}`,
  );
}

/** The heaps of the node's threads, from a diagnostic report it writes on SIGUSR2 (soak only). */
async function heapsOf(node: Served): Promise<string | undefined> {
  const before = new Set(readdirSync(node.reports));
  node.child.kill('SIGUSR2');
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const file = readdirSync(node.reports).find((f) => !before.has(f) && f.endsWith('.json'));
    if (!file) continue;
    try {
      const r = JSON.parse(readFileSync(join(node.reports, file), 'utf8')) as {
        javascriptHeap: { usedMemory: number; totalMemory: number };
        workers?: Array<{ javascriptHeap: { usedMemory: number; totalMemory: number } }>;
      };
      const mib = (h: { usedMemory: number; totalMemory: number }) => `${(h.usedMemory / 1048576).toFixed(0)} / ${(h.totalMemory / 1048576).toFixed(0)} MiB`;
      return `main ${mib(r.javascriptHeap)}; workers ${(r.workers ?? []).map((w) => mib(w.javascriptHeap)).join(', ') || 'none'}`;
    } catch {
      // Still being written.
    }
  }
  return undefined;
}

async function runLoad(seconds: number, soak: boolean, nodeFlags: string[] = []) {
  const node = await serve(nodeFlags);
  const load = new Workload(node.url, seeded(7), CONCURRENCY * 2);
  try {
    const setup = performance.now();
    for (let i = 0; i < AGENTS; i += 25) await Promise.all(Array.from({ length: 25 }, () => load.seedAgent()));
    console.log(`  (${AGENTS} calibrated agents registered in ${((performance.now() - setup) / 1000).toFixed(1)} s; each from an IP of its own)`);
    const baseline = await healthzRate(node.url, 3);
    load.answers.length = 0;
    const samples: Array<{ at: number; rss: number; anon: number; file: number }> = [];
    const sampler = setInterval(() => samples.push({ at: performance.now(), ...rssOf(node.child.pid!) }), 1000);
    // The soak asks the node for a diagnostic report at the end of every minute (SIGUSR2):
    // where the anonymous memory is, the main thread's heap or the worker threads'.
    const heaps: string[] = [];
    const minutesRun = Math.floor(seconds / 60);
    const reporters = soak
      ? Array.from({ length: minutesRun }, (_, m) => setTimeout(() => void heapsOf(node).then((h) => h && (heaps[m] = h)), (m + 1) * 60_000 - 5_000))
      : [];
    const start = performance.now();
    const run = load.run(MIXED_MIX, CONCURRENCY, start + seconds * 1000);
    const { networkErrors } = await run.done;
    clearInterval(sampler);
    for (const t of reporters) clearTimeout(t);
    const elapsed = (performance.now() - start) / 1000;
    report(load.answers, elapsed, baseline);
    console.log(`  network errors: ${networkErrors}  ${networkErrors ? '✗' : '✓'}`);
    const mem = rssOf(node.child.pid!);
    line('node peak RSS (VmHWM)', `${mem.peak.toFixed(0)} MiB`);
    if (soak) {
      // Caches fill up to their bounds and the data grows as the load writes (new agents,
      // proposals, published nodes, blobs): RSS climbs at first. What must not happen is that it
      // keeps climbing once the caches are full: the last minute against the middle one, of
      // the anonymous memory the process holds (the mapped table pages grow with the data).
      const minutes = Math.floor(seconds / 60);
      const byMinute = (f: (x: (typeof samples)[number]) => number) =>
        Array.from({ length: minutes }, (_, m) => pct(samples.filter((x) => x.at - start >= m * 60_000 && x.at - start < (m + 1) * 60_000).map(f), 50));
      const mid = Math.floor(minutes / 2);
      for (const [label, perMinute] of [
        ['RSS', byMinute((x) => x.rss)],
        ['  anonymous', byMinute((x) => x.anon)],
        ['  file-backed', byMinute((x) => x.file)],
      ] as const) {
        console.log(`  ${label} median by minute: ${perMinute.map((r) => r.toFixed(0)).join(', ')} MiB`);
      }
      const anon = byMinute((x) => x.anon);
      const rss = byMinute((x) => x.rss);
      line(`RSS median, last minute / minute ${mid + 1}`, `${rss[minutes - 1].toFixed(0)} MiB`, rss[minutes - 1] / rss[mid]);
      // Flat: over the last 10 minutes (the last half of a shorter soak), the highest minute's
      // median RSS within 5% of the lowest's (issue 21: a 30-minute soak, its last 10 minutes).
      const tail = rss.slice(minutes >= 20 ? minutes - 10 : mid);
      const spread = Math.max(...tail) / Math.min(...tail);
      line(
        `RSS median of the last ${tail.length} minutes, highest / lowest`,
        `${Math.min(...tail).toFixed(0)}-${Math.max(...tail).toFixed(0)} MiB`,
        spread,
        '<= 1.05',
        spread <= 1.05,
      );
      line(
        `anonymous median, last minute / minute ${mid + 1} (caches full)`,
        `${anon[minutes - 1].toFixed(0)} MiB`,
        anon[minutes - 1] / anon[mid],
        'drift <= 1.10',
        anon[minutes - 1] / anon[mid] <= 1.1,
      );
      for (const [m, h] of heaps.entries()) if (h) console.log(`  heaps in use / committed, end of minute ${m + 1}: ${h}`);
      const written = Object.fromEntries(Object.entries(load.acked).map(([k, v]) => [k, v.length]));
      console.log(`  written meanwhile: ${JSON.stringify(written)}`);
    }
  } finally {
    await load.close();
    await node.stop();
  }
}

export async function run() {
  header(
    `load: a mixed workload of ${AGENTS} agents (register, calibrate, tools, propose, judge, attest, cas, me, node, search) against \`akas ` +
      `serve\`, ${CONCURRENCY} requests in flight`,
  );
  await runLoad(Number(process.env.LOAD_SECONDS ?? 20), false);
}

export async function soak() {
  const minutes = Math.max(3, Number(process.env.SOAK_MINUTES ?? 5));
  // V8 sizes the old generation from the machine's memory (gigabytes here) and lets garbage
  // pile up towards it before a full collection, so an uncapped RSS climbs under load whether
  // or not anything leaks. With the main heap capped (SOAK_HEAP_MIB), what V8 keeps is what is
  // live: a leak shows as a climb to the cap and a crash (network errors), not as laziness.
  const heapMiB = Number(process.env.SOAK_HEAP_MIB ?? 160);
  header(`soak: the load of \`-- load\` for ${minutes} minutes, the node's main heap capped at ${heapMiB} MiB, RSS sampled every second`);
  await runLoad(minutes * 60, true, [`--max-old-space-size=${heapMiB}`]);
}
