// The discovery documents (PROTOCOL 11): /errors, /llms.txt, /agent-docs and
// /.well-known/akas.json, and the links the 401 orientation and wakeup hand out to them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/index.js';
import { bearer, registerAgent, testNode, type TestNode } from '../helpers/app.js';

const HOST = 'node.test:7373';
const ORIGIN = `http://${HOST}`;
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

let node: TestNode;
const get = (url: string, headers: Record<string, string> = {}) => node.app.inject({ url, headers: { host: HOST, ...headers } });

beforeAll(async () => {
  node = await testNode({ publicUrl: ORIGIN });
});
afterAll(() => node.close());

describe('GET /errors', () => {
  it('lists every code of the registry with its status, meaning, what to do and type URI (JSON)', async () => {
    const res = await get('/errors', { accept: 'application/json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers.vary).toBe('accept');
    const codes = res.json().codes as Array<{ code: string; status: number; type: string; meaning: string; action: string; title: string }>;
    expect(codes.map((c) => c.code)).toEqual(Object.keys(ERROR_CODES));
    for (const c of codes) {
      const entry = ERROR_CODES[c.code as keyof typeof ERROR_CODES];
      expect(c).toEqual({
        code: c.code,
        status: entry.status,
        title: expect.any(String),
        type: `${ORIGIN}/errors#${c.code}`,
        meaning: entry.doc,
        action: entry.action,
      });
    }
    // Without an Accept header (curl, agents): JSON.
    expect((await get('/errors')).headers['content-type']).toMatch(/^application\/json/);
  });

  it('is a page for a browser, where every entry is reachable by its type URI fragment', async () => {
    const res = await get('/errors', { accept: BROWSER });
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    for (const code of Object.keys(ERROR_CODES)) {
      expect(res.body).toContain(`<tr id="${code}">`);
      expect(res.body).toContain(`href="#${code}"`);
    }
  });

  it('is where the type of a problem+json 429 points', async () => {
    const tight = await testNode({ publicUrl: ORIGIN, rateLimit: { burst: 3, refillPerSecond: 0.001 } });
    let limited;
    for (let i = 0; i < 10 && !limited; i++) {
      const res = await tight.app.inject({ url: '/api/agents', headers: { host: HOST }, remoteAddress: '10.55.0.1' });
      if (res.statusCode === 429) limited = res;
    }
    await tight.close();
    expect(limited!.headers['content-type']).toMatch(/^application\/problem\+json/);
    const type = limited!.json().type as string;
    expect(type).toBe(`${ORIGIN}/errors#rate_limited`);
    const page = await get('/errors', { accept: BROWSER });
    expect(page.body).toContain(`<tr id="${type.split('#')[1]}">`);
  });
});

describe('the links a new agent is handed', () => {
  it('all answer: the 401 orientation and the anonymous wakeup discovery block', async () => {
    const refused = await get('/api/agent/v1/me');
    expect(refused.statusCode).toBe(401);
    const orientation = refused.json().orientation as Record<string, string>;
    const links = Object.entries(orientation).filter(([k]) => k.endsWith('_url') && !['register_url', 'calibrate_url', 'me_url'].includes(k));
    expect(links.map(([k]) => k).sort()).toEqual(['descriptor_url', 'docs_url', 'llms_txt_url', 'openapi_url', 'schemas_url']);
    const fresh = await testNode({ publicUrl: ORIGIN });
    try {
      for (const [, url] of links) {
        const res = await fresh.app.inject({ url: url.replace(ORIGIN, ''), headers: { host: HOST } });
        expect([url, res.statusCode]).toEqual([url, 200]);
      }
      const wakeup = (await fresh.app.inject({ url: '/api/agent/v1/wakeup', headers: { host: HOST } })).json();
      for (const path of [
        ...Object.values(wakeup.discovery as Record<string, string>),
        wakeup.wedge.doc,
        wakeup.contract.docsLink.replace(ORIGIN, '').split('#')[0],
      ]) {
        const res = await fresh.app.inject({ url: path, headers: { host: HOST } });
        expect([path, res.statusCode]).toEqual([path, 200]);
      }
    } finally {
      await fresh.close();
    }
  });

  it('land on sections that exist: /agent-docs#verify, #migration, #wakeup', async () => {
    const fresh = await testNode({ publicUrl: ORIGIN });
    try {
      const reg = await registerAgent(fresh);
      const docs = (await fresh.app.inject({ url: '/agent-docs' })).body;
      const trust = reg.trustModel as { recipe: string; migrationPlan: string };
      const anchors = [trust.recipe, trust.migrationPlan, '/agent-docs#wakeup'].map((u) => u.split('#')[1]);
      for (const a of anchors) expect(docs).toContain(`id="${a}"`);
    } finally {
      await fresh.close();
    }
  });
});

describe('GET /llms.txt and /agent-docs', () => {
  it('guide an agent from zero, with this node as BASE and only routes the document has', async () => {
    const fresh = await testNode({ publicUrl: ORIGIN });
    try {
      const text = (await fresh.app.inject({ url: '/llms.txt', headers: { host: HOST } })).body;
      const doc = (await fresh.app.inject({ url: '/openapi.json', headers: { host: HOST } })).json() as { paths: Record<string, object> };
      expect(text).toMatch(/^# akas node at http:\/\/node\.test:7373\n/);
      expect(text).toContain(`BASE=${ORIGIN}\n`);
      for (const step of ['1. Register', '2. Calibrate', '3. Your state', '4. Discover', '5. Judge', 'Signing a judgment', '6. Propose', '7. Recover', 'MCP'])
        expect(text).toContain(`## ${step}`);
      // Every path a curl example calls is a documented route.
      const called = [...text.matchAll(/"\$BASE(\/[^"?$]*)/g)].map((m) => m[1]);
      expect(called.length).toBeGreaterThan(10);
      const templates = Object.keys(doc.paths).map((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]*')}/?$`));
      expect(called.filter((path) => !templates.some((t) => t.test(path)))).toEqual([]);
      // The route list is generated: every documented path is in it.
      for (const path of Object.keys(doc.paths)) expect(text).toContain(` ${path}: `);
      const page = await fresh.app.inject({ url: '/agent-docs', headers: { host: HOST } });
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain(`BASE=${ORIGIN}`);
      expect(page.body).toContain('<h2 id="judge">');
    } finally {
      await fresh.close();
    }
  });
});

describe('GET /.well-known/akas.json', () => {
  it('describes the node: versions, endpoints, discovery, trust layers, issuer history, HMAC key ids, log key, MCP', async () => {
    const fresh = await testNode({ publicUrl: ORIGIN });
    try {
      const res = await fresh.app.inject({ url: '/.well-known/akas.json', headers: { host: HOST } });
      const d = res.json();
      expect(d).toMatchObject({
        platform: 'akas',
        version: { api: 'v1', openapi: '1.0.0' },
        discovery: { openapi: `${ORIGIN}/openapi.json`, llmsTxt: `${ORIGIN}/llms.txt`, agentDocs: `${ORIGIN}/agent-docs`, errors: `${ORIGIN}/errors` },
        mcp: { endpoint: `${ORIGIN}/api/mcp`, transport: 'streamable-http', stateless: true },
        issuer: { did: fresh.keys.issuer.did, history: [{ did: fresh.keys.issuer.did, validUntil: null }] },
        hmac: { signingKeyIds: ['hk_test'], current: 'hk_test' },
        log: { verifierKey: fresh.keys.log.verifierKey, publicKey: fresh.keys.log.publicKey },
      });
      expect(Object.keys(d.trustLayers)).toEqual(['L1', 'L2', 'L3']);
      for (const secret of [
        fresh.keys.issuer.privateKey,
        fresh.keys.log.privateKey,
        fresh.keys.hmac[0].key.toString('hex'),
        fresh.keys.hmac[0].key.toString('base64'),
      ]) {
        expect(res.body).not.toContain(secret);
      }
      for (const url of Object.values(d.discovery as Record<string, string>)) {
        expect([url, (await fresh.app.inject({ url: url.replace(ORIGIN, ''), headers: { host: HOST } })).statusCode]).toEqual([url, 200]);
      }
    } finally {
      await fresh.close();
    }
  });

  it('is public: no key needed, and a sent one is ignored', async () => {
    const fresh = await testNode({ publicUrl: ORIGIN });
    try {
      const a = await registerAgent(fresh);
      expect((await fresh.app.inject({ url: '/.well-known/akas.json', headers: bearer(a.apiKey) })).statusCode).toBe(200);
      expect((await fresh.app.inject({ url: '/.well-known/akas.json', headers: bearer('ak_nonsense') })).statusCode).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});
