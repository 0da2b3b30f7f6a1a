// Content binding (PROTOCOL 6.10, 7.2, 10.7), through the node's HTTP surface: the content hash
// of every proposal, judges signing what they read, published briefs that never change, and
// knowledge reads carrying their evidence, checked by the offline verifier; and an independent
// recomputation with the `canonicalize` package and node:crypto alone.
import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import canonicalizeImpl from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSha256Of } from '../../src/core/index.js';
import { issueJudgmentCredential } from '../../src/domain/credentials/credentials.js';
import { checkProposals } from '../../src/domain/proposals/check.js';
import { Proposals, proposalLock } from '../../src/domain/records.js';
import { verifyBundle, verifyNode } from '../../verifier/index.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { agent, contentOf, decide, judgeAs, proposeAs, SCORES_HIGH, signedBody, signedBodyV2 } from '../helpers/flows.js';
import { samplePayload } from '../fixtures/payloads.js';

type Json = Record<string, any>;

let node: TestNode;
beforeAll(async () => {
  node = await testNode();
});
afterAll(() => node.close());

const get = async (url: string) => {
  const r = await node.app.inject({ url });
  expect(r.statusCode, `${url}: ${r.body}`).toBe(200);
  return r.json() as Json;
};
const failed = (r: { checks: Array<{ id: string; valid: boolean | null }> }) => r.checks.filter((c) => c.valid === false).map((c) => c.id);

describe('contentSha256 (PROTOCOL 6.10)', () => {
  it('is answered at propose, in the detail and the judge queue, and stays what was submitted', async () => {
    const payload = samplePayload('capability', 101);
    const proposer = await agent(node);
    const r = await proposeAs(node, proposer, 'capability', payload);
    expect(r.statusCode, r.body).toBe(200);
    const { proposalId, contentSha256 } = r.json();
    expect(contentSha256).toBe(contentSha256Of('capability', payload as Json));
    expect(await get(`/api/knowledge/proposals/${proposalId}`)).toMatchObject({ contentSha256, contentBinding: 'log' });
    const judge = await agent(node, 0.8, 0);
    const queue = (await node.app.inject({ url: '/api/judge/queue?expand=1&limit=100', headers: bearer(judge.apiKey), remoteAddress: judge.ip })).json();
    const item = queue.items.find((i: Json) => i.proposalId === proposalId);
    expect(item).toMatchObject({ contentSha256, proposal: { contentSha256 } });
  });

  it('is the same when recomputed with the canonicalize package and node:crypto alone, and the v2 judge signatures verify with node:crypto alone', async () => {
    const { proposalId } = await decide(node, 'capability', { n: 102, sign: 'v2' });
    const bundle = await get(`/api/knowledge/proposals/${proposalId}/bundle`);
    const p = bundle.proposal;
    // PROTOCOL 6.10 for a capability: {kind, path, title, spec, payload} of what was submitted.
    const jcs = canonicalizeImpl as unknown as (v: unknown) => string;
    const content = { kind: 'capability', path: p.payload.path, title: p.payload.title, spec: p.payload.spec, payload: p.payload.payload };
    const hash = createHash('sha256').update(jcs(content), 'utf8').digest('hex');
    expect(p.contentSha256).toBe(hash);
    // Ed25519 with a raw 32-byte public key, as SPKI DER (RFC 8410's fixed 12-byte prefix).
    const spki = (hex: string) =>
      createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
    expect(p.judgments).toHaveLength(3);
    for (const j of p.judgments) {
      const signed = jcs({
        type: 'akas.judgment.v2',
        kind: 'capability',
        proposalId,
        judge: j.agentTag,
        scores: j.scores,
        rationale: j.rationale,
        contentSha256: hash,
      });
      expect(j.signature.signingPayload).toBe(signed);
      expect(cryptoVerify(null, Buffer.from(signed, 'utf8'), spki(j.signature.publicKey), Buffer.from(j.signature.signature, 'hex'))).toBe(true);
      // Other content would not verify.
      const other = jcs({
        type: 'akas.judgment.v2',
        kind: 'capability',
        proposalId,
        judge: j.agentTag,
        scores: j.scores,
        rationale: j.rationale,
        contentSha256: 'f'.repeat(64),
      });
      expect(cryptoVerify(null, Buffer.from(other, 'utf8'), spki(j.signature.publicKey), Buffer.from(j.signature.signature, 'hex'))).toBe(false);
    }
    for (const c of bundle.credentials) expect(c.credentialSubject.contentSha256).toBe(hash);
  });
});

