// The chaos checker (issue 49, 3) proven check by check: two nodes on one PostgreSQL database
// (in this process, as `akas serve --store` opens them: src/node startNode), driven through
// HTTP into a history the harness's own writer records (history.ts), pass every check; then
// each invariant is broken on purpose, in the store or in the history, and the checker names
// that check as violated. The store is put back after each break, so each test starts from
// the clean run. `akas log check` and `akas monitor` run from the build (dist/, npm run build).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { canonicalize, formatCheckpoint, signNote, type ProposalKind } from '../../src/core/index.js';
import { changeStatus } from '../../src/domain/credentials/status-lists.js';
import { ledgerKey, moveCredits } from '../../src/domain/ledger.js';
import { LogEntries, seqKey } from '../../src/domain/log/spaces.js';
import { KIND_ROUTES } from '../../src/domain/proposals/kinds.js';
import { agentLock, Agents, Ledger, Proposals } from '../../src/domain/records.js';
import { startNode } from '../../src/node/index.js';
import { space, type Store } from '../../src/store/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { signedBodyV2, type Agent } from '../helpers/flows.js';
import { describePg, dropSchemaAt, freshSchemaUrl } from '../helpers/postgres.js';
import { check } from './checker.js';
import { BUILT_CLI } from './checker-read.js';
import { History } from './history.js';
import type { CheckerReport, CheckId, FinalState, HistoryEvent, OpName } from './types.js';

type Started = Awaited<ReturnType<typeof startNode>> & { name: string };
type Json = Record<string, unknown>;

const IP = '127.0.0.1';
/** What the nodes run with: no bucket or cap a test of a few dozen requests could meet. */
const RUN_LIMITS = { burst: 1_000_000, refillPerSecond: 1_000_000, registrationCap: 1_000 };

let url: string;
let nodes: Started[] = [];
let extra: Started | undefined;
let history: History;
let state: FinalState;
/** What the clean run made, for the breaks to aim at. */
const made = {} as {
  proposer: Agent;
  judges: Agent[];
  published: string;
  withdrawn: string;
  revoked: string;
  attester: Agent;
};

async function open(name: string, storeUrl: string, secret: string): Promise<Started> {
  const n = await startNode({
    host: IP,
    port: 0,
    logLevel: 'silent',
    dataDir: storeUrl,
    store: storeUrl,
    nodeSecret: secret,
    config: {
      rateLimit: { burst: RUN_LIMITS.burst, refillPerSecond: RUN_LIMITS.refillPerSecond },
      registrationCapPerIp: RUN_LIMITS.registrationCap,
      sameIpCollusionCheck: false,
    },
  });
  return Object.assign(n, { name });
}

/** One request, recorded as an invoke and its completion: 2xx ok (with what `ok` picks of the answer), 4xx fail, else info. */
async function call(
  f: OpName,
  client: number,
  node: Started,
  req: { method?: string; path: string; json?: unknown; bytes?: Buffer; headers?: Record<string, string> },
  who: { agent?: Agent },
  asked: Json,
  ok: (body: Json) => Json,
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { ...(who.agent ? { authorization: `Bearer ${who.agent.apiKey}` } : {}), ...req.headers };
  if (req.json !== undefined) headers['content-type'] = 'application/json';
  if (req.bytes) headers['content-type'] = 'application/octet-stream';
  const inv = history.invoke(f, client, node.name, asked, { ip: IP, agent: who.agent?.tag });
  const r = await fetch(`${node.url}${req.path}`, {
    method: req.method ?? (req.json !== undefined || req.bytes ? 'POST' : 'GET'),
    headers,
    body: req.bytes ?? (req.json !== undefined ? JSON.stringify(req.json) : undefined),
  });
  const text = await r.text();
  const body = (text.startsWith('{') ? JSON.parse(text) : { text }) as Json;
  if (r.status >= 200 && r.status < 300) inv.complete('ok', ok(body));
  else if (r.status < 500) inv.complete('fail', { status: r.status }, String(body.code));
  else inv.complete('info', { status: r.status }, String(body.code));
  return { status: r.status, body };
}

