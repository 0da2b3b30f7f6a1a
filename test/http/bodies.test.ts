// Issue 30, findings 1 and 6, over real HTTP against a node listening on 127.0.0.1 (port 0):
// a body is counted (bytes, then members and depth) against its route's bounds before anything
// parses it; an agent that has not calibrated draws from its IP's bucket; /healthz draws no
// token. That a refused body was never parsed is shown by counting the parser's calls, not by
// timing anything.
import { readFileSync } from 'node:fs';
import secureJson from 'secure-json-parse';
import { Agent as Dispatcher, request } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AppConfig } from '../../src/http/app.js';
import { markCalibrated } from '../helpers/agents.js';
import { bearer, registerAgent, testNode, type TestNode } from '../helpers/app.js';

let node: TestNode;
let base: string;
let dispatcher: Dispatcher;
let parses: ReturnType<typeof vi.spyOn>;

async function open(config: Partial<AppConfig> = {}) {
  node = await testNode({ registrationCapPerIp: 1000, ...config });
  base = await node.app.listen({ host: '127.0.0.1', port: 0 });
  dispatcher = new Dispatcher({ connections: 8 });
}
beforeEach(() => {
  // Every JSON body the node parses goes through secure-json-parse (src/http-kit/bodies.ts).
  parses = vi.spyOn(secureJson, 'parse');
});
afterEach(async () => {
  parses.mockRestore();
  await dispatcher?.close();
  await node?.close();
});

