// PROTOCOL 10: what publishing makes in the tree, node reads with every field, briefs and their
// signed manifests, artifacts, decision-graph traversal (search and suggest: search.test.ts).
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cryptoRandom, nodeKeysFrom, rotateHmacKey, type NodeKeyMaterial, type ProposalKind } from '../../src/core/index.js';
import { publishToTree } from '../../src/domain/knowledge/tree.js';
import type { ProposalRecord } from '../../src/domain/records.js';
import { strategiesFor } from '../../src/node/strategies.js';
import { createApp } from '../../src/http/app.js';
import { samplePayload } from '../fixtures/payloads.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { blobBackdoor } from '../helpers/stores.js';
import { agent, decide, judgeAs, proposeAs, SCORES_LOW, signedBody } from '../helpers/flows.js';

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

describe('publishing builds the tree', () => {
  it('makes a leaf-brief with every field, its ancestors list it, and its brief is readable by id', async () => {
    const payload = samplePayload('brief', 1) as { brief: { id: string; domain: string } };
    await decide(node, 'brief', { payload });
    const path = '/distributed-systems/retries-with-backoff-x1';
    const n = await json(`/api/knowledge/node${path}`);
    expect(n).toMatchObject({
      path,
      kind: 'leaf-brief',
      title: 'Retry with exponential backoff and jitter',
      spec: expect.stringContaining('Retry transient'),
      briefId: payload.brief.id,
      version: 1,
    });
    expect(n.tldr).toContain('Retry transient');
    expect(n.core).toBe('Back off exponentially.\nAdd full jitter.\nCap the number of attempts.');
    // The texts served are those of the level served (and signed): deep only at the deep level.
    expect(n).not.toHaveProperty('deep');
    expect((await json(`/api/knowledge/node${path}?level=deep`)).deep).toContain('jitter: random spread added to a delay');
    expect(await json(`/api/knowledge/node${path}?level=tldr`)).not.toHaveProperty('core');
    expect(n.manifest).toMatchObject({
      briefId: payload.brief.id,
      level: 'core',
      version: '2026-11',
      tokenCount: expect.any(Number),
      signingKeyId: 'hk_test',
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect((await json('/api/knowledge/node/')).children).toEqual(['/distributed-systems']);
    expect(await json('/api/knowledge/node/distributed-systems')).toMatchObject({ kind: 'branch', children: [path] });
    const brief = await json(`/api/knowledge/briefs/${payload.brief.id}?level=tldr`);
    expect(brief.brief.levels).toEqual({ tldr: expect.any(String) });
    expect(brief.manifest.level).toBe('tldr');
    expect((await json(`/api/knowledge/briefs/${payload.brief.id}?level=deep`)).brief.levels.deep.sources).toHaveLength(1);
  });

  it('makes a leaf-capability, a leaf-decision and a leaf-artifact with their payloads, reachable by their by-path routes', async () => {
    for (const kind of ['capability', 'graph', 'artifact'] as const) await decide(node, kind);
    const cap = await json('/api/knowledge/cap/by-path?path=/tools/pdf-to-text-x1');
    expect(cap).toMatchObject({
      kind: 'leaf-capability',
      payload: {
        trigger: expect.any(String),
        alternative: expect.any(String),
        cost: expect.any(String),
        whenNot: expect.any(String),
        recipe: expect.any(Array),
      },
    });
    const dg = await json('/api/knowledge/dg/by-path?path=/decisions/pick-a-queue-x1');
    expect(dg).toMatchObject({
      kind: 'leaf-decision',
      payload: { question: 'Which queue fits?', inputsRequired: ['throughput', 'ordered'] },
      branches: [{ id: 'kafka' }, { id: 'sqs-fifo' }, { id: 'default' }],
    });
    // Every branch has id, condition, to and priors (null when the proposer declared none).
    expect(dg.branches.map((b: object) => Object.keys(b).sort())).toEqual(Array(3).fill(['condition', 'id', 'priors', 'to']));
    expect(dg.branches.map((b: { priors: unknown }) => b.priors)).toEqual([0.4, null, null]);
    const art = await json('/api/knowledge/artifact/by-path?path=/models/tiny-classifier-x1');
    expect(art).toMatchObject({
      kind: 'leaf-artifact',
      payload: {
        kind: 'leaf-artifact',
        uri: expect.any(String),
        mediaType: expect.any(String),
        sha256: 'a'.repeat(64),
        artifactKind: 'model',
        provenance: { trainedBy: expect.any(String) },
        bytes: 2_000_000,
      },
      manifest: {
        artifactPath: '/models/tiny-classifier-x1',
        sha256: 'a'.repeat(64),
        fetchedAt: expect.any(Number),
        signature: expect.stringMatching(/^[0-9a-f]{64}$/),
        signingKeyId: 'hk_test',
      },
      sha256Verification: { status: 'self-reported', method: expect.any(String), note: expect.stringContaining('Fetch'), casUploadHint: expect.any(String) },
      independentEvals: [],
      evalSummary: { count: 0, distinctRunners: 0, byMetric: {} },
      note: expect.any(String),
    });
    // The wrong kind on a by-path route is not found.
    expect((await get('/api/knowledge/cap/by-path?path=/models/tiny-classifier-x1')).statusCode).toBe(404);
  });

  it('says platform-verified for an artifact whose bytes are in the content store, and integrity-failed once they rot', async () => {
    const bytes = Buffer.from('tiny model weights');
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(
      (await node.app.inject({ method: 'POST', url: '/api/cas', payload: bytes, headers: { 'content-type': 'application/octet-stream' } })).statusCode,
    ).toBe(200);
    const p = samplePayload('artifact', 9) as { payload: Record<string, unknown> };
    await decide(node, 'artifact', { payload: { ...p, payload: { ...p.payload, uri: `/api/cas/${sha}`, sha256: sha, bytes: bytes.length } } });
    const url = '/api/knowledge/node/models/tiny-classifier-x9';
    expect((await json(url)).sha256Verification).toMatchObject({
      status: 'platform-verified',
      method: expect.any(String),
      note: expect.stringContaining(sha),
      casUploadHint: expect.any(String),
    });
    // A download puts the verified bytes in the node's cache; the re-hash must still read the disk.
    expect((await node.app.inject({ url: `/api/cas/${sha}` })).statusCode).toBe(200);
    // Bit rot in the stored blob: the next full re-hash (at most a minute later) says so.
    await blobBackdoor(node).corrupt(sha, 0);
    node.clock.advance(61_000);
    expect((await json(url)).sha256Verification).toMatchObject({ status: 'integrity-failed', note: expect.stringContaining('do not trust') });
  });

  it('says platform-verified again as soon as a damaged blob is repaired by an upload, not a minute later', async () => {
    const bytes = Buffer.from('weights that rot, then come back');
    const sha = createHash('sha256').update(bytes).digest('hex');
    const upload = () => node.app.inject({ method: 'POST', url: '/api/cas', payload: bytes, headers: { 'content-type': 'application/octet-stream' } });
    expect((await upload()).statusCode).toBe(200);
    const p = samplePayload('artifact', 8) as { payload: Record<string, unknown> };
    await decide(node, 'artifact', { payload: { ...p, payload: { ...p.payload, uri: `/api/cas/${sha}`, sha256: sha, bytes: bytes.length } } });
    const url = '/api/knowledge/node/models/tiny-classifier-x8';
    expect((await json(url)).sha256Verification.status).toBe('platform-verified');
    await blobBackdoor(node).corrupt(sha, 0);
    node.clock.advance(61_000);
    expect((await json(url)).sha256Verification.status).toBe('integrity-failed');
    // The upload of the right bytes repairs the stored copy, and the write drops the check's
    // result for that blob (the store's watch): the next read hashes it again. Past the node
    // answer's own second, well within the minute a result otherwise stands.
    expect((await upload()).json()).toMatchObject({ sha256: sha, deduplicated: false, note: expect.stringContaining('replaced') });
    node.clock.advance(1_001);
    expect((await json(url)).sha256Verification.status).toBe('platform-verified');
  });

  it('attaches published eval results to their artifact, with a fresh summary', async () => {
    await decide(node, 'artifact', { n: 5 });
    for (const [score, runner] of [
      [0.8, 'r1'],
      [0.9, 'r2'],
      [0.7, 'r1'],
    ] as const) {
      await decide(node, 'eval-result', { payload: { ...samplePayload('eval-result', 5), score, runner } });
    }
    const art = await json('/api/knowledge/artifact/by-path?path=/models/tiny-classifier-x5');
    expect(art.independentEvals).toHaveLength(3);
    expect(art.independentEvals[0]).toMatchObject({
      artifactSha256: 'a'.repeat(64),
      metric: 'accuracy',
      manifestUrl: expect.stringMatching(/^\/api\/knowledge\/eval\/proposals\/eprop_/),
    });
    expect(art.evalSummary).toEqual({ count: 3, distinctRunners: 2, byMetric: { accuracy: { count: 3, mean: 0.8, min: 0.7, max: 0.9 } } });
  });

  it('binds evals to the artifact bytes they were published against: a refresh with new bytes starts a fresh summary', async () => {
    await decide(node, 'artifact', { n: 6 });
    await decide(node, 'eval-result', { payload: samplePayload('eval-result', 6) });
    const v1 = samplePayload('artifact', 6) as { payload: Record<string, unknown> };
    await decide(node, 'artifact', { payload: { ...v1, payload: { ...v1.payload, sha256: 'd'.repeat(64) } } });
    const now = await json('/api/knowledge/node/models/tiny-classifier-x6');
    expect(now).toMatchObject({ version: 2, payload: { sha256: 'd'.repeat(64) }, independentEvals: [], evalSummary: { count: 0 } });
    expect(await json('/api/knowledge/node/models/tiny-classifier-x6?version=1')).toMatchObject({
      payload: { sha256: 'a'.repeat(64) },
      evalSummary: { count: 1 },
    });
  });

  it('keeps the evals of a rejected artifact off the artifact published later at its path', async () => {
    // The eval is proposed and published while its artifact is still pending; the artifact is then rejected.
    const a = await agent(node);
    const art = (await proposeAs(node, a, 'artifact', samplePayload('artifact', 7))).json().proposalId as string;
    await decide(node, 'eval-result', { payload: samplePayload('eval-result', 7) });
    const judges = [await agent(node, 0.9, 0), await agent(node, 0.8, 0), await agent(node, 0.7, 0)];
    for (const j of judges) expect((await judgeAs(node, j, 'artifact', art, signedBody(j, 'artifact', art, SCORES_LOW))).statusCode).toBe(200);
    const other = samplePayload('artifact', 7) as { payload: Record<string, unknown> };
    await decide(node, 'artifact', { payload: { ...other, payload: { ...other.payload, sha256: 'e'.repeat(64) } } });
    expect(await json('/api/knowledge/node/models/tiny-classifier-x7')).toMatchObject({
      payload: { sha256: 'e'.repeat(64) },
      independentEvals: [],
      evalSummary: { count: 0, distinctRunners: 0, byMetric: {} },
    });
  });

  it('adds branch children with tree-expansion, and sharpens a spec with refinedAt', async () => {
    await decide(node, 'tree-expansion', {
      payload: {
        parentPath: '/',
        children: [
          { slug: 'tools', title: 'Tools', spec: 'Callable tools.' },
          { slug: 'ml', title: 'Machine learning', spec: 'Models and evals.' },
        ],
      },
    });
    const root = await json('/api/knowledge/node/');
    expect(root.children).toEqual(['/ml', '/tools']);
    expect(await json('/api/knowledge/node/ml')).toMatchObject({ kind: 'branch', title: 'Machine learning', spec: 'Models and evals.' });
    await decide(node, 'capability', { n: 1 });
    await decide(node, 'spec-sharpening', { n: 1 });
    const cap = await json('/api/knowledge/node/tools/pdf-to-text-x1');
    expect(cap).toMatchObject({ spec: samplePayload('spec-sharpening', 1).spec, refinedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), version: 2 });
    expect((await json('/api/knowledge/node/tools/pdf-to-text-x1?version=1')).spec).toBe('Extract the text layer of a PDF in reading order.');
  });

  it('keeps the previous version readable when a graph is refreshed with replaceExisting', async () => {
    await decide(node, 'graph', { n: 2 });
    const refreshed = { ...samplePayload('graph', 2), title: 'Pick a queue (2027 edition)', replaceExisting: true };
    await decide(node, 'graph', { payload: refreshed });
    expect(await json('/api/knowledge/node/decisions/pick-a-queue-x2')).toMatchObject({ title: 'Pick a queue (2027 edition)', version: 2 });
    expect(await json('/api/knowledge/node/decisions/pick-a-queue-x2?version=1')).toMatchObject({ title: 'Pick a message queue', version: 1 });
    expect((await get('/api/knowledge/node/decisions/pick-a-queue-x2?version=7')).statusCode).toBe(404);
  });

  it.each(['brief', 'capability', 'graph', 'artifact', 'tree-expansion', 'spec-sharpening'] as ProposalKind[])(
    'puts nothing in the tree for a rejected or withdrawn %s',
    async (kind) => {
      await decide(node, kind, { n: 8, outcome: 'rejected' });
      const a = await agent(node);
      const r = await proposeAs(node, a, kind, samplePayload(kind, 9));
      expect(r.statusCode).toBe(200);
      await node.app.inject({
        method: 'POST',
        url: `/api/knowledge/proposals/${r.json().proposalId}/withdraw`,
        headers: bearer(a.apiKey),
        remoteAddress: a.ip,
      });
      expect((await json('/api/knowledge/node/')).children).toEqual([]);
      expect((await json('/api/knowledge/search?q=tools')).items).toEqual([]);
    },
  );

  it('answers ETags and 304, and 404 for paths with nothing published', async () => {
    await decide(node, 'capability');
    const r = await get('/api/knowledge/node/tools/pdf-to-text-x1');
    expect((await get('/api/knowledge/node/tools/pdf-to-text-x1', { 'if-none-match': r.headers.etag as string })).statusCode).toBe(304);
    for (const url of ['/api/knowledge/node/nowhere', '/api/knowledge/node/Not_A_Path', '/api/knowledge/briefs/kb:none', '/api/knowledge/node/%25E0']) {
      const r404 = await get(url);
      expect(r404.statusCode, url).toBe(404);
      expect(r404.json()).toMatchObject({ code: 'not_found', error: expect.any(String) });
    }
    // A malformed percent-escape is the caller's error, in the usual envelope.
    const bad = await get('/api/knowledge/node/%E0%A4%A');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'url' }] });
  });

  it('answers every read after a write with what the write changed (no stale kept answer)', async () => {
    await decide(node, 'artifact', { n: 3 });
    await decide(node, 'capability', { n: 3 });
    const art = '/api/knowledge/node/models/tiny-classifier-x3';
    const cap = '/api/knowledge/node/tools/pdf-to-text-x3';
    expect((await json(art)).evalSummary.count).toBe(0);
    expect((await json('/api/knowledge/node/tools')).children).toEqual(['/tools/pdf-to-text-x3']);
    const capBefore = await json(cap);
    const etag = (await get(cap)).headers.etag as string;
    await decide(node, 'eval-result', { payload: samplePayload('eval-result', 3) });
    expect((await json(art)).evalSummary.count).toBe(1);
    await decide(node, 'capability', { n: 4 });
    expect((await json('/api/knowledge/node/tools')).children).toEqual(['/tools/pdf-to-text-x3', '/tools/pdf-to-text-x4']);
    await decide(node, 'spec-sharpening', { n: 3 });
    const capAfter = await json(cap);
    expect(capAfter).toMatchObject({ version: 2, refinedAt: expect.any(String) });
    expect(capAfter.spec).not.toBe(capBefore.spec);
    expect((await get(cap, { 'if-none-match': etag })).statusCode).toBe(200);
  });

  it('pages the children of a branch', async () => {
    await decide(node, 'tree-expansion', {
      payload: { parentPath: '/many', children: Array.from({ length: 12 }, (_, i) => ({ slug: `c${String(i).padStart(2, '0')}`, title: `C${i}`, spec: 'x' })) },
    });
    const first = await json('/api/knowledge/node/many?limit=5');
    expect(first.children).toHaveLength(5);
    const second = await json(`/api/knowledge/node/many?limit=5&cursor=${first.childrenNextCursor}`);
    expect(second.children[0]).toBe('/many/c05');
  });
});