async function register(client: number, node: Started, score: number, balance: number): Promise<Agent> {
  const r = await call('register', client, node, { path: '/api/agent/v1/register', json: {} }, {}, {}, (b) => ({ tag: b.tag }));
  expect(r.status).toBe(200);
  const a = { ...(r.body as unknown as Agent), ip: IP };
  // Calibrated through the domain (the calibrate route's questions are not what is tested here), recorded as the calibrate it stands for.
  const inv = history.invoke('calibrate', client, node.name, { score }, { ip: IP, agent: a.tag });
  await node.app.akas.store.transact([agentLock(a.tag)], async (tx) => {
    const agent = (await tx.get(Agents, a.tag))!;
    agent.calibration = { attempts: 1, score, bonusPaid: false, lastAttemptAt: 0 };
    if (balance > 0) moveCredits(tx, node.app.akas, agent, 'mint', balance, 'test funding');
    else tx.put(Agents, a.tag, agent);
  });
  inv.complete('ok', { tag: a.tag, tier: score >= 0.9 ? 'frontier' : score >= 0.7 ? 'strong' : 'mid' });
  return a;
}

async function readCheckpoint(node: Started) {
  const inv = history.invoke('read-checkpoint', -1, node.name, {}, { ip: IP });
  const note = await (await fetch(`${node.url}/api/log/checkpoint`)).text();
  const [, size, rootHash] = note.split('\n');
  inv.complete('ok', { node: node.name, size: Number(size), rootHash, note });
}

function propose(client: number, node: Started, a: Agent, kind: ProposalKind, n: number, headers: Record<string, string> = {}) {
  const path = KIND_ROUTES[kind].propose;
  const json = samplePayload(kind, n);
  return call('propose', client, node, { path, json, headers }, { agent: a }, { kind, ...headers }, (b) => ({ proposalId: b.proposalId, kind, tag: a.tag }));
}

/**
 * The clean run: agents, a proposal published by three signed judgments (its propose replayed to
 * the other node, and to a third that refused the connection), one withdrawn, a decision graph
 * left pending, a blob, an attestation, a revocation, a burst of wake-ups, and checkpoints read
 * along the way.
 */
