// HTTP throughput of the node: GET /api/agent/v1/me (Bearer auth, token bucket, the /me view
// with its quota extension, ETag) against a bare fastify route on its own instance, both
// loaded by the same child-process load generator (bench/http-load.ts, undici Pool) in the
// same run. Target (issue): /me at >= 0.6 of the bare route.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { createApp } from '../src/http/app.js';
import { openTempStore } from '../src/store/index.js';
import { benchKeys, header, line, perSec, type Rate } from './lib.js';

const TARGET = 0.6;
export const CONNECTIONS = 32;
export const SLICE_MS = 500;
export const CYCLES = 12;
const LOAD_SCRIPT = fileURLToPath(new URL('./http-load.js', import.meta.url));

export interface Target {
  name: string;
  url: string;
  /** Several paths on the origin of url, one per connection (bench/log.ts reads many tiles). */
  paths?: string[];
  headers?: Record<string, string>;
  method?: 'GET' | 'POST';
  body?: string;
}

export interface TargetResult {
  ok: number;
  bad: number;
  ms: number;
  statuses: Record<string, number>;
  perCycle: number[];
}


/** Runs the load generator (a child process) over the targets in alternating slices (bench/mcp.ts uses it too). */
export function load(targets: Target[]): Promise<TargetResult[]> {
  const args = JSON.stringify({ targets, connections: CONNECTIONS, sliceMs: SLICE_MS, cycles: CYCLES, warmupMs: 500 });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOAD_SCRIPT, args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), (targets.length * (CYCLES * SLICE_MS + 500)) + 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      if (code !== 0) return reject(new Error(`load generator exited ${code}: ${out}`));
      const results = (JSON.parse(out) as { targets: TargetResult[] }).targets;
      results.forEach((r, i) => {
        if (r.bad > 0 || r.ok === 0) reject(new Error(`${targets[i].name}: unexpected statuses ${JSON.stringify(r.statuses)}`));
      });
      resolve(results);
    });
  });
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rateOf = (name: string, r: TargetResult): Rate => ({ name, opsPerSec: (r.ok / r.ms) * 1000, ops: r.ok, ms: r.ms });

export async function run() {
  header(`http: GET /api/agent/v1/me vs a bare fastify route (child-process undici load, ${CONNECTIONS} in flight, targets alternating in ${SLICE_MS} ms slices x ${CYCLES} cycles)`);

  const bare: FastifyInstance = Fastify({ logger: false });
  bare.get('/x', async () => ({ ok: true }));
  const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });

  const { store, dispose } = await openTempStore();
  const node = await createApp({ store, keys: benchKeys(), config: { rateLimit: { burst: 1e9, refillPerSecond: 1e9 } }, logger: false });
  const nodeUrl = await node.listen({ host: '127.0.0.1', port: 0 });

  try {
    const reg = await fetch(`${nodeUrl}/api/agent/v1/register`, { method: 'POST' });
    if (reg.status !== 200) throw new Error(`register answered ${reg.status}: ${await reg.text()}`);
    const { apiKey } = (await reg.json()) as { apiKey: string };
    const auth = { authorization: `Bearer ${apiKey}` };
    const check = await fetch(`${nodeUrl}/api/agent/v1/me`, { headers: auth });
    if (check.status !== 200) throw new Error(`/me answered ${check.status}`);
    const meBytes = (await check.arrayBuffer()).byteLength;

    // /wakeup (Bearer auth, token bucket, the hooks, a small body) is a diagnostic between the
    // bare route and /me: the gap from it to /me is the /me view, its quota extension and body.
    const targets: Target[] = [
      { name: 'bare fastify GET /x', url: `${bareUrl}/x` },
      { name: 'diagnostic: GET /api/agent/v1/wakeup (Bearer)', url: `${nodeUrl}/api/agent/v1/wakeup`, headers: auth },
      { name: `GET /api/agent/v1/me (${meBytes} B body)`, url: `${nodeUrl}/api/agent/v1/me`, headers: auth },
    ];
    const [bare0, wake, me] = await load(targets);
    // Each cycle's rate is divided by the bare route's rate in the same cycle; the median of
    // those ratios is the result (steady on a busy machine, where absolute rates swing).
    const ratios = (r: TargetResult) => r.perCycle.map((x, i) => x / bare0.perCycle[i]);
    const meRatios = ratios(me);
    const ratio = med(meRatios);
    console.log(
      `  (ratio = median over ${CYCLES} cycles of req/s divided by the bare route's req/s in the same cycle; /me per-cycle ratios ${[...meRatios]
        .sort((a, b) => a - b)
        .map((r) => r.toFixed(2))
        .join(' ')}; rates are over all cycles)`,
    );
    line(targets[0].name, perSec(rateOf(targets[0].name, bare0)), 1);
    line(targets[1].name, perSec(rateOf(targets[1].name, wake)), med(ratios(wake)));
    line(targets[2].name, perSec(rateOf(targets[2].name, me)), ratio, `>= ${TARGET}`, ratio >= TARGET);
  } finally {
    await node.close();
    await bare.close();
    await dispose();
  }
}
