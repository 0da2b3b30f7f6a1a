// Every route fuzzed from its own OpenAPI schema (PROTOCOL 11.2), over real HTTP on
// 127.0.0.1: requests that fit the schema, then mutations (wrong types, missing and extra
// fields, huge strings and numbers, deep nesting, invalid UTF-8 and lone surrogates, odd
// content types, duplicate and oversized headers, traversal and odd encodings in path
// parameters), with and without a key. Every answer must be below 500 and, when a refusal,
// in a PROTOCOL 1.3 envelope; the node checks its own answers against their documented
// schemas meanwhile (checkResponses: an undocumented status, code or field is a 500 here).
// After the run the ledger, the proposals and the log pass the node's own audit. No refusal
// (and no answer listing errors, such as a dry run's) is larger than ERROR_ANSWER_BOUND or
// twice its request, whatever the request held (issue 22: one 1 MiB body once drew a 94 MiB
// answer). A body past its route's bound of members (x-body-limits, issue 30: one object of
// 90,000 keys held the event loop) is refused with 413 before the node parses it, and a body
// that fits its schema is never refused for its size.
// FUZZ_RUNS raises the number of requests per operation (default 12).
import fc from 'fast-check';
import secureJson from 'secure-json-parse';
import { Agent as Dispatcher, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PROPOSAL_KINDS } from '../../src/core/index.js';
import { checkLedger } from '../../src/domain/ledger.js';
import { checkLog } from '../../src/domain/log/index.js';
import { checkProposals } from '../../src/domain/proposals/check.js';
import { samplePayload } from '../fixtures/payloads.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { agent, decide, proposeAs, type Agent } from '../helpers/flows.js';
import { deeplyNested, mutated, nastyString, resolver, valid, type Schema } from '../helpers/schema-arbitrary.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
/** The largest refusal (or list of errors) a request of any size may draw, in bytes, unless twice the request is more. */
const ERROR_ANSWER_BOUND = 16 * 1024;
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1e9);

interface Operation {
  method: string;
  path: string;
  parameters: Array<{ name: string; in: string; required?: boolean; schema: Schema }>;
  body?: Schema;
  /** The route's bounds (PROTOCOL 14), as /openapi.json names them. */
  limits?: { maxBytes: number; maxMembers: number; maxKeys: number };
  binaryBody: boolean;
  eventStream: boolean;
}

let node: TestNode;
let base: string;
/** The bodies the node parses (every JSON body goes through secure-json-parse: src/http-kit/bodies.ts). */
let parses: ReturnType<typeof vi.spyOn>;
let dispatcher: Dispatcher;
let doc: { paths: Record<string, Record<string, Record<string, unknown>>>; components: { schemas: Record<string, Schema> } };
let resolve: (s: Schema) => Schema;
let a: Agent;
/** Real values for path and query parameters, so fuzzed requests reach past the 404s too. */
const known: Record<string, string[]> = {};

