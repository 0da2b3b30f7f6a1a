// PROTOCOL 8: judgment credentials served at their credentialUrl, the node's key list, and
// the offline bundle of a proposal, checked with the offline verifier.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Credentials } from '../../src/domain/credentials/credentials.js';
import { Proposals } from '../../src/domain/records.js';
import { verifyBundle, verifyCredential } from '../../verifier/index.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { decide } from '../helpers/flows.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode();
});
afterEach(async () => node.close());

describe('GET /api/credentials/judgment/{kind}/{proposalId}/{judgmentId}', () => {
  it('serves the credential issued with each judgment, immutable, with an ETag and 304', async () => {
    const { proposalId, answers, judges } = await decide(node, 'graph');
    for (const [i, a] of answers.entries()) {
      const r = await node.app.inject({ url: a.credentialUrl });
      expect(r.statusCode).toBe(200);
      expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      const vc = r.json();
      expect(vc).toMatchObject({
        '@context': ['https://www.w3.org/ns/credentials/v2'],
        type: ['VerifiableCredential', 'JudgmentCredential'],
        issuer: node.keys.issuer.did,
        validFrom: new Date(node.clock.now()).toISOString(),
        credentialSubject: {
          id: `urn:akas:judgment:${a.judgmentId}`,
          proposalId,
          kind: 'graph',
          judge: { tag: judges[i].tag, publicKey: judges[i].signing.publicKey },
        },
        proof: { type: 'DataIntegrityProof', cryptosuite: 'eddsa-jcs-2022', proofPurpose: 'assertionMethod' },
      });
      expect(verifyCredential(r.body, { issuer: node.keys.issuer.did, at: node.clock.now(), checkJudgeSignature: true }).verified).toBe(true);
      const again = await node.app.inject({ url: a.credentialUrl, headers: { 'if-none-match': r.headers.etag as string } });
      expect(again.statusCode).toBe(304);
    }
  });

  it('stores the credential in the same write as the judgment', async () => {
    const { proposalId } = await decide(node, 'capability');
    const p = (await node.store.get(Proposals, proposalId))!;
    for (const j of p.judgments) expect(await node.store.get(Credentials, j.judgmentId)).toBeDefined();
  });

  it('answers 404 not_found for ids it does not hold, or of another proposal, and 400 invalid_kind for a kind that is none', async () => {
    const { proposalId, answers } = await decide(node, 'capability');
    const { judgmentId } = answers[0];
    for (const url of [
      `/api/credentials/judgment/capability/${proposalId}/jdg_0000000000000000`,
      `/api/credentials/judgment/capability/cprop_0000000000000000/${judgmentId}`,
      `/api/credentials/judgment/graph/${proposalId}/${judgmentId}`,
      `/api/credentials/judgment/capability/${proposalId}/not-an-id`,
    ]) {
      const r = await node.app.inject({ url });
      expect([r.statusCode, r.json().code], url).toEqual([404, 'not_found']);
    }
    expect((await node.app.inject({ url: `/api/credentials/judgment/nope/${proposalId}/${judgmentId}` })).json()).toMatchObject({ code: 'invalid_kind' });
  });
});

describe('GET /api/node/keys', () => {
  it('lists the issuer keys with their windows, the HMAC key ids and the log key, and no secret', async () => {
    const r = await node.app.inject({ url: '/api/node/keys' });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.issuer).toMatchObject({ current: node.keys.issuer.did, keys: [{ did: node.keys.issuer.did, validUntil: null }], rotations: [] });
    expect(body.hmac).toEqual([{ signingKeyId: 'hk_test', createdAt: expect.any(Number), current: true }]);
    expect(body.log.publicKey).toBe(node.keys.log.publicKey);
    expect(r.body).not.toContain(node.keys.issuer.privateKey);
    expect(r.body).not.toContain(node.keys.log.privateKey);
    expect(r.body).not.toContain(node.keys.hmac[0].key.toString('hex'));
  });
});

describe('GET /api/knowledge/proposals/{id}/bundle', () => {
  it('holds everything the offline verifier needs, and it verifies', async () => {
    const { proposalId } = await decide(node, 'artifact');
    const r = await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}/bundle` });
    expect(r.statusCode).toBe(200);
    const b = r.json();
    expect(b).toMatchObject({
      format: 'akas.bundle.v2',
      node: { issuer: node.keys.issuer.did },
      proposal: { proposalId, judgmentCount: 3 },
      issuerKeys: { current: node.keys.issuer.did },
    });
    expect(b.judges).toHaveLength(3);
    expect(b.credentials).toHaveLength(3);
    expect(b.cas).toEqual([expect.objectContaining({ role: 'artifact', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })]);
    const report = await verifyBundle(r.body, { issuer: node.keys.issuer.did, at: node.clock.now() });
    expect(report.checks.filter((c) => c.valid === false)).toEqual([]);
    expect(report.verified).toBe(true);
    // What needs the node, or bytes not given, is said and not counted.
    expect(report.checks.filter((c) => c.valid === null).map((c) => c.id)).toEqual(expect.arrayContaining(['judgment.nodeMac', 'cas.hash']));
  });

  it('answers 404 for an unknown proposal', async () => {
    expect((await node.app.inject({ url: '/api/knowledge/proposals/cprop_0000000000000000/bundle' })).statusCode).toBe(404);
  });
});
