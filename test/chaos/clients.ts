// The clients of a chaos run (issue 49, 1): concurrent workers, each a sequence of operations
// drawn from its own seeded stream, sent to a process drawn at random: register, calibrate,
// propose every kind of PROTOCOL 6.1, judge with v2 signatures (7.2), upload blobs (5.1), attest
// (9.3), revoke through `akas admin revoke --store` (8.7), withdraw (6.7), replay an idempotent
// request to another process (1.5), read checkpoints (9.5), and bursts at one token bucket (1.4).
// Every request is an invoke line and a completion line of the history (history.ts): ok for a
// 2xx, fail for a 4xx (an envelope with its code: nothing happened), info for anything else (a
// timeout, a reset, a 5xx: the write may or may not have happened; a refused connection, which
// sent nothing, is info too, with value {refused: true}, as the shared design has fail mean a 4xx).
//
// The bodies are the tests' own (test/fixtures/payloads.ts, the calibration pools' expected
// answers, the v2 judgment payload of test/helpers/flows.ts); the HTTP helpers of test/helpers
// import vitest, which cannot load outside a vitest run (npm run chaos), and have no timeout,
// which a request to a paused process needs.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type Agent as Dispatcher, request } from 'undici';
import { canonicalize, KIND_ROUTES, type ProposalKind, sign } from '../../src/core/index.js';
import { dataPath } from '../../src/core/paths.js';
import { samplePayload } from '../fixtures/payloads.js';
import type { Deployment, ProcessName } from './deployment.js';
import { LIMITS, NODE_NAMES } from './deployment.js';
import type { History, Invocation } from './history.js';
import type { Rng } from './random.js';
import type { Completion, OpName, RecordedAnswer } from './types.js';

/** A request's bound: past it the answer is unknown (info). A paused process answers nothing for 5 to 20 s. */
const REQUEST_TIMEOUT_MS = 8000;
const KINDS = Object.keys(KIND_ROUTES) as ProposalKind[];
const SCORES_HIGH = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
const SCORES_LOW = { accuracy: 0.2, clarity: 0.3, compression: 0.4, sources: 0.1 };

interface AgentRec {
  tag: string;
  apiKey: string;
  privateKey: string;
  ip: string;
  pool: string;
  calibrated: boolean;
}

interface Pending {
  kind: ProposalKind;
  proposer: string;
  contentSha256: string;
  /** Judges that sent a judgment (acknowledged or unknown). */
  judges: Set<string>;
  at: number;
}

/** An acknowledged request with an Idempotency-Key: what a replay sends again, verbatim. */
interface Replayable {
  f: OpName;
  node: ProcessName;
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
  idempotencyKey: string;
  agent: string;
  ip: string;
  answer: RecordedAnswer;
}

/** What the workers know of what the nodes acknowledged (never the truth: the checker's business). */
export class World {
  readonly pending = new Map<string, Pending>();
  /** Acknowledged artifact proposals still pending or published, as far as the workers saw: id -> path. */
  readonly artifacts = new Map<string, string>();
  readonly blobs: Array<{ sha256: string; bytes: number }> = [];
  readonly judgments: string[] = [];
  readonly replayable: Replayable[] = [];
  private counter = 0;
  /** One `akas admin revoke` at a time: each is a process of its own on a 2-core machine. */
  revoking: Promise<unknown> = Promise.resolve();

  next(): number {
    return ++this.counter;
  }

  remember(r: Replayable) {
    this.replayable.push(r);
    if (this.replayable.length > 300) this.replayable.splice(0, 100);
  }
}

export interface WorkerContext {
  history: History;
  deployment: Deployment;
  world: World;
  dispatcher: Dispatcher;
  /** Distinguishes this run's idempotency keys. */
  runTag: string;
  stopped(): boolean;
}