beforeAll(async () => {
  parses = vi.spyOn(secureJson, 'parse');
  node = await testNode({ rateLimit: { burst: 1e9, refillPerSecond: 1e9 }, registrationCapPerIp: 1e9, sameIpCollusionCheck: false });
  base = await node.app.listen({ host: '127.0.0.1', port: 0 });
  dispatcher = new Dispatcher({ connections: 8, headersTimeout: 10_000, bodyTimeout: 10_000 });
  doc = (await node.app.inject({ url: '/openapi.json' })).json();
  resolve = resolver(doc.components.schemas);

  // Some state worth reaching: agents, a published and a pending proposal, a blob, an attestation.
  a = await agent(node, 0.9, 200);
  const published = await decide(node, 'capability', { n: 1 });
  const graph = await decide(node, 'graph', { n: 1 });
  const brief = await decide(node, 'brief', { n: 1 });
  const pending = (await proposeAs(node, a, 'artifact', samplePayload('artifact', 2))).json().proposalId as string;
  const blob = (
    await node.app.inject({ method: 'POST', url: '/api/cas', payload: Buffer.from('fuzz me'), headers: { 'content-type': 'application/octet-stream' } })
  ).json().sha256 as string;
  const facet = {
    schemaVersion: '1.0.0',
    stepId: 's1',
    pipeline: 'p',
    step: 'copy',
    transform: 't',
    inputs: [{ sha256: blob }],
    outputs: [{ sha256: blob }],
    actor: 'cron',
    finishedAt: 1767268800000,
  };
  const att = (
    await node.app.inject({
      method: 'POST',
      url: '/api/attestations',
      headers: { authorization: `Bearer ${a.apiKey}` },
      payload: { kind: 'pipeline.facet.v1', body: facet },
    })
  ).json().id as string;
  const judgments = published.answers.map((x) => x.judgmentId as string);
  Object.assign(known, {
    id: [published.proposalId, pending, graph.proposalId, att, 'kb:retries-x1'],
    proposalId: [published.proposalId, pending],
    judgmentId: judgments,
    kind: [...PROPOSAL_KINDS, 'pipeline.facet.v1', 'review.attestation.v1'],
    tag: [a.tag, published.proposer.tag],
    hex: [blob],
    sha256: [blob],
    '*': ['tools/pdf-to-text-x1', 'decisions/pick-a-queue-x1', 'distributed-systems', ''],
    path: ['/tools/pdf-to-text-x1', '/decisions/pick-a-queue-x1', '/models/tiny-classifier-x2'],
    q: ['pdf', 'queue', 'retry'],
  });
  void brief;
}, 120_000);

afterAll(async () => {
  parses?.mockRestore();
  await dispatcher?.close();
  await node?.close();
});

function operations(): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const requestBody = op.requestBody as { content?: Record<string, { schema: Schema }>; 'x-body-limits'?: Operation['limits'] } | undefined;
      const content = (requestBody?.content ?? {}) as Record<string, { schema: Schema }>;
      const json = content['application/json']?.schema;
      const responses = (op.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>;
      ops.push({
        method: method.toUpperCase(),
        path,
        parameters: ((op.parameters ?? []) as Operation['parameters']).filter((p) => p.in !== 'header'),
        body: json,
        limits: requestBody?.['x-body-limits'],
        binaryBody: !json && Object.keys(content).length > 0,
        eventStream: Object.values(responses).some((r) => r.content && 'text/event-stream' in r.content),
      });
    }
  }
  return ops;
}

/** A value for one parameter: a real one, one that fits its schema, or a hostile one. */
function paramValue(p: Operation['parameters'][number]): fc.Arbitrary<string> {
  const real = known[p.name];
  const fits = valid(p.schema, resolve).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const hostile = fc.oneof(nastyString, fc.constant('a'.repeat(5000)), fc.constant('..%2F..%2F'), fc.constant('%00'), fc.constant('%'), fc.constant('日本語'));
  return fc.oneof({ weight: 3, arbitrary: real?.length ? fc.constantFrom(...real) : fits }, { weight: 2, arbitrary: fits }, { weight: 1, arbitrary: hostile });
}

/** How a value is put in a URL: encoded as it should be, or raw as a careless client does. */
const encoding = fc.constantFrom<'encoded' | 'raw'>('encoded', 'encoded', 'raw');
// Byte by byte, so lone surrogates (which encodeURIComponent refuses) go out as UTF-8 would carry them.
const percent = (v: string) =>
  [...Buffer.from(v, 'utf8')]
    .map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
