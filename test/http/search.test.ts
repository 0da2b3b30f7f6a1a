// PROTOCOL 10.6: search and suggest over the published tree, on both stores (the postgres
// project runs this file again on PostgreSQL, whose text index answers instead of MiniSearch:
// vitest.config.ts BOTH_STORES): misspelt words, prefixes, ranking by field, paging, following
// every change to a node, function words, bad input; and on each store, how a second process
// sees what the first published.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kit } from '../../src/domain/knowledge/search.js';
import { KnowledgeNodes } from '../../src/domain/knowledge/tree.js';
import { createApp } from '../../src/http/app.js';
import type { Store } from '../../src/store/index.js';
import type { PgStore } from '../../src/store/postgres/index.js';
import type { PgText } from '../../src/store/postgres/search.js';
import { samplePayload } from '../fixtures/payloads.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { decide } from '../helpers/flows.js';

const onPostgres = process.env.AKAS_TEST_STORE === 'postgres';

let node: TestNode;
beforeEach(async () => {
  node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
});
afterEach(async () => node.close());

const get = (url: string, headers: Record<string, string> = {}) => node.app.inject({ url, headers });
const json = async (url: string) => {
  const r = await get(url);
  expect(r.statusCode, `${url}: ${r.body}`).toBe(200);
  return r.json();
};

