// The security pass: headers on every answer, rate limits that cannot be dodged, idempotent
// answers that never cross callers, banned and rotated keys that reach only what PROTOCOL 1.2
// allows, and secrets that never reach a log line or an error body.
import { Writable } from 'node:stream';
import type { InjectOptions } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY_MS, FakeClock, generateKeyPair, MAX_JSON_DEPTH, proveKeyPossession } from '../../src/core/index.js';
import { Agents, agentLock } from '../../src/domain/records.js';
import { strategiesFor } from '../../src/node/strategies.js';
import { createApp, type AppConfig } from '../../src/http/app.js';
import { NO_BODY } from '../../src/http-kit/bodies.js';
import { openTempStore } from '../../src/store/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { markCalibrated } from '../helpers/agents.js';
import { bearer, registerAgent, testKeys, testNode, type TestNode } from '../helpers/app.js';
import { agent, decide, proposeAs, signedBody } from '../helpers/flows.js';

let node: TestNode;
const open = async (config: Partial<AppConfig> = {}) => {
  node = await testNode(config);
};
afterEach(async () => node?.close());

/** A concrete URL for a route pattern (any id, any path). */
const concrete = (url: string) =>
  url
    .replace(/:id\b/, 'cprop_0000000000000000')
    .replace(/:[a-zA-Z]+/g, 'x')
    .replace('*', 'x');

describe('security headers', () => {
  beforeEach(() => open({ rateLimit: { burst: 8, refillPerSecond: 0.001 } }));

  it(
    "are on every answer, errors and 429s included: nosniff and a policy that loads nothing and is never framed; HTML pages get helmet's " + 'whole set',
    async () => {
      const answers = [
        await node.app.inject({ url: '/credentials' }), // HTML
        await node.app.inject({ url: '/healthz' }),
        await node.app.inject({ url: '/api/agent/v1/preview' }),
        await node.app.inject({ url: '/no/such/route' }), // 404
        await node.app.inject({ url: '/api/agent/v1/me' }), // 401
        await node.app.inject({ method: 'POST', url: '/api/agent/v1/recover', payload: '{' }), // 400
        // MCP answers are written by the SDK on the raw response (reply.hijack): they carry them too.
        await node.app.inject({
          method: 'POST',
          url: '/api/mcp',
          headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' },
          payload: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
        }),
        // So is the log's event stream (reply.hijack, then its own writeHead).
        await node.app.inject({ url: '/api/events?follow=0' }),
      ];
      let limited;
      do limited = await node.app.inject({ url: '/api/agent/v1/schemas' });
      while (limited.statusCode === 200);
      answers.push(limited); // 429
      expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 404, 401, 400, 200, 200, 429]);
      for (const r of answers) {
        expect(r.headers, `${r.statusCode} ${r.headers['content-type']}`).toMatchObject({
          'x-content-type-options': 'nosniff',
          'content-security-policy': expect.stringContaining("frame-ancestors 'none'"),
        });
        expect(r.headers['content-security-policy']).toContain("default-src 'none'");
      }
      // A JSON answer no browser renders carries those two only (each header costs every request: PROTOCOL 1.9).
      for (const r of answers.slice(1)) {
        expect(r.headers['content-security-policy'], `${r.statusCode}`).toBe("default-src 'none'; frame-ancestors 'none'");
        expect(r.headers['x-frame-options']).toBeUndefined();
      }
      // An HTML page: the page's own policy (inline styles, its images) and the document headers.
      const page = answers[0];
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers).toMatchObject({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-resource-policy': 'cross-origin',
        'content-security-policy': expect.stringContaining("style-src 'unsafe-inline'"),
      });
      expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    },
  );

  it('gives a negotiated page (the error catalog as HTML) the whole set, and its JSON the short one', async () => {
    const html = await node.app.inject({ url: '/errors', headers: { accept: 'text/html' } });
    expect(html.headers).toMatchObject({
      'content-type': expect.stringMatching(/^text\/html/),
      'x-frame-options': 'DENY',
      'content-security-policy': expect.stringContaining("style-src 'unsafe-inline'"),
    });
    const json = await node.app.inject({ url: '/errors' });
    expect(json.headers).toMatchObject({
      'content-type': expect.stringMatching(/json/),
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    });
    expect(json.headers['x-frame-options']).toBeUndefined();
  });

  it('sends HSTS only for a node published over https', async () => {
    expect((await node.app.inject({ url: '/healthz' })).headers['strict-transport-security']).toBeUndefined();
    await node.close();
    await open({ publicUrl: 'https://akas.example.org' });
    expect((await node.app.inject({ url: '/healthz' })).headers['strict-transport-security']).toMatch(/max-age=31536000/);
  });
});

