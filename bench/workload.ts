// A mixed workload of many agents against a running node over real HTTP (loopback only):
// registrations, calibrations, priced tool calls, proposals, signed judgments, attestations,
// content-store uploads, and the reads agents make. Each agent speaks from an IP of its own
// (X-Forwarded-For; the node runs with --trust-proxy), so per-IP caps and the same-IP rule
// apply per agent as they would on a public node.
//
// Every write the node acknowledged (a 2xx) is recorded, so a test can check after a crash
// that none was lost (test/e2e/crash.test.ts), and every answer is counted by status and
// timed, so a benchmark can print throughput, latency and errors (bench/load.ts).
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent as Dispatcher, request } from 'undici';
import { canonicalize, sign } from '../src/core/index.js';
import { dataPath } from '../src/core/paths.js';
import { vocabulary } from './search-corpus.js';

export interface WorkAgent {
  tag: string;
  apiKey: string;
  privateKey: string;
  ip: string;
  pool: 'A' | 'B';
  calibrated: boolean;
  /** A calibration of it is in flight. */
  calibrating?: boolean;
  toolCalls: number;
}

/** What the node acknowledged, by kind of write. */
export interface Acked {
  agents: Array<{ tag: string; apiKey: string }>;
  calibrations: Array<{ tag: string; score: number }>;
  toolCalls: Array<{ tag: string; challengeId: string }>;
  proposals: Array<{ proposalId: string; proposer: string }>;
  judgments: Array<{ proposalId: string; judgmentId: string; judge: string }>;
  attestations: Array<{ id: string; hash: string }>;
  blobs: Array<{ sha256: string; bytes: number }>;
  /** Checkpoints handed out (signed notes), in the order they came. */
  checkpoints: string[];
}

export type Op = 'register' | 'calibrate' | 'tool' | 'propose' | 'judge' | 'attest' | 'cas' | 'bigcas' | 'me' | 'node' | 'search' | 'checkpoint';

/** How often each operation is drawn (relative weights). */
export const WRITE_MIX: Partial<Record<Op, number>> = { register: 2, calibrate: 2, tool: 2, propose: 3, judge: 6, attest: 3, cas: 2, checkpoint: 1 };
export const MIXED_MIX: Partial<Record<Op, number>> = { ...WRITE_MIX, me: 20, node: 10, search: 10 };
/** The writes of WRITE_MIX, blobs stored as files among them, and reads (test/e2e/faults.test.ts). */
export const FAULT_MIX: Partial<Record<Op, number>> = { ...WRITE_MIX, bigcas: 1, me: 4 };

const REQUIRED_JUDGMENTS = 3;

/** The words names are made of: 4,096 of bench/search-corpus.ts's vocabulary, past its function words. */
const WORDS = vocabulary().slice(1000, 1000 + 4096);

export interface Answer {
  op: Op;
  status: number;
  ms: number;
  /** The error code of a refusal (PROTOCOL 13). */
  code?: string;
}

const poolAnswers = (() => {
  const cache = new Map<string, Record<string, string>>();
  return (pool: string) => {
    let a = cache.get(pool);
    if (!a) {
      const data = JSON.parse(readFileSync(dataPath('calibration', `pool-${pool}.json`), 'utf8')) as { questions: Array<{ id: string; expected: string }> };
      a = Object.fromEntries(data.questions.map((q) => [q.id, q.expected]));
      cache.set(pool, a);
    }
    return a;
  };
})();

