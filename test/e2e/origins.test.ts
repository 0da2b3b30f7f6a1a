// Where the node's public documents take its origin from (issue 30, finding 3), with the built
// `akas serve` over real HTTP: --public-url, else the listen address; never a request header.
// Behind --trust-proxy a client's X-Forwarded-Host (or Host, or X-Forwarded-Proto) changes no
// byte of the documents a cache in front keeps, and --trust-proxy without --public-url refuses
// to start.
import { request } from 'node:http';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testNode } from '../helpers/app.js';
import { runCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';

/** Every document a cache may keep for everyone, the Accept it is asked with, and whether it names the origin (the others link relatively). */
const DOCUMENTS: Array<[string, string, boolean]> = [
  ['/.well-known/akas.json', 'application/json', true],
  ['/llms.txt', 'text/plain', true],
  ['/agent-docs', 'text/html', true],
  ['/credentials/index.json', 'application/json', true],
  ['/credentials', 'text/html', false],
  ['/errors', 'application/json', true],
  ['/errors', 'text/html', false],
  ['/openapi.json', 'application/json', true],
  ['/api/agent/v1/wakeup', 'application/json', true],
  ['/api/agent/v1/me', 'application/json', true], // the 401 envelope's orientation links
  ['/', 'text/html', true], // the explorer's home
];

const EVIL = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http', host: 'evil.example' };

/** A GET with the headers as given (fetch would not send a Host of our choosing). */
function get(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Asks each document with and without the forged headers: the same bytes, naming `origin` and never evil.example. */
async function expectDocumentsName(base: string, origin: string) {
  // Each document is read twice and the two compared: the node's first checkpoint (of its empty
  // log, made by its timer or by the first read that needs one) must not fall between them,
  // which the home page shows. Asking for it first makes it; nothing appends after.
  expect((await get(base, '/api/log/checkpoint', {})).status).toBe(200);
  for (const [path, accept, names] of DOCUMENTS) {
    const plain = await get(base, path, { accept });
    const forged = await get(base, path, { accept, ...EVIL });
    const what = `${path} (${accept})`;
    expect([forged.status, plain.status], what).toEqual(path === '/api/agent/v1/me' ? [401, 401] : [200, 200]);
    if (names) expect(forged.body, what).toContain(origin);
    expect(forged.body, what).not.toContain('evil.example');
    // Nothing in it depends on those headers, so a cache may keep one copy for every client;
    // what does depend on the request says so in Vary.
    if (path !== '/api/agent/v1/me') expect(forged.body.replace(/"requestId":"[^"]*"/g, ''), what).toBe(plain.body.replace(/"requestId":"[^"]*"/g, ''));
    expect(String(forged.headers.vary ?? ''), what).not.toMatch(/host|forwarded/i);
  }
  expect((await get(base, '/errors', { accept: 'text/html' })).headers.vary).toBe('accept');
}

describe('the origin in the public documents (issue 30, finding 3)', () => {
  describe('behind --trust-proxy with --public-url https://akas.example.org', () => {
    let node: RunningNode;
    beforeAll(async () => {
      node = await startServe(['--trust-proxy', '--public-url', 'https://akas.example.org']);
    });
    afterAll(() => node?.stop());

    it('names akas.example.org in every document, whatever X-Forwarded-Host, Host and X-Forwarded-Proto say', async () => {
      await expectDocumentsName(node.url, 'https://akas.example.org');
      const descriptor = JSON.parse((await get(node.url, '/.well-known/akas.json', EVIL)).body) as { origin: string };
      expect(descriptor.origin).toBe('https://akas.example.org');
      const openapi = JSON.parse((await get(node.url, '/openapi.json', EVIL)).body) as { servers: Array<{ url: string }> };
      expect(openapi.servers).toEqual([{ url: 'https://akas.example.org' }]);
      const me = JSON.parse((await get(node.url, '/api/agent/v1/me', EVIL)).body) as { orientation: { register_url: string } };
      expect(me.orientation.register_url).toBe('https://akas.example.org/api/agent/v1/register');
    });
  });

  it('without --public-url, names the address it listens on, not the Host a request names', async () => {
    const node = await startServe([]);
    try {
      await expectDocumentsName(node.url, node.url);
    } finally {
      await node.stop();
    }
  });

  it('a node made with trustProxy and no publicUrl (createApp, as an embedder would) still names its listen address', async () => {
    const node = await testNode({ trustProxy: true });
    try {
      const base = await node.app.listen({ host: '127.0.0.1', port: 0 });
      await expectDocumentsName(base, base);
    } finally {
      await node.close();
    }
  });

  it('--trust-proxy without --public-url (or AKAS_TRUST_PROXY without it) refuses to start, naming --public-url', async () => {
    const data = tempDir('akas-e2e-origins-');
    try {
      for (const [args, env] of [
        [['--trust-proxy'], {}],
        [['--trust-proxy', '10.0.0.5'], {}],
        [[], { AKAS_TRUST_PROXY: '1' }],
      ] as const) {
        const r = await runCli(['serve', '--data', data, '--port', '0', '--log-level', 'warn', '--allow-demo-calibration', ...args], { env });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain('needs --public-url URL');
        expect(r.stderr).toContain('X-Forwarded-Host');
      }
      const bad = await runCli(['serve', '--data', data, '--port', '0', '--trust-proxy', '--public-url', 'akas.example.org']);
      expect(bad.code, bad.stderr).toBe(2);
      expect(bad.stderr).toContain('--public-url is the URL clients reach the node at');
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