const place = (v: string, how: 'encoded' | 'raw') =>
  how === 'encoded' ? percent(v) : [...v].map((c) => (/[\s#?%\u0000-\u001f\u007f-\uffff]/.test(c) ? percent(c) : c)).join('');

/** A body; `fits` when made to fit the route's schema, `overBound` when it holds more members than the route takes. */
type Body = { bytes?: Buffer; contentType?: string; fits?: boolean; overBound?: boolean };

/**
 * The many-key shape (issue 30): one object of keys, or one array of elements, a little or far
 * past the route's bound of members, or one object a key past its bound of keys, as compact as
 * JSON lets them be.
 */
function manyMembers(op: Operation): fc.Arbitrary<Body> {
  const { maxMembers, maxKeys } = op.limits!;
  return fc
    .record({ extra: fc.constantFrom(1, 1000, 90_000), array: fc.boolean(), wide: fc.boolean(), nested: fc.boolean() })
    .map(({ extra, array, wide, nested }) => {
      const n = wide && !array ? maxKeys + 1 : maxMembers + extra;
      const items: string[] = [];
      for (let i = 0; i < n; i++) items.push(array ? '0' : `"${i.toString(36)}":0`);
      const inner = array ? `[${items.join(',')}]` : `{${items.join(',')}}`;
      return { bytes: Buffer.from(nested ? `{"payload":${inner}}` : inner), contentType: 'application/json', overBound: true };
    });
}

/**
 * A body built to draw many errors: every array of a valid value replaced by tens of thousands
 * of items of the wrong type (two bytes each), every object given hundreds of unknown keys, and
 * a `kind` that names a real attestation kind (so a dry run validates the body).
 */
function widen(v: unknown, depth = 0): unknown {
  if (Array.isArray(v)) return Array.from({ length: depth > 1 ? 100 : 40_000 }, () => 0);
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = k === 'kind' && typeof x === 'string' ? 'review.attestation.v1' : widen(x, depth + 1);
    if (depth < 3) for (let i = 0; i < 2000; i++) o[`x${i}`] = 0;
    return o;
  }
  return depth === 1 ? widen({}, depth) : v;
}

function bodyOf(op: Operation): fc.Arbitrary<Body> {
  const json = (v: unknown): Body => ({ bytes: Buffer.from(JSON.stringify(v) ?? 'null'), contentType: 'application/json' });
  const raw = fc.oneof(
    fc.constant<Body>({}),
    fc.constant<Body>({ bytes: Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe, 0xc0]), Buffer.from('"}')]), contentType: 'application/json' }),
    fc.constant<Body>({ bytes: Buffer.from('{"unterminated": [1, 2'), contentType: 'application/json' }),
    fc.constant<Body>({ bytes: Buffer.from(deeplyNested(20_000)), contentType: 'application/json' }),
    fc.constant<Body>({ bytes: Buffer.from('{"__proto__": {"polluted": true}}'), contentType: 'application/json' }),
    fc.constant<Body>({ bytes: Buffer.from('<a>xml</a>'), contentType: 'text/xml' }),
    fc.constant<Body>({ bytes: Buffer.from('a=1&b=2'), contentType: 'application/x-www-form-urlencoded' }),
    fc.constant<Body>({
      bytes: Buffer.from('--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--'),
      contentType: 'multipart/form-data; boundary=x',
    }),
    fc.constant<Body>({ bytes: Buffer.from('{}', 'utf16le'), contentType: 'application/json; charset=utf-16' }),
    fc.constant<Body>({ bytes: Buffer.from('{}'), contentType: 'application/json;;;===' }),
  );
  if (op.binaryBody)
    return fc.oneof(
      fc.uint8Array({ minLength: 0, maxLength: 2048 }).map((u) => ({ bytes: Buffer.from(u), contentType: 'application/octet-stream' })),
      raw,
    );
  if (!op.body) return fc.oneof({ weight: 4, arbitrary: fc.constant<Body>({}) }, { weight: 1, arbitrary: raw });
  return fc.oneof(
    { weight: 4, arbitrary: valid(op.body, resolve).map((v) => ({ ...json(v), fits: true })) },
    { weight: 3, arbitrary: mutated(op.body, resolve).map(json) },
    { weight: 1, arbitrary: valid(op.body, resolve).map((v) => json(widen(v))) },
    { weight: 1, arbitrary: manyMembers(op) },
    { weight: 2, arbitrary: raw },
  );
}

