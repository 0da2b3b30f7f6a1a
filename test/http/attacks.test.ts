// The security review of issue 22, replayed: each attack it made on a default node, sent over
// real HTTP to a node listening on 127.0.0.1 (port 0), and what the node answers now. Every
// describe block names its finding; each test failed on the node as it was before the fix.
import { strategiesFor } from '../../src/node/strategies.js';
import { connect, type Socket } from 'node:net';
import { Agent as Dispatcher, request } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { publishToTree } from '../../src/domain/knowledge/tree.js';
import type { ProposalRecord } from '../../src/domain/records.js';
import type { AppConfig } from '../../src/http/app.js';
import { samplePayload } from '../fixtures/payloads.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { agent, type Agent } from '../helpers/flows.js';

let node: TestNode;
let base: string;
let dispatcher: Dispatcher;

async function open(config: Partial<AppConfig> = {}) {
  node = await testNode(config);
  base = await node.app.listen({ host: '127.0.0.1', port: 0 });
  dispatcher = new Dispatcher({ connections: 4 });
}
afterEach(async () => {
  await dispatcher?.close();
  await node?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  bytes: number;
  json: () => any;
}

/** One request over real HTTP; `body` is sent as it is (a string or bytes) or as JSON. */
async function send(method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const raw = opts.body === undefined ? undefined : typeof opts.body === 'string' || Buffer.isBuffer(opts.body) ? opts.body : JSON.stringify(opts.body);
  const res = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: { ...(raw !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    body: raw,
    dispatcher,
  });
  const buf = Buffer.from(await res.body.arrayBuffer());
  const text = buf.toString('utf8');
  return { status: res.statusCode, headers: res.headers as Answer['headers'], text, bytes: buf.length, json: () => JSON.parse(text) };
}

/** An error answer is never larger than this, or twice its request. */
const ERROR_ANSWER_BOUND = 16 * 1024;

describe('finding 1: validation answers are bounded and every route draws a token', () => {
  it('draws a token on the dry run (and every other route): an empty bucket is a 429', async () => {
    await open({ rateLimit: { burst: 3, refillPerSecond: 0.001 } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await send('POST', '/api/credentials/dry-run', { body: { kind: 'review.attestation.v1', body: {} } })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    // Preview too: no route answers a caller whose bucket is empty, but health, which an
    // orchestrator probes through the same proxy (issue 30, finding 6: test/http/bodies.test.ts).
    expect((await send('GET', '/api/agent/v1/preview')).status).toBe(429);
    expect((await send('GET', '/healthz')).status).toBe(200);
  });

  it('answers a dry run of a hostile body with at most 50 errors, their count, and a small answer', async () => {
    await open();
    // An object of thousands of unknown properties is refused before it is parsed (413
    // too_many_members, issue 30); within the route's bound, each an error of a closed schema:
    // refused by size (maxProperties) before any of them is looked at.
    const body: Record<string, unknown> = {};
    for (let i = 0; i < 30_000; i++) body[`x${i}`] = i;
    const refused = await send('POST', '/api/credentials/dry-run', { body: JSON.stringify({ kind: 'review.attestation.v1', body }) });
    expect([refused.status, refused.json().code]).toEqual([413, 'too_many_members']);
    expect(refused.bytes).toBeLessThanOrEqual(ERROR_ANSWER_BOUND);
    const fewer: Record<string, unknown> = {};
    for (let i = 0; i < 150; i++) fewer[`x${i}`] = i;
    const r = await send('POST', '/api/credentials/dry-run', { body: JSON.stringify({ kind: 'review.attestation.v1', body: fewer }) });
    expect(r.status).toBe(200);
    const j = r.json();
    expect(j).toMatchObject({ valid: false, errorCount: 1, errors: [{ keyword: 'maxProperties', instancePath: '' }] });
    expect(r.bytes).toBeLessThanOrEqual(ERROR_ANSWER_BOUND);
    // Within the limits, every field wrong: the first 50 errors and how many there were.
    const within: Record<string, unknown> = {};
    for (const f of ['schemaVersion', 'reviewId', 'reviewerId', 'reviewerDid', 'subjectId', 'subjectSha256', 'verdict', 'reviewedAt']) within[f] = [f];
    for (let i = 0; i < 50; i++) within[`x${i}`] = 'y'.repeat(1000);
    const many = await send('POST', '/api/credentials/dry-run', { body: { kind: 'review.attestation.v1', body: within } });
    expect(many.json().errors).toHaveLength(50);
    expect(many.json().errorCount).toBeGreaterThan(50);
    expect(many.bytes).toBeLessThanOrEqual(ERROR_ANSWER_BOUND);
  });

  it('refuses an array over its maxItems before validating its items, naming the limit', async () => {
    await open();
    const a = await agent(node, 0.9, 50);
    // 4,000 branches, each invalid (within the route's bound of members, issue 30): the
    // array's maxItems (32) is what the answer names.
    const branches = Array.from({ length: 4_000 }, () => ({ id: 'X', condition: 1, to: '' }));
    const payload = { ...(samplePayload('graph', 1) as Record<string, unknown>), payload: { question: 'q', inputsRequired: [], branches } };
    const sent = JSON.stringify(payload);
    const r = await send('POST', '/api/knowledge/dg/propose', { body: sent, headers: bearer(a.apiKey) });
    expect(r.status).toBe(400);
    const j = r.json();
    expect(j.code).toBe('validation_failed');
    expect(j.errors).toEqual([{ field: 'payload.branches', reason: 'must NOT have more than 32 items' }]);
    expect(r.bytes).toBeLessThanOrEqual(ERROR_ANSWER_BOUND);
  });

  it('caps errors[] at 50 with errorCount on a body route whose fields all fail', async () => {
    await open();
    const a = await agent(node, 0.9, 50);
    const branches = Array.from({ length: 32 }, () => ({ id: 'X', condition: 1, to: '', priors: 9 }));
    const payload = { path: 1, title: 2, spec: 3, payload: { question: 4, inputsRequired: [5], branches } };
    const r = await send('POST', '/api/knowledge/dg/propose', { body: payload, headers: bearer(a.apiKey) });
    expect(r.status).toBe(400);
    const j = r.json();
    expect(j.errors).toHaveLength(50);
    expect(j.errorCount).toBeGreaterThan(50);
  });
});

/** Puts a decision node straight into the published tree (as publishing would). */
async function putGraph(path: string, branches: Array<{ id: string; condition: unknown; to: string }>, inputsRequired: string[] = ['x']) {
  const p = {
    proposalId: 'gprop_0000000000000000',
    kind: 'graph',
    path,
    payload: { path, title: path, spec: 'test graph', payload: { question: `at ${path}?`, inputsRequired, branches } },
    proposer: null,
  } as unknown as ProposalRecord;
  await node.store.transact([`tree:${path}`], async (tx) => publishToTree(tx, p, node.clock.now(), node.app.akas.strategies.search));
}

describe('finding 2: JSON Logic conditions', () => {
  const graphWith = (condition: unknown, n = 1) => {
    const g = samplePayload('graph', n) as { payload: { branches: Array<{ condition: unknown }> } };
    g.payload.branches[0].condition = condition;
    return g;
  };

  it('refuses the operators that loop, merge or print (map, filter, reduce, all, some, none, merge, log, method)', async () => {
    await open();
    const a = await agent(node, 0.9, 200);
    const rules = [
      { map: [[1, 2], { '+': [{ var: '' }, 1] }] },
      { filter: [[1, 2], true] },
      { reduce: [[1, 2], { '+': [{ var: 'current' }, { var: 'accumulator' }] }, 0] },
      { all: [[1], true] },
      { some: [[1], true] },
      { none: [[1], true] },
      { merge: [[1], [2]] },
      { log: '{"level":50,"msg":"forged"}' },
      { method: ['abc', 'toUpperCase'] },
    ];
    for (const [i, rule] of rules.entries()) {
      const r = await send('POST', '/api/knowledge/dg/propose', { body: graphWith({ '==': [rule, 1] }, i + 1), headers: bearer(a.apiKey) });
      expect(r.status, JSON.stringify(rule)).toBe(400);
      expect(r.json().errors[0].reason).toMatch(/not an allowed JSON Logic operator/);
    }
  });

  it('refuses a condition nested too deep or too large', async () => {
    await open();
    const a = await agent(node, 0.9, 50);
    let deep: unknown = { var: 'throughput' };
    for (let i = 0; i < 40; i++) deep = { '!': [deep] };
    const deepR = await send('POST', '/api/knowledge/dg/propose', { body: graphWith(deep, 1), headers: bearer(a.apiKey) });
    expect(deepR.status).toBe(400);
    expect(deepR.json().errors[0].reason).toMatch(/nests deeper than/);
    const large = { in: [{ var: 'throughput' }, Array.from({ length: 3000 }, (_, i) => i)] };
    const largeR = await send('POST', '/api/knowledge/dg/propose', { body: graphWith(large, 2), headers: bearer(a.apiKey) });
    expect(largeR.status).toBe(400);
    expect(largeR.json().errors[0].reason).toMatch(/larger than/);
  });

  it('never evaluates a looping operator of a graph already in the tree', async () => {
    await open();
    const big = Array.from({ length: 2000 }, (_, i) => i);
    await putGraph('/dg/weapon', [{ id: 'w', condition: { some: [{ map: [big, { map: [big, { var: '' }] }] }, { '==': [{ var: '' }, -1] }] }, to: '/x' }]);
    const r = await send('POST', '/api/knowledge/dg/traverse', { body: { path: '/dg/weapon', inputs: { x: 1 } } });
    expect(r.status).toBe(400);
    expect(r.json().errors[0].reason).toMatch(/not an allowed JSON Logic operator/);
  });

  it('stops a traversal whose conditions run over the step budget, saying so', async () => {
    await open({ traversalLogicBudget: 2000 });
    const list = Array.from({ length: 400 }, (_, i) => i);
    // Three true branches on every level, each an `in` over 400 literals: 3 + 9 + 27 decisions.
    for (let level = 0; level < 4; level++) {
      const to = level < 3 ? `/dg/l${level + 1}` : '/tools/end';
      await putGraph(
        `/dg/l${level}`,
        ['a', 'b', 'c'].map((id) => ({ id, condition: { in: [{ var: 'x' }, list] }, to })),
      );
    }
    const r = await send('POST', '/api/knowledge/dg/traverse', { body: { path: '/dg/l0', inputs: { x: 399 } } });
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ complete: false, stopped: { reason: 'logic-budget', limit: 2000 } });
  });
});

describe('finding 3: a lone surrogate (and every other breach of strict JSON) is 400 invalid_json on every body', () => {
  const lone = '{"kind":"review.attestation.v1","body":{"reviewerId":"\\ud800"}}';

  it('on the dry run, attestations, register and propose alike', async () => {
    await open();
    const a = await agent(node, 0.9, 50);
    const before = (await send('GET', '/api/attestations/head')).json().size;
    const answers = [
      await send('POST', '/api/credentials/dry-run', { body: lone }),
      await send('POST', '/api/attestations', { body: lone, headers: bearer(a.apiKey) }),
      await send('POST', '/api/agent/v1/register', { body: '{"promptId":"\\udfff"}' }),
      await send('POST', '/api/knowledge/cap/propose', {
        body: JSON.stringify(samplePayload('capability', 1)).replace('"title":"', '"title":"\\ud83d'),
        headers: bearer(a.apiKey),
      }),
      // Duplicate keys and bytes that are not UTF-8: the same strict rules.
      await send('POST', '/api/credentials/dry-run', { body: '{"kind":"review.attestation.v1","kind":"x","body":{}}' }),
      await send('POST', '/api/credentials/dry-run', {
        body: Buffer.concat([Buffer.from('{"kind":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","body":{}}')]),
      }),
    ];
    expect(answers.map((r) => [r.status, r.json().code])).toEqual(Array.from({ length: 6 }, () => [400, 'invalid_json']));
    await node.app.akas.log.drain();
    expect((await send('GET', '/api/attestations/head')).json().size).toBe(before);
  });

  it('on the MCP endpoint too', async () => {
    await open();
    const r = await send('POST', '/api/mcp', {
      body:
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dry_run","arguments":{"kind":"review.attestation.v1",' +
        '"body":{"reviewerId":"\\udc00"}}}}',
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    });
    expect([r.status, r.json().code]).toEqual([400, 'invalid_json']);
  });
});

describe("finding 3, the explorer's form post: as strict as a JSON body", () => {
  it('refuses bytes and percent-escapes that are not UTF-8 (a lone surrogate among them) and a field sent twice; a good form still walks', async () => {
    await open();
    await putGraph('/dg/form', [
      { id: 'a', condition: { '==': [{ var: 'x' }, 'é'] }, to: '/tools/a' },
      { id: 'b', condition: true, to: '/tools/b' },
    ]);
    const form = (body: string | Buffer) => send('POST', '/explore/traverse', { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const refused = [
      await form('path=%2Fdg%2Fform&in.x=%ED%A0%80'), // \ud800 as UTF-8 would spell it
      await form(Buffer.concat([Buffer.from('path=%2Fdg%2Fform&in.x='), Buffer.from([0xed, 0xa0, 0x80])])),
      await form('path=%2Fdg%2Fform&in.x=%FF'),
      await form('path=%2Fdg%2Fform&in.x=%E'),
      await form('path=%2Fdg%2Fform&in.x=1&in.x=2'),
    ];
    expect(refused.map((r) => [r.status, r.json().code])).toEqual(Array.from({ length: 5 }, () => [400, 'invalid_json']));
    const good = await form('path=%2Fdg%2Fform&in.x=%C3%A9');
    expect(good.status).toBe(303);
    const walked = await send('GET', `/api/knowledge/dg/traversals/${String(good.headers.location).split('/').pop()}`);
    expect(walked.json().steps[0].branches.find((b: { id: string }) => b.id === 'a').holds).toBe(true);
  });
});

describe('finding 5: --trust-proxy trusts proxies, not clients; IPv6 is counted by /64', () => {
  const register = (xff: string) => send('POST', '/api/agent/v1/register', { headers: { 'x-forwarded-for': xff } });

  it('takes the first untrusted hop from the right: a client cannot prepend its way past the cap', async () => {
    // `akas serve --trust-proxy` with no value: one proxy in front (the hop the node sees).
    await open({ trustProxy: true, registrationCapPerIp: 20 });
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await register(`10.0.${i}.1, 127.0.0.1`)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.slice(20)).toEqual([429, 429, 429, 429, 429]);
  });

  it('with the proxies named by address, counts the address the last trusted proxy saw', async () => {
    await open({ trustProxy: ['127.0.0.1'], registrationCapPerIp: 20 });
    const statuses: number[] = [];
    // The proxy (127.0.0.1, this test) appends what it saw: 203.0.113.9, whatever the client prepended.
    for (let i = 0; i < 25; i++) statuses.push((await register(`10.0.${i}.1, 198.51.100.${i}, 203.0.113.9`)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
  });

  it('counts the addresses of one IPv6 /64 as one client', async () => {
    await open({ trustProxy: 1, registrationCapPerIp: 20 });
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await register(`2001:db8:1:2::${(i + 1).toString(16)}`)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    // Another /64 is another client.
    expect((await register('2001:db8:1:3::1')).status).toBe(200);
  });

  it('keeps one IP from judging a proposal twice through X-Forwarded-For', async () => {
    await open({ trustProxy: true });
    const proposer = await agent(node, 0.9, 50);
    const pid = (await send('POST', '/api/knowledge/cap/propose', { body: samplePayload('capability', 7), headers: bearer(proposer.apiKey) })).json()
      .proposalId;
    const { signedBody } = await import('../helpers/flows.js');
    const judges = [await agent(node, 0.9, 0), await agent(node, 0.9, 0)];
    const answers = [];
    for (const [i, j] of judges.entries()) {
      answers.push(
        await send('POST', `/api/knowledge/judge/${pid}`, {
          body: signedBody(j, 'capability', pid),
          headers: { ...bearer(j.apiKey), 'x-forwarded-for': `10.9.${i}.1, 127.0.0.1` },
        }),
      );
    }
    expect(answers.map((r) => r.status)).toEqual([200, 403]);
    expect(answers[1].json().code).toBe('same_ip_collusion');
  });
});

describe('finding 6: anonymous storage is bounded', () => {
  const MiB = 1024 * 1024;
  const upload = (bytes: Buffer, headers: Record<string, string> = {}) =>
    send('POST', '/api/cas', { body: bytes, headers: { 'content-type': 'application/octet-stream', ...headers } });
  const blob = (n: number, seed: number) => Buffer.alloc(n, seed);

  it('refuses anonymous uploads from one IP past its daily byte quota, with the quota in the problem body', async () => {
    await open({ casQuotaBytes: 3 * MiB });
    for (let i = 0; i < 3; i++) expect((await upload(blob(MiB, i))).status).toBe(200);
    const over = await upload(blob(MiB, 9));
    expect(over.status).toBe(429);
    expect(over.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(over.json()).toMatchObject({
      code: 'rate_limited',
      scope: 'per-ip-per-day',
      cap: 3 * MiB,
      used: 3 * MiB,
      requested: MiB,
      tier: null,
      nextEligibleAt: expect.any(Number),
    });
    // Nothing of the refused upload was stored.
    const sha = (await import('node:crypto')).createHash('sha256').update(blob(MiB, 9)).digest('hex');
    expect((await send('GET', `/api/cas/${sha}?head=1`)).json().exists).toBe(false);
    // A body sent without Content-Length is cut where the quota ends, too.
    node.clock.advance(24 * 60 * 60 * 1000);
    const { Readable } = await import('node:stream');
    const chunks = Readable.from(
      (async function* () {
        for (let i = 0; i < 4; i++) yield blob(MiB, 20 + i);
      })(),
    );
    const chunked = await request(`${base}/api/cas`, { method: 'POST', body: chunks, dispatcher });
    expect(chunked.statusCode).toBe(429);
    await chunked.body.dump();
  });

  it('gives a calibrated agent a larger quota of its own, shown by GET /api/agent/v1/quota', async () => {
    await open({ casQuotaBytes: 1 * MiB });
    const a = await agent(node, 0.9, 10); // frontier
    expect((await upload(blob(MiB, 1))).status).toBe(200);
    expect((await upload(blob(MiB, 2))).status).toBe(429);
    expect((await upload(blob(MiB, 3), bearer(a.apiKey))).status).toBe(200);
    const q = (await send('GET', '/api/agent/v1/quota', { headers: bearer(a.apiKey) })).json();
    expect(q.casQuota).toMatchObject({ scope: 'per-agent-per-day', cap: 20 * MiB, used: MiB, remaining: 19 * MiB });
  });

  it('keeps a traversal for a day (by default), without its inputs, then answers 404 expired', async () => {
    await open();
    await putGraph('/dg/keep', [{ id: 'a', condition: { '>': [{ var: 'x' }, 1] }, to: '/x' }]);
    const t = (await send('POST', '/api/knowledge/dg/traverse', { body: { path: '/dg/keep', inputs: { x: 2, secret: 's'.repeat(1000) } } })).json();
    const kept = await send('GET', `/api/knowledge/dg/traversals/${t.traversalId}`);
    expect(kept.status).toBe(200);
    expect(kept.json().inputs).toBeUndefined();
    expect(kept.json().inputsSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(kept.text).not.toContain('sss');
    node.clock.advance(24 * 60 * 60 * 1000 + 1);
    const gone = await send('GET', `/api/knowledge/dg/traversals/${t.traversalId}`);
    expect([gone.status, gone.json().code]).toEqual([404, 'expired']);
    // The hourly sweep deletes it; its id still tells it expired.
    const { sweepExpired } = await import('../../src/domain/retention.js');
    expect((await sweepExpired(node.app.akas)).traversals).toBe(1);
    const { Traversals } = await import('../../src/domain/knowledge/traversal.js');
    expect(await node.store.get(Traversals, t.traversalId)).toBeUndefined();
    expect((await send('GET', `/api/knowledge/dg/traversals/${t.traversalId}`)).json().code).toBe('expired');
  });

  it('forgets the per-day counters kept by client IP once their day is over', async () => {
    await open({ casQuotaBytes: MiB });
    await send('POST', '/api/agent/v1/register');
    await upload(blob(1000, 1));
    const { Counters } = await import('../../src/domain/records.js');
    const { CasQuotaUse } = await import('../../src/domain/cas/quota.js');
    const keys = async () =>
      [...(await node.store.list(Counters)).map(([k]) => k), ...(await node.store.list(CasQuotaUse)).map(([k]) => k)].filter((k) => k.includes('127.0.0.1'));
    expect(await keys()).toHaveLength(2);
    const { sweepExpired } = await import('../../src/domain/retention.js');
    await sweepExpired(node.app.akas);
    expect(await keys()).toHaveLength(2);
    node.clock.advance(24 * 60 * 60 * 1000);
    await sweepExpired(node.app.akas);
    expect(await keys()).toEqual([]);
  });
});

describe('finding 7: claimSecret stays out of transcripts, and channel A revokes it', () => {
  const mcpCall = (a: Agent, name: string, args: Record<string, unknown>) =>
    send('POST', '/api/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
      headers: { ...bearer(a.apiKey), accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    });

  it('leaves the claimSecret out of an MCP propose result unless the call asks for it', async () => {
    await open();
    const a = await agent(node, 0.9, 50);
    const plain = await mcpCall(a, 'propose_capability', samplePayload('capability', 1) as Record<string, unknown>);
    expect(plain.status).toBe(200);
    expect(plain.text).not.toMatch(/cs_[0-9a-f]{64}/);
    expect(plain.json().result.structuredContent).toMatchObject({ proposalId: expect.stringMatching(/^cprop_/), claimSecretWithheld: true });
    const asked = await mcpCall(a, 'propose_capability', { ...(samplePayload('capability', 2) as Record<string, unknown>), includeClaimSecret: true });
    expect(asked.json().result.structuredContent.claimSecret).toMatch(/^cs_[0-9a-f]{64}$/);
  });

  it('revokes every claimSecret issued before a recovery with the recovery token', async () => {
    await open();
    const a = await agent(node, 0.9, 50);
    const before = (await send('POST', '/api/knowledge/cap/propose', { body: samplePayload('capability', 1), headers: bearer(a.apiKey) })).json();
    const recovered = await send('POST', '/api/agent/v1/recover', { body: { tag: a.tag, recoveryToken: a.recoveryToken } });
    expect(recovered.status).toBe(200);
    const stolen = await send('POST', '/api/agent/v1/recover', { body: { proposalId: before.proposalId, claimSecret: before.claimSecret } });
    expect([stolen.status, stolen.json().code]).toEqual([401, 'recovery_failed']);
    // A claimSecret issued after it still recovers.
    const after = (
      await send('POST', '/api/knowledge/cap/propose', {
        body: samplePayload('capability', 2),
        headers: { authorization: `Bearer ${recovered.json().apiKey}` },
      })
    ).json();
    expect((await send('POST', '/api/agent/v1/recover', { body: { proposalId: after.proposalId, claimSecret: after.claimSecret } })).status).toBe(200);
  });
});

describe('finding 8: lower', () => {
  it('never replays a register answer, with its secrets, to another client of the same IP', async () => {
    await open();
    const key = { 'idempotency-key': 'register-once' };
    const first = await send('POST', '/api/agent/v1/register', { headers: key });
    expect(first.status).toBe(200);
    // A neighbour behind the same address sends the same (body-less) request with the same key.
    const neighbour = await send('POST', '/api/agent/v1/register', { headers: key });
    expect(neighbour.status).toBe(409);
    expect(neighbour.json().code).toBe('idempotency_conflict');
    for (const secret of [first.json().apiKey, first.json().recoveryToken, first.json().signing.privateKey]) expect(neighbour.text).not.toContain(secret);

    // With the agent's own key, the body binds the replay to the client that sent it.
    const { generateKeyPair, proveKeyPossession } = await import('../../src/core/index.js');
    const own = (at: number) => {
      const pair = generateKeyPair();
      return proveKeyPossession(pair, 'register', at);
    };
    const mine = own(node.clock.now());
    const a = await send('POST', '/api/agent/v1/register', { body: mine, headers: { 'idempotency-key': 'own-key' } });
    const retry = await send('POST', '/api/agent/v1/register', { body: mine, headers: { 'idempotency-key': 'own-key' } });
    expect([a.status, retry.status, retry.headers['idempotent-replayed']]).toEqual([200, 200, 'true']);
    expect(retry.json().apiKey).toBe(a.json().apiKey);
    const other = await send('POST', '/api/agent/v1/register', { body: own(node.clock.now()), headers: { 'idempotency-key': 'own-key' } });
    expect(other.status).toBe(200);
    expect(other.json().tag).not.toBe(a.json().tag);
    expect(other.text).not.toContain(a.json().apiKey);
  });

  it('checks the MCP Origin against the configured public origin or loopback names, never the Host the request names', async () => {
    await open();
    const port = new URL(base).port;
    const mcp = (headers: Record<string, string>) =>
      send('POST', '/api/mcp', {
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers },
      });
    const rebound = await mcp({ host: 'evil.example', origin: 'http://evil.example' });
    expect([rebound.status, rebound.json().code]).toEqual([403, 'origin_not_allowed']);
    expect((await mcp({ origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await mcp({ origin: `http://localhost:${port}` })).status).toBe(200);
    expect((await mcp({})).status).toBe(200);
    await dispatcher.close();
    await node.close();
    await open({ publicUrl: 'https://akas.example.org' });
    const pub = (headers: Record<string, string>) =>
      send('POST', '/api/mcp', {
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers },
      });
    expect((await pub({ origin: 'https://akas.example.org' })).status).toBe(200);
    expect((await pub({ host: 'evil.example', origin: 'https://evil.example' })).status).toBe(403);
  });
});

describe('finding 9: keys never enter a transcript', () => {
  const mcp = (a: Agent, method: string, params: Record<string, unknown>) =>
    send('POST', '/api/mcp', {
      body: { jsonrpc: '2.0', id: 1, method, params },
      headers: { ...bearer(a.apiKey), accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    });

  it('the judge tool offers no privateKey, and a seed passed anyway signs nothing', async () => {
    await open();
    const proposer = await agent(node, 0.9, 50);
    const judge = await agent(node, 0.9, 50);
    const { proposalId } = (
      await send('POST', '/api/knowledge/cap/propose', { body: samplePayload('capability', 1), headers: bearer(proposer.apiKey) })
    ).json();
    const listed = (await mcp(judge, 'tools/list', {})).json().result.tools.find((t: { name: string }) => t.name === 'judge');
    expect(Object.keys(listed.inputSchema.properties)).not.toContain('privateKey');
    expect(listed.description).toContain('akas mcp --stdio');
    const args = { id: proposalId, scores: { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 }, rationale: 'Signed by the node?' };
    const sent = await mcp(judge, 'tools/call', { name: 'judge', arguments: { ...args, privateKey: judge.signing.privateKey } });
    expect(sent.json().result).toMatchObject({ isError: true, structuredContent: { code: 'validation_failed', errors: [{ field: 'privateKey' }] } });
    expect(sent.text).not.toContain(judge.signing.privateKey);
    const detail = (await send('GET', `/api/knowledge/proposals/${proposalId}`)).json();
    expect(detail.judgmentCount).toBe(0);
    // Without a signature: where to sign is the agent's side (or akas mcp --stdio), never the node.
    const unsigned = (await mcp(judge, 'tools/call', { name: 'judge', arguments: args })).json().result.structuredContent;
    expect(unsigned).toMatchObject({ code: 'signature_required', signingPayload: expect.any(String), hint: expect.stringContaining('akas mcp --stdio') });
  });
});

describe('finding 4: a node calibrates on its own private set, not on answers that ship in the package', () => {
  const made: string[] = [];
  afterAll(async () => {
    const { rmSync } = await import('node:fs');
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  /** `akas calibration init DIR`, in-process: a fresh private set. */
  async function initSet(): Promise<string> {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { run } = await import('../../cli/program.js');
    const { commandGroups } = await import('../../cli/commands/index.js');
    const { Capture } = await import('../helpers/cli.js');
    const parent = mkdtempSync(join(tmpdir(), 'akas-calibration-'));
    made.push(parent);
    const dir = join(parent, 'set');
    const [stdout, stderr] = [new Capture(), new Capture()];
    const code = await run(['calibration', 'init', dir], { stdout, stderr }, commandGroups, {});
    process.exitCode = 0;
    expect(code, stderr.text).toBe(0);
    return dir;
  }

  it('says which set it runs on, and the answer keys and decoys of the package do not work on a private one', async () => {
    const dir = await initSet();
    await open({ calibrationDir: dir, rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
    expect((await send('GET', '/healthz')).json().calibration).toBe('private');
    const reg = (await send('POST', '/api/agent/v1/register')).json();
    const auth = { authorization: `Bearer ${reg.apiKey}` };
    const { loadPools } = await import('../../src/domain/calibration/scoring.js');
    const { loadChallengeBank } = await import('../../src/domain/calibration/bank.js');
    const demoKeys = Object.fromEntries([...loadPools().A, ...loadPools().B].map((q) => [q.id, q.expected]));
    const questions = (await send('GET', '/api/agent/v1/calibrate', { headers: auth })).json().questions as Array<{ id: string; userPrompt: string }>;
    const answers = Object.fromEntries(questions.map((q) => [q.id, demoKeys[q.id]]));
    const scored = (await send('POST', '/api/agent/v1/calibrate', { body: { answers }, headers: auth })).json();
    expect(scored.intelligenceScore).toBeLessThan(0.5);
    // No challenge it serves is one of the package's: its decoys cannot be recognised from it.
    const { markCalibrated } = await import('../helpers/agents.js');
    await markCalibrated(node, reg.tag, 0.9, 100);
    const demoPrompts = new Set(loadChallengeBank().all.map((e) => e.userPrompt));
    for (let i = 0; i < 30; i++) {
      const c = await send('GET', '/api/agent/v1/challenge', { headers: auth });
      expect(c.status).toBe(200);
      expect(demoPrompts.has(c.json().challenge.userPrompt)).toBe(false);
    }
  });

  it('refuses a set others can read, and counts a copy of the demo set as demo', async () => {
    const { chmodSync, copyFileSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await initSet();
    chmodSync(join(dir, 'bank.json'), 0o644);
    const { createApp } = await import('../../src/http/app.js');
    const { openTempStore } = await import('../../src/store/index.js');
    const { testKeys } = await import('../helpers/app.js');
    const temp = await openTempStore();
    await expect(createApp({ store: temp.store, strategies: strategiesFor(temp.store), keys: testKeys(), config: { calibrationDir: dir } })).rejects.toThrow(
      /chmod 600/,
    );
    await temp.dispose();
    const copy = mkdtempSync(join(tmpdir(), 'akas-calibration-copy-'));
    made.push(copy);
    const { dataPath } = await import('../../src/core/index.js');
    for (const f of ['pool-A.json', 'pool-B.json']) copyFileSync(dataPath('calibration', f), join(copy, f));
    copyFileSync(dataPath('challenges', 'bank.json'), join(copy, 'bank.json'));
    for (const f of ['pool-A.json', 'pool-B.json', 'bank.json']) chmodSync(join(copy, f), 0o600);
    await open({ calibrationDir: copy });
    expect((await send('GET', '/healthz')).json().calibration).toBe('demo');
  });
});

// Past the review's list: what an outside attacker tried next on a default node (issue 22's
// audit), each over real HTTP, each failing on the node before its fix.
describe('connections an attacker holds open', () => {
  /**
   * A raw connection that sends `head` (and no more), and what the node has answered on it;
   * `status` resolves with the status of the answer once its status line is in (0 if the
   * connection closed without one): a test waits for the answer itself, not for a while.
   */
  function hold(head: string): { socket: Socket; answer: () => string; closed: Promise<void>; status: Promise<number> } {
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    let got = '';
    const statusLine = () => Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0);
    const status = new Promise<number>((resolve) => {
      socket.on('data', (d) => {
        got += d.toString('latin1');
        if (statusLine() > 0) resolve(statusLine());
      });
      socket.on('close', () => resolve(statusLine()));
    });
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(head);
    return { socket, answer: () => got, closed, status };
  }
  const stream = (from: string) => hold(`GET /api/events HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${from}\r\n\r\n`);

  it("answers an HTTP/1.1 request without Host, and an Expect it does not meet, in the envelope (Node's own answers are empty)", async () => {
    await open();
    for (const [head, status, code] of [
      ['GET /healthz HTTP/1.1\r\n\r\n', 400, 'bad_request'],
      ['GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n', 417, 'expectation_failed'],
    ] as const) {
      const s = hold(head);
      await s.closed;
      const [top, body] = s.answer().split('\r\n\r\n');
      expect(top.split('\r\n')[0]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(top.toLowerCase()).toContain('content-type: application/json');
      expect(JSON.parse(body)).toMatchObject({ code, error: expect.any(String), hint: expect.any(String) });
    }
    // HTTP/1.0 needs no Host; Expect: 100-continue is met.
    const old = hold('GET /healthz HTTP/1.0\r\n\r\n');
    await old.closed;
    expect(old.answer()).toMatch(/^HTTP\/1\.1 200 /);
    const cont = hold('GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
    await cont.closed;
    expect(cont.answer()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  });

  it('serves a bounded number of event streams per client and in all, and frees a slot when its stream closes', async () => {
    await open({ trustProxy: true, eventStreams: { perClient: 2, total: 4 } });
    const opened: ReturnType<typeof hold>[] = [];
    for (const from of ['198.51.100.1', '198.51.100.1', '2001:db8:7:7::1']) {
      const s = stream(from);
      expect(await s.status).toBe(200);
      opened.push(s);
    }
    const second = stream('2001:db8:7:7::2');
    expect(await second.status).toBe(200);
    opened.push(second);
    // A third stream of one client, from another address of its IPv6 /64: refused.
    const over = await send('GET', '/api/events', { headers: { 'x-forwarded-for': '2001:db8:7:7::3' } });
    expect([over.status, over.json().code, over.json().scope]).toEqual([429, 'rate_limited', 'event-streams-per-client']);
    // Another client, past the node's bound: refused too, in the envelope.
    const full = await send('GET', '/api/events', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect([full.status, full.json().scope, full.json().limit]).toEqual([429, 'event-streams-per-node', 4]);
    expect(full.headers['retry-after']).toBe('5');
    // A closed stream gives its slot back.
    opened[0].socket.destroy();
    let again = 0;
    for (let i = 0; i < 200 && again !== 200; i++) {
      const r = stream('203.0.113.9');
      again = await r.status;
      if (again === 200) opened.push(r);
      else r.socket.destroy();
    }
    expect(again).toBe(200);
    for (const s of opened) s.socket.destroy();
  });

  it('answers 408 and closes a connection whose body comes a byte at a time past the request timeout', async () => {
    await open({ requestTimeoutMs: 400 });
    const slow = hold('POST /api/credentials/dry-run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
    // A byte every 50 ms, never the whole body (98 of its 100 bytes at most): however slowly
    // the node's timers run, the body cannot arrive whole before the request timeout.
    let dripped = 1;
    const drip = setInterval(() => dripped < 98 && (dripped++, slow.socket.write(' ')), 50);
    await slow.closed;
    clearInterval(drip);
    expect(slow.answer()).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.answer()).toContain('"code":"request_timeout"');
    // A request that arrives whole in time is answered as ever.
    expect((await send('GET', '/healthz')).status).toBe(200);
  });
});
