// GET /openapi.json (PROTOCOL 11.2): an OpenAPI 3.1 document that an independent validator
// accepts, that covers every route of fastify's route table with its schemas, and from which a
// client can be generated that registers and reads /me.
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
// Type only: the plugin's declaration of app.swagger() (the node's own sources are checked apart, tsconfig.test.json).
import type {} from '@fastify/swagger';
import Fastify, { type RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/index.js';
import { registerOpenApi } from '../../src/http/openapi.js';
import { testNode, type TestNode } from '../helpers/app.js';

const Ajv2020 = Ajv2020Module as unknown as typeof Ajv2020Module.default;
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Doc = {
  openapi: string;
  info: { version: string };
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object>; securitySchemes: Record<string, unknown> };
};
type Operation = {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Array<Record<string, unknown>>;
  parameters?: Array<{ in: string; name: string; required?: boolean; schema?: object }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: object }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: object }> }>;
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The document's path of a fastify URL: `:id` becomes `{id}`, the tree wildcard `{path}`. */
const docPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}');

/**
 * What is wrong with the document for these routes: a route missing from it, or a route that
 * declares no schemas (no operationId, summary, tag, success answer, or path parameters).
 */
function routeProblems(routes: RouteOptions[], doc: Doc): string[] {
  const problems: string[] = [];
  for (const route of routes) {
    for (const method of (Array.isArray(route.method) ? route.method : [route.method]).map((m) => String(m).toLowerCase())) {
      const where = `${method.toUpperCase()} ${route.url}`;
      const schema = (route.schema ?? {}) as { operationId?: string; summary?: string; tags?: string[]; params?: unknown; response?: Record<string, unknown> };
      if (!schema.operationId) problems.push(`${where}: no operationId`);
      if (!schema.summary) problems.push(`${where}: no summary`);
      if (!schema.tags?.length) problems.push(`${where}: no tag`);
      if (Object.keys(schema.response ?? {}).length === 0) problems.push(`${where}: no response schema`);
      if (/[:*]/.test(route.url) && !schema.params) problems.push(`${where}: path parameters without a params schema`);
      const op = doc.paths[docPath(route.url)]?.[method];
      if (!op) problems.push(`${where}: missing from /openapi.json`);
      else if (op.operationId !== schema.operationId) problems.push(`${where}: documented as ${op.operationId}`);
    }
  }
  return problems;
}

let node: TestNode;
let doc: Doc;