interface Sent {
  answer?: RecordedAnswer & { headers: Record<string, string | string[] | undefined> };
  /** The request never reached the node (a refused connection): nothing happened, though it is written as info (see the top). */
  refused?: boolean;
  error?: string;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

const pools = new Map<string, Record<string, string>>();
function poolAnswers(pool: string): Record<string, string> {
  let answers = pools.get(pool);
  if (!answers) {
    const data = JSON.parse(readFileSync(dataPath('calibration', `pool-${pool}.json`), 'utf8')) as { questions: Array<{ id: string; expected: string }> };
    answers = Object.fromEntries(data.questions.map((q) => [q.id, q.expected]));
    pools.set(pool, answers);
  }
  return answers;
}

const facet = (() => {
  let example: Record<string, unknown> | undefined;
  return () =>
    (example ??= (JSON.parse(readFileSync(dataPath('attestations', 'pipeline.facet.v1.json'), 'utf8')) as { examples: Array<Record<string, unknown>> })
      .examples[0]);
})();

export class Worker {
  private readonly agents: AgentRec[] = [];
  private ipCounter = 0;
  private keyCounter = 0;

  constructor(
    readonly id: number,
    private readonly ctx: WorkerContext,
    private readonly r: Rng,
  ) {}

  private nextIp(block = 0): string {
    const n = ++this.ipCounter;
    return `10.${block + this.id}.${(n >> 8) & 255}.${n & 255}`;
  }

  private key(): string {
    return `${this.ctx.runTag}-c${this.id}-${++this.keyCounter}`;
  }

  private pickNode(except?: ProcessName): ProcessName {
    return this.r.pick(NODE_NAMES.filter((n) => n !== except));
  }

  private calibrated() {
    return this.agents.filter((a) => a.calibrated);
  }