describe('search and suggest', () => {
  it('finds a published brief by a word of its core and by a misspelt one, not a rejected one', async () => {
    await decide(node, 'brief', { n: 1 });
    await decide(node, 'brief', {
      n: 2,
      outcome: 'rejected',
      payload: {
        ...samplePayload('brief', 2),
        brief: { ...(samplePayload('brief', 2) as { brief: object }).brief, levels: { tldr: 'Rejected thunderclap text.', core: ['thunderclap'] } },
      },
    });
    expect((await json('/api/knowledge/search?q=exponentially')).items.map((i: { path: string }) => i.path)).toEqual([
      '/distributed-systems/retries-with-backoff-x1',
    ]);
    expect((await json('/api/knowledge/search?q=exponentialy')).items).toHaveLength(1); // one letter missing
    expect((await json('/api/knowledge/search?q=thunderclap')).items).toEqual([]);
    const hit = (await json('/api/knowledge/search?q=jitter&kind=leaf-brief')).items[0];
    expect(hit).toMatchObject({ kind: 'leaf-brief', title: 'Retry with exponential backoff and jitter' });
    expect((await json('/api/knowledge/search?q=jitter&kind=leaf-artifact')).items).toEqual([]);
  });

  it('ranks a title match above a spec match above a deep one, and pages with a cursor', async () => {
    const cap = (n: number, title: string, spec: string) => ({ ...samplePayload('capability', n), title, spec });
    await decide(node, 'capability', { payload: cap(20, 'Spec only', 'Mentions the zebra crossing in its spec.') });
    await decide(node, 'capability', { payload: cap(21, 'Zebra crossing finder', 'Finds crossings.') });
    const b = samplePayload('brief', 22) as { brief: { levels: { deep: object } } };
    await decide(node, 'brief', {
      payload: {
        brief: {
          ...b.brief,
          levels: { ...b.brief.levels, deep: { definitions: { zebra: 'a striped crossing' }, edgeCases: ['no zebra crossing in the road'] } },
        },
      },
    });
    expect((await json('/api/knowledge/search?q=zebra')).items.map((i: { path: string }) => i.path)).toEqual([
      '/tools/pdf-to-text-x21',
      '/tools/pdf-to-text-x20',
      '/distributed-systems/retries-with-backoff-x22',
    ]);

    for (let i = 0; i < 5; i++) await decide(node, 'capability', { n: 10 + i });
    const first = await json('/api/knowledge/search?q=pdf&limit=2');
    expect(first.items).toHaveLength(2);
    expect(first.total).toBe(7);
    const seen = [...first.items];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await json(`/api/knowledge/search?q=pdf&limit=2&cursor=${cursor}`);
      seen.push(...page.items);
      cursor = page.nextCursor;
    }
    expect(new Set(seen.map((i: { path: string }) => i.path)).size).toBe(7);
  });

  it('follows every change to a node: a refresh, a sharpened spec, a new brief version', async () => {
    await decide(node, 'graph', { n: 3 });
    expect((await json('/api/knowledge/search?q=message')).items.map((i: { path: string }) => i.path)).toEqual(['/decisions/pick-a-queue-x3']);
    await decide(node, 'graph', { payload: { ...samplePayload('graph', 3), title: 'Choose a broker', replaceExisting: true } });
    expect((await json('/api/knowledge/search?q=message')).items).toEqual([]);
    expect((await json('/api/knowledge/search?q=broker')).items).toMatchObject([{ path: '/decisions/pick-a-queue-x3', title: 'Choose a broker' }]);

    await decide(node, 'capability', { n: 1 });
    expect((await json('/api/knowledge/search?q=refuse')).items).toEqual([]);
    await decide(node, 'spec-sharpening', { n: 1 }); // "...; refuse scanned pages."
    expect((await json('/api/knowledge/search?q=refuse')).items.map((i: { path: string }) => i.path)).toEqual(['/tools/pdf-to-text-x1']);
    expect((await json('/api/knowledge/search?q=layer')).items.map((i: { path: string }) => i.path)).toEqual(['/tools/pdf-to-text-x1']);

    await decide(node, 'brief', { n: 4 });
    expect((await json('/api/knowledge/search?q=number')).items).toHaveLength(1);
    const b = (samplePayload('brief', 4) as { brief: { levels: object } }).brief;
    await decide(node, 'brief', { payload: { brief: { ...b, version: '2026-12', levels: { ...b.levels, core: ['Prefer decorrelated jitter.'] } } } });
    expect((await json('/api/knowledge/search?q=decorrelated')).items.map((i: { path: string }) => i.path)).toEqual([
      '/distributed-systems/retries-with-backoff-x4',
    ]);
    expect((await json('/api/knowledge/search?q=number')).items).toEqual([]); // only in the old core
    expect(await json('/api/knowledge/node/distributed-systems/retries-with-backoff-x4?version=1')).toMatchObject({
      version: 1,
      manifest: { version: '2026-11' },
      core: expect.stringContaining('Back off exponentially.'),
    });
    expect((await json('/api/knowledge/briefs/kb:retries-x4?version=2026-11')).manifest.version).toBe('2026-11');
    expect((await json('/api/knowledge/briefs/kb:retries-x4')).manifest.version).toBe('2026-12');
  });

  it('leaves function words out of the index and of queries (a lone one is a prefix)', async () => {
    await decide(node, 'brief', { n: 1 }); // "Retry with exponential backoff and jitter"
    const paths = async (q: string) => (await json(`/api/knowledge/search?q=${encodeURIComponent(q)}`)).items.map((i: { path: string }) => i.path);
    expect(await paths('retry with exponential backoff and jitter')).toEqual(['/distributed-systems/retries-with-backoff-x1']);
    expect(await paths('the jitter')).toEqual(['/distributed-systems/retries-with-backoff-x1']);
    expect(await paths('with')).toEqual([]); // no indexed word starts with "with"
    expect(await paths('idem')).toEqual(['/distributed-systems/retries-with-backoff-x1']); // "idempotent", as typed
  });

  it("indexes the terms a brief's deep level defines and its sources, not the deep prose", async () => {
    await decide(node, 'brief', { n: 1 });
    const paths = async (q: string) => (await json(`/api/knowledge/search?q=${encodeURIComponent(q)}`)).items.map((i: { path: string }) => i.path);
    expect(await paths('brooker')).toEqual(['/distributed-systems/retries-with-backoff-x1']); // a source's author
    expect(await paths('herd')).toEqual([]); // only in an example's note
    expect((await json('/api/knowledge/node/distributed-systems/retries-with-backoff-x1?level=deep')).deep).toContain('thundering herd'); // still served
  });

  // MiniSearch's: a process's own index, fed by the store's watch.
  it.runIf(!onPostgres)('builds the index from the store at start, and again when the store says writes were missed', async () => {
    await decide(node, 'brief', { n: 1 });
    // A second app on the same store, whose watch goes deaf on demand and reports a loss the
    // way a shared store does when its notification channel drops.
    let deaf = false;
    const losses: Array<() => void> = [];
    const watch: Store['watch'] = (space, listener, lost) => {
      if (space.name === KnowledgeNodes.name && lost) losses.push(lost);
      return node.store.watch(space, (key) => deaf || listener(key), lost);
    };
    const store = new Proxy(node.store, {
      get: (target, key) => {
        if (key === 'watch') return watch;
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const other = await createApp({ store, clock: node.clock, keys: node.keys, strategies: node.app.akas.strategies, config: { checkResponses: true } });
    try {
      const paths = async (q: string) => (await other.inject({ url: `/api/knowledge/search?q=${q}` })).json().items.map((i: { path: string }) => i.path);
      expect(await paths('exponentially')).toEqual(['/distributed-systems/retries-with-backoff-x1']);
      deaf = true;
      await decide(node, 'capability', { n: 1 });
      expect(await paths('pdf')).toEqual([]); // missed
      deaf = false;
      expect(losses).not.toHaveLength(0);
      for (const lost of losses) lost();
      expect(await paths('pdf')).toEqual(['/tools/pdf-to-text-x1']);
      expect(await paths('exponentially')).toEqual(['/distributed-systems/retries-with-backoff-x1']);
      // And writes are followed again, into the rebuilt index.
      await decide(node, 'graph', { n: 1 });
      expect(await paths('queue')).toEqual(['/decisions/pick-a-queue-x1']);
      expect((await other.inject({ url: '/api/knowledge/suggest?q=/to' })).json().suggestions.map((s: { path: string }) => s.path)).toEqual([
        '/tools',
        '/tools/pdf-to-text-x1',
      ]);
    } finally {
      await other.close();
    }
  });

  it('completes a path prefix and a title prefix', async () => {
    await decide(node, 'capability', { n: 1 });
    await decide(node, 'graph', { n: 1 });
    const paths = (await json('/api/knowledge/suggest?q=/to')).suggestions.map((s: { path: string }) => s.path);
    expect(paths).toEqual(['/tools', '/tools/pdf-to-text-x1']);
    const titles = (await json('/api/knowledge/suggest?q=pic')).suggestions.map((s: { title: string }) => s.title);
    expect(titles).toEqual(['Pick a message queue']);
  });

  // PostgreSQL's: the document is written in the publishing transaction, so another process
  // finds it in the next request, with no watch at all (this app's never calls back).
  it.runIf(onPostgres)('finds in another process what one published, in the next request, with no watch and no index of its own', async () => {
    const store = new Proxy(node.store, {
      get: (target, key) => {
        if (key === 'watch') return (() => () => undefined) satisfies Store['watch'];
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const other = await createApp({ store, clock: node.clock, keys: node.keys, strategies: node.app.akas.strategies, config: { checkResponses: true } });
    try {
      const paths = async (q: string) => (await other.inject({ url: `/api/knowledge/search?q=${q}` })).json().items.map((i: { path: string }) => i.path);
      expect(await paths('exponentially')).toEqual([]);
      await decide(node, 'brief', { n: 1 });
      expect(await paths('exponentially')).toEqual(['/distributed-systems/retries-with-backoff-x1']);
      expect(await paths('exponentialy')).toEqual(['/distributed-systems/retries-with-backoff-x1']);
      await decide(node, 'capability', { n: 1 });
      expect(await paths('pd')).toEqual(['/tools/pdf-to-text-x1']);
      expect((await other.inject({ url: '/api/knowledge/suggest?q=pdf' })).json().suggestions).toEqual([
        { path: '/tools/pdf-to-text-x1', title: expect.stringMatching(/pdf/i), kind: 'leaf-capability' },
      ]);
    } finally {
      await other.close();
    }
  });
});

// PROTOCOL 1.4, 10.6: what one query may cost, the same on both stores.
describe('the budget of a query', () => {
  // The kit's budget (search-index.ts), which both stores answer by.
  const [words, typoWords] = [10, 4];
  const quaternion = async () => {
    const payload = { ...samplePayload('capability', 30), title: 'Quaternion interpolator gyroscope calibration pipeline', spec: 'Interpolates.' };
    await decide(node, 'capability', { payload });
  };
  const paths = async (q: string) => (await json(`/api/knowledge/search?q=${encodeURIComponent(q)}`)).items.map((i: { path: string }) => i.path);

  it(`looks up the first ${typoWords} words of 5 letters or more for typos, and matches the others exactly`, async () => {
    expect(kit().limits).toMatchObject({ words, typoWords });
    await quaternion();
    // Five misspelt words: the fifth is not looked up, and nothing holds it as written.
    expect(await paths('quaternon interpolatr gyroscpe calibraton pipelne')).toEqual([]);
    expect(await paths('quaternon interpolatr gyroscpe calibraton pipeline')).toEqual(['/tools/pdf-to-text-x30']);
    // The first four in the query's order, wherever the misspelt ones are; short words are never looked up.
    expect(await paths('pipelne quaternon interpolatr gyroscpe calibration')).toEqual(['/tools/pdf-to-text-x30']);
    expect(await paths('pdf pipelne quaternon interpolatr gyroscpe calibration')).toEqual(['/tools/pdf-to-text-x30']);
  });

  it(`searches the first ${words} words of a query and ignores the rest`, async () => {
    await quaternion();
    expect(await paths(`${'quaternion '.repeat(words)}nowhereword`)).toEqual(['/tools/pdf-to-text-x30']);
    expect(await paths(`${'quaternion '.repeat(words - 1)}nowhereword`)).toEqual([]);
  });

  it('draws a token more for each word looked up for typos after the first, all or none', async () => {
    const small = await testNode({ rateLimit: { burst: 10, refillPerSecond: 1 } });
    try {
      // The test clock stands still: the bucket refills nothing meanwhile.
      const tokens = () => small.app.akas.buckets.peek('ip:127.0.0.1');
      const search = (q: string) => small.app.inject({ url: `/api/knowledge/search?q=${encodeURIComponent(q)}` });
      expect((await search('quaternon')).statusCode).toBe(200); // one lookup: one token, as any request
      expect(await tokens()).toBe(9);
      expect((await search('quaternon interpolatr gyroscpe calibraton pipelne')).statusCode).toBe(200); // four lookups: 1 + 3
      expect(await tokens()).toBe(5);
      expect((await search('quaternon interpolatr')).statusCode).toBe(200); // two: 1 + 1
      expect(await tokens()).toBe(3);
      // 3 left: the request's own token, then 3 more of the 2 there: refused, and the 2 stay.
      const refused = await search('quaternon interpolatr gyroscpe calibraton');
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ code: 'rate_limited', scope: 'per-ip' });
      expect(await tokens()).toBe(2);
      // Suggest looks nothing up: one token.
      expect((await small.app.inject({ url: '/api/knowledge/suggest?q=quaternion%20interpolator%20gyroscope%20calibration' })).statusCode).toBe(200);
      expect(await tokens()).toBe(1);
    } finally {
      await small.close();
    }
  });

  // PostgreSQL's: search has a pool of its own, whose statements time out.
  it.runIf(onPostgres)('answers /healthz and draws tokens while every connection of the search pool is taken', async () => {
    const pool = ((node.store as PgStore).text as PgText).pool;
    const held = await Promise.all(Array.from({ length: pool.options.max ?? 0 }, () => pool.connect()));
    try {
      expect(held.length).toBeGreaterThan(0);
      expect((await get('/healthz')).statusCode).toBe(200);
      expect((await get('/api/agents')).statusCode).toBe(200); // drew a token from the store's buckets
    } finally {
      for (const c of held) c.release();
    }
  });

  it.runIf(onPostgres)('answers 503 search_busy with Retry-After when a search statement runs past its timeout, and the store stays healthy', async () => {
    await quaternion();
    const { target } = node.store as PgStore;
    // A lock held on the index's table: the search statement waits for it, and a lock wait counts toward its timeout.
    const locker = new pg.Client({ connectionString: target.connectionString });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${target.qschema}.akas_search IN ACCESS EXCLUSIVE MODE`);
      const r = await get('/api/knowledge/search?q=pdf');
      expect(r.statusCode).toBe(503);
      expect(r.json().code).toBe('search_busy');
      expect(r.headers['retry-after']).toBe('1');
      // The explorer's search page says so too, not "the node failed".
      const page = await get('/explore/search?q=pdf', { accept: 'text/html' });
      expect(page.statusCode).toBe(503);
      expect(page.body).toContain('ran past its time');
      expect((await get('/healthz')).json().storage).toEqual({ ok: true });
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
    expect(await paths('quaternion')).toEqual(['/tools/pdf-to-text-x30']);
  });
});

describe('bad input keeps its answers: never a 500, never a database error', () => {
  beforeEach(async () => {
    await decide(node, 'brief', { n: 1 });
    await decide(node, 'capability', { n: 1 });
  });

  it('refuses an empty query and one of 1,000 characters with 400 validation_failed', async () => {
    for (const url of [
      '/api/knowledge/search?q=',
      `/api/knowledge/search?q=${'a'.repeat(1000)}`,
      '/api/knowledge/suggest?q=',
      `/api/knowledge/suggest?q=${'b'.repeat(1000)}`,
    ]) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(400);
      expect(r.json().code).toBe('validation_failed');
    }
  });

  it('answers a query of only function words, of a 200-letter word, or of punctuation alone, with hits or none', async () => {
    for (const q of ['the of and', 'with', 'x'.repeat(200), '!!! ??? ...', '   ']) {
      const r = await get(`/api/knowledge/search?q=${encodeURIComponent(q)}`);
      expect(r.statusCode, `${q}: ${r.body}`).toBe(200);
      expect(r.json()).toMatchObject({ query: q, items: expect.any(Array), total: expect.any(Number) });
      const s = await get(`/api/knowledge/suggest?q=${encodeURIComponent(q)}`);
      expect(s.statusCode, `${q}: ${s.body}`).toBe(200);
    }
    expect((await json('/api/knowledge/search?q=!!!')).items).toEqual([]);
  });

  it("reads tsquery's syntax characters as text: they find what their words find, and never reach the database as syntax", async () => {
    const brief = ['/distributed-systems/retries-with-backoff-x1'];
    const paths = async (q: string) => (await json(`/api/knowledge/search?q=${encodeURIComponent(q)}`)).items.map((i: { path: string }) => i.path);
    for (const q of ["jitter' | '", 'jitter & !', 'jitter:*', '(jitter) <-> backoff', 'jitter:A', "jitter\\' --"]) expect(await paths(q), q).toEqual(brief);
    for (const q of ["'", '\\', '&|!<->():*', "''''", 'a\u0000b', '\u0000', 'jitter \u0000']) {
      const r = await get(`/api/knowledge/search?q=${encodeURIComponent(q)}`);
      expect(r.statusCode, `${q}: ${r.body}`).toBe(200);
      const s = await get(`/api/knowledge/suggest?q=${encodeURIComponent(q)}`);
      expect(s.statusCode, `${q}: ${s.body}`).toBe(200);
    }
  });
});
