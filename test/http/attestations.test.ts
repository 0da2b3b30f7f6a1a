// PROTOCOL 9.1 to 9.4: the catalog, the dry run, attesting (leaderboard receipts recomputed),
// and reading attestations back with their proofs.
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalize, entryLeaf, leafHash, openNote, parseCheckpoint, sha256Hex } from '../../src/core/index.js';
import { verifyInclusion } from '../../src/core/merkle.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { agent, type Agent } from '../helpers/flows.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode();
});
afterEach(async () => node.close());

const example = (kind: string) => JSON.parse(readFileSync(new URL(`../../data/attestations/${kind}.json`, import.meta.url), 'utf8')).examples[0];
const REVIEW = example('review.attestation.v1');

const attest = (a: Agent, kind: string, body: unknown) =>
  node.app.inject({ method: 'POST', url: '/api/attestations', payload: { kind, body }, headers: bearer(a.apiKey), remoteAddress: a.ip });
const dryRun = (kind: string, body: unknown) => node.app.inject({ method: 'POST', url: '/api/credentials/dry-run', payload: { kind, body } });

describe('the catalog', () => {
  it('serves the 22 kinds as JSON with their schema URLs, each schema, and a readable page', async () => {
    const index = (await node.app.inject({ url: '/credentials/index.json' })).json();
    expect(index.kinds).toHaveLength(22);
    expect(index.kinds[0]).toEqual({
      kind: 'review.attestation.v1',
      tier: 'review',
      schemaVersion: '1.0.0',
      schemaUrl: 'http://localhost/credentials/schemas/review.attestation.v1.json',
      description: expect.any(String),
    });
    const schema = await node.app.inject({ url: '/credentials/schemas/leaderboard.receipt.v1.json' });
    expect(schema.headers['content-type']).toMatch(/application\/schema\+json/);
    expect(schema.json().title).toBe('Leaderboard receipt');
    expect((await node.app.inject({ url: '/credentials/schemas/nope.json' })).statusCode).toBe(404);
    const page = await node.app.inject({ url: '/credentials' });
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('<code>serious-incident.v1</code>');
  });
});

describe('POST /api/credentials/dry-run', () => {
  it('answers valid for a correct review.attestation.v1', async () => {
    const r = await dryRun('review.attestation.v1', REVIEW);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({
      valid: true,
      kind: 'review.attestation.v1',
      schemaVersion: '1.0.0',
      schemaUrl: expect.stringContaining('/credentials/schemas/review.attestation.v1.json'),
    });
  });

  it('lists every error of a broken one, with the field descriptions and a hint', async () => {
    const { reviewedAt: _gone, ...broken } = REVIEW;
    const r = await dryRun('review.attestation.v1', { ...broken, verdict: 'ship-it', subjectSha256: 'nothex', extra: true });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.valid).toBe(false);
    const errors = body.errors as Array<{
      instancePath: string;
      schemaPath: string;
      keyword: string;
      params: Record<string, unknown>;
      message: string;
      fieldDescription?: string;
    }>;
    const byKeyword = (k: string) => errors.filter((e) => e.keyword === k);
    expect(byKeyword('required')).toEqual([
      expect.objectContaining({ params: { missingProperty: 'reviewedAt' }, fieldDescription: expect.stringContaining('epoch milliseconds') }),
    ]);
    expect(byKeyword('enum')[0]).toMatchObject({
      instancePath: '/verdict',
      schemaPath: '#/properties/verdict/enum',
      fieldDescription: expect.stringContaining('approve'),
    });
    expect(byKeyword('pattern')[0]).toMatchObject({ instancePath: '/subjectSha256' });
    expect(byKeyword('additionalProperties')[0].params).toEqual({ additionalProperty: 'extra' });
    expect(body.hint).toEqual(expect.any(String));
  });

  it('needs no key, draws a token as every route does, and refuses an unknown kind with 400 invalid_kind', async () => {
    for (let i = 0; i < 119; i++) expect((await dryRun('review.attestation.v1', REVIEW)).statusCode).toBe(200);
    const r = await dryRun('made.up.v1', {});
    expect([r.statusCode, r.json().code]).toEqual([400, 'invalid_kind']);
    // The bucket (120) is empty now: an anonymous dry run is no way around it (issue 22).
    expect((await dryRun('review.attestation.v1', REVIEW)).statusCode).toBe(429);
  });
});

