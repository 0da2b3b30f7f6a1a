// The load generator of bench/http.ts, run as a child process so that the client does not
// share the servers' event loop (it still shares the machine's cores).
//
// It loads several targets in turn, in short slices (all `connections` requests in flight on
// one target for `sliceMs`, drained, then the next target), for `cycles` rounds. Slicing
// finely means every target sees the same conditions on a shared machine, so the ratios
// between targets hold steady even when absolute rates swing.
//
// Usage: node http-load.js '{"targets":[{"url":"http://127.0.0.1:PORT/x","headers":{},"method":"GET","body":null}],
//   "connections":32,"sliceMs":500,"cycles":8,"warmupMs":500}'  (one JSON argument, on one line)
// Prints one JSON line: {"targets":[{"ok","bad","ms","statuses","perCycle":[req/s,...]}]}.
import { Pool } from 'undici';

interface Target {
  url: string;
  /** Several processes serving one node: the connections are spread over these (url is then ignored). */
  urls?: string[];
  /** Several paths on the one origin of `url`: connection c requests paths[c % paths.length]. */
  paths?: string[];
  headers?: Record<string, string>;
  /** GET by default; a POST sends `body` (bench/mcp.ts posts JSON-RPC). */
  method?: 'GET' | 'POST';
  body?: string;
}

interface LoadOptions {
  targets: Target[];
  connections?: number;
  sliceMs?: number;
  cycles?: number;
  warmupMs?: number;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as LoadOptions;
const connections = opts.connections ?? 32;
const sliceMs = opts.sliceMs ?? 500;

const targets = opts.targets.map((t) => {
  const urls = (t.urls ?? [t.url]).map((x) => new URL(x));
  const pools = urls.map((u) => new Pool(u.origin, { connections: Math.ceil(connections / urls.length), pipelining: 1 }));
  return {
    pools,
    path: urls[0].pathname + urls[0].search,
    paths: t.paths,
    headers: t.headers ?? {},
    method: t.method ?? 'GET',
    body: t.body,
    ok: 0,
    bad: 0,
    ms: 0,
    statuses: {} as Record<string, number>,
    perCycle: [] as number[],
  };
});

/** One slice on one target: `connections` loops until `ms` have passed, then drained. */
async function slice(t: (typeof targets)[number], ms: number, count: boolean) {
  const start = performance.now();
  const end = start + ms;
  let ok = 0;
  await Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      const pool = t.pools[c % t.pools.length];
      const path = t.paths ? t.paths[c % t.paths.length] : t.path;
      while (performance.now() < end) {
        const res = await pool.request({ method: t.method, path, headers: t.headers, body: t.body });
        await res.body.dump();
        if (!count) continue;
        t.statuses[res.statusCode] = (t.statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode === 200) ok++;
        else t.bad++;
      }
    }),
  );
  const took = performance.now() - start;
  if (count) {
    t.ok += ok;
    t.ms += took;
    t.perCycle.push((ok / took) * 1000);
  }
}

for (const t of targets) await slice(t, opts.warmupMs ?? 500, false);
for (let c = 0; c < (opts.cycles ?? 8); c++) {
  // Rotate which target goes first, so none always follows the same one.
  for (let i = 0; i < targets.length; i++) await slice(targets[(i + c) % targets.length], sliceMs, true);
}
await Promise.all(targets.flatMap((t) => t.pools.map((p) => p.close())));
process.stdout.write(JSON.stringify({ targets: targets.map(({ ok, bad, ms, statuses, perCycle }) => ({ ok, bad, ms, statuses, perCycle })) }) + '\n');
