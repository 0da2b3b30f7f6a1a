// PROTOCOL 9.10: GET /api/index/{key} answers every entry about a key with the proofs that it is
// all of them, as the offline verifier checks it: a key nothing mentions proven absent, entries
// shown on request, a key that is not one refused.
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entryHash } from '../../src/core/log-entry.js';
import { verifyLookup } from '../../verifier/lookup.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { agent } from '../helpers/flows.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode();
});
afterEach(async () => node.close());

const lookup = (key: string, query = '') => node.app.inject({ url: `/api/index/${encodeURIComponent(key)}${query}` });
const REVIEW = JSON.parse(readFileSync(new URL('../../data/attestations/review.attestation.v1.json', import.meta.url), 'utf8')).examples[0];
const SHA = REVIEW.subjectSha256 as string;

describe('GET /api/index/{key}', () => {
  it("answers an agent's every attestation, proven complete under the pinned log key", async () => {
    const a = await agent(node);
    const body = REVIEW;
    for (let i = 0; i < 3; i++) {
      const r = await node.app.inject({
        method: 'POST',
        url: '/api/attestations',
        payload: { kind: 'review.attestation.v1', body },
        headers: bearer(a.apiKey),
        remoteAddress: a.ip,
      });
      expect(r.statusCode, r.body).toBe(200);
    }
    const res = await lookup(`agent:${a.tag}`, '?entries=true');
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json();
    expect(answer).toMatchObject({ key: `agent:${a.tag}`, found: true });
    expect(answer.indices.length).toBeGreaterThanOrEqual(3);
    expect(answer.entries.map((e: { seq: number }) => e.seq)).toEqual(answer.indices);
    const report = verifyLookup(answer, node.keys.log.verifierKey);
    expect(report.checks.filter((c) => c.valid !== true)).toEqual([]);
    expect(report).toMatchObject({ verified: true, anchored: true, found: true, size: answer.map.size });
    const bySubject = (await lookup(`sha256:${SHA}`)).json();
    expect(bySubject.indices).toEqual(
      answer.entries.filter((e: { body: { subjectSha256?: string } }) => e.body.subjectSha256 === SHA).map((e: { seq: number }) => e.seq),
    );
  });

  it("carries each entry's inclusion proof on request, so an entry made to hash to itself is refused (index.entries)", async () => {
    const a = await agent(node);
    const r = await node.app.inject({
      method: 'POST',
      url: '/api/attestations',
      payload: { kind: 'review.attestation.v1', body: REVIEW },
      headers: bearer(a.apiKey),
      remoteAddress: a.ip,
    });
    expect(r.statusCode, r.body).toBe(200);
    const answer = (await lookup(`agent:${a.tag}`, '?entries=true&proofs=true')).json();
    expect(answer.inclusions.map((i: { index: number }) => i.index)).toEqual(answer.entries.map((e: { seq: number }) => e.seq));
    const report = verifyLookup(answer, node.keys.log.verifierKey);
    expect(report.checks.filter((c) => c.valid !== true)).toEqual([]);
    expect(report).toMatchObject({ verified: true, entriesIncluded: true });
    // A node shows another body at the index, its hash recomputed: only the inclusion proof tells it from the log's.
    const forged = structuredClone(answer);
    const e = forged.entries.at(-1);
    e.body = { ...e.body, summary: 'a review the log never recorded' };
    e.hash = entryHash(e);
    const failedIds = (x: unknown) =>
      verifyLookup(x, node.keys.log.verifierKey)
        .checks.filter((c) => c.valid === false)
        .map((c) => c.id);
    expect(failedIds(forged)).toEqual(['index.entries']);
    const { inclusions: _proofs, ...unproven } = forged;
    expect(failedIds(unproven)).toEqual([]);
    expect(verifyLookup(unproven, node.keys.log.verifierKey).entriesIncluded).toBe(false);
  });

  it('proves that nothing mentions a key no entry names', async () => {
    const answer = (await lookup(`proposal:brf_${'0'.repeat(16)}`)).json();
    expect(answer).toMatchObject({ found: false, indices: [] });
    const report = verifyLookup(answer, node.keys.log.verifierKey);
    expect(report).toMatchObject({ verified: true, anchored: true, found: false });
  });

  it('refuses a key that is not one, with invalid_lookup_key', async () => {
    for (const key of ['kind:x', `sha256:${'AB'.repeat(32)}`, 'path:relative', 'agent:']) {
      const res = await lookup(key);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_lookup_key');
    }
  });
});