describe('what the HTTP layer refuses before a route runs', () => {
  let base: URL;
  beforeEach(async () => {
    await open();
    base = new URL(await node.app.listen({ host: '127.0.0.1', port: 0 }));
  });

  /** One raw exchange on a socket: what a broken client sends, and the answer's status and body. */
  async function raw(text: string) {
    const { connect } = await import('node:net');
    return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      const socket = connect(Number(base.port), base.hostname, () => socket.end(text));
      let got = '';
      socket.on('data', (c) => (got += c.toString()));
      socket.on('error', reject);
      socket.on('close', () => {
        const [head, body] = got.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1]), body: JSON.parse(body) });
      });
    });
  }

  it('answers in the envelope too: headers too large, malformed HTTP, a path segment too long', async () => {
    const big = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`);
    expect(big).toEqual({ status: 431, body: expect.objectContaining({ code: 'headers_too_large', error: expect.any(String) }) });
    const broken = await raw('GARBAGE\r\n\r\n');
    expect(broken).toEqual({ status: 400, body: expect.objectContaining({ code: 'bad_request' }) });
    const long = await node.app.inject({ url: `/api/agents/${'a'.repeat(600)}` });
    expect([long.statusCode, long.json().code]).toEqual([414, 'uri_too_long']);
    const badEscape = await node.app.inject({ url: '/api/agents/%E0%A4%A' });
    expect([badEscape.statusCode, badEscape.json().code]).toEqual([400, 'validation_failed']);
  });
});

describe('rate limits', () => {
  beforeEach(() => open({ rateLimit: { burst: 4, refillPerSecond: 0.001 } }));

  it('are one bucket per key whatever the letter case and spacing of the Bearer', async () => {
    // A calibrated agent's: before, an agent draws from its IP's (issue 30, test/http/bodies.test.ts).
    const a = await registerAgent(node, '10.1.0.1');
    await markCalibrated(node, a.tag, 0.8);
    const spellings = [`Bearer ${a.apiKey}`, `bearer ${a.apiKey}`, `BEARER   ${a.apiKey}`, `Bearer\t${a.apiKey}  `, `bEaReR ${a.apiKey}`];
    const statuses = [];
    for (const authorization of spellings)
      statuses.push(
        (await node.app.inject({ url: '/api/agent/v1/me', headers: { authorization }, remoteAddress: `10.1.0.${statuses.length + 2}` })).statusCode,
      );
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });

  it('ignore X-Forwarded-For unless the node runs with --trust-proxy', async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (await node.app.inject({ url: '/api/agent/v1/schemas', remoteAddress: '10.2.0.1', headers: { 'x-forwarded-for': `203.0.113.${i}` } })).statusCode,
      );
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    await node.close();
    await open({ rateLimit: { burst: 4, refillPerSecond: 0.001 }, trustProxy: true });
    const proxied = [];
    for (let i = 0; i < 5; i++)
      proxied.push(
        (await node.app.inject({ url: '/api/agent/v1/schemas', remoteAddress: '10.2.0.1', headers: { 'x-forwarded-for': `203.0.113.${i}` } })).statusCode,
      );
    expect(proxied).toEqual([200, 200, 200, 200, 200]);
  });
});

describe('body limits', () => {
  beforeEach(() => open({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } }));

  it('every route that takes a body refuses one over its limit with 413 in the error envelope', async () => {
    const a = await agent(node);
    const writes = node.app.akas.routes.filter((r) => r.method !== 'GET');
    expect(writes.length).toBeGreaterThan(20);
    const big = JSON.stringify({ pad: 'x'.repeat(node.app.akas.appConfig.bodyLimit) });
    for (const r of writes) {
      const cas = r.url === '/api/cas';
      const res = await node.app.inject({
        method: r.method as 'POST',
        url: concrete(r.url),
        headers: { ...bearer(a.apiKey), 'content-type': cas ? 'application/octet-stream' : 'application/json' },
        remoteAddress: a.ip,
        payload: cas ? Buffer.alloc(10 * 1024 * 1024 + 1) : big,
      });
      expect([res.statusCode, res.json().code], `${r.method} ${r.url}`).toEqual([413, cas ? 'blob_too_large' : 'body_too_large']);
    }
  });
});

describe('deeply nested bodies', () => {
  beforeEach(() => open({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } }));

  it('are refused before parsing on every route that takes a body, an Idempotency-Key included', async () => {
    // Found by the fuzzer: 10,000 nested arrays to recover with an Idempotency-Key overflowed
    // the stack of the idempotency hash (500). A route whose byte limit is under the body's
    // 20,000 bytes refuses it for them (413 body_too_large), and each level is a member too: a
    // route that takes fewer members than 128 refuses it for them first (413
    // too_many_members, issue 30); every other route for its depth.
    const a = await agent(node);
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const writes = node.app.akas.routes.filter((r) => r.method !== 'GET' && r.url !== '/api/cas');
    for (const r of writes) {
      const bounds = r.config.bodyBounds ?? NO_BODY;
      const expected =
        bounds.bytes < deep.length ? [413, 'body_too_large'] : bounds.members < MAX_JSON_DEPTH ? [413, 'too_many_members'] : [400, 'invalid_json'];
      const res = await node.app.inject({
        method: r.method as 'POST',
        url: concrete(r.url),
        headers: { ...bearer(a.apiKey), 'content-type': 'application/json', 'idempotency-key': `deep-${r.method}-${r.url}` },
        remoteAddress: a.ip,
        payload: deep,
      });
      expect([res.statusCode, res.json().code], `${r.method} ${r.url}`).toEqual(expected);
    }
  });
});

describe('idempotency', () => {
  beforeEach(() => open({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } }));

  it("never answers one caller with another caller's response under the same key", async () => {
    const [a, b] = [await agent(node), await agent(node)];
    const headers = { 'idempotency-key': 'shared-key' };
    const ra = await proposeAs(node, a, 'capability', samplePayload('capability', 1), headers);
    const rb = await proposeAs(node, b, 'capability', samplePayload('capability', 2), headers);
    expect([ra.statusCode, rb.statusCode]).toEqual([200, 200]);
    expect(ra.json().proposalId).not.toBe(rb.json().proposalId);
    expect(rb.json().claimSecret).not.toBe(ra.json().claimSecret);
    // Anonymous callers are told apart by IP: two registrations, two identities.
    const r1 = await node.app.inject({ method: 'POST', url: '/api/agent/v1/register', remoteAddress: '10.3.0.1', headers });
    const r2 = await node.app.inject({ method: 'POST', url: '/api/agent/v1/register', remoteAddress: '10.3.0.2', headers });
    expect(r1.json().apiKey).not.toBe(r2.json().apiKey);
    // Tenants behind one proxy IP that opt in are told apart too (the same body, the agent's own
    // key: without one, a register's secrets are never replayed at all).
    const body = proveKeyPossession(generateKeyPair(), 'register', node.clock.now());
    const t = (tenant: string) =>
      node.app.inject({
        method: 'POST',
        url: '/api/agent/v1/register',
        remoteAddress: '10.3.0.3',
        payload: body,
        headers: { ...headers, 'x-proxy-tenant-id': tenant, 'x-idempotency-inherit-tenant-id': '1' },
      });
    const [ta, tb] = [await t('alpha'), await t('beta')];
    expect(ta.json().tag).not.toBe(tb.json().tag);
    expect((await t('alpha')).json().tag).toBe(ta.json().tag);
  });
});

describe('banned and rotated keys', () => {
  beforeEach(() => open({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } }));

  const authed = () => node.app.akas.routes.filter((r) => r.config.auth === 'required' || r.config.auth === 'optional');

  it('a banned agent reaches only the ban-exempt routes (me, wakeup, quota, appeal, and MCP, whose tools refuse it)', async () => {
    const a = await agent(node);
    await node.store.transact([agentLock(a.tag)], async (tx) => {
      const rec = (await tx.get(Agents, a.tag))!;
      tx.put(Agents, a.tag, { ...rec, decoyFailed: 3, decoyAttempted: 3, bannedUntil: node.clock.now() + DAY_MS });
    });
    const exempt: string[] = [];
    for (const r of authed()) {
      const res = await node.app.inject({
        method: r.method as 'GET',
        url: concrete(r.url),
        headers: bearer(a.apiKey),
        remoteAddress: a.ip,
        payload: r.method === 'POST' ? {} : undefined,
      });
      if (r.config.banExempt) {
        exempt.push(r.url);
        expect(res.json().code, `${r.method} ${r.url}`).not.toBe('banned');
      } else expect([res.statusCode, res.json().code], `${r.method} ${r.url}`).toEqual([403, 'banned']);
    }
    expect(exempt.sort()).toEqual(['/api/agent/v1/appeal', '/api/agent/v1/me', '/api/agent/v1/quota', '/api/agent/v1/wakeup', '/api/mcp']);
    expect((await node.app.inject({ url: '/api/agent/v1/me', headers: bearer(a.apiKey) })).json()).toMatchObject({
      bannedView: true,
      banBlock: expect.any(Object),
    });
    // MCP is open to a banned agent only for what the routes behind its tools allow.
    const mcp = (name: string) =>
      node.app.inject({
        method: 'POST',
        url: '/api/mcp',
        headers: {
          ...bearer(a.apiKey),
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-protocol-version': '2025-06-18',
        },
        remoteAddress: a.ip,
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } },
      });
    const challenge = (await mcp('challenge')).json().result;
    expect(challenge.isError).toBe(true);
    expect(JSON.stringify(challenge.structuredContent ?? challenge.content)).toContain('banned');
    const meTool = (await mcp('me')).json().result;
    expect(meTool.isError ?? false).toBe(false);
  });

  it('a key rotated by a recover reaches no route that reads the Bearer', async () => {
    const a = await agent(node);
    const rec = await node.app.inject({ method: 'POST', url: '/api/agent/v1/recover', payload: { tag: a.tag, recoveryToken: a.recoveryToken } });
    expect(rec.statusCode).toBe(200);
    for (const r of authed()) {
      const res = await node.app.inject({
        method: r.method as 'GET',
        url: concrete(r.url),
        headers: bearer(a.apiKey),
        remoteAddress: a.ip,
        payload: r.method === 'POST' ? {} : undefined,
      });
      expect([res.statusCode, res.json().code], `${r.method} ${r.url}`).toEqual([401, 'key_rotated']);
    }
    expect((await node.app.inject({ url: '/api/agent/v1/me', headers: bearer(rec.json().apiKey) })).statusCode).toBe(200);
  });
});

describe('secrets', () => {
  it('never reach a log line at any level, nor an error body', async () => {
    const lines: string[] = [];
    const { store, dispose } = await openTempStore();
    const clock = new FakeClock();
    const keys = testKeys();
    const stream = new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) });
    const app = await createApp({
      store,
      strategies: strategiesFor(store),
      clock,
      keys,
      logger: { level: 'trace', stream },
      config: { rateLimit: { burst: 1e6, refillPerSecond: 1e6 } },
    });
    node = { app, store, clock, keys, dir: '', close: async () => (await app.close(), await dispose()) };
    const errors: string[] = [];
    const call = async (opts: InjectOptions) => {
      const r = await app.inject(opts);
      if (r.statusCode >= 400) errors.push(r.body);
      return r;
    };

    const a = await agent(node);
    const proposed = (await proposeAs(node, a, 'capability', samplePayload('capability', 1))).json();
    const { proposalId, claimSecret } = proposed;
    // Channel B first: a recovery with the token (channel A) revokes the claim secrets issued before it.
    const recB = (await call({ method: 'POST', url: '/api/agent/v1/recover', payload: { proposalId, claimSecret } })).json();
    const recA = (await call({ method: 'POST', url: '/api/agent/v1/recover', payload: { tag: a.tag, recoveryToken: recB.recoveryToken } })).json();
    const secrets: string[] = [
      a.apiKey,
      a.recoveryToken,
      a.signing.privateKey,
      claimSecret,
      recA.apiKey,
      recA.recoveryToken,
      recA.signing.privateKey,
      recB.apiKey,
      recB.recoveryToken,
      recB.signing.privateKey,
    ];
    // Every way a secret can come back at the node: a spent token, a rotated key in another
    // spelling, secrets in a query string, in the wrong field, in a body that fails validation.
    await call({ method: 'POST', url: '/api/agent/v1/recover', payload: { tag: a.tag, recoveryToken: a.recoveryToken } });
    await call({ method: 'POST', url: '/api/agent/v1/recover', payload: { proposalId, claimSecret } });
    await call({ url: '/api/agent/v1/me', headers: { authorization: `bearer   ${a.apiKey}` } });
    await call({ url: `/api/agent/v1/me?apiKey=${recB.apiKey}&token=${recB.recoveryToken}` });
    await call({ method: 'POST', url: '/api/agent/v1/calibrate', headers: bearer(recB.apiKey), payload: { answers: recB.recoveryToken } });
    await call({ method: 'POST', url: '/api/agent/v1/recover', payload: { tag: recB.recoveryToken, recoveryToken: recB.apiKey } });
    await call({
      method: 'POST',
      url: `/api/knowledge/judge/${proposalId}`,
      headers: bearer(recB.apiKey),
      payload: { ...signedBody({ ...a, tag: a.tag } as never, 'capability', proposalId), rationale: recB.signing.privateKey },
    });
    await call({ method: 'POST', url: '/api/cas', headers: { 'content-type': 'text/plain' }, payload: '' });
    await decide(node, 'brief', { n: 3 });
    expect(errors.length).toBeGreaterThanOrEqual(7);

    const nodeSecrets = [keys.hmac[0].key.toString('hex'), keys.issuer.privateKey, keys.log.privateKey];
    const log = lines.join('');
    expect(log).toContain(a.tag); // the scan sees what is logged
    for (const s of [...secrets, ...nodeSecrets]) {
      const at = log.indexOf(s);
      expect(at, `a secret in the log: ${log.slice(Math.max(0, at - 300), at + 80)}`).toBe(-1);
      for (const body of errors) expect(body.includes(s), `a secret in an error body: ${body.slice(0, 120)}`).toBe(false);
    }
  });
});