describe('manifests', () => {
  it('verifies a genuine brief manifest, and refuses any changed byte or an unknown key', async () => {
    await decide(node, 'brief');
    const { manifest } = await json('/api/knowledge/briefs/kb:retries-x1?level=deep');
    const verify = async (m: unknown) => (await node.app.inject({ method: 'POST', url: '/api/knowledge/verify', payload: { manifest: m } })).json();
    expect(await verify(manifest)).toMatchObject({ valid: true });
    const text = JSON.stringify(manifest);
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      if (!/[0-9a-z]/.test(ch)) continue;
      const changed = text.slice(0, i) + (ch === '1' ? '2' : ch === 'a' ? 'b' : /[0-9]/.test(ch) ? '1' : 'a') + text.slice(i + 1);
      let m: unknown;
      try {
        m = JSON.parse(changed);
      } catch {
        continue;
      }
      const r = await verify(m);
      expect(r.valid, `byte ${i}: ${changed.slice(Math.max(0, i - 15), i + 5)}`).toBe(false);
      expect(r.reason).toEqual(expect.any(String));
    }
    expect((await verify({ ...manifest, signingKeyId: 'hk_nope' })).reason).toMatch(/unknown signingKeyId/);
    // A field added to a genuine manifest is a changed manifest too.
    expect(await verify({ ...manifest, note: 'vouched for' })).toMatchObject({ valid: false, reason: expect.stringContaining('"note"') });
  }, 60_000);

  it('verifies an artifact manifest, and refuses a changed field', async () => {
    await decide(node, 'artifact');
    const { manifest } = await json('/api/knowledge/artifact/by-path?path=/models/tiny-classifier-x1');
    const verify = async (m: unknown) => (await node.app.inject({ method: 'POST', url: '/api/knowledge/artifact/verify', payload: { manifest: m } })).json();
    expect(await verify(manifest)).toMatchObject({ valid: true });
    expect(await verify({ ...manifest, sha256: 'b'.repeat(64) })).toMatchObject({ valid: false });
    expect(await verify({ ...manifest, bytes: manifest.bytes + 1 })).toMatchObject({ valid: false });
    expect(await verify({ ...manifest, extra: 1 })).toMatchObject({ valid: false });
    const { fetchedAt, ...missing } = manifest;
    expect(fetchedAt).toEqual(expect.any(Number));
    expect(await verify(missing)).toMatchObject({ valid: false });
  });

  it('keeps a manifest valid after a restart and after an HMAC key rotation', async () => {
    await decide(node, 'brief');
    const { manifest } = await json('/api/knowledge/briefs/kb:retries-x1');
    // The same store and keys, then the keys with a new current HMAC key (the prior one kept).
    const material = { hmac: node.keys.hmac.map((h) => ({ ...h, key: h.key.toString('hex') })) } as unknown as NodeKeyMaterial;
    const rotated = {
      ...node.keys,
      hmac: nodeKeysFrom({
        ...rotateHmacKey(material, cryptoRandom, 1),
        issuers: [{ privateKey: node.keys.issuer.privateKey, validFrom: 0, validUntil: null }],
        rotations: [],
        log: { privateKey: node.keys.log.privateKey, createdAt: 0 },
        version: 2,
      }).hmac,
    };
    await node.app.close();
    for (const keys of [node.keys, rotated]) {
      const app = await createApp({ store: node.store, strategies: strategiesFor(node.store), clock: node.clock, keys });
      await app.ready();
      const r = (await app.inject({ method: 'POST', url: '/api/knowledge/verify', payload: { manifest } })).json();
      expect(r, keys === rotated ? 'after rotation' : 'after restart').toMatchObject({ valid: true });
      if (keys === rotated) expect((await app.inject({ url: '/api/knowledge/briefs/kb:retries-x1' })).json().manifest.signingKeyId).not.toBe('hk_test');
      await app.close();
    }
    node.app = await createApp({ store: node.store, strategies: strategiesFor(node.store), clock: node.clock, keys: node.keys });
  });
});