describe('POST /api/attestations', () => {
  it("records a calibrated agent's attestation in the log, with a proof against a signed checkpoint", async () => {
    const a = await agent(node);
    const r = await attest(a, 'review.attestation.v1', REVIEW);
    expect(r.statusCode, r.body).toBe(200);
    const e = r.json();
    expect(e).toMatchObject({
      id: expect.stringMatching(/^att_[0-9a-f]{16}$/),
      kind: 'review.attestation.v1',
      tier: 'review',
      agent: a.tag,
      body: REVIEW,
      signingKeyId: 'hk_test',
    });
    const got = (await node.app.inject({ url: `/api/attestations/${e.id}` })).json();
    const cp = parseCheckpoint(openNote(got.checkpoint, [node.keys.log.verifierKey]).text!)!;
    const proof = got.inclusion.proof.map((p: string) => Buffer.from(p, 'base64'));
    expect(verifyInclusion(e.seq, cp.size, leafHash(entryLeaf(got.entry)), proof, cp.rootHash)).toBe(true);
    const listed = (await node.app.inject({ url: `/api/attestations?kind=review.attestation.v1&subject=${REVIEW.subjectSha256}` })).json();
    expect(listed.items.map((x: { id: string }) => x.id)).toEqual([e.id]);
    const head = (await node.app.inject({ url: '/api/attestations/head' })).json();
    expect(head).toMatchObject({ size: e.seq + 1, lastId: e.id, logKey: node.keys.log.verifierKey });
  });

  it("refuses the uncalibrated (402), bodies that do not fit (400, every error), and the node's own kind", async () => {
    const fresh = await agent(node, null);
    expect((await attest(fresh, 'review.attestation.v1', REVIEW)).json().code).toBe('calibration_required');
    const a = await agent(node);
    const bad = await attest(a, 'review.attestation.v1', { ...REVIEW, verdict: 'maybe', reviewedAt: -1 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'validation_failed' });
    expect(
      bad
        .json()
        .errors.map((e: { field: string }) => e.field)
        .sort(),
    ).toEqual(['reviewedAt', 'verdict']);
    expect((await attest(a, 'attestation.event.v1', example('attestation.event.v1'))).json().code).toBe('invalid_kind');
    expect((await node.app.inject({ method: 'POST', url: '/api/attestations', payload: { kind: 'review.attestation.v1', body: REVIEW } })).statusCode).toBe(
      401,
    );
  });

  it("takes each of the 22 kinds' examples, but the node's own", async () => {
    const a = await agent(node);
    const index = (await node.app.inject({ url: '/credentials/index.json' })).json();
    for (const { kind } of index.kinds as Array<{ kind: string }>) {
      if (kind === 'attestation.event.v1' || kind === 'leaderboard.receipt.v1') continue;
      const r = await attest(a, kind, example(kind));
      expect(r.statusCode, `${kind}: ${r.body}`).toBe(200);
    }
  });
});

describe('leaderboard.receipt.v1', () => {
  async function setup() {
    const a = await agent(node);
    const run = example('eval.run.attestation.v1');
    const exp = (await attest(a, 'experiment.receipt.v1', example('experiment.receipt.v1'))).json();
    const scores = [0.81, 0.9, 0.85];
    const runs = [];
    for (const [i, score] of scores.entries()) runs.push((await attest(a, 'eval.run.attestation.v1', { ...run, runId: `run-${i}`, score })).json());
    const receipt = {
      ...example('leaderboard.receipt.v1'),
      subjectSha256: run.subjectSha256,
      datasetSha256: run.datasetSha256,
      harnessVersionSha: run.harnessVersionSha,
      metric: run.metric,
      evalRunAttestationIds: runs.map((r) => r.id),
      experimentReceiptId: exp.id,
      medianScore: 0.85,
      scoreSamplesSha256: sha256Hex(canonicalize([0.81, 0.85, 0.9])),
    };
    return { a, receipt, runs };
  }

  it('is taken when its median and sample hash are what the referenced runs give', async () => {
    const { a, receipt } = await setup();
    const r = await attest(a, 'leaderboard.receipt.v1', receipt);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().tier).toBe('leaderboard');
  });

  it('is refused, naming each disagreement, when they are not', async () => {
    const { a, receipt, runs } = await setup();
    const wrong = await attest(a, 'leaderboard.receipt.v1', { ...receipt, medianScore: 0.9, scoreSamplesSha256: 'f'.repeat(64) });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().errors.map((e: { field: string }) => e.field)).toEqual(['medianScore', 'scoreSamplesSha256']);
    const foreign = await attest(a, 'leaderboard.receipt.v1', { ...receipt, evalRunAttestationIds: [...runs.map((x) => x.id), receipt.experimentReceiptId] });
    expect(foreign.json().errors[0]).toMatchObject({ field: 'evalRunAttestationIds[3]', reason: expect.stringContaining('not an eval.run.attestation.v1') });
    const missing = await attest(a, 'leaderboard.receipt.v1', { ...receipt, evalRunAttestationIds: ['att_00000000000fffff'] });
    expect(missing.json().errors[0].reason).toMatch(/not in this node's log/);
  });
});