async function send(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await request(`${base}${path}`, {
    method: method as 'POST',
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body,
    dispatcher,
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: () => JSON.parse(text) };
}

/** One object of n distinct keys under `payload`: about 8 bytes a key. */
function manyKeys(n: number, kind = 'graph'): string {
  const keys: string[] = [];
  for (let i = 0; i < n; i++) keys.push(`"${i.toString(36)}":0`);
  return `{"kind":${JSON.stringify(kind)},"payload":{${keys.join(',')}}}`;
}

/** One array of n elements under `payload`: 2 bytes an element. */
const manyElements = (n: number) => `{"kind":"graph","payload":[${Array(n).fill(0).join(',')}]}`;

describe('finding 1: a body is counted against its route before it is parsed', () => {
  beforeEach(() => open({ rateLimit: { burst: 1000, refillPerSecond: 0.001 } }));

  it('refuses a body of more members than its route takes with 413 too_many_members naming the bound, and never parses it', async () => {
    // 90,000 keys in 700 KB, or 90,000 elements: under the dry run's byte limit (1 MiB), far
    // over its members (and the keys over what one object of it may hold).
    for (const [body, bound] of [
      [manyKeys(90_000), 'maxKeys'],
      [manyElements(90_000), 'maxMembers'],
    ]) {
      for (const path of ['/api/knowledge/proposals/dry-run', '/api/mcp', '/api/credentials/dry-run']) {
        const r = await send('POST', path, body, { accept: 'application/json, text/event-stream' });
        expect([r.status, r.json().code], path).toEqual([413, 'too_many_members']);
        expect(r.json().error).toContain(`at most ${r.json()[bound]}`);
      }
    }
    expect(parses).not.toHaveBeenCalled();
    // One object wider than the route takes, though its members are few: refused too.
    const wide = await send('POST', '/api/knowledge/proposals/dry-run', manyKeys(1000));
    expect([wide.status, wide.json().code, wide.json().maxKeys]).toEqual([413, 'too_many_members', 200]);
    expect(wide.json().error).toContain('more than 200 keys');
    expect(parses).not.toHaveBeenCalled();
    // The same route takes a body within its bounds, parsed once.
    const within = await send('POST', '/api/knowledge/proposals/dry-run', manyKeys(100));
    expect(within.status).toBe(200);
    expect(parses).toHaveBeenCalledTimes(1);
  });

  it("refuses a body over its route's byte limit with 413 body_too_large naming the limit, unread past it", async () => {
    const a = await registerAgent(node, '10.30.0.1');
    const big = JSON.stringify({ message: 'x'.repeat(900_000) });
    const appeal = await send('POST', '/api/agent/v1/appeal', big, bearer(a.apiKey));
    expect([appeal.status, appeal.json().code, appeal.json().maxBytes]).toEqual([413, 'body_too_large', 32 * 1024]);
    expect(appeal.json().error).toContain('limit of 32 KiB');
    const judge = await send('POST', '/api/knowledge/judge/prop_0000000000000000', JSON.stringify({ rationale: 'y'.repeat(20_000) }), bearer(a.apiKey));
    expect([judge.status, judge.json().code, judge.json().maxBytes]).toEqual([413, 'body_too_large', 8 * 1024]);
    expect(parses).not.toHaveBeenCalled();
  });

  it("names each route's bounds in /openapi.json, every JSON body bounded", async () => {
    const doc = (await send('GET', '/openapi.json')).json();
    type Limits = { maxBytes: number; maxMembers: number; maxKeys: number };
    const limits: Record<string, Limits> = {};
    for (const [path, item] of Object.entries(
      doc.paths as Record<string, Record<string, { requestBody?: { content: Record<string, unknown>; 'x-body-limits'?: Limits } }>>,
    )) {
      for (const [method, op] of Object.entries(item)) {
        if (!op.requestBody?.content['application/json']) continue;
        expect(op.requestBody['x-body-limits'], `${method} ${path}`).toBeDefined();
        limits[`${method.toUpperCase()} ${path}`] = op.requestBody['x-body-limits']!;
      }
    }
    // PROTOCOL 14 lists the same, row for row.
    const protocol = readFileSync(new URL('../../docs/PROTOCOL.md', import.meta.url), 'utf8');
    const size = (n: number) => (n % (1024 * 1024) === 0 ? `${n / 1024 / 1024} MiB` : `${n / 1024} KiB`);
    const rows = protocol.split('\n').filter((l) => /^\| `(POST|PUT|PATCH|DELETE) [^`]+` \| \d+ [KM]iB \|/.test(l));
    expect(rows.sort()).toEqual(
      Object.entries(limits)
        .map(([route, l]) => `| \`${route}\` | ${size(l.maxBytes)} | ${l.maxMembers.toLocaleString('en-US')} | ${l.maxKeys.toLocaleString('en-US')} |`)
        .sort(),
    );
    // A few KiB and a hundred members where the schema is small; what the schema allows where it is large.
    expect(limits['POST /api/knowledge/judge/{id}']).toEqual({ maxBytes: 8 * 1024, maxMembers: 100, maxKeys: 100 });
    expect(limits['POST /api/agent/v1/appeal']).toEqual({ maxBytes: 32 * 1024, maxMembers: 100, maxKeys: 100 });
    expect(limits['POST /api/knowledge/dg/propose'].maxMembers).toBeGreaterThanOrEqual(32 * 500);
    for (const [route, l] of Object.entries(limits)) expect(l.maxBytes, route).toBeLessThanOrEqual(node.app.akas.appConfig.bodyLimit);
  });

  it('takes the largest bodies the schemas allow: 32 conditions of 500 values, a 100,000-character tool text', async () => {
    const a = await registerAgent(node, '10.30.0.2');
    await markCalibrated(node, a.tag, 0.9, 100);
    // A condition of 500 values (LOGIC_MAX_VALUES): {in: [{var: x}, [495 numbers]]}.
    const condition = { in: [{ var: 'x' }, Array.from({ length: 495 }, (_, i) => i)] };
    const branches = Array.from({ length: 32 }, (_, i) => ({ id: `b${i}`, condition, to: `/tools/t${i}` }));
    const graph = {
      path: '/decisions/wide',
      title: 'Wide',
      spec: 'Thirty-two wide conditions.',
      payload: { question: 'Which?', inputsRequired: ['x'], branches },
    };
    const dry = await send('POST', '/api/knowledge/proposals/dry-run', JSON.stringify({ kind: 'graph', payload: graph }), bearer(a.apiKey));
    expect(dry.status).toBe(200);
    expect(dry.json().errors ?? []).toEqual([]);
    const proposed = await send('POST', '/api/knowledge/dg/propose', JSON.stringify(graph, null, 2), bearer(a.apiKey));
    expect(proposed.status).toBe(200);
    // json-validate's text of 100,000 characters, every one sent as a \u escape (600 KB): parsed
    // and handed to the domain, which refuses the unknown challenge.
    const text = '\\u00e9'.repeat(100_000);
    const tool = await send(
      'POST',
      '/api/agent/v1/use-tool',
      `{"challengeId":"ch_0000000000000000","answer":{"answer":"x"},"tool":"json-validate","toolInput":{"text":"${text}"}}`,
      bearer(a.apiKey),
    );
    expect([tool.status, tool.json().code]).toEqual([400, 'challenge_expired']);
  });
});

