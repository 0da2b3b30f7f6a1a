// HTTP throughput of POST /api/agent/v1/use-tool with word-count and with regex-test, as
// ratios to GET /api/agent/v1/me loaded the same way in the same run (issue 3), and the
// per-call price of regex-test's time-limit mechanism (one worker thread + node:vm timeout)
// seen over HTTP: regex-test minus word-count, the cheapest tool on a comparable tiny input.
// bench/tools.ts reports the same mechanism at the domain level.
//
// Load comes from a child process (bench/usetool-load.ts, undici Pool), as in bench/http.ts.
// A use-tool call needs a fresh challenge and each bank entry is served to an agent only once,
// so the parent keeps a pool of calibrated, funded agents and hands each run as many as it
// can use up; the child chains calls through the piggybacked nextChallenge.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { loadChallengeBank } from '../src/domain/calibration/bank.js';
import { closeRegexWorker } from '../src/domain/challenges/tools/index.js';
import { strategiesFor } from '../src/node/strategies.js';
import { createApp } from '../src/http/app.js';
import { openTempStore } from '../src/store/index.js';
import { benchKeys, calibrateForBench, header, line, perSec, type Rate } from './lib.js';

const CONNECTIONS = 16;
const SECONDS = 1.5;
const WARMUP_SECONDS = 0.5;
const RUNS = 3;
/** The one-in-flight latency runs (no queueing in the server), alternated like the others. */
const SEQ_SECONDS = 1;
const SEQ_WARMUP_SECONDS = 0.25;
const SEQ_RUNS = 3;
const LOAD_SCRIPT = fileURLToPath(new URL('./usetool-load.js', import.meta.url));

type Mode = 'me' | 'word-count' | 'regex-test';

interface BenchAgent {
  apiKey: string;
  challenge: unknown;
}

interface LoadResult {
  ok: number;
  bad: number;
  ms: number;
  latencyMs: number;
  statuses: Record<string, number>;
  codes: Record<string, number>;
  exhausted: boolean;
  unused: BenchAgent[];
}

interface Measured extends Rate {
  latencyMs: number;
  /** regex_timeout answers to a pattern that takes ~1 µs: the limit firing on a starved thread. */
  timeouts: number;
}

/** Registered agents, calibrated frontier (price 1) and funded, with their open challenge if any. */
class AgentPool {
  private free: BenchAgent[] = [];
  registered = 0;

  constructor(private app: FastifyInstance) {}

  private async register(): Promise<BenchAgent> {
    const res = await this.app.inject({ method: 'POST', url: '/api/agent/v1/register', remoteAddress: '10.9.0.1' });
    if (res.statusCode !== 200) throw new Error(`register answered ${res.statusCode}: ${res.body}`);
    const { apiKey, tag } = res.json() as { apiKey: string; tag: string };
    await calibrateForBench(this.app.akas, tag, 0.95, 10_000_000);
    this.registered++;
    return { apiKey, challenge: null };
  }

  /** n agents, registering what is missing (outside any timed window). */
  async take(n: number): Promise<BenchAgent[]> {
    const missing = Math.max(0, n - this.free.length);
    for (let i = 0; i < missing; i += 32) {
      this.free.push(...(await Promise.all(Array.from({ length: Math.min(32, missing - i) }, () => this.register()))));
    }
    return this.free.splice(0, n);
  }

  giveBack(agents: BenchAgent[]) {
    this.free.unshift(...agents);
  }
}