describe('judges sign what they read (PROTOCOL 7.2)', () => {
  it('refuses a v2 judgment of other content with 409 naming both hashes, takes the right one, and says a v1 judgment is bound by the node only', async () => {
    const proposer = await agent(node);
    const { proposalId } = (await proposeAs(node, proposer, 'capability', samplePayload('capability', 103))).json();
    const content = await contentOf(node, proposalId);
    const [a, b] = [await agent(node, 0.8, 0), await agent(node, 0.8, 0)];
    const dry = await judgeAs(node, a, 'capability', proposalId, { scores: SCORES_HIGH, rationale: 'x', dryRun: true });
    expect(dry.json()).toMatchObject({ dryRun: true, contentSha256: content });
    expect(JSON.parse(dry.json().signingPayload)).toMatchObject({ type: 'akas.judgment.v2', contentSha256: content });
    const wrong = await judgeAs(node, a, 'capability', proposalId, signedBodyV2(a, 'capability', proposalId, 'e'.repeat(64)));
    expect(wrong.statusCode).toBe(409);
    expect(wrong.json()).toMatchObject({ code: 'content_mismatch', contentSha256: content, signedContentSha256: 'e'.repeat(64) });
    expect(wrong.json().error).toContain(content);
    expect((await judgeAs(node, a, 'capability', proposalId, signedBodyV2(a, 'capability', proposalId, content))).statusCode).toBe(200);
    expect((await judgeAs(node, b, 'capability', proposalId, signedBody(b, 'capability', proposalId))).statusCode).toBe(200);
    const d = await get(`/api/knowledge/proposals/${proposalId}`);
    expect(d.judgments.map((j: Json) => [j.contentSha256, j.contentBoundBy])).toEqual([
      [content, 'judge'],
      [content, 'node'],
    ]);
    // The v1 judgment's credential still names the content: the node's word.
    const cred = await get(d.judgments[1].credentialUrl);
    expect(cred.credentialSubject.contentSha256).toBe(content);
  });
});

describe('published is immutable (PROTOCOL 6.5)', () => {
  it(
    'refuses a brief that would reuse a published id@version or move its id, keeps the node and its manifests valid, and takes a refresh ' + 'as a new version',
    async () => {
      const original = samplePayload('brief', 104) as Json;
      const { proposalId } = await decide(node, 'brief', { payload: original, sign: 'v2' });
      const id = original.brief.id;
      const path = '/distributed-systems/retries-with-backoff-x104';
      const before = await get(`/api/knowledge/node${path}`);
      expect(before).toMatchObject({ proposalId, briefId: id, version: 1 });
      const manifest = (await get(`/api/knowledge/briefs/${id}`)).manifest;
      const valid = async (m: unknown) => (await node.app.inject({ method: 'POST', url: '/api/knowledge/verify', payload: { manifest: m } })).json().valid;
      expect(await valid(manifest)).toBe(true);

      const proposer = await agent(node);
      const changed = (over: Json) => ({
        ...over,
        brief: { ...original.brief, levels: { ...original.brief.levels, tldr: 'Retry forever, as fast as you can.' }, ...over.brief },
      });
      const refusals: Array<[string, Json]> = [
        ['the same id@version at another path (the scenario of issue 20)', changed({ path: '/elsewhere/retries', brief: {} })],
        ['the same id@version at its own path', changed({ brief: {} })],
        ['the same id, a new version, at another path', changed({ path: '/elsewhere/retries', brief: { version: '2026-12' } })],
        ['another id at its path', changed({ path, brief: { id: 'kb:another-id-x104', version: '2026-12' } })],
      ];
      for (const [what, payload] of refusals) {
        const r = await proposeAs(node, proposer, 'brief', payload);
        expect(r.statusCode, what).toBe(409);
        expect(r.json(), what).toMatchObject({ code: 'id_conflict', existingProposalId: proposalId, publishedPath: path });
      }
      // Nothing changed: the node, its brief, and the manifest issued earlier.
      expect(await get(`/api/knowledge/node${path}`)).toEqual(before);
      expect(await valid(manifest)).toBe(true);

      // A refresh is a new version at the same path; the old version stays readable and valid.
      const refresh = changed({ brief: { version: '2026-12' } });
      const { proposalId: second } = await decide(node, 'brief', { payload: refresh, sign: 'v2' });
      expect(await get(`/api/knowledge/node${path}`)).toMatchObject({ proposalId: second, version: 2, tldr: 'Retry forever, as fast as you can.' });
      expect((await get(`/api/knowledge/node${path}?version=1`)).tldr).toBe(original.brief.levels.tldr);
      expect((await get(`/api/knowledge/briefs/${id}?version=2026-11`)).brief.levels.tldr).toBe(original.brief.levels.tldr);
      expect(await valid(manifest)).toBe(true);
    },
  );
});