async function drive() {
  const [n1, n2] = nodes;
  await readCheckpoint(n1);
  made.proposer = await register(1, n1, 0.8, 50);
  made.judges = [await register(2, n2, 0.9, 0), await register(3, n1, 0.8, 0), await register(4, n2, 0.7, 0)];
  made.attester = await register(5, n1, 0.8, 0);
  const key = { 'idempotency-key': `chaos-${randomBytes(4).toString('hex')}` };
  const first = await propose(1, n1, made.proposer, 'capability', 1, key);
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  made.published = first.body.proposalId as string;
  const replayed = { idempotencyKey: key['idempotency-key'], firstNode: n1.name, firstAnswer: { status: first.status, body: first.body } };
  await call(
    'replay',
    1,
    n2,
    { path: KIND_ROUTES.capability.propose, json: samplePayload('capability', 1), headers: key },
    { agent: made.proposer },
    replayed,
    (b) => ({
      status: 200,
      body: b,
    }),
  );
  // The same replay to a process that refused the connection: no answer, nothing to compare.
  history.invoke('replay', 1, 'n3', replayed, { ip: IP, agent: made.proposer.tag }).complete('fail', { refused: true }, 'ECONNREFUSED');
  await readCheckpoint(n2);
  const content = ((await (await fetch(`${n1.url}/api/knowledge/proposals/${made.published}`)).json()) as Json).contentSha256 as string;
  for (const [i, j] of made.judges.entries()) {
    const r = await call(
      'judge',
      2 + i,
      nodes[(i + 1) % 2],
      { path: `${KIND_ROUTES.capability.judge}/${made.published}`, json: signedBodyV2(j, 'capability', made.published, content) },
      { agent: j },
      { proposalId: made.published },
      (b) => ({ proposalId: made.published, judgmentId: b.judgmentId, tag: j.tag }),
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
  await readCheckpoint(n1);
  const second = await propose(1, n2, made.proposer, 'capability', 2);
  made.withdrawn = second.body.proposalId as string;
  const w = await call('withdraw', 1, n1, { path: `/api/knowledge/proposals/${made.withdrawn}/withdraw`, json: {} }, { agent: made.proposer }, {}, () => ({
    proposalId: made.withdrawn,
  }));
  expect(w.status, JSON.stringify(w.body)).toBe(200);
  // A decision graph, whose detail has a shape of its own (PROTOCOL 6.6: no kind).
  expect((await propose(1, n1, made.proposer, 'graph', 3)).status).toBe(200);
  const blob = Buffer.from(`chaos checker blob ${randomBytes(8).toString('hex')}`);
  await call('cas-put', 5, n2, { path: '/api/cas', bytes: blob }, { agent: made.attester }, { bytes: blob.length }, (b) => ({
    sha256: b.sha256,
    bytes: blob.length,
  }));
  const review = JSON.parse(readFileSync(new URL('../../data/attestations/review.attestation.v1.json', import.meta.url), 'utf8')).examples[0];
  const att = await call(
    'attest',
    5,
    n1,
    { path: '/api/attestations', json: { kind: 'review.attestation.v1', body: review } },
    { agent: made.attester },
    {},
    (b) => ({
      id: b.id,
      hash: b.hash,
    }),
  );
  expect(att.status, JSON.stringify(att.body)).toBe(200);
  const detail = (await (await fetch(`${n2.url}/api/knowledge/proposals/${made.published}`)).json()) as { judgments: Array<{ judgmentId: string }> };
  made.revoked = detail.judgments[0].judgmentId;
  const inv = history.invoke('revoke', 0, 'db', { ids: [made.revoked], action: 'revoke' });
  const result = await changeStatus(n1.app.akas, { action: 'revoke', reason: 'the chaos checker test', ids: [made.revoked] });
  inv.complete('ok', result as unknown as Json);
  for (let i = 0; i < 12; i++) await call('wakeup', 5, nodes[i % 2], { path: '/api/agent/v1/wakeup' }, { agent: made.attester }, {}, () => ({}));
  await readCheckpoint(n2);
  await readCheckpoint(n1);
}

describePg('the chaos checker', () => {
  beforeAll(async () => {
    if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` first`);
    url = freshSchemaUrl('chaos');
    const secret = `chaos-checker-${randomBytes(8).toString('hex')}`;
    nodes = [await open('n1', url, secret), await open('n2', url, secret)];
    const startedAt = Date.now();
    history = new History();
    await drive();
    state = { processes: nodes.map((n) => ({ name: n.name, url: n.url })), store: url, nodeSecret: secret, startedAt, limits: RUN_LIMITS };
  });
  afterAll(async () => {
    for (const n of [...nodes, ...(extra ? [extra] : [])]) await n.close();
    if (url) await dropSchemaAt(url);
  });

  const store = (): Store => nodes[0].app.akas.store;
  const events = (): HistoryEvent[] => history.events.map((e) => structuredClone(e));
  const violated = (r: CheckerReport, id: CheckId) => r.violations.filter((v) => v.check === id);

  /** Runs one check on a broken run: it fails, naming what broke. */
  async function expectBroken(id: CheckId, h: HistoryEvent[], s: FinalState, what: RegExp) {
    const r = await check(h, s, { only: [id] });
    expect(r.ok).toBe(false);
    expect(r.checks).toEqual([expect.objectContaining({ id, ok: false })]);
    expect(
      violated(r, id)
        .map((v) => v.message)
        .join('\n'),
    ).toMatch(what);
    return r;
  }

  it('passes every check on the clean run', async () => {
    const r = await check(history.events, state);
    expect(r.violations).toEqual([]);
    expect(r.checks.map((c) => c.id)).toHaveLength(15);
    expect(r.checks.every((c) => c.ok)).toBe(true);
  });

  it('writes-acknowledged: fails when the store drops an acknowledged agent and proposal', async () => {
    const tag = made.attester.tag;
    const agent = (await store().get(Agents, tag))!;
    const proposal = (await store().get(Proposals, made.withdrawn))!;
    await store().transact([], async (tx) => {
      tx.del(Agents, tag);
      tx.del(Proposals, made.withdrawn);
    });
    try {
      await expectBroken('writes-acknowledged', events(), state, new RegExp(`agents/${tag} answers 404[\\s\\S]*proposal ${made.withdrawn} is gone`));
    } finally {
      await store().transact([], async (tx) => {
        tx.put(Agents, tag, agent);
        tx.put(Proposals, made.withdrawn, proposal);
      });
    }
  });

  /** The key and number the next entry of an agent's sequence would take. */
  const nextEntry = async (tag: string) => {
    const seq = ((await store().get(Agents, tag))!.ledgerSeq ?? 0) + 1;
    return { key: ledgerKey(tag, seq), seq };
  };

  it('ledger-conserved: fails on a ledger entry that breaks conservation', async () => {
    // Credits minted in the ledger that the agent's balance never received.
    const { key, seq } = await nextEntry(made.proposer.tag);
    await store().transact([], async (tx) =>
      tx.put(Ledger, key, { id: 'led_chaosbreak', seq, at: 1, agent: made.proposer.tag, type: 'mint', amount: 7, reason: 'minted out of thin air' }),
    );
    try {
      await expectBroken('ledger-conserved', events(), state, new RegExp(`${made.proposer.tag}: balance \\d+, ledger says`));
    } finally {
      await store().transact([], async (tx) => tx.del(Ledger, key));
    }
  });

  it("ledger-causal-order: fails when an agent's entries are out of order", async () => {
    const entries = (await store().list(Ledger)).filter(([, e]) => e.ref === made.withdrawn);
    const [reserve] = entries.filter(([, e]) => e.type === 'reserve');
    const [refund] = entries.filter(([, e]) => e.type === 'refund');
    // The refund numbered where the reservation was and the other way round.
    await store().transact([], async (tx) => {
      tx.put(Ledger, reserve[0], { ...refund[1], seq: reserve[1].seq });
      tx.put(Ledger, refund[0], { ...reserve[1], seq: refund[1].seq });
    });
    try {
      await expectBroken(
        'ledger-causal-order',
        events(),
        state,
        /the refund of withdraw \(history line \d+\) comes before the reserve of propose answered before it was sent/,
      );
    } finally {
      await store().transact([], async (tx) => {
        tx.put(Ledger, reserve[0], reserve[1]);
        tx.put(Ledger, refund[0], refund[1]);
      });
    }
  });

  it('one-decision: fails on a proposal decided a second time', async () => {
    const p = (await store().get(Proposals, made.published))!;
    await store().transact([], async (tx) => tx.put(Proposals, made.published, { ...p, status: 'rejected', outcome: { ...p.outcome!, decision: 'rejected' } }));
    try {
      await expectBroken('one-decision', events(), state, new RegExp(`proposal ${made.published} is rejected, and the log holds proposal.published`));
    } finally {
      await store().transact([], async (tx) => tx.put(Proposals, made.published, p));
    }
  });

  it('deposits-settled-once: fails on a deposit refunded twice', async () => {
    const [, refund] = (await store().list(Ledger)).find(([, e]) => e.ref === made.withdrawn && e.type === 'refund')!;
    const { key, seq } = await nextEntry(made.proposer.tag);
    await store().transact([], async (tx) => tx.put(Ledger, key, { ...refund, id: 'led_chaosrefund', seq }));
    try {
      await expectBroken(
        'deposits-settled-once',
        events(),
        state,
        new RegExp(`proposal ${made.withdrawn} \\(withdrawn\\): its deposit settled as \\[refund \\d+, refund \\d+\\]`),
      );
    } finally {
      await store().transact([], async (tx) => tx.del(Ledger, key));
    }
  });

  it('log-append-only: fails on a log entry rewritten in the store', async () => {
    const entry = (await store().get(LogEntries, seqKey(1)))!;
    await store().transact([], async (tx) => tx.put(LogEntries, seqKey(1), { ...entry, body: { ...entry.body, rewritten: true } }));
    try {
      await expectBroken('log-append-only', events(), state, /entry 1 .* does not hash to its hash: it was edited/);
    } finally {
      await store().transact([], async (tx) => tx.put(LogEntries, seqKey(1), entry));
    }
  });

  it('events-logged: fails on an acknowledged proposal the log has no entry of', async () => {
    // A store that kept the proposal and dropped its event: the record written without the log's.
    const p = (await store().get(Proposals, made.withdrawn))!;
    const id = `${made.withdrawn.slice(0, -4)}beef`;
    await store().transact([], async (tx) => tx.put(Proposals, id, { ...p, proposalId: id }));
    const h = new History();
    for (const e of history.events) h.events.push(structuredClone(e));
    h.invoke('propose', 1, 'n1', { kind: 'capability' }, { ip: IP, agent: made.proposer.tag }).complete('ok', {
      proposalId: id,
      kind: 'capability',
      tag: made.proposer.tag,
    });
    try {
      await expectBroken('events-logged', h.events, state, new RegExp(`0 "proposal.submitted ${id}" entries in the log`));
    } finally {
      await store().transact([], async (tx) => tx.del(Proposals, id));
    }
  });

  it('checkpoints-monotonic: fails when a checkpoint read later is smaller than one read before', async () => {
    const h = events();
    const reads = h.filter((e) => e.f === 'read-checkpoint' && e.type === 'ok');
    const [small, large] = [reads[1], reads.at(-1)!];
    expect(Number(large.value?.size)).toBeGreaterThan(Number(small.value?.size));
    [small.value, large.value] = [large.value, small.value];
    await expectBroken('checkpoints-monotonic', h, state, /fewer than the \d+ of history line \d+ .* read before it: the checkpoint went back/);
  });

  it('checkpoints-consistent: fails on a forked checkpoint signed with the log key', async () => {
    const { keys } = nodes[0].app.akas;
    const size = Number(history.events.find((e) => e.f === 'read-checkpoint' && e.type === 'ok' && Number(e.value?.size) > 2)!.value!.size);
    const fork = signNote(formatCheckpoint({ origin: keys.log.origin, size, rootHash: Buffer.alloc(32, 9) }), keys.log.origin, keys.log.privateKey);
    const h = new History();
    for (const e of history.events) h.events.push(structuredClone(e));
    h.invoke('read-checkpoint', -1, 'n2', {}, { ip: IP }).complete('ok', { node: 'n2', size, rootHash: Buffer.alloc(32, 9).toString('base64'), note: fork });
    await expectBroken('checkpoints-consistent', h.events, state, new RegExp(`two checkpoints of ${size} entries sign two roots .*: a fork`));
  });

  it('one-tree: fails when a process serves another tree', async () => {
    const other = freshSchemaUrl('chaos');
    extra = await open('n3', other, `chaos-checker-${randomBytes(8).toString('hex')}`);
    try {
      const s = { ...state, processes: [...state.processes, { name: 'n3', url: extra.url }] };
      await expectBroken('one-tree', events(), s, /n3 publishes the log akas\/\S+ under key/);
    } finally {
      await extra.close();
      extra = undefined;
      await dropSchemaAt(other);
    }
  });

  it('idempotent-replay: fails when a replayed key answers otherwise than the first time', async () => {
    // A store that lost the key's answer: the other process runs the request again.
    const Idempotency = space<unknown>('idempotency');
    await store().transact([], async (tx) => {
      for (const [k] of await store().list(Idempotency)) tx.del(Idempotency, k);
    });
    const first = history.events.find((e) => e.f === 'replay' && e.type === 'invoke')!;
    const h = new History();
    for (const e of history.events) h.events.push(structuredClone(e));
    const key = { 'idempotency-key': String(first.value!.idempotencyKey) };
    const inv = h.invoke('replay', 1, 'n2', first.value!, { ip: IP, agent: made.proposer.tag });
    const r = await fetch(`${nodes[1].url}${KIND_ROUTES.capability.propose}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${made.proposer.apiKey}`, 'content-type': 'application/json', ...key },
      body: JSON.stringify(samplePayload('capability', 1)),
    });
    inv.complete(r.ok ? 'ok' : 'fail', { status: r.status, body: await r.json() });
    await expectBroken('idempotent-replay', h.events, state, new RegExp(`key ${key['idempotency-key']} replayed to n2 answered \\d+, not the first answer`));
  });

  it('buckets-bounded: fails when more requests passed than the bucket holds and refills', async () => {
    // The nodes let the twelve wake-ups through; a bucket of 4 that refills one token in 100 s could not have, however slowly they ran.
    const s = { ...state, limits: { ...RUN_LIMITS, burst: 4, refillPerSecond: 0.01 } };
    await expectBroken(
      'buckets-bounded',
      events(),
      s,
      new RegExp(`bucket agent:${made.attester.tag}: \\d+ requests answered 2xx within \\d+ ms, over the bound`),
    );
  });

  it('quotas-bounded: fails when more registrations were acknowledged than the daily cap', async () => {
    const s = { ...state, limits: { ...RUN_LIMITS, registrationCap: 3 } };
    await expectBroken('quotas-bounded', events(), s, /registrations ip:127\.0\.0\.1 day \d+: \d+ acknowledged, over the cap 3/);
  });

  it('status-versions: fails on a list version the log does not hold', async () => {
    const { StatusListHeads, StatusListVersions } = await import('../../src/domain/credentials/status-lists.js');
    const head = (await store().get(StatusListHeads, 'revocation'))!;
    const newest = (await store().get(StatusListVersions, `revocation:${String(head.version).padStart(12, '0')}`))!;
    const next = head.version + 1;
    const nextKey = `revocation:${String(next).padStart(12, '0')}`;
    await store().transact([], async (tx) => {
      tx.put(StatusListVersions, nextKey, { ...newest, version: next });
      tx.put(StatusListHeads, 'revocation', { ...head, version: next });
    });
    try {
      await expectBroken('status-versions', events(), state, new RegExp(`version ${next} of the revocation list has 0 log entries`));
    } finally {
      await store().transact([], async (tx) => {
        tx.del(StatusListVersions, nextKey);
        tx.put(StatusListHeads, 'revocation', head);
      });
    }
  });

  // Last: a suspension is logged for good, and the monitor would see it in every later run.
  it('monitor-quiet: fails on an alert the history does not explain', async () => {
    const watched = made.judges[0];
    const detail = (await (await fetch(`${nodes[0].url}/api/knowledge/proposals/${made.published}`)).json()) as {
      judgments: Array<{ judgmentId: string; agentTag: string }>;
    };
    const judgmentId = detail.judgments.find((j) => j.agentTag === watched.tag)!.judgmentId;
    await changeStatus(nodes[0].app.akas, { action: 'suspend', reason: 'not in the history', ids: [judgmentId] });
    const r = await expectBroken('monitor-quiet', events(), { ...state, monitorAgents: [watched.tag] }, /credential-suspended/);
    expect(violated(r, 'monitor-quiet')).toHaveLength(state.processes.length);
    expect(canonicalize(violated(r, 'monitor-quiet')[0].evidence)).toContain(judgmentId);
  });
});