describe("finding 1: an agent that has not calibrated draws from its IP's bucket", () => {
  beforeEach(() => open({ rateLimit: { burst: 10, refillPerSecond: 0.001 } }));

  it('gives twenty fresh agents on one address one bucket between them; a calibrated agent keeps its own', async () => {
    // Registered from elsewhere; they all call from 127.0.0.1.
    const fresh = [];
    for (let i = 0; i < 20; i++) fresh.push(await registerAgent(node, `10.31.0.${i + 1}`));
    const calibrated = await registerAgent(node, '10.31.1.1');
    await markCalibrated(node, calibrated.tag, 0.8);
    // Its quota says so (one token of the address's ten).
    expect((await send('GET', '/api/agent/v1/quota', undefined, bearer(fresh[0].apiKey))).json().rateLimit).toMatchObject({
      scope: 'per-ip',
      bucketSize: 10,
      remaining: 9,
    });
    const answers = [];
    for (const a of fresh) answers.push(await send('GET', '/api/agent/v1/me', undefined, bearer(a.apiKey)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(9);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited).toHaveLength(11);
    expect(limited[0].json()).toMatchObject({ code: 'rate_limited', scope: 'per-ip' });
    expect(limited[0].json().hint).toContain('until it calibrates');
    // The address's bucket is empty; the calibrated agent on it draws from its own.
    expect((await send('GET', '/api/agent/v1/me', undefined, bearer(calibrated.apiKey))).status).toBe(200);
    expect((await send('GET', '/api/agent/v1/quota', undefined, bearer(calibrated.apiKey))).json().rateLimit).toMatchObject({
      scope: 'per-bearer',
      remaining: 8,
    });
    expect((await send('GET', '/api/agent/v1/preview')).status).toBe(429);
  });
});

describe("finding 6: /healthz answers whatever the caller's bucket holds", () => {
  beforeEach(() => open({ rateLimit: { burst: 5, refillPerSecond: 0.001 } }));

  it('answers 200 beside a flood of many-key bodies from twenty fresh agents, none of them parsed', async () => {
    const fresh = [];
    for (let i = 0; i < 20; i++) fresh.push(await registerAgent(node, `10.32.0.${i + 1}`));
    // Each agent sends ten: 1 MiB to appeal (as the review did) and 700 KB of 90,000 keys to
    // the dry run, with health probes among them; all at once, eight connections.
    const appeal = JSON.stringify({ message: 'x'.repeat(1_000_000) });
    const keys = manyKeys(90_000);
    const flood: Array<Promise<{ status: number; json: () => any }>> = [];
    const health: Array<Promise<{ status: number }>> = [];
    for (let round = 0; round < 10; round++) {
      for (const a of fresh)
        flood.push(send('POST', round % 2 ? '/api/agent/v1/appeal' : '/api/knowledge/proposals/dry-run', round % 2 ? appeal : keys, bearer(a.apiKey)));
      health.push(send('GET', '/healthz'));
    }
    const answers = await Promise.all(flood);
    // One bucket for the address: five answers past it, the rest 429; none past it was parsed.
    const past = answers.filter((r) => r.status !== 429);
    expect(past).toHaveLength(5);
    for (const r of past) expect([413]).toContain(r.status);
    for (const r of past) expect(['too_many_members', 'body_too_large']).toContain(r.json().code);
    expect(parses).not.toHaveBeenCalled();
    // Health answered every probe, though the bucket of its address was empty.
    expect((await Promise.all(health)).map((r) => r.status)).toEqual(Array(10).fill(200));
    expect((await send('GET', '/api/agent/v1/preview')).status).toBe(429);
    expect((await send('GET', '/healthz')).status).toBe(200);
  });
});