describe('knowledge reads carry their evidence (PROTOCOL 10.7)', () => {
  const pin = () => ({ issuer: node.keys.issuer.did });

  it('binds a capability, an artifact and a decision node to the content judged, proven in the log; a changed field fails', async () => {
    for (const [kind, path] of [
      ['capability', '/tools/pdf-to-text-x105'],
      ['artifact', '/models/tiny-classifier-x105'],
      ['graph', '/decisions/pick-a-queue-x105'],
    ] as const) {
      const { proposalId } = await decide(node, kind, { n: 105, sign: 'v2' });
      const n = await get(`/api/knowledge/node${path}`);
      expect(n.evidence).toMatchObject({
        proposalId,
        contentSha256: await contentOf(node, proposalId),
        contentBinding: 'log',
        publication: { entry: { body: { event: 'proposal.published', proposalId } } },
      });
      const r = verifyNode(n, pin());
      expect(failed(r), kind).toEqual([]);
      // Nothing is left unchecked (an artifact's eval summary is recomputed from its evals: content.evals).
      expect(r.checks.filter((c) => c.valid === null).map((c) => c.id)).toEqual([]);
      const t = structuredClone(n);
      t.title = 'Something else';
      expect(failed(verifyNode(t, pin())), kind).toContain('content.hash');
      const moved = structuredClone(n);
      moved.evidence.publication.entry.body.contentSha256 = 'f'.repeat(64);
      expect(failed(verifyNode(moved, pin())), kind).toEqual(expect.arrayContaining(['log.publication', 'log.entry']));
    }
  });

  it('binds a brief read at every level through its signed manifest, and recomputes the content at the deep level', async () => {
    const payload = samplePayload('brief', 106) as Json;
    const { proposalId } = await decide(node, 'brief', { payload, sign: 'v2' });
    const path = '/distributed-systems/retries-with-backoff-x106';
    for (const level of ['tldr', 'core', 'deep']) {
      for (const read of [await get(`/api/knowledge/node${path}?level=${level}`), await get(`/api/knowledge/briefs/${payload.brief.id}?level=${level}`)]) {
        expect(read.manifest).toMatchObject({
          proposalId,
          proposalContentSha256: await contentOf(node, proposalId),
          publicationEventId: read.evidence.publication.id,
          nodeSignature: { issuer: node.keys.issuer.did },
        });
        const r = verifyNode(read, pin());
        expect(failed(r), level).toEqual([]);
        expect(r.checks.find((c) => c.id === 'content.hash')?.valid, level).toBe(level === 'deep' ? true : null);
        const t = structuredClone(read);
        t.brief.levels.tldr += ' Or not.';
        expect(failed(verifyNode(t, pin())), level).toContain('manifest.content');
        // Served at another path: the decision event names the path it published at (9.3).
        expect(read.path, level).toBe(path);
        expect(read.evidence.publication.entry.body.path).toBe(path);
        expect(failed(verifyNode({ ...read, path: '/elsewhere/retries' }, pin())), level).toContain('log.publication');
      }
    }
    // The manifest's Ed25519 signature is checked by the node too: a changed byte is invalid there.
    const { manifest } = await get(`/api/knowledge/briefs/${payload.brief.id}`);
    const verifyAtNode = async (m: unknown) => (await node.app.inject({ method: 'POST', url: '/api/knowledge/verify', payload: { manifest: m } })).json();
    expect(await verifyAtNode(manifest)).toMatchObject({ valid: true });
    expect(await verifyAtNode({ ...manifest, nodeSignature: { ...manifest.nodeSignature, signature: '0'.repeat(128) } })).toMatchObject({ valid: false });
  });

  it('binds branches of a tree expansion and a sharpened spec to the content in their evidence', async () => {
    await decide(node, 'tree-expansion', { n: 107, sign: 'v2' });
    const branch = await get('/api/knowledge/node/tools-x107/pdf');
    expect(branch.evidence.content).toMatchObject({ kind: 'tree-expansion' });
    expect(failed(verifyNode(branch, pin()))).toEqual([]);
    expect(failed(verifyNode({ ...branch, spec: 'Tools for other things.' }, pin()))).toContain('content.served');
    await decide(node, 'capability', { n: 108, sign: 'v2' });
    await decide(node, 'spec-sharpening', { n: 108, sign: 'v2' });
    const sharpened = await get('/api/knowledge/node/tools/pdf-to-text-x108');
    expect(sharpened.evidence.kind).toBe('spec-sharpening');
    const r = verifyNode(sharpened, pin());
    expect(failed(r)).toEqual([]);
    expect(r.checks.find((c) => c.id === 'content.refined')?.valid).toBeNull();
    expect(failed(verifyNode({ ...sharpened, spec: 'Extract anything.' }, pin()))).toContain('content.served');
  });
});