  /** Sends one request to a process; never throws. */
  private async send(node: ProcessName, method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string | Buffer): Promise<Sent> {
    const url = this.ctx.deployment.proc(node).url;
    try {
      const res = await request(`${url}${path}`, {
        method,
        headers,
        body,
        dispatcher: this.ctx.dispatcher,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await res.body.text();
      let parsed: unknown = text;
      if (String(res.headers['content-type'] ?? '').includes('json')) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
      }
      return { answer: { status: res.statusCode, body: parsed, headers: res.headers } };
    } catch (e) {
      const err = e as Error & { code?: string; cause?: { code?: string } };
      const code = err.code ?? err.cause?.code ?? err.name;
      return { refused: code === 'ECONNREFUSED', error: `${code}: ${err.message}`.slice(0, 300) };
    }
  }

  /**
   * One operation: its invoke line, the request, its completion line. `ok` maps a 2xx answer
   * to the completion's value. Answers the answer (a 2xx or not), or undefined.
   */
  private async op(
    f: OpName,
    node: ProcessName,
    asked: Record<string, unknown>,
    req: { path: string; method?: 'GET' | 'POST'; agent?: AgentRec; ip: string; body?: string | Buffer; json?: boolean; idempotencyKey?: string },
    ok: (body: any) => Record<string, unknown>,
  ): Promise<Sent['answer'] | undefined> {
    const headers: Record<string, string> = { 'x-forwarded-for': req.ip };
    if (req.agent) headers.authorization = `Bearer ${req.agent.apiKey}`;
    if (req.body !== undefined) headers['content-type'] = req.json === false ? 'application/octet-stream' : 'application/json';
    if (req.idempotencyKey) headers['idempotency-key'] = req.idempotencyKey;
    const inv = this.ctx.history.invoke(f, this.id, node, asked, { ip: req.ip, agent: req.agent?.tag });
    const sent = await this.send(node, req.method ?? 'POST', req.path, headers, req.body);
    this.complete(inv, sent, ok);
    const a = sent.answer;
    if (a && a.status < 300 && req.idempotencyKey && req.agent && typeof req.body === 'string') {
      this.ctx.world.remember({
        f,
        node,
        method: 'POST',
        path: req.path,
        headers,
        body: req.body,
        idempotencyKey: req.idempotencyKey,
        agent: req.agent.tag,
        ip: req.ip,
        answer: { status: a.status, body: a.body },
      });
    }
    return a;
  }

  private complete(inv: Invocation, sent: Sent, ok: (body: any) => Record<string, unknown>) {
    const a = sent.answer;
    if (!a) return inv.complete('info', sent.refused ? { refused: true } : undefined, sent.error);
    const body = a.body as Record<string, unknown> | undefined;
    const type: Completion = a.status < 300 ? 'ok' : a.status < 500 ? 'fail' : 'info';
    if (type === 'ok') return inv.complete('ok', { status: a.status, ...ok(a.body) });
    const code = typeof body === 'object' && body && typeof body.code === 'string' ? body.code : `http_${a.status}`;
    const facts: Record<string, unknown> = { status: a.status };
    // An answer outside the envelopes of PROTOCOL 1.3: what it was, for the report.
    if (code.startsWith('http_')) Object.assign(facts, { contentType: a.headers['content-type'], text: JSON.stringify(a.body).slice(0, 500) });
    if (typeof body === 'object' && body) {
      for (const k of ['scope', 'retryAfter', 'cap', 'used', 'requested', 'remaining', 'existingProposalId']) if (k in body) facts[k] = body[k];
      if (Array.isArray(body.errors)) facts.errors = body.errors.slice(0, 3);
    }
    inv.complete(type, facts, code);
  }

  // ---- the operations -------------------------------------------------------------------

  async register(): Promise<AgentRec | undefined> {
    const ip = this.nextIp();
    const a = await this.op('register', this.pickNode(), {}, { path: '/api/agent/v1/register', ip }, (b) => ({
      tag: b.tag,
      calibrationPoolId: b.calibrationPoolId,
    }));
    if (a?.status !== 200) return undefined;
    const b = a.body as { tag: string; apiKey: string; signing: { privateKey: string }; calibrationPoolId: string };
    const agent: AgentRec = { tag: b.tag, apiKey: b.apiKey, privateKey: b.signing.privateKey, ip, pool: b.calibrationPoolId, calibrated: false };
    this.agents.push(agent);
    return agent;
  }

  async calibrate(agent = this.agents.find((a) => !a.calibrated)): Promise<void> {
    if (!agent) return;
    const key = this.key();
    const body = JSON.stringify({ answers: poolAnswers(agent.pool) });
    const a = await this.op(
      'calibrate',
      this.pickNode(),
      { tag: agent.tag, idempotencyKey: key },
      { path: '/api/agent/v1/calibrate', agent, ip: agent.ip, body, idempotencyKey: key },
      (b) => ({ tag: agent.tag, tier: b.tier, intelligenceScore: b.intelligenceScore, balance: b.balance }),
    );
    if (a?.status === 200 && (a.body as { intelligenceScore: number }).intelligenceScore >= 0.5) agent.calibrated = true;
  }

  /** The payload of a proposal of `kind`: the tests' sample, made unique, pointing at what the run holds where it can. */
  private payload(kind: ProposalKind): Record<string, unknown> | undefined {
    const w = this.ctx.world;
    const n = w.next();
    const p = samplePayload(kind, n);
    if (kind === 'eval-result') {
      if (!w.artifacts.size) return undefined;
      // The sample's score grows with n (past 1 from n = 201): a score of [0, 1] of its own.
      Object.assign(p, { artifactPath: this.r.pick([...w.artifacts.values()]), score: Math.round(this.r() * 1000) / 1000 });
    }
    if (kind === 'artifact' && w.blobs.length && this.r.chance(0.7)) {
      // A blob of this run, uploaded through any process: the artifact check reads it (PROTOCOL 6.2).
      const blob = this.r.pick(w.blobs);
      Object.assign(p.payload as Record<string, unknown>, { uri: `/api/cas/${blob.sha256}`, sha256: blob.sha256, bytes: blob.bytes });
    }
    return p;
  }

  async propose(): Promise<void> {
    const agents = this.calibrated();
    if (!agents.length) return this.calibrate();
    const agent = this.r.pick(agents);
    let kind = this.r.pick(KINDS);
    let payload = this.payload(kind);
    if (!payload) payload = this.payload((kind = 'artifact'))!;
    const key = this.key();
    const body = JSON.stringify(payload);
    const a = await this.op(
      'propose',
      this.pickNode(),
      { kind, tag: agent.tag, idempotencyKey: key, payloadSha256: sha256(canonicalize(payload)) },
      { path: KIND_ROUTES[kind].propose, agent, ip: agent.ip, body, idempotencyKey: key },
      (b) => ({ proposalId: b.proposalId, kind, tag: agent.tag, contentSha256: b.contentSha256, deposit: b.economy?.deposit }),
    );
    if (a?.status !== 200) return;
    const b = a.body as { proposalId: string; contentSha256: string };
    this.ctx.world.pending.set(b.proposalId, { kind, proposer: agent.tag, contentSha256: b.contentSha256, judges: new Set(), at: this.ctx.history.now() });
    if (kind === 'artifact') this.ctx.world.artifacts.set(b.proposalId, String(payload.path));
  }

  async judge(): Promise<void> {
    const w = this.ctx.world;
    const mine = this.calibrated();
    const now = this.ctx.history.now();
    // The oldest proposals short of a quorum (counting judgments in flight), or left short by a
    // judgment whose answer is unknown; racing judges meet already_decided, which is fine.
    const open = [...w.pending].filter(([, p]) => p.judges.size < 3 || (p.judges.size < 5 && now - p.at > 10_000)).slice(0, 8);
    for (const [proposalId, p] of this.r.shuffle(open)) {
      const judges = mine.filter((a) => a.tag !== p.proposer && !p.judges.has(a.tag));
      if (!judges.length) continue;
      const agent = this.r.pick(judges);
      p.judges.add(agent.tag);
      const scores = this.r.chance(0.85) ? SCORES_HIGH : SCORES_LOW;
      const rationale = `Checked by chaos client ${this.id}.`;
      const signed = canonicalize({ type: 'akas.judgment.v2', kind: p.kind, proposalId, judge: agent.tag, scores, rationale, contentSha256: p.contentSha256 });
      const key = this.key();
      // The kind's route, or the route that takes every kind (PROTOCOL 6.1).
      const path = this.r.chance(0.7) ? `${KIND_ROUTES[p.kind].judge}/${proposalId}` : `/api/knowledge/judge/${proposalId}`;
      const body = JSON.stringify({ scores, rationale, contentSha256: p.contentSha256, signature: sign(agent.privateKey, signed) });
      const a = await this.op(
        'judge',
        this.pickNode(),
        { proposalId, kind: p.kind, tag: agent.tag, contentSha256: p.contentSha256, idempotencyKey: key, high: scores === SCORES_HIGH },
        { path, agent, ip: agent.ip, body, idempotencyKey: key },
        (b) => ({
          proposalId,
          judgmentId: b.judgmentId,
          tag: agent.tag,
          statusChanged: b.statusChanged,
          newStatus: b.newStatus,
          depositSettlement: b.economy?.depositSettlement,
        }),
      );
      if (a?.status === 200) {
        const b = a.body as { judgmentId: string; statusChanged: boolean; newStatus: string };
        w.judgments.push(b.judgmentId);
        if (b.statusChanged) w.pending.delete(proposalId);
        if (b.newStatus === 'rejected') w.artifacts.delete(proposalId);
      } else if (a?.status === 409) w.pending.delete(proposalId);
      return;
    }
    return this.propose();
  }

  async withdraw(): Promise<void> {
    const w = this.ctx.world;
    const mine = new Map(this.calibrated().map((a) => [a.tag, a]));
    const own = [...w.pending].filter(([, p]) => mine.has(p.proposer) && p.judges.size === 0);
    if (!own.length) return this.propose();
    const [proposalId, p] = this.r.pick(own);
    const agent = mine.get(p.proposer)!;
    w.pending.delete(proposalId);
    // Its path is no artifact's any more once withdrawn (or perhaps withdrawn: an unknown answer).
    w.artifacts.delete(proposalId);
    await this.op(
      'withdraw',
      this.pickNode(),
      { proposalId, tag: agent.tag },
      { path: `/api/knowledge/proposals/${proposalId}/withdraw`, agent, ip: agent.ip },
      (b) => ({ proposalId, status: b.status, depositRefunded: b.depositRefunded, balance: b.balance }),
    );
  }

  async casPut(): Promise<void> {
    const big = this.r.chance(0.1);
    const bytes = randomBytes(big ? this.r.int(64 * 1024 + 1, 200 * 1024) : this.r.int(1, 48 * 1024));
    // Anonymous uploads come from two addresses per client, so their daily quota (--cas-quota) fills; a calibrated agent's counts per agent.
    const agents = this.calibrated();
    const agent = agents.length && this.r.chance(0.5) ? this.r.pick(agents) : undefined;
    const ip = agent?.ip ?? `10.200.${this.id}.${this.r.int(1, 2)}`;
    const a = await this.op(
      'cas-put',
      this.pickNode(),
      { sha256: sha256(bytes), bytes: bytes.length, ...(agent ? { tag: agent.tag } : {}) },
      { path: '/api/cas', agent, ip, body: bytes, json: false },
      (b) => ({ sha256: b.sha256, bytes: b.bytes, deduplicated: b.deduplicated }),
    );
    if (a?.status === 200) this.ctx.world.blobs.push({ sha256: sha256(bytes), bytes: bytes.length });
  }

  async attest(): Promise<void> {
    const agents = this.calibrated();
    if (!agents.length) return this.calibrate();
    const agent = this.r.pick(agents);
    const stepId = `chaos-${this.id}-${this.ctx.world.next()}`;
    const key = this.key();
    const body = JSON.stringify({ kind: 'pipeline.facet.v1', body: { ...facet(), stepId, actor: agent.tag } });
    await this.op(
      'attest',
      this.pickNode(),
      { kind: 'pipeline.facet.v1', stepId, tag: agent.tag, idempotencyKey: key },
      { path: '/api/attestations', agent, ip: agent.ip, body, idempotencyKey: key },
      (b) => ({ id: b.id, hash: b.hash, seq: b.seq }),
    );
  }

  /** `akas admin revoke ID --store URL` (PROTOCOL 8.7): the CLI changes the list on the database while the processes run. */
  async revoke(): Promise<void> {
    const w = this.ctx.world;
    if (!w.judgments.length) return this.judge();
    const id = this.r.pick(w.judgments);
    const action = this.r.pick(['revoke', 'revoke', 'revoke', 'suspend', 'unsuspend'] as const);
    const run = async () => {
      const inv = this.ctx.history.invoke('revoke', this.id, 'db', { ids: [id], action });
      const flag = action === 'revoke' ? [] : [`--${action}`];
      const d = this.ctx.deployment;
      const r = await d.cli(['--json', 'admin', 'revoke', id, '--reason', `chaos client ${this.id}`, ...flag, '--store', d.store], 60_000);
      let out: Record<string, any> = {};
      try {
        out = JSON.parse(r.stdout);
      } catch {
        out = {};
      }
      if (r.code === 0)
        return inv.complete('ok', {
          action: out.action,
          purpose: out.purpose,
          version: out.version,
          changed: out.changed,
          credentials: (out.credentials ?? []).map((c: { judgmentId: string; changed: boolean }) => ({ judgmentId: c.judgmentId, changed: c.changed })),
        });
      const code = typeof out.code === 'string' ? out.code : `exit_${r.code}`;
      // An unknown id or a refused request changed nothing; anything else (the database away) may have.
      inv.complete(
        code === 'not_found' || code === 'validation_failed' ? 'fail' : 'info',
        { code: r.code },
        `${code}: ${(out.error ?? r.stderr).toString().slice(0, 300)}`,
      );
    };
    const turn = w.revoking.then(run);
    w.revoking = turn.catch(() => undefined);
    await turn;
  }

  /** An acknowledged idempotent request sent again, with its key, to another process: it must answer the first answer (PROTOCOL 1.5). */
  async replay(): Promise<void> {
    const w = this.ctx.world;
    if (!w.replayable.length) return this.attest();
    const first = this.r.pick(w.replayable);
    const node = this.pickNode(first.node);
    const inv = this.ctx.history.invoke(
      'replay',
      this.id,
      node,
      { idempotencyKey: first.idempotencyKey, firstNode: first.node, firstAnswer: first.answer, of: first.f, path: first.path },
      { ip: first.ip, agent: first.agent },
    );
    const sent = await this.send(node, first.method, first.path, first.headers, first.body);
    if (!sent.answer) return inv.complete('info', sent.refused ? { refused: true } : undefined, sent.error);
    const { status, body, headers } = sent.answer;
    const type: Completion = status < 300 ? 'ok' : status < 500 ? 'fail' : 'info';
    const code = typeof body === 'object' && body && 'code' in body ? String((body as { code: unknown }).code) : undefined;
    inv.complete(type, { status, body, replayed: headers['idempotent-replayed'] ?? null }, type === 'ok' ? undefined : (code ?? `http_${status}`));
  }

  async readCheckpoint(): Promise<void> {
    const node = this.pickNode();
    await this.op(
      'read-checkpoint',
      node,
      {},
      { path: '/api/log/checkpoint', method: 'GET', ip: `10.202.${this.id}.${this.r.int(1, 250)}` },
      (note: string) => {
        const lines = String(note).split('\n');
        return { node, origin: lines[0], size: Number(lines[1]), rootHash: lines[2], note };
      },
    );
  }

  /** A burst at one token bucket: burst + 20 requests in a row from one new address, over the three processes in turn. */
  async burst(): Promise<void> {
    const ip = this.nextIp(100);
    for (let k = 0; k < LIMITS.burst + 20 && !this.ctx.stopped(); k++) {
      await this.op('wakeup', NODE_NAMES[k % 3], {}, { path: '/api/agent/v1/wakeup', method: 'GET', ip }, () => ({}));
    }
  }

  /** Two agents of its own, registered and calibrated, before anything else. */
  async setup(): Promise<void> {
    for (let tries = 0; this.calibrated().length < 2 && tries < 20 && !this.ctx.stopped(); tries++) {
      const agent = this.agents.find((a) => !a.calibrated) ?? (await this.register());
      if (agent) await this.calibrate(agent);
    }
  }

  /** Draws operations until the run stops. */
  async run(opts: { burstFirst?: boolean } = {}): Promise<void> {
    await this.setup();
    if (opts.burstFirst) await this.burst();
    const mix: Array<[() => Promise<unknown>, number]> = [
      [() => this.register(), 2],
      [() => this.calibrate(), this.agents.some((a) => !a.calibrated) ? 3 : 0],
      [() => this.propose(), 5],
      [() => this.judge(), 10],
      [() => this.withdraw(), 1],
      [() => this.casPut(), 3],
      [() => this.attest(), 3],
      [() => this.revoke(), 1],
      [() => this.replay(), 2],
      [() => this.readCheckpoint(), 2],
      [() => this.burst(), 0.1],
    ];
    while (!this.ctx.stopped()) {
      mix[1][1] = this.agents.some((a) => !a.calibrated) ? 3 : 0;
      const total = mix.reduce((s, [, w]) => s + w, 0);
      let x = this.r() * total;
      const [step] = mix.find(([, w]) => (x -= w) < 0) ?? mix[2];
      await step();
      await new Promise((resolve) => setTimeout(resolve, this.r.int(0, 30)));
    }
  }
}