beforeAll(async () => {
  node = await testNode({ publicUrl: 'http://node.test:7373' });
  const res = await node.app.inject({ url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(() => node.close());

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1 with info.version 1.0.0 and this node as its server', () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers).toEqual([{ url: 'http://node.test:7373' }]);
  });

  it('passes an independent OpenAPI validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(JSON.stringify(doc)));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every route of the route table with its schemas', () => {
    const routes = node.app.akasRoutes;
    expect(routes.length).toBeGreaterThan(50);
    expect(routeProblems(routes, doc)).toEqual([]);
    // Nothing in the document that is not a route.
    const routed = new Set(routes.flatMap((r) => (Array.isArray(r.method) ? r.method : [r.method]).map((m) => `${String(m).toLowerCase()} ${docPath(r.url)}`)));
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((k) => METHODS.includes(k))
        .map((m) => `${m} ${path}`),
    );
    expect(documented.filter((d) => !routed.has(d))).toEqual([]);
  });

  it('fails a route added without schemas, or left out of the document', async () => {
    const app = Fastify();
    await registerOpenApi(app);
    app.get('/bare', async () => ({ ok: true }));
    app.get(
      '/documented',
      { schema: { operationId: 'documented', summary: 'x', tags: ['discovery'], response: { 200: { type: 'object' } } } },
      async () => ({}),
    );
    await app.ready();
    const built = app.swagger() as unknown as Doc;
    expect(routeProblems(app.akasRoutes, built)).toEqual([
      'GET /bare: no operationId',
      'GET /bare: no summary',
      'GET /bare: no tag',
      'GET /bare: no response schema',
    ]);
    const { '/documented': _gone, ...paths } = built.paths;
    expect(routeProblems(app.akasRoutes, { ...built, paths })).toContain('GET /documented: missing from /openapi.json');
    await app.close();
  });

  it('says which bodies may be left out', () => {
    expect(doc.paths['/api/agent/v1/register'].post.requestBody).toMatchObject({ required: false });
    expect(doc.paths['/api/knowledge/cap/propose'].post.requestBody).toMatchObject({ required: true });
  });

  it('has unique operationIds', () => {
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('names the Bearer scheme on every route that takes a key', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/api/agent/v1/me'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/api/agent/v1/wakeup'].get.security).toEqual([{}, { bearerAuth: [] }]);
    expect(doc.paths['/api/agent/v1/preview'].get.security).toEqual([]);
    expect(doc.paths['/api/agent/v1/me'].get.responses['401'].content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/AgentOrientation' });
  });

  it('documents the Idempotency-Key and proxy-tenant headers on the surfaces that honour them', () => {
    const headers = (op: Operation) => (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
    for (const op of [doc.paths['/api/agent/v1/register'].post, doc.paths['/api/knowledge/judge/{id}'].post, doc.paths['/api/knowledge/cap/propose'].post]) {
      expect(headers(op)).toEqual(
        expect.arrayContaining(['idempotency-key', 'x-proxy-tenant-id', 'x-idempotency-inherit-tenant-id', 'x-idempotency-tenant-suffix-apikey']),
      );
    }
    expect(headers(doc.paths['/api/agent/v1/me'].get)).toEqual([]);
  });

  it('documents every refusal with its codes, and every code of the registry somewhere', () => {
    const judge = doc.paths['/api/knowledge/cap/judge-proposal/{id}'].post.responses;
    expect(Object.keys(judge).sort()).toEqual(['200', '400', '401', '402', '403', '404', '408', '409', '413', '414', '417', '429', '431', '500', '503']);
    for (const code of ['signature_required', 'invalid_signature', 'validation_failed', 'invalid_idempotency_key'])
      expect(judge['400'].description).toContain(code);
    expect(doc.paths['/api/agent/v1/register'].post.responses['429'].content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
    const described = JSON.stringify(doc.paths);
    const missing = Object.keys(ERROR_CODES).filter((c) => !described.includes(c));
    expect(missing).toEqual([]);
  });
});

/**
 * A client generated from the document at run time: one method per operationId, which builds
 * the request from the operation's path, parameters and security scheme, and validates the
 * answer against the operation's documented response for its status.
 */
function generatedClient(
  document: Doc,
  send: (req: { method: string; url: string; headers: Record<string, string>; body?: string }) => Promise<{ status: number; body: string }>,
) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', components: document.components });
  const client: Record<
    string,
    (args?: { params?: Record<string, string>; query?: Record<string, string>; body?: unknown; bearer?: string }) => Promise<{ status: number; body: unknown }>
  > = {};
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op.operationId) continue;
      client[op.operationId] = async (args = {}) => {
        for (const p of op.parameters ?? []) if (p.required && p.in === 'path' && !args.params?.[p.name]) throw new Error(`${op.operationId} needs ${p.name}`);
        const url =
          path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(args.params?.[name] ?? '')) +
          (args.query ? `?${new URLSearchParams(args.query)}` : '');
        const headers: Record<string, string> = { accept: 'application/json' };
        const needsKey = (op.security ?? []).some((s) => 'bearerAuth' in s) && !(op.security ?? []).some((s) => Object.keys(s).length === 0);
        if (needsKey && !args.bearer) throw new Error(`${op.operationId} needs a bearer key`);
        if (args.bearer) headers.authorization = `Bearer ${args.bearer}`;
        if (args.body !== undefined) headers['content-type'] = 'application/json';
        const res = await send({ method: method.toUpperCase(), url, headers, body: args.body === undefined ? undefined : JSON.stringify(args.body) });
        const documented = op.responses[String(res.status)];
        if (!documented) throw new Error(`${op.operationId} answered an undocumented ${res.status}`);
        const body = JSON.parse(res.body);
        const schema = documented.content?.['application/json']?.schema;
        if (schema) {
          const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components/g, '"doc#/components')));
          if (!validate(body)) throw new Error(`${op.operationId} ${res.status}: ${ajv.errorsText(validate.errors)}`);
        }
        return { status: res.status, body };
      };
    }
  }
  return client;
}

describe('a client generated from the document', () => {
  it('registers and reads /me, each answer checked against the document', async () => {
    const client = generatedClient(doc, async (req) => {
      const res = await node.app.inject({ method: req.method as 'GET', url: req.url, headers: req.headers, payload: req.body, remoteAddress: '10.9.9.9' });
      return { status: res.statusCode, body: res.body };
    });
    const registered = await client.register({ body: { promptId: 'generated-client' } });
    expect(registered.status).toBe(200);
    const { apiKey, tag } = registered.body as { apiKey: string; tag: string };
    await expect(client.me()).rejects.toThrow('needs a bearer key');
    const me = await client.me({ bearer: apiKey });
    expect(me.body).toMatchObject({ tag, tier: 'uncalibrated', balance: 0 });
    const refused = await client.me({ bearer: 'ak_' + 'x'.repeat(40) });
    expect(refused).toMatchObject({ status: 401, body: { code: 'unauthorized', orientation: { openapi_url: expect.stringContaining('/openapi.json') } } });
    const profile = await client.agentProfile({ params: { tag } });
    expect(profile.body).toMatchObject({ tag, signing: { publicKey: (registered.body as { signing: { publicKey: string } }).signing.publicKey } });
  });
});