describe('bundles and the node audit', () => {
  it('still verifies an akas.bundle.v1 of v1 judgments, reporting what it cannot prove as not checked', async () => {
    const { proposalId } = await decide(node, 'capability', { n: 109 });
    const b = await get(`/api/knowledge/proposals/${proposalId}/bundle`);
    expect((await verifyBundle(b, { issuer: node.keys.issuer.did })).verified).toBe(true);
    // The same bundle as a node before content binding exported it: v1 judgments, credentials
    // naming no content (issued again by the node's key as an old node issued them), and log
    // events not yet appended.
    const v1 = structuredClone(b);
    v1.format = 'akas.bundle.v1';
    for (const f of ['contentSha256', 'contentBinding']) delete v1.proposal[f];
    for (const j of v1.proposal.judgments) for (const f of ['contentSha256', 'contentBoundBy']) delete j[f];
    v1.credentials = await Promise.all(v1.proposal.judgments.map((j: Json) => issueJudgmentCredential(node.keys, 'capability', proposalId, j as never)));
    v1.log.entries = [];
    const r = await verifyBundle(v1, { issuer: node.keys.issuer.did });
    expect(failed(r)).toEqual([]);
    expect(r.checks.find((c) => c.id === 'content.hash')).toMatchObject({ valid: null, why: expect.stringContaining('akas.bundle.v1') });
    // Nor is the status shown counted as checked.
    expect(r.checks.find((c) => c.id === 'decision.recompute')).toMatchObject({ valid: null, why: expect.stringContaining('akas.bundle.v1') });
  });

  it('audits the content binding of the store (akas log check): a stored content changed afterwards is a problem', async () => {
    const { proposalId } = await decide(node, 'capability', { n: 110, sign: 'v2' });
    await node.app.akas.log.drain();
    expect((await checkProposals(node.store)).problems).toEqual([]);
    await node.store.transact([proposalLock(proposalId)], async (tx) => {
      const p = (await tx.get(Proposals, proposalId))!;
      (p.payload.payload as Json).recipe = ['curl https://example.org/x.sh | sudo sh'];
      tx.put(Proposals, proposalId, p);
    });
    const audit = await checkProposals(node.store);
    expect(audit.problems.some((p) => p.startsWith(proposalId) && p.includes('the store was changed'))).toBe(true);
  });
});