/** A deterministic-enough random source for drawing operations (seedable for reruns). */
export function seeded(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

export class Workload {
  readonly agents: WorkAgent[] = [];
  readonly acked: Acked = { agents: [], calibrations: [], toolCalls: [], proposals: [], judgments: [], attestations: [], blobs: [], checkpoints: [] };
  readonly answers: Answer[] = [];
  private readonly pending = new Map<string, { kind: string; proposer: string; judges: Set<string>; path: string }>();
  /** Paths of published nodes. */
  private readonly published: string[] = [];
  private ipCounter = 0;
  private counter = 0;
  private readonly dispatcher: Dispatcher;

  constructor(
    private url: string,
    private readonly random = Math.random,
    connections = 64,
  ) {
    this.dispatcher = new Dispatcher({ connections, pipelining: 1, keepAliveTimeout: 10_000 });
  }

  /** Points the workload at a restarted node (same data, new port). */
  retarget(url: string) {
    this.url = url;
  }

  private async call(op: Op, method: string, path: string, opts: { agent?: WorkAgent; ip?: string; body?: unknown; raw?: Buffer } = {}) {
    // Anonymous readers come from a fixed pool of 1,000 addresses (each its own token bucket).
    const reader = () => `10.254.${Math.floor(this.random() * 4)}.${Math.floor(this.random() * 250)}`;
    const headers: Record<string, string> = { 'x-forwarded-for': opts.ip ?? opts.agent?.ip ?? reader() };
    if (opts.agent) headers.authorization = `Bearer ${opts.agent.apiKey}`;
    let body: string | Buffer | undefined;
    if (opts.raw) {
      body = opts.raw;
      headers['content-type'] = 'application/octet-stream';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    const start = performance.now();
    const res = await request(`${this.url}${path}`, { method: method as 'GET', headers, body, dispatcher: this.dispatcher });
    const text = await res.body.text();
    const ms = performance.now() - start;
    let json: Record<string, unknown> = {};
    if (res.headers['content-type']?.toString().includes('json')) {
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        json = {};
      }
    }
    this.answers.push({ op, status: res.statusCode, ms, ...(res.statusCode >= 400 && typeof json.code === 'string' ? { code: json.code } : {}) });
    return { status: res.statusCode, json, text };
  }

  /**
   * A name no other proposal of this workload has, in words as a knowledge tree's paths and
   * titles are: its counter and two random draws, each a word of a 4,096-word vocabulary. Names
   * of random numbers made every proposal add terms never seen before to the search index,
   * about 3.8 KiB a node against 0.8 KiB for names of words (20,000 nodes measured), which no
   * real tree does: the soak's memory then grew with its synthetic names.
   */
  private name(): string {
    const c = ++this.counter;
    const pick = () => WORDS[Math.floor(this.random() * WORDS.length)];
    return [WORDS[Math.floor(c / WORDS.length) % WORDS.length], WORDS[c % WORDS.length], pick(), pick()].join('-');
  }

  private nextIp() {
    const n = ++this.ipCounter;
    return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  }

  private pick<T>(xs: T[]): T | undefined {
    return xs.length ? xs[Math.floor(this.random() * xs.length)] : undefined;
  }

  async register(): Promise<WorkAgent | undefined> {
    const ip = this.nextIp();
    const r = await this.call('register', 'POST', '/api/agent/v1/register', { ip });
    if (r.status !== 200) return undefined;
    const j = r.json as { tag: string; apiKey: string; calibrationPoolId: 'A' | 'B'; signing: { privateKey: string } };
    const a: WorkAgent = { tag: j.tag, apiKey: j.apiKey, privateKey: j.signing.privateKey, ip, pool: j.calibrationPoolId, calibrated: false, toolCalls: 0 };
    this.agents.push(a);
    this.acked.agents.push({ tag: a.tag, apiKey: a.apiKey });
    return a;
  }

  async calibrate(a = this.pick(this.agents.filter((x) => !x.calibrated && !x.calibrating))): Promise<void> {
    if (!a) return;
    // One calibration at a time per agent: several loops picking the last uncalibrated agent at
    // once used up its three attempts, and the fourth was refused (400 calibration_exhausted).
    a.calibrating = true;
    const r = await this.call('calibrate', 'POST', '/api/agent/v1/calibrate', { agent: a, body: { answers: poolAnswers(a.pool) } }).finally(
      () => (a.calibrating = false),
    );
    if (r.status !== 200) return;
    a.calibrated = true;
    this.acked.calibrations.push({ tag: a.tag, score: r.json.intelligenceScore as number });
  }

  /** A registered, calibrated agent ready to judge and propose. */
  async seedAgent(): Promise<WorkAgent> {
    const a = await this.register();
    if (!a) throw new Error('the node refused a registration while seeding');
    await this.calibrate(a);
    if (!a.calibrated) throw new Error('the node refused a calibration while seeding');
    return a;
  }

  private calibrated() {
    return this.agents.filter((a) => a.calibrated);
  }

  async tool(): Promise<void> {
    // Two tool calls per agent at most: a wrong answer to a decoy counts toward a ban, and the workload does not know which challenge is one.
    const a = this.pick(this.calibrated().filter((x) => x.toolCalls < 2));
    if (!a) return;
    a.toolCalls += 1;
    const ch = await this.call('tool', 'GET', '/api/agent/v1/challenge', { agent: a });
    if (ch.status !== 200) return;
    const challenge = ch.json.challenge as { schemaName: string };
    const answer =
      challenge.schemaName === 'tool-description'
        ? {
            answer:
              'A landing paragraph that explains what the tool does, who it is for, and why it saves time for teams that search large document sets every day.',
            confidence: 'medium',
            model: { family: 'other', version: 'load' },
            via: 'local',
            elapsed_ms: 5,
          }
        : { answer: 'question' };
    const r = await this.call('tool', 'POST', '/api/agent/v1/use-tool', {
      agent: a,
      body: { challengeId: ch.json.challengeId, answer, tool: 'word-count', toolInput: { text: 'One two three. Four five.' } },
    });
    if (r.status === 200) this.acked.toolCalls.push({ tag: a.tag, challengeId: ch.json.challengeId as string });
  }

  async propose(): Promise<void> {
    const a = this.pick(this.calibrated());
    if (!a) return;
    const n = this.name();
    const r = await this.call('propose', 'POST', '/api/knowledge/cap/propose', {
      agent: a,
      body: {
        path: `/load/cap-${n}`,
        title: `Load capability ${n}`,
        spec: `A capability proposed by the workload (${n}).`,
        payload: { trigger: 'a load test runs', alternative: 'none', cost: 'one request', whenNot: 'in production', recipe: ['call the route'] },
      },
    });
    if (r.status !== 200) return;
    const id = r.json.proposalId as string;
    this.pending.set(id, { kind: 'capability', proposer: a.tag, judges: new Set(), path: `/load/cap-${n}` });
    this.acked.proposals.push({ proposalId: id, proposer: a.tag });
  }

  async judge(): Promise<void> {
    // Only proposals still short of their quorum counting the judgments in flight: no judge
    // races another to a decision it cannot see (409 already_decided).
    const [id, p] = this.pick([...this.pending].filter(([, x]) => x.judges.size < REQUIRED_JUDGMENTS)) ?? [];
    if (!id || !p) return;
    const a = this.pick(this.calibrated().filter((x) => x.tag !== p.proposer && !p.judges.has(x.tag)));
    if (!a) return;
    p.judges.add(a.tag);
    const scores =
      this.random() < 0.8 ? { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 } : { accuracy: 0.2, clarity: 0.3, compression: 0.2, sources: 0.1 };
    const rationale = 'Checked by the workload.';
    const signature = sign(a.privateKey, canonicalize({ type: 'akas.judgment.v1', kind: p.kind, proposalId: id, judge: a.tag, scores, rationale }));
    const r = await this.call('judge', 'POST', `/api/knowledge/judge/${id}`, { agent: a, body: { scores, rationale, signature } });
    if (r.status === 200) {
      this.acked.judgments.push({ proposalId: id, judgmentId: r.json.judgmentId as string, judge: a.tag });
      if (r.json.statusChanged) {
        this.pending.delete(id);
        if (r.json.newStatus === 'published') this.published.push(p.path);
      }
    } else if (r.status === 409) this.pending.delete(id);
  }

  async attest(): Promise<void> {
    const a = this.pick(this.calibrated());
    if (!a) return;
    const sha = createHash('sha256')
      .update(String(++this.counter))
      .digest('hex');
    const body = {
      schemaVersion: '1.0.0',
      stepId: `s${this.counter}`,
      pipeline: 'load',
      step: 'copy',
      transform: 'copied',
      inputs: [{ sha256: sha }],
      outputs: [{ sha256: sha }],
      actor: a.tag,
      finishedAt: Date.now(),
    };
    const r = await this.call('attest', 'POST', '/api/attestations', { agent: a, body: { kind: 'pipeline.facet.v1', body } });
    if (r.status === 200) this.acked.attestations.push({ id: r.json.id as string, hash: r.json.hash as string });
  }

  async cas(): Promise<void> {
    const bytes = randomBytes(1024 + Math.floor(this.random() * 64 * 1024));
    const r = await this.call('cas', 'POST', '/api/cas', { raw: bytes, ip: this.nextIp() });
    if (r.status === 200) this.acked.blobs.push({ sha256: r.json.sha256 as string, bytes: r.json.bytes as number });
  }

  /** A blob over the inline threshold: a file of its own in the data folder. */
  async bigcas(): Promise<void> {
    const bytes = randomBytes(64 * 1024 + 1 + Math.floor(this.random() * 192 * 1024));
    const r = await this.call('bigcas', 'POST', '/api/cas', { raw: bytes, ip: this.nextIp() });
    if (r.status === 200) this.acked.blobs.push({ sha256: r.json.sha256 as string, bytes: r.json.bytes as number });
  }

  async checkpoint(): Promise<void> {
    const r = await this.call('checkpoint', 'GET', '/api/log/checkpoint');
    if (r.status === 200) this.acked.checkpoints.push(r.text);
  }

  async me(): Promise<void> {
    const a = this.pick(this.agents);
    if (a) await this.call('me', 'GET', '/api/agent/v1/me', { agent: a });
  }

  /** A published node when there is one, else a proposal's detail. */
  async node(): Promise<void> {
    const path = this.pick(this.published);
    const p = path ? undefined : this.pick(this.acked.proposals);
    if (path) await this.call('node', 'GET', `/api/knowledge/node${path}`);
    else if (p) await this.call('node', 'GET', `/api/knowledge/proposals/${p.proposalId}`);
  }

  async search(): Promise<void> {
    await this.call('search', 'GET', `/api/knowledge/search?q=${this.random() < 0.5 ? 'load' : 'capability'}`);
  }

  /** Draws one operation from the mix and runs it. Network errors (a node killed mid-request) propagate. */
  async step(mix: Partial<Record<Op, number>>): Promise<void> {
    const entries = Object.entries(mix) as Array<[Op, number]>;
    const total = entries.reduce((s, [, w]) => s + w, 0);
    let r = this.random() * total;
    for (const [op, w] of entries) {
      r -= w;
      if (r <= 0) {
        await this[op]();
        return;
      }
    }
  }

  /**
   * Runs `concurrency` loops of steps until stop() is called or `until` passes. A loop
   * whose request fails at the network level (the node went away) ends quietly.
   */
  run(mix: Partial<Record<Op, number>>, concurrency: number, until = Infinity): { stop: () => void; done: Promise<{ networkErrors: number }> } {
    let stopped = false;
    let networkErrors = 0;
    const loops = Array.from({ length: concurrency }, async () => {
      while (!stopped && performance.now() < until) {
        try {
          await this.step(mix);
        } catch {
          networkErrors += 1;
          if (stopped) return;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    });
    return { stop: () => void (stopped = true), done: Promise.all(loops).then(() => ({ networkErrors })) };
  }

  async close() {
    await this.dispatcher.close();
  }
}
