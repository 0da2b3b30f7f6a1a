// HTTP throughput of the node: GET /api/agent/v1/me (Bearer auth, token bucket, the /me view
// with its quota extension, ETag, and the request log as `akas serve` writes it: info lines
// through the node's logger, here to /dev/null) against a bare fastify route on its own
// instance, both loaded by the same child-process load generator (bench/http-load.ts, undici
// Pool) in the same run. Target (issue 53): /me at >= 0.85 of the bare route. Beside it, a
// diagnostic: the bare route answering a body of /me's size (about 1.9 KB against 11 bytes),
// which shows whether moving /me's bytes is where its cost lies (here it was not: 0.97 of the
// bare route, the same CPU per answer; one writev and one read per request either way). And a
// limit: the bare route answering /me's own headers and body, computing nothing. The load
// generator shares the two cores, and what it spends reading an answer (each header is a
// callback of its parser) slows every route that sends that answer: /me can go no faster
// than that route, and /me's ratio to it is printed beside.
// And a floor: that route doing, besides, the work no GET /me can skip, with the node's own
// code: the request line written by the node's logger (issue 53, 1: one line per request), the
// Bearer key's SHA-256 (the auth cache looks agents up by it: the node keeps API keys only as
// hashes and compares them in constant time) and a token drawn from the node's buckets
// (PROTOCOL 1.4: every answer draws one). What /me spends beyond that floor is its own (the
// router's hooks, the /me view's cache and ETag, the bucket and snapshot lookups); what the
// floor spends beyond the limit is the price of the log line, the hash and the draw.
//
// Then the bare route again with one of the node's per-request hooks at a time (the security
// headers, the request log as `akas serve` writes it, the token bucket, the auth cache with the
// token bucket), each registered by the node's own code, loaded one at a time: the CPU time this
// process spends per answer (process.cpuUsage, which a busy machine's scheduling does not
// inflate as it does wall time), less the bare route's, is that hook's cost, printed in
// microseconds and as a share of a GET /me's, so the next regression names itself. Beside the
// node's request log, the same line through pino's own setups, for comparison: its asynchronous
// destination (sonic-boom) as the node used it before issue 53, and with the 4 KiB minLength
// pino's documentation suggests for throughput (lines then wait until 4 KiB have gathered).
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import pino from 'pino';
import { strategiesFor } from '../src/node/strategies.js';
import { API_KEY_RE, sha256Hex } from '../src/core/index.js';
import { createApp } from '../src/http/app.js';
import { bearer, registerCaller } from '../src/http/caller.js';
import { TokenBuckets } from '../src/http/rate-limit.js';
import { nodeLogger, registerRequestLog, requestLoggerOnFirstUse } from '../src/http/request-log.js';
import { nodeHelmetOptions, registerSecurityHeaders } from '../src/http-kit/security-headers.js';
import { HeldBuckets, openTempStore } from '../src/store/index.js';
import { benchKeys, header, line, perSec, type Rate } from './lib.js';

const TARGET = 0.85;
export const CONNECTIONS = 32;
export const SLICE_MS = 500;
export const CYCLES = 12;
/**
 * The /me comparison's own cycles: its per-cycle ratios spread from about 0.6 to 1.1 on this
 * 2-core machine, and a median of 12 of them moved by 0.05 between runs of the same code.
 */
const ME_CYCLES = 24;
/** The hook costs: each target loaded alone for this long, this many times. */
const HOOK_SLICE_MS = 1500;
/** 5, not 3: with 3, the request log's cost read +15 µs in one run and +6 µs in the next, on the same build. */
const HOOK_ROUNDS = 5;
/** Response headers Node writes itself on every answer (the rest of /me's are the node's: the limit route sets them). */
const NODE_SETS = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);
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
export function load(targets: Target[], opts: { cycles?: number; sliceMs?: number; warmupMs?: number } = {}): Promise<TargetResult[]> {
  const cycles = opts.cycles ?? CYCLES;
  const sliceMs = opts.sliceMs ?? SLICE_MS;
  const args = JSON.stringify({ targets, connections: CONNECTIONS, sliceMs, cycles, warmupMs: opts.warmupMs ?? 500 });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOAD_SCRIPT, args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), targets.length * (cycles * sliceMs + 500) + 30_000);
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

/** A bare fastify app with one route, /x, and whatever setup() registers before it. */
async function bareApp(
  setup: (app: FastifyInstance) => void = () => undefined,
  options: FastifyServerOptions = { logger: false },
  routeConfig: Record<string, unknown> = {},
) {
  const app = Fastify(options);
  setup(app);
  app.get('/x', { config: routeConfig }, async () => ({ ok: true }));
  return { app, url: await app.listen({ host: '127.0.0.1', port: 0 }) };
}