export async function run() {
  header(
    `usetool: POST /api/agent/v1/use-tool (word-count, regex-test) vs GET /api/agent/v1/me (child-process undici load, ${CONNECTIONS} in ` +
      `flight, ${RUNS} alternating runs of ${SECONDS}s each)`,
  );
  const { store, dispose } = await openTempStore();
  const node = await createApp({
    store,
    strategies: strategiesFor(store),
    keys: benchKeys(),
    // No throttling, no decoys drawn first, no registration cap: the bench measures the calls.
    config: { rateLimit: { burst: 1e9, refillPerSecond: 1e9 }, decoyRate: 0, registrationCapPerIp: 1e9 },
    logger: false,
  });
  const origin = await node.listen({ host: '127.0.0.1', port: 0 });
  const agents = new AgentPool(node);
  // Bank entries are still served as decoys once an agent's normal ones run out: answer those
  // right (matched by prompt), or three failures would ban the agent mid-run.
  const decoyAnswers = Object.fromEntries(loadChallengeBank().decoys.map((e) => [e.userPrompt, e.decoy!.accept[0]]));
  // Calls per second expected for a mode and concurrency, to size the agents of a run; a
  // first guess, then the last measurement.
  const expected = new Map<string, number>();

  /** One run of the child load generator; retried with more agents if it ran out of them. */
  async function load(mode: Mode, connections: number, seconds: number, warmupSeconds: number, name: string): Promise<Measured> {
    const [meAgent] = mode === 'me' ? await agents.take(1) : [];
    for (let attempt = 0; ; attempt++) {
      const key = `${mode}/${connections}`;
      // /me bounds use-tool from above, so its rate is a safe first guess.
      const rate = expected.get(key) ?? expected.get(`me/${connections}`) ?? 1000 * connections;
      // Each agent has ~67 bank entries; 1.5x margin, plus the one each worker holds at the end.
      const need = mode === 'me' ? 0 : Math.ceil((rate * (seconds + warmupSeconds) * 1.5) / 60) + connections;
      const given = mode === 'me' ? [meAgent] : await agents.take(need);
      const r = await child({ origin, mode, agents: given, decoyAnswers, connections, seconds, warmupSeconds });
      agents.giveBack(mode === 'me' ? [] : r.unused);
      const opsPerSec = (r.ok / r.ms) * 1000;
      if (r.exhausted && attempt < 2) {
        expected.set(key, Math.max(rate, opsPerSec) * 3);
        continue;
      }
      if (r.exhausted) throw new Error(`${name}: ran out of agents`);
      const timeouts = r.codes.regex_timeout ?? 0;
      if (r.bad > timeouts || r.ok === 0) throw new Error(`${name}: unexpected answers ${JSON.stringify({ statuses: r.statuses, codes: r.codes })}`);
      expected.set(key, opsPerSec);
      if (meAgent) agents.giveBack([meAgent]);
      return { name, opsPerSec, ops: r.ok, ms: r.ms, latencyMs: r.latencyMs, timeouts };
    }
  }

  try {
    // One call in flight first: the latency a lone agent sees, with no queueing in the server.
    const seqWc: Measured[] = [];
    const seqRx: Measured[] = [];
    for (let i = 0; i < SEQ_RUNS; i++) {
      seqWc.push(await load('word-count', 1, SEQ_SECONDS, SEQ_WARMUP_SECONDS, 'word-count, 1 in flight'));
      seqRx.push(await load('regex-test', 1, SEQ_SECONDS, SEQ_WARMUP_SECONDS, 'regex-test, 1 in flight'));
    }

    // Alternate the three targets so that drift on the machine hits all of them.
    const me: Measured[] = [];
    const wc: Measured[] = [];
    const rx: Measured[] = [];
    for (let i = 0; i < RUNS; i++) {
      me.push(await load('me', CONNECTIONS, SECONDS, WARMUP_SECONDS, 'GET /api/agent/v1/me'));
      wc.push(await load('word-count', CONNECTIONS, SECONDS, WARMUP_SECONDS, 'POST use-tool word-count'));
      rx.push(await load('regex-test', CONNECTIONS, SECONDS, WARMUP_SECONDS, 'POST use-tool regex-test'));
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const middle = (rs: Measured[]) => [...rs].sort((a, b) => a.opsPerSec - b.opsPerSec)[Math.floor(rs.length / 2)];
    // Each tool run is divided by the /me run just before it (same load on the machine); the
    // median of those ratios is reported, as in bench/http.ts.
    const wcRatios = wc.map((r, i) => r.opsPerSec / me[i].opsPerSec);
    const rxRatios = rx.map((r, i) => r.opsPerSec / me[i].opsPerSec);
    const ms = (x: number) => `${x.toFixed(3)} ms`;
    const us = (x: number) => `${Math.round(x * 1000)} µs`;

    console.log(
      `  (ratio = median over ${RUNS} back-to-back runs of tool req/s divided by /me req/s; word-count ${wcRatios.map((r) => r.toFixed(2)).join(', ')};` +
        ` regex-test ${rxRatios.map((r) => r.toFixed(2)).join(', ')}; runs: /me ${me.map(perSec).join(', ')}; word-count ${wc.map(perSec).join(', ')};` +
        ` regex-test ${rx.map(perSec).join(', ')}; ${agents.registered} agents registered)`,
    );
    line('GET /api/agent/v1/me (baseline)', perSec(middle(me)), 1);
    line('POST use-tool word-count', perSec(middle(wc)), med(wcRatios));
    line('POST use-tool regex-test', perSec(middle(rx)), med(rxRatios));
    // ratio: regex-test req/s over word-count req/s.
    line('regex-test / word-count', '', med(rx.map((r, i) => r.opsPerSec / wc[i].opsPerSec)));

    header('usetool: regex-test time-limit mechanism overhead per call over HTTP (regex-test minus word-count)');
    // Medians over the alternating 1-in-flight pairs; the overhead is the median of the
    // per-pair differences (each pair ran back to back under the same load on the machine).
    const seqDiffs = seqRx.map((r, i) => r.latencyMs - seqWc[i].latencyMs);
    console.log(
      `  (1 in flight, ${SEQ_RUNS} alternating pairs of ${SEQ_SECONDS}s; word-count ${seqWc.map((r) => ms(r.latencyMs)).join(', ')};` +
        ` regex-test ${seqRx.map((r) => ms(r.latencyMs)).join(', ')})`,
    );
    line('mean latency, 1 in flight: word-count', ms(med(seqWc.map((r) => r.latencyMs))));
    line('mean latency, 1 in flight: regex-test', ms(med(seqRx.map((r) => r.latencyMs))));
    line('time-limit mechanism overhead per call (1 in flight)', us(med(seqDiffs)));
    // With 16 in flight the latency is mostly queueing (Little's law: about 16 x the server
    // time per call), so this difference is the overhead as a loaded client sees it.
    line(`mean latency, ${CONNECTIONS} in flight: word-count`, ms(med(wc.map((r) => r.latencyMs))));
    line(`mean latency, ${CONNECTIONS} in flight: regex-test`, ms(med(rx.map((r) => r.latencyMs))));
    line(`time-limit mechanism overhead per call (${CONNECTIONS} in flight)`, us(med(rx.map((r, i) => r.latencyMs - wc[i].latencyMs))));
    // Server capacity each call costs: 1 / throughput; the difference is what the mechanism
    // takes from the node's throughput per call.
    line('capacity cost per call: 1/regex-test - 1/word-count', us(1000 / middle(rx).opsPerSec - 1000 / middle(wc).opsPerSec));
    // The bench pattern takes ~1 µs, so any regex_timeout is the 50 ms limit (or the 1 s
    // backstop) firing because the worker thread did not get the CPU in time.
    const timeouts = [...seqRx, ...rx].reduce((n, r) => n + r.timeouts, 0);
    const calls = [...seqRx, ...rx].reduce((n, r) => n + r.ops + r.timeouts, 0);
    line('spurious regex_timeout answers (1 µs pattern, counted)', `${timeouts} of ${calls}`);
  } finally {
    await node.close();
    await closeRegexWorker();
    await dispose();
  }
}

function child(input: object): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [LOAD_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const killer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.on('error', reject);
    proc.on('close', (code) => {
      clearTimeout(killer);
      if (code !== 0) return reject(new Error(`use-tool load generator exited ${code}: ${out}`));
      resolve(JSON.parse(out) as LoadResult);
    });
    proc.stdin.end(JSON.stringify(input));
  });
}