const authHeader = () =>
  fc.constantFrom<string[] | string | undefined>(
    undefined,
    undefined,
    `Bearer ${a.apiKey}`,
    `bearer   ${a.apiKey}`,
    'Bearer ak_notakeyatall',
    'Bearer',
    'Basic Zm9vOmJhcg==',
    [`Bearer ${a.apiKey}`, 'Bearer ak_other'],
  );

const extraHeaders: fc.Arbitrary<Record<string, string | string[]>> = fc.oneof(
  fc.constant<Record<string, string | string[]>>({}),
  fc.constant({ 'idempotency-key': 'k'.repeat(300) }),
  fc.constant({ 'idempotency-key': ['one', 'two'] as string[] }),
  fc.constant({ 'x-proxy-tenant-id': '\u00ff\u00fe', 'x-idempotency-inherit-tenant-id': '1' }),
  fc.constant({ 'x-forwarded-for': '1.2.3.4, 5.6.7.8' }),
  fc.constant({ 'x-large': 'h'.repeat(20_000) }),
  fc.constant({ accept: 'text/html' }),
  fc.constant({ 'if-none-match': '"' + 'e'.repeat(500) + '"', range: 'bytes=9999999-1' }),
);

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
  fits?: boolean;
  overBound?: boolean;
}

interface Failure {
  sent: string;
  status: number;
  answer: string;
  why: string;
}

/** Answers by status, over the whole run (printed: how deep the fuzzer reached). */
const statuses = new Map<number, number>();

async function send(op: Operation, s: Sent): Promise<Failure | null> {
  const describe = () =>
    `${s.method} ${s.url.slice(0, 300)} headers=${JSON.stringify(Object.keys(s.headers))} body=${s.body?.subarray(0, 200).toString('latin1') ?? ''}`;
  let res;
  parses.mockClear();
  try {
    res = await request(`${base}${s.url}`, { method: s.method as 'GET', headers: s.headers, body: s.body, dispatcher });
  } catch (e) {
    return { sent: describe(), status: 0, answer: String(e), why: 'no answer (the connection failed)' };
  }
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
  const type = String(res.headers['content-type'] ?? '');
  if (type.startsWith('text/event-stream')) {
    res.body.on('error', () => undefined).destroy();
    return res.statusCode < 300 ? null : { sent: describe(), status: res.statusCode, answer: type, why: 'an event stream refused' };
  }
  const text = await res.body.text();
  if (res.statusCode >= 500) return { sent: describe(), status: res.statusCode, answer: text.slice(0, 600), why: '5xx' };
  // Requests go one at a time: what was parsed meanwhile was this request's body.
  const parsed = parses.mock.calls.length > 0;
  if (s.overBound && (parsed || res.statusCode < 400))
    return {
      sent: describe(),
      status: res.statusCode,
      answer: text.slice(0, 300),
      why: `a body past its route's bound of members was ${parsed ? 'parsed' : 'taken'}`,
    };
  if (s.fits && res.statusCode === 413)
    return { sent: describe(), status: res.statusCode, answer: text.slice(0, 300), why: 'a body that fits its schema was refused for its size' };
  const requestBytes = s.url.length + (s.body?.length ?? 0) + JSON.stringify(s.headers).length;
  const answerBytes = Buffer.byteLength(text);
  const listsErrors = res.statusCode >= 400 || text.includes('"errors":[');
  if (listsErrors && answerBytes > Math.max(ERROR_ANSWER_BOUND, 2 * requestBytes)) {
    return { sent: describe(), status: res.statusCode, answer: text.slice(0, 300), why: `an answer of ${answerBytes} bytes to a request of ${requestBytes}` };
  }
  if (res.statusCode >= 400) {
    // The explorer's pages answer a browser (one that prefers text/html) with a page saying why
    // (PROTOCOL 15), or with the envelope where the router refuses before any page runs (414).
    const page = (op.path === '/' || op.path.startsWith('/explore/')) && String(s.headers.accept ?? '').includes('text/html');
    if (page && type.startsWith('text/html')) return null;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text);
    } catch {
      return { sent: describe(), status: res.statusCode, answer: text.slice(0, 300), why: 'a refusal that is not JSON' };
    }
    // The MCP endpoint speaks JSON-RPC, whose clients need a JSON-RPC error object (PROTOCOL 12).
    const jsonRpc = op.path === '/api/mcp' && body.jsonrpc === '2.0' && typeof (body.error as { code?: unknown } | undefined)?.code === 'number';
    const envelope = jsonRpc || typeof body.error === 'string' || (typeof body.code === 'string' && body.status === res.statusCode);
    if (!envelope) return { sent: describe(), status: res.statusCode, answer: text.slice(0, 300), why: 'a refusal outside the PROTOCOL 1.3 envelopes' };
  }
  return null;
}