export async function run() {
  header(
    `http: GET /api/agent/v1/me vs a bare fastify route, and each per-request hook of the node on the bare route (child-process undici load,` +
      ` ${CONNECTIONS} in flight, targets alternating in ${SLICE_MS} ms slices x ${ME_CYCLES} cycles)`,
  );

  const { store, dispose } = await openTempStore();
  const devNull = openSync('/dev/null', 'w');
  const node = await createApp({
    store,
    strategies: strategiesFor(store),
    keys: benchKeys(),
    config: { rateLimit: { burst: 1e9, refillPerSecond: 1e9 } },
    // As `akas serve` logs: info lines through the node's logger, here to /dev/null.
    loggerInstance: await nodeLogger('info', devNull),
  });
  const nodeUrl = await node.listen({ host: '127.0.0.1', port: 0 });
  const ctx = node.akas;

  const apps: FastifyInstance[] = [node];
  const bare = await bareApp();
  const headers = await bareApp((app) => registerSecurityHeaders(app, nodeHelmetOptions()));
  // As `akas serve` logs (createApp's options: fastify's own request lines off, ours on, each
  // request's child logger made on first use), to /dev/null.
  const logOn = (loggerInstance: FastifyServerOptions['loggerInstance'], childOnFirstUse = false): FastifyServerOptions => ({
    loggerInstance,
    logController: new LogController({ disableRequestLogging: true }),
    ...(childOnFirstUse ? { childLoggerFactory: requestLoggerOnFirstUse } : {}),
  });
  const logged = await bareApp((app) => registerRequestLog(app), logOn(await nodeLogger('info', devNull), true));
  // The same line through pino's serializer to sonic-boom (and a child logger per request, fastify's
  // default): as before issue 53, and with pino's suggested minLength.
  const pinoAsync = await bareApp((app) => registerRequestLog(app), logOn(pino({ level: 'info' }, pino.destination({ dest: devNull, sync: false }))));
  const pinoBuffered = await bareApp(
    (app) => registerRequestLog(app),
    logOn(pino({ level: 'info' }, pino.destination({ dest: devNull, sync: false, minLength: 4096 }))),
  );
  const unlimited = new TokenBuckets(new HeldBuckets(store, ctx.clock, 0), ctx.clock, 1e9, 1e9);
  const limited = await bareApp((app) => registerCaller(app, ctx, unlimited));
  const authed = await bareApp((app) => registerCaller(app, ctx, unlimited), { logger: false }, { auth: 'required' });
  apps.push(bare.app, headers.app, logged.app, pinoAsync.app, pinoBuffered.app, limited.app, authed.app);

  try {
    const reg = await fetch(`${nodeUrl}/api/agent/v1/register`, { method: 'POST' });
    if (reg.status !== 200) throw new Error(`register answered ${reg.status}: ${await reg.text()}`);
    const { apiKey } = (await reg.json()) as { apiKey: string };
    const auth = { authorization: `Bearer ${apiKey}` };
    const check = await fetch(`${nodeUrl}/api/agent/v1/me`, { headers: auth });
    if (check.status !== 200) throw new Error(`/me answered ${check.status}`);
    const meBody = await check.text();
    const meBytes = Buffer.byteLength(meBody);
    // The same route answering a body of /me's size: what moving those bytes costs.
    const sizedBody = JSON.stringify({ ok: 'x'.repeat(meBytes - 10) });
    const sized = await bareApp((app) => app.get('/sized', async (_request, reply) => reply.type('application/json; charset=utf-8').send(sizedBody)));
    // And answering /me's own headers and body, computing nothing: what reading such an answer
    // costs the load generator (it shares the two cores), the least any /me can cost here.
    const meHeaders = Object.fromEntries([...check.headers].filter(([name]) => !NODE_SETS.has(name)));
    const answered = await bareApp((app) => app.get('/answer', (_request, reply) => reply.headers(meHeaders).send(meBody)));
    // The floor: the same answer, with the log line, the key's hash and a token drawn, as the node does them.
    const floorBuckets = new TokenBuckets(new HeldBuckets(store, ctx.clock, 0), ctx.clock, 1e9, 1e9);
    const floored = await bareApp(
      (app) => {
        registerRequestLog(app);
        app.get('/floor', (request, reply) => {
          const key = bearer(request);
          if (!key || !API_KEY_RE.test(key) || sha256Hex(key).length !== 64) return reply.code(401).send();
          const wait = floorBuckets.take('agent:floor', 'per-bearer');
          if (wait) return wait.then(() => reply.headers(meHeaders).send(meBody));
          return reply.headers(meHeaders).send(meBody);
        });
      },
      logOn(await nodeLogger('info', devNull), true),
    );
    apps.push(sized.app, answered.app, floored.app);

    // /wakeup (Bearer auth, token bucket, the hooks, a small body) is a diagnostic between the
    // bare route and /me: the gap from it to /me is the /me view, its quota extension and body.
    const targets: Target[] = [
      { name: 'bare fastify GET /x', url: `${bare.url}/x` },
      { name: 'diagnostic: GET /api/agent/v1/wakeup (Bearer)', url: `${nodeUrl}/api/agent/v1/wakeup`, headers: auth },
      { name: `GET /api/agent/v1/me (${meBytes} B body, request log on)`, url: `${nodeUrl}/api/agent/v1/me`, headers: auth },
    ];
    targets.push({ name: `diagnostic: bare fastify GET /sized (a ${sizedBody.length} B body, as /me's)`, url: `${sized.url}/sized` });
    targets.push({ name: `limit: bare fastify answering /me's ${Object.keys(meHeaders).length} headers and body`, url: `${answered.url}/answer` });
    targets.push({ name: "floor: that answer with the work /me cannot skip (log line, key's SHA-256, a token)", url: `${floored.url}/floor`, headers: auth });
    const [bare0, wake, me, sized0, answer0, floor0] = await load(targets, { cycles: ME_CYCLES });
    // Each cycle's rate is divided by the bare route's rate in the same cycle; the median of
    // those ratios is the result (steady on a busy machine, where absolute rates swing).
    const ratios = (r: TargetResult) => r.perCycle.map((x, i) => x / bare0.perCycle[i]);
    const meRatios = ratios(me);
    const ratio = med(meRatios);
    console.log(
      `  (ratio = median over ${ME_CYCLES} cycles of req/s divided by the bare route's req/s in the same cycle; /me per-cycle ratios ${[...meRatios]
        .sort((a, b) => a - b)
        .map((r) => r.toFixed(2))
        .join(' ')}; rates are over all cycles)`,
    );
    line(targets[0].name, perSec(rateOf(targets[0].name, bare0)), 1);
    line(targets[1].name, perSec(rateOf(targets[1].name, wake)), med(ratios(wake)));
    line(targets[2].name, perSec(rateOf(targets[2].name, me)), ratio, `>= ${TARGET}`, ratio >= TARGET);
    line(targets[3].name, perSec(rateOf(targets[3].name, sized0)), med(ratios(sized0)));
    line(targets[4].name, perSec(rateOf(targets[4].name, answer0)), med(ratios(answer0)));
    line('  GET /me, to that limit', perSec(rateOf(targets[2].name, me)), med(me.perCycle.map((x, i) => x / answer0.perCycle[i])));
    line(targets[5].name, perSec(rateOf(targets[5].name, floor0)), med(ratios(floor0)));
    line('  GET /me, to that floor', perSec(rateOf(targets[2].name, me)), med(me.perCycle.map((x, i) => x / floor0.perCycle[i])));

    // The hooks, one target at a time: CPU time of this process (every server runs in it) per answer.
    const costed: Target[] = [
      targets[0],
      targets[2],
      targets[3],
      targets[5],
      { name: 'security headers', url: `${headers.url}/x` },
      { name: 'request log (info, as akas serve)', url: `${logged.url}/x` },
      { name: "  for comparison: pino's serializer, sonic-boom async", url: `${pinoAsync.url}/x` },
      { name: "  for comparison: pino's serializer, sonic-boom minLength 4096", url: `${pinoBuffered.url}/x` },
      { name: 'token bucket (per IP)', url: `${limited.url}/x` },
      { name: 'auth cache + token bucket (Bearer)', url: `${authed.url}/x`, headers: auth },
    ];
    const cpu = new Map<string, number[]>();
    for (let round = 0; round < HOOK_ROUNDS; round++) {
      for (const t of costed) {
        const before = process.cpuUsage();
        const [r] = await load([t], { cycles: 1, sliceMs: HOOK_SLICE_MS, warmupMs: 0 });
        const used = process.cpuUsage(before);
        const us = (used.user + used.system) / r.ok;
        cpu.set(t.name, [...(cpu.get(t.name) ?? []), us]);
      }
    }
    const bareUs = med(cpu.get(costed[0].name)!);
    const meUs = med(cpu.get(costed[1].name)!);
    const sizedUs = med(cpu.get(costed[2].name)!);
    const floorUs = med(cpu.get(costed[3].name)!);
    console.log(
      `  CPU time of the server per answer, one target at a time (median of ${HOOK_ROUNDS} runs of ${HOOK_SLICE_MS} ms): bare route ` +
        `${bareUs.toFixed(1)} µs, GET /me ${meUs.toFixed(1)} µs (${(bareUs / meUs).toFixed(2)} of the bare route's rate in CPU terms), ` +
        `the bare route with /me's body size ${sizedUs.toFixed(1)} µs, the floor ${floorUs.toFixed(1)} µs`,
    );
    console.log('  each hook of the node on the bare route, its cost per request (µs more than the bare route; ratio = share of a GET /me):');
    for (const t of costed.slice(4)) {
      const cost = med(cpu.get(t.name)!) - bareUs;
      line(`  + ${t.name}`, `${cost >= 0 ? '+' : ''}${cost.toFixed(1)} µs`, cost / meUs);
    }
  } finally {
    for (const app of apps) await app.close();
    await dispose();
  }
}