/** Puts a decision node straight into the tree, as publishing would (a shortcut for big graphs). */
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

describe('decision-graph traversal', () => {
  const traverse = (path: string, inputs: Record<string, unknown>) =>
    node.app.inject({ method: 'POST', url: '/api/knowledge/dg/traverse', payload: { path, inputs } });

  it('forks when two branches hold, follows a branch into another graph, and names every leaf', async () => {
    await putGraph('/dg/start', [
      { id: 'big', condition: { '>': [{ var: 'x' }, 10] }, to: '/dg/next' },
      { id: 'also', condition: { '>': [{ var: 'x' }, 5] }, to: '/tools/b' },
      { id: 'never', condition: false, to: '/tools/c' },
    ]);
    await putGraph('/dg/next', [{ id: 'end', condition: true, to: '/tools/a' }]);
    const r = await traverse('/dg/start', { x: 20 });
    expect(r.statusCode, r.body).toBe(200);
    const t = r.json();
    expect(t).toMatchObject({ complete: true, forks: 1, traversalId: expect.stringMatching(/^trv_[0-9a-f]{16}$/) });
    expect(t.leaves.map((l: { to: string; via: unknown[] }) => [l.to, l.via])).toEqual([
      [
        '/tools/a',
        [
          { path: '/dg/start', branch: 'big' },
          { path: '/dg/next', branch: 'end' },
        ],
      ],
      ['/tools/b', [{ path: '/dg/start', branch: 'also' }]],
    ]);
    expect((await json(`/api/knowledge/dg/traversals/${t.traversalId}`)).leaves).toEqual(t.leaves);
    expect((await traverse('/dg/start', { x: 1 })).json()).toMatchObject({ leaves: [], deadEnds: ['/dg/start'] });
  });

  it('refuses a cycle with a clear 400, never a hang', async () => {
    await putGraph('/dg/a', [{ id: 'to-b', condition: true, to: '/dg/b' }]);
    await putGraph('/dg/b', [{ id: 'back', condition: true, to: '/dg/a' }]);
    const r = await traverse('/dg/a', { x: 1 });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ code: 'graph_cycle', cycle: ['/dg/a', '/dg/b', '/dg/a'] });
  });

  it('stops a graph 1,000 levels deep at the depth limit, saying so', async () => {
    for (let i = 0; i < 1000; i++) await putGraph(`/deep/n${i}`, [{ id: 'down', condition: true, to: i < 999 ? `/deep/n${i + 1}` : '/tools/bottom' }]);
    const t = (await traverse('/deep/n0', { x: 1 })).json();
    expect(t).toMatchObject({ complete: false, stopped: { reason: 'depth-limit', limit: 64, depth: 65 } });
    expect(t.steps).toHaveLength(65);
  }, 60_000);

  it('asks for the inputs the graph needs, and answers 404 for a path with no graph', async () => {
    await putGraph('/dg/needs', [{ id: 'a', condition: { var: 'y' }, to: '/x' }], ['y', 'z']);
    const r = await traverse('/dg/needs', { y: 1 });
    expect(r.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'inputs.z' }] });
    expect((await traverse('/dg/none', {})).statusCode).toBe(404);
    expect((await get('/api/knowledge/dg/traversals/trv_0000000000000000')).statusCode).toBe(404);
  });
});