describe('fuzzing every route from /openapi.json', () => {
  it(`answers every request below 500, refusals in their envelope, and leaves the books straight (FUZZ_RUNS=${RUNS}, seed ${SEED})`, async () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(60);
    const failures: Failure[] = [];
    let sent = 0;
    for (const op of ops) {
      const params = fc.record(
        Object.fromEntries(op.parameters.map((p) => [`${p.in}:${p.name}`, p.required ? paramValue(p) : fc.option(paramValue(p), { nil: undefined, freq: 3 })])),
      );
      const requestOf = fc.record({
        params,
        how: encoding,
        body: bodyOf(op),
        auth: authHeader(),
        extra: extraHeaders,
        junkQuery: fc.option(fc.constantFrom('&x=1&x=2', '&__proto__=1', '&limit=-1&limit=abc', `&${'q'.repeat(3000)}=1`), { freq: 3 }),
      });
      const samples = fc.sample(requestOf, { numRuns: RUNS, seed: SEED + sent });
      for (const r of samples) {
        let path = op.path;
        const query = new URLSearchParams();
        for (const p of op.parameters) {
          const v = r.params[`${p.in}:${p.name}`];
          if (v === undefined) continue;
          if (p.in === 'path')
            path = path.replace(
              `{${p.name}}`,
              p.name === '*'
                ? v
                    .split('/')
                    .map((seg) => place(seg, r.how))
                    .join('/')
                : place(v, r.how),
            );
          else if (p.in === 'query') query.append(p.name, v);
        }
        path = path.replace(/\{[^}]+\}/g, 'x');
        const url = `${path}${query.size || r.junkQuery ? `?${query}${r.junkQuery ?? ''}` : ''}`;
        const headers: Record<string, string | string[]> = { ...r.extra };
        if (r.auth) headers.authorization = r.auth;
        if (r.body.contentType) headers['content-type'] = r.body.contentType;
        if (op.path === '/api/mcp') headers.accept = 'application/json, text/event-stream';
        const f = await send(op, { method: op.method, url, headers, body: r.body.bytes, fits: r.body.fits, overBound: r.body.overBound });
        sent++;
        if (f) failures.push(f);
      }
    }
    console.log(`fuzz: ${sent} requests over ${ops.length} operations (FUZZ_RUNS=${RUNS}, FUZZ_SEED=${SEED}), ${failures.length} failures`);
    console.log(
      `fuzz: answers by status ${[...statuses]
        .sort(([x], [y]) => x - y)
        .map(([k, n]) => `${k}×${n}`)
        .join(' ')}`,
    );
    // The run reached past validation: many requests were taken, many refused.
    expect((statuses.get(200) ?? 0) + (statuses.get(304) ?? 0)).toBeGreaterThan(sent / 10);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(sent / 10);
    expect(failures.slice(0, 10), `${failures.length} bad answers; first ones`).toEqual([]);
    expect(
      (node.app as unknown as { akasResponseViolations?: unknown[] }).akasResponseViolations ?? [],
      'answers that did not fit their documented schema',
    ).toEqual([]);

    // The books after the storm.
    expect((await checkLedger(node.store)).problems).toEqual([]);
    expect((await checkProposals(node.store)).problems).toEqual([]);
    await node.app.akas.log.drain();
    expect((await checkLog(node.store, node.keys)).problems).toEqual([]);
  }, 600_000);
});
