import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalize, DAY_MS, PROPOSAL_KINDS, sign, type ProposalKind } from '../../src/core/index.js';
import { checkLedger } from '../../src/domain/ledger.js';
import { checkProposals } from '../../src/domain/proposals/check.js';
import { KIND_ROUTES } from '../../src/domain/proposals/kinds.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { agent, judgeAs, proposeAs, SCORES_HIGH, SCORES_LOW, signedBody, type Agent } from '../helpers/flows.js';
import { samplePayload } from '../fixtures/payloads.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode();
});
afterEach(async () => {
  const ledger = await checkLedger(node.store);
  expect(ledger.problems).toEqual([]);
  expect((await checkProposals(node.store)).problems).toEqual([]);
  await node.close();
});

const me = async (a: Agent) => (await node.app.inject({ url: '/api/agent/v1/me', headers: bearer(a.apiKey), remoteAddress: a.ip })).json();

async function setupFor(kind: ProposalKind, n: number) {
  // An eval result references an artifact; propose one first (from another agent).
  if (kind === 'eval-result') {
    const other = await agent(node, 0.8);
    expect((await proposeAs(node, other, 'artifact', samplePayload('artifact', n))).statusCode).toBe(200);
  }
  return samplePayload(kind, n);
}

describe.each(PROPOSAL_KINDS)('a %s proposal', (kind) => {
  it('goes to published with high scores: deposit refunded, judges paid, ledger balanced', async () => {
    const proposer = await agent(node, 0.8, 20); // strong: deposit 2, cap 80
    const judges = [await agent(node, 0.9, 0), await agent(node, 0.7, 0), await agent(node, 0.6, 0)];
    const res = await proposeAs(node, proposer, kind, await setupFor(kind, 1));
    expect(res.statusCode, res.body).toBe(200);
    const accepted = res.json();
    expect(accepted).toMatchObject({
      status: 'pending',
      requiredJudgments: 3,
      judgmentCount: 0,
      economy: {
        tier: 'strong',
        deposit: 2,
        balanceRemaining: 18,
        billable: true,
        expectedRefundOnPublish: 2,
        perIpProposeQuota: { capPerKind: 80, used: 1, remaining: 79 },
      },
      instructions: { judgeAs: `${KIND_ROUTES[kind].judge}/${accepted.proposalId}` },
    });
    expect(accepted.claimSecret).toMatch(/^cs_[0-9a-f]{64}$/);
    expect(await me(proposer)).toMatchObject({
      balance: 18,
      reservedBalance: 2,
      proposeQuota: { capPerKind: 80, byKind: { [kind]: { cap: 80, usedByKey: 1, remaining: 79 } }, tierCapTable: { strong: 80, uncalibrated: 0 } },
    });

    for (let i = 0; i < 3; i++) {
      const r = await judgeAs(node, judges[i], kind, accepted.proposalId, signedBody(judges[i], kind, accepted.proposalId));
      expect(r.statusCode, r.body).toBe(200);
      const body = r.json();
      expect(body).toMatchObject({
        kind,
        proposalId: accepted.proposalId,
        judgmentRecorded: true,
        statusChanged: i === 2,
        newStatus: i === 2 ? 'published' : 'pending',
      });
      expect(body.credentialUrl).toBe(`/api/credentials/judgment/${kind}/${accepted.proposalId}/${body.judgmentId}`);
      expect(body.economy).toMatchObject({ creditsAwarded: 1, balance: 1 });
      if (i === 2) expect(body.economy.depositSettlement).toBe('refunded');
      else expect(body.economy).not.toHaveProperty('depositSettlement');
    }
    expect(await me(proposer)).toMatchObject({ balance: 20, reservedBalance: 0 });
    const detail = (await node.app.inject({ url: `/api/knowledge/proposals/${accepted.proposalId}` })).json();
    expect(detail).toMatchObject({ status: 'published', judgmentCount: 3, requiredJudgments: 3 });
    expect(detail.judgments).toHaveLength(3);
    expect(detail.judgments[0]).toMatchObject({
      agentTag: judges[0].tag,
      scores: SCORES_HIGH,
      composite: 0.8,
      rationale: expect.any(String),
      receivedAt: expect.any(Number),
      alignment: 1,
    });
    if (kind === 'graph')
      expect(detail).toMatchObject({ path: expect.any(String), title: expect.any(String), payload: { question: expect.any(String) }, replaceExisting: false });
  });

  it('goes to rejected with low scores: the deposit is slashed', async () => {
    const proposer = await agent(node, 0.55, 20); // mid: deposit 5
    const judges = [await agent(node, 0.9, 0), await agent(node, 0.9, 0), await agent(node, 0.9, 0)];
    const accepted = (await proposeAs(node, proposer, kind, await setupFor(kind, 2))).json();
    expect(accepted.economy.deposit).toBe(5);
    let last;
    for (const j of judges) last = (await judgeAs(node, j, kind, accepted.proposalId, signedBody(j, kind, accepted.proposalId, SCORES_LOW, 'Wrong.'))).json();
    expect(last).toMatchObject({ statusChanged: true, newStatus: 'rejected', economy: { depositSettlement: 'slashed' } });
    expect(await me(proposer)).toMatchObject({ balance: 15, reservedBalance: 0 });
  });
});

describe('judging', () => {
  it('takes an empty rationale, signed like any other (PROTOCOL 7.1 sets only a maximum of 400)', async () => {
    const proposer = await agent(node, 0.8, 20);
    const judge = await agent(node, 0.8, 0);
    const { proposalId } = (await proposeAs(node, proposer, 'brief', samplePayload('brief', 4))).json();
    const r = await judgeAs(node, judge, 'brief', proposalId, signedBody(judge, 'brief', proposalId, SCORES_HIGH, ''));
    expect(r.statusCode, r.body).toBe(200);
    expect((await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}` })).json().judgments[0].rationale).toBe('');
  });

  it('records exactly requiredJudgments of 50 concurrent judges and settles once', async () => {
    const proposer = await agent(node, 0.8, 20);
    const judges: Agent[] = [];
    for (let i = 0; i < 50; i++) judges.push(await agent(node, 0.8, 0));
    const { proposalId } = (await proposeAs(node, proposer, 'brief', samplePayload('brief', 3))).json();
    const answers = await Promise.all(judges.map((j) => judgeAs(node, j, 'brief', proposalId, signedBody(j, 'brief', proposalId))));
    const ok = answers.filter((r) => r.statusCode === 200);
    expect(ok).toHaveLength(3);
    expect(ok.filter((r) => r.json().statusChanged)).toHaveLength(1);
    const refused = answers.filter((r) => r.statusCode !== 200);
    expect(refused).toHaveLength(47);
    for (const r of refused) expect(r.json().code).toBe('already_decided');
    expect((await me(proposer)).reservedBalance).toBe(0);
    expect((await me(proposer)).balance).toBe(20);
    const detail = (await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}` })).json();
    expect(new Set(detail.judgments.map((j: { agentTag: string }) => j.agentTag)).size).toBe(3);
  });

  it('stores a signature that verifies with node:crypto alone, and fails on a tampered score', async () => {
    const proposer = await agent(node, 0.8);
    const judge = await agent(node, 0.8, 0);
    const { proposalId } = (await proposeAs(node, proposer, 'capability', samplePayload('capability', 4))).json();
    expect((await judgeAs(node, judge, 'capability', proposalId, signedBody(judge, 'capability', proposalId))).statusCode).toBe(200);
    const detail = (await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}` })).json();
    const j = detail.judgments[0];
    const profile = (await node.app.inject({ url: `/api/agents/${judge.tag}` })).json();
    expect(j.signature.publicKey).toBe(profile.signing.publicKey);
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(profile.signing.publicKey, 'hex').toString('base64url') }, format: 'jwk' });
    const payload = JSON.parse(j.signature.signingPayload);
    expect(payload).toEqual({ type: 'akas.judgment.v1', kind: 'capability', proposalId, judge: judge.tag, scores: j.scores, rationale: j.rationale });
    expect(nodeVerify(null, Buffer.from(j.signature.signingPayload), key, Buffer.from(j.signature.signature, 'hex'))).toBe(true);
    const tampered = canonicalize({ ...payload, scores: { ...payload.scores, accuracy: 1 } });
    expect(nodeVerify(null, Buffer.from(tampered), key, Buffer.from(j.signature.signature, 'hex'))).toBe(false);
    expect(j.attestation).toMatchObject({
      judgeSignature: { signature: j.signature.signature },
      nodeMac: { algorithm: 'HMAC-SHA256', signingKeyId: 'hk_test', mac: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
  });

  it('answers every refusal of PROTOCOL 7.5', async () => {
    const proposer = await agent(node, 0.8);
    const { proposalId } = (await proposeAs(node, proposer, 'brief', samplePayload('brief', 5))).json();
    const body = (a: Agent) => signedBody(a, 'brief', proposalId);

    const uncalibrated = await agent(node, null);
    expect((await judgeAs(node, uncalibrated, 'brief', proposalId, body(uncalibrated))).json().code).toBe('calibration_required');
    expect((await judgeAs(node, uncalibrated, 'brief', proposalId, body(uncalibrated))).statusCode).toBe(402);
    const weak = await agent(node, 0.4, 0);
    const low = await judgeAs(node, weak, 'brief', proposalId, body(weak));
    expect([low.statusCode, low.json().code]).toEqual([403, 'tier_too_low']);
    const self = await judgeAs(node, proposer, 'brief', proposalId, body(proposer));
    expect([self.statusCode, self.json().code]).toEqual([403, 'self_judge']);

    const judge = await agent(node, 0.8, 0);
    const missing = await judgeAs(node, judge, 'brief', 'prop_0000000000000000', signedBody(judge, 'brief', 'prop_0000000000000000'));
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'not_found']);
    const wrongPath = await judgeAs(node, judge, 'capability', proposalId, body(judge));
    expect(wrongPath.statusCode).toBe(404);
    // An id that cannot name a proposal is an unknown proposalId too.
    const malformed = await judgeAs(node, judge, 'brief', 'nope', body(judge));
    expect([malformed.statusCode, malformed.json().code]).toEqual([404, 'not_found']);

    const unsigned = await judgeAs(node, judge, 'brief', proposalId, { scores: SCORES_HIGH, rationale: 'ok' });
    expect([unsigned.statusCode, unsigned.json().code]).toEqual([400, 'signature_required']);
    // The payload to sign is v2: it names the content the proposal holds (PROTOCOL 7.2).
    const contentSha256 = (await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}` })).json().contentSha256;
    expect(JSON.parse(unsigned.json().signingPayload)).toMatchObject({ type: 'akas.judgment.v2', proposalId, judge: judge.tag, contentSha256 });
    expect(unsigned.json().contentSha256).toBe(contentSha256);
    const otherContent = await judgeAs(node, judge, 'brief', proposalId, { ...body(judge), contentSha256: 'ab'.repeat(32) });
    expect([otherContent.statusCode, otherContent.json()]).toMatchObject([
      409,
      { code: 'content_mismatch', contentSha256, signedContentSha256: 'ab'.repeat(32) },
    ]);
    const forged = await judgeAs(node, judge, 'brief', proposalId, { ...body(judge), scores: { ...SCORES_HIGH, accuracy: 1 } });
    expect([forged.statusCode, forged.json().code]).toEqual([400, 'invalid_signature']);
    const byOther = await judgeAs(node, judge, 'brief', proposalId, { ...body(judge), signature: sign(proposer.signing.privateKey, 'x') });
    expect(byOther.json().code).toBe('invalid_signature');

    for (const bad of [
      { scores: { ...SCORES_HIGH, accuracy: 2 }, rationale: 'x' },
      { scores: { accuracy: 1 }, rationale: 'x' },
      { scores: SCORES_HIGH, rationale: 'x'.repeat(401) },
      { scores: SCORES_HIGH },
    ]) {
      const r = await judgeAs(node, judge, 'brief', proposalId, bad);
      expect([r.statusCode, r.json().code]).toEqual([400, 'validation_failed']);
    }

    // A field the protocol does not name is dropped, not refused.
    expect((await judgeAs(node, judge, 'brief', proposalId, { ...body(judge), kind: 'brief' })).statusCode).toBe(200);
    const again = await judgeAs(node, judge, 'brief', proposalId, body(judge));
    expect([again.statusCode, again.json().code]).toEqual([409, 'already_judged']);

    // Another agent on the judge's IP is refused; one on the proposer's IP is not (PROTOCOL 7.5
    // counts judges only).
    const sibling = { ...(await agent(node, 0.8, 0)), ip: judge.ip };
    const collusion = await judgeAs(node, sibling, 'brief', proposalId, body(sibling));
    expect([collusion.statusCode, collusion.json().code]).toEqual([403, 'same_ip_collusion']);
    const proposerSibling = { ...(await agent(node, 0.8, 0)), ip: proposer.ip };
    expect((await judgeAs(node, proposerSibling, 'brief', proposalId, body(proposerSibling))).statusCode).toBe(200);

    for (let i = 0; i < 1; i++) {
      const j = await agent(node, 0.8, 0);
      expect((await judgeAs(node, j, 'brief', proposalId, body(j))).statusCode).toBe(200);
    }
    const late = await agent(node, 0.8, 0);
    const decided = await judgeAs(node, late, 'brief', proposalId, body(late));
    expect([decided.statusCode, decided.json().code]).toEqual([409, 'already_decided']);
  });

  it('lets a single-operator node allow the same IP', async () => {
    await node.close();
    node = await testNode({ sameIpCollusionCheck: false });
    const proposer = await agent(node, 0.8);
    const { proposalId } = (await proposeAs(node, proposer, 'brief', samplePayload('brief', 6))).json();
    const j = { ...(await agent(node, 0.8, 0)), ip: proposer.ip };
    expect((await judgeAs(node, j, 'brief', proposalId, signedBody(j, 'brief', proposalId))).statusCode).toBe(200);
  });

  it('dry-runs without changing anything, by body or by query', async () => {
    const proposer = await agent(node, 0.8);
    const judge = await agent(node, 0.7, 0);
    const { proposalId } = (await proposeAs(node, proposer, 'graph', samplePayload('graph', 7))).json();
    const viaBody = await judgeAs(node, judge, 'graph', proposalId, { scores: SCORES_HIGH, rationale: 'fine', dryRun: true });
    expect(viaBody.statusCode).toBe(200);
    expect(viaBody.json()).toMatchObject({ ok: true, dryRun: true, would: { proposalId, kind: 'graph', composite: 0.8, creditsAwarded: 1, tier: 'strong' } });
    expect(viaBody.json().would.weight).toBeCloseTo((1 + 2 * 0.7) * 1);
    const viaQuery = await judgeAs(
      node,
      judge,
      'graph',
      proposalId,
      { scores: SCORES_HIGH, rationale: 'fine' },
      { url: `${KIND_ROUTES.graph.judge}/${proposalId}?dryRun=1` },
    );
    expect(viaQuery.json().dryRun).toBe(true);
    expect((await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}` })).json().judgmentCount).toBe(0);
    expect((await me(judge)).balance).toBe(0);
  });

  it('replays a judgment with the same Idempotency-Key and records it once', async () => {
    const proposer = await agent(node, 0.8);
    const judge = await agent(node, 0.8, 0);
    const { proposalId } = (await proposeAs(node, proposer, 'brief', samplePayload('brief', 8))).json();
    const headers = { 'idempotency-key': 'judge-once' };
    const a = await judgeAs(node, judge, 'brief', proposalId, signedBody(judge, 'brief', proposalId), { headers });
    const b = await judgeAs(node, judge, 'brief', proposalId, signedBody(judge, 'brief', proposalId), { headers });
    expect(b.body).toBe(a.body);
    expect((await me(judge)).balance).toBe(1);
    // A refusal is not replayed: fixing the request under the same key works.
    const next = (await proposeAs(node, proposer, 'brief', samplePayload('brief', 11))).json();
    const h2 = { 'idempotency-key': 'judge-fix' };
    const unsigned = await judgeAs(node, judge, 'brief', next.proposalId, { scores: SCORES_HIGH, rationale: 'Accurate and well sourced.' }, { headers: h2 });
    expect(unsigned.json().code).toBe('signature_required');
    const signed = await judgeAs(node, judge, 'brief', next.proposalId, signedBody(judge, 'brief', next.proposalId), { headers: h2 });
    expect(signed.statusCode).toBe(200);
  });

  it('answers 400, never 500, to numbers JSON cannot hold', async () => {
    const a = await agent(node, 0.8, 40);
    await proposeAs(node, a, 'artifact', samplePayload('artifact', 12));
    const res = await node.app.inject({
      method: 'POST',
      url: KIND_ROUTES['eval-result'].propose,
      headers: { ...bearer(a.apiKey), 'content-type': 'application/json' },
      remoteAddress: a.ip,
      payload: JSON.stringify(samplePayload('eval-result', 12)).replace(/"score":[0-9.]+/, '"score":1e400'),
    });
    expect([res.statusCode, res.json().code]).toEqual([400, 'validation_failed']);
  });

  it('weighs judges by calibration and alignment and decides by the weighted mean', async () => {
    const proposer = await agent(node, 0.8, 40);
    const strongYes = await agent(node, 0.95, 0);
    const weakNo1 = await agent(node, 0.5, 0);
    const weakNo2 = await agent(node, 0.5, 0);
    const { proposalId } = (await proposeAs(node, proposer, 'brief', samplePayload('brief', 9))).json();
    // weights: 2.9 x 1.0 at 1.0, 2.0 x 0.5 twice -> (2.9 + 2*2*0.5) / 6.9 = 0.71 -> published
    await judgeAs(
      node,
      strongYes,
      'brief',
      proposalId,
      signedBody(strongYes, 'brief', proposalId, { accuracy: 1, clarity: 1, compression: 1, sources: 1 }, 'yes'),
    );
    await judgeAs(
      node,
      weakNo1,
      'brief',
      proposalId,
      signedBody(weakNo1, 'brief', proposalId, { accuracy: 0.5, clarity: 0.5, compression: 0.5, sources: 0.5 }, 'meh'),
    );
    const last = (
      await judgeAs(
        node,
        weakNo2,
        'brief',
        proposalId,
        signedBody(weakNo2, 'brief', proposalId, { accuracy: 0.5, clarity: 0.5, compression: 0.5, sources: 0.5 }, 'meh'),
      )
    ).json();
    expect(last.newStatus).toBe('published');
    const detail = (await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}` })).json();
    expect(detail.outcome.weightedComposite).toBeCloseTo((2.9 * 1 + 2 * 0.5 * 2) / 6.9, 5);
    // The two who scored below 0.6 disagreed with the outcome: their alignment drops next time.
    const next = (await proposeAs(node, proposer, 'brief', samplePayload('brief', 10))).json();
    const dry = (await judgeAs(node, weakNo1, 'brief', next.proposalId, { scores: SCORES_HIGH, rationale: 'x', dryRun: true })).json();
    expect(dry.would.weight).toBeCloseTo((2 * (0 + 1)) / (1 + 1));
  });
});

describe('proposing', () => {
  it('refuses uncalibrated (402), refused tier (403), thin balance (402) and charges nothing', async () => {
    const uncal = await agent(node, null);
    const r1 = await proposeAs(node, uncal, 'brief', samplePayload('brief', 20));
    expect([r1.statusCode, r1.json().code]).toEqual([402, 'calibration_required']);
    const refused = await agent(node, 0.2, 20);
    const r2 = await proposeAs(node, refused, 'brief', samplePayload('brief', 21));
    expect([r2.statusCode, r2.json().code]).toEqual([403, 'tier_too_low']);
    const poor = await agent(node, 0.35, 3); // weak: deposit 15
    const r3 = await proposeAs(node, poor, 'brief', samplePayload('brief', 22));
    expect([r3.statusCode, r3.json().code]).toEqual([402, 'insufficient_balance']);
    expect(await me(poor)).toMatchObject({ balance: 3, reservedBalance: 0 });
    const anon = await node.app.inject({ method: 'POST', url: KIND_ROUTES.brief.propose, payload: samplePayload('brief', 23) });
    expect(anon.statusCode).toBe(401);
  });

  it('takes an artifact under /api/cas/<sha256> only when that blob is stored here, with its size', async () => {
    const a = await agent(node, 0.8, 100);
    const bytes = Buffer.from('the bytes of a tiny model');
    const stored = (await node.app.inject({ method: 'POST', url: '/api/cas', payload: bytes, headers: { 'content-type': 'application/octet-stream' } })).json();
    const artifact = (n: number, payload: Record<string, unknown>) => {
      const base = samplePayload('artifact', n) as { payload: Record<string, unknown> };
      return { ...base, payload: { ...base.payload, ...payload } };
    };
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ uri: `/api/cas/${stored.sha256}`, sha256: 'a'.repeat(64), bytes: bytes.length }, 'payload.uri'],
      [{ uri: `/api/cas/${'e'.repeat(64)}`, sha256: 'e'.repeat(64), bytes: 10 }, 'payload.uri'],
      [{ uri: `/api/cas/${stored.sha256}`, sha256: stored.sha256, bytes: bytes.length + 1 }, 'payload.bytes'],
    ];
    for (const [i, [payload, field]] of refusals.entries()) {
      const r = await proposeAs(node, a, 'artifact', artifact(90 + i, payload));
      expect([r.statusCode, r.json().errors?.[0]?.field], r.body).toEqual([400, field]);
    }
    expect(await me(a)).toMatchObject({ balance: 100, reservedBalance: 0 });
    const ok = await proposeAs(
      node,
      a,
      'artifact',
      artifact(95, { uri: `/api/cas/${stored.sha256.toUpperCase()}`, sha256: stored.sha256, bytes: bytes.length }),
    );
    expect(ok.statusCode, ok.body).toBe(200);
    // The absolute fetchUrl this node answered is the same store, checked the same way.
    expect(stored.fetchUrl).toMatch(/^http:\/\/.+\/api\/cas\//);
    const absolute = await proposeAs(node, a, 'artifact', artifact(97, { uri: stored.fetchUrl, sha256: 'a'.repeat(64), bytes: bytes.length }));
    expect([absolute.statusCode, absolute.json().errors?.[0]?.field]).toEqual([400, 'payload.uri']);
    expect((await proposeAs(node, a, 'artifact', artifact(98, { uri: stored.fetchUrl, sha256: stored.sha256, bytes: bytes.length }))).statusCode).toBe(200);
    // Any other uri, another node's store included, is recorded as the proposer gives it.
    expect((await proposeAs(node, a, 'artifact', artifact(96, {}))).statusCode).toBe(200);
    expect((await proposeAs(node, a, 'artifact', artifact(99, { uri: `https://other.example/api/cas/${'e'.repeat(64)}` }))).statusCode).toBe(200);
  });

  it('validates every payload: brief limits, graph ids and JSON Logic, artifact hashes, eval references', async () => {
    const a = await agent(node, 0.8, 100);
    const brief = samplePayload('brief', 30) as { brief: Record<string, unknown> & { levels: Record<string, unknown> } };
    const cases: Array<[ProposalKind, unknown, string]> = [
      ['brief', { brief: { ...brief.brief, domain: 'd'.repeat(61) } }, 'brief.domain'],
      ['brief', { brief: { ...brief.brief, topic: 't'.repeat(81) } }, 'brief.topic'],
      ['brief', { brief: { ...brief.brief, title: 't'.repeat(121) } }, 'brief.title'],
      ['brief', { brief: { ...brief.brief, version: '2026-13' } }, 'brief.version'],
      ['brief', { brief: { ...brief.brief, id: 'KB:Upper' } }, 'brief.id'],
      ['brief', { brief: { ...brief.brief, levels: { tldr: 'x'.repeat(601) } } }, 'brief.levels.tldr'],
      ['brief', { brief: { ...brief.brief, levels: { tldr: 'ok', core: Array(21).fill('c') } } }, 'brief.levels.core'],
      ['brief', { brief: { ...brief.brief, levels: { tldr: 'ok', core: ['c'.repeat(401)] } } }, 'brief.levels.core.0'],
      ['brief', { brief: { ...brief.brief, levels: { tldr: 'ok', deep: { sources: [{ url: 'https://x.org' }] } } } }, 'brief.levels.deep.sources.0.citation'],
      [
        'graph',
        { ...samplePayload('graph', 31), payload: { question: 'q', inputsRequired: ['x'], branches: [{ id: 'a', condition: { bogus: [1] }, to: '/x' }] } },
        'payload.branches[0].condition',
      ],
      [
        'graph',
        {
          ...samplePayload('graph', 32),
          payload: { question: 'q', inputsRequired: [], branches: [{ id: 'a', condition: { '==': [{ var: 'undeclared' }, 1] }, to: '/x' }] },
        },
        'payload.branches[0].condition.==[0]',
      ],
      [
        'graph',
        {
          ...samplePayload('graph', 33),
          payload: {
            question: 'q',
            inputsRequired: [],
            branches: [
              { id: 'a', condition: true, to: '/x' },
              { id: 'a', condition: false, to: '/y' },
            ],
          },
        },
        'payload.branches[1].id',
      ],
      [
        'artifact',
        { ...(samplePayload('artifact', 34) as object), payload: { ...(samplePayload('artifact', 34) as { payload: object }).payload, sha256: 'xyz' } },
        'payload.sha256',
      ],
      ['eval-result', samplePayload('eval-result', 35), 'artifactPath'],
      [
        'tree-expansion',
        {
          parentPath: '/a',
          children: [
            { slug: 'x', title: 'X', spec: 's' },
            { slug: 'x', title: 'Y', spec: 's' },
          ],
        },
        'children',
      ],
      ['spec-sharpening', { path: 'no-slash', spec: 's', rationale: 'r' }, 'path'],
    ];
    for (const [kind, payload, field] of cases) {
      const r = await proposeAs(node, a, kind, payload);
      expect(r.statusCode, `${kind} ${field}: ${r.body}`).toBe(400);
      expect(r.json().errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect(await me(a)).toMatchObject({ balance: 100, reservedBalance: 0 });
  });

  it('answers id_conflict while a pending proposal holds the path, brief id or content', async () => {
    const a = await agent(node, 0.8, 40);
    const b = await agent(node, 0.8, 40);
    const first = (await proposeAs(node, a, 'capability', samplePayload('capability', 40))).json();
    const dup = await proposeAs(node, b, 'capability', { ...(samplePayload('capability', 40) as object), title: 'Another title' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({
      code: 'id_conflict',
      existingProposalId: first.proposalId,
      judgeUrl: `/api/knowledge/cap/judge-proposal/${first.proposalId}`,
      detailUrl: `/api/knowledge/proposals/${first.proposalId}`,
      errors: [{ field: 'path' }],
    });
    const brief = samplePayload('brief', 41) as { brief: object };
    await proposeAs(node, a, 'brief', brief);
    const sameId = await proposeAs(node, b, 'brief', { ...brief, path: '/elsewhere/entirely' });
    expect(sameId.json()).toMatchObject({ code: 'id_conflict', errors: [{ field: 'brief.id' }] });
    // Withdrawing frees the slot.
    await node.app.inject({ method: 'POST', url: `/api/knowledge/proposals/${first.proposalId}/withdraw`, headers: bearer(a.apiKey), remoteAddress: a.ip });
    expect((await proposeAs(node, b, 'capability', samplePayload('capability', 40))).statusCode).toBe(200);
  });

  it('caps proposals per kind per day per api key and per IP, with the problem+json 429 of PROTOCOL 1.4', async () => {
    const a = await agent(node, 0.35, 1000); // weak: cap 20, deposit 15
    for (let i = 0; i < 20; i++) expect((await proposeAs(node, a, 'tree-expansion', samplePayload('tree-expansion', 100 + i))).statusCode).toBe(200);
    const capped = await proposeAs(node, a, 'tree-expansion', samplePayload('tree-expansion', 200));
    expect(capped.statusCode).toBe(429);
    expect(capped.headers['content-type']).toContain('application/problem+json');
    expect(capped.headers['x-ratelimit-scope']).toBe('per-apikey-per-day');
    expect(capped.json()).toMatchObject({
      status: 429,
      code: 'rate_limited',
      scope: 'per-apikey-per-day',
      cap: 20,
      tier: 'weak',
      nextEligibleAt: expect.any(Number),
      resetIn: expect.any(Number),
      hint: { next: expect.any(Array) },
    });
    // Another kind is a separate cap.
    expect((await proposeAs(node, a, 'spec-sharpening', samplePayload('spec-sharpening', 1))).statusCode).toBe(200);
    // Another weak agent on the same IP hits the per-IP cap.
    const sibling = { ...(await agent(node, 0.35, 1000)), ip: a.ip };
    const shared = await proposeAs(node, sibling, 'tree-expansion', samplePayload('tree-expansion', 201));
    expect(shared.json()).toMatchObject({ scope: 'per-ip-per-day' });
    const quota = (await node.app.inject({ url: '/api/agent/v1/quota', headers: bearer(a.apiKey), remoteAddress: a.ip })).json();
    expect(quota.proposeQuota.byKind['tree-expansion']).toMatchObject({ cap: 20, usedByKey: 20, usedByIp: 20, remaining: 0 });
    node.clock.advance(DAY_MS);
    expect((await proposeAs(node, a, 'tree-expansion', samplePayload('tree-expansion', 202))).statusCode).toBe(200);
  });
});

describe('published paths', () => {
  it('keep their node: another kind gets id_conflict, a graph needs replaceExisting to refresh', async () => {
    const a = await agent(node, 0.8, 60);
    const judges = [await agent(node, 0.8, 0), await agent(node, 0.8, 0), await agent(node, 0.8, 0)];
    const graph = samplePayload('graph', 90) as { path: string };
    const { proposalId } = (await proposeAs(node, a, 'graph', graph)).json();
    for (const j of judges) await judgeAs(node, j, 'graph', proposalId, signedBody(j, 'graph', proposalId));
    const cap = await proposeAs(node, a, 'capability', { ...(samplePayload('capability', 90) as object), path: graph.path });
    expect(cap.json()).toMatchObject({ code: 'id_conflict', existingProposalId: proposalId, errors: [{ field: 'path' }] });
    const again = await proposeAs(node, a, 'graph', { ...graph, title: 'A sharper graph' });
    expect(again.json()).toMatchObject({ code: 'id_conflict', existingProposalId: proposalId });
    const refresh = await proposeAs(node, a, 'graph', { ...graph, title: 'A sharper graph', replaceExisting: true });
    expect(refresh.statusCode).toBe(200);
    expect((await node.app.inject({ url: `/api/knowledge/proposals/${refresh.json().proposalId}` })).json().replaceExisting).toBe(true);
  });
});

describe('the anonymous path (serve --allow-anonymous-propose)', () => {
  it('takes no deposit, returns no claimSecret, and caps at 5 per IP per kind per day', async () => {
    await node.close();
    node = await testNode({ allowAnonymousPropose: true });
    const post = (n: number) =>
      node.app.inject({
        method: 'POST',
        url: KIND_ROUTES['tree-expansion'].propose,
        payload: samplePayload('tree-expansion', 300 + n),
        remoteAddress: '10.99.0.1',
      });
    const first = await post(0);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({
      economy: {
        tier: 'uncalibrated',
        deposit: 0,
        billable: false,
        expectedRefundOnPublish: null,
        perIpProposeQuota: { capPerKind: 5, used: 1, remaining: 4 },
      },
    });
    expect(first.json()).not.toHaveProperty('claimSecret');
    for (let i = 1; i < 5; i++) expect((await post(i)).statusCode).toBe(200);
    const capped = await post(5);
    expect(capped.json()).toMatchObject({ status: 429, scope: 'per-ip-per-day', cap: 5 });
    // Anonymous proposals count apart from the calibrated agents on the same IP.
    const member = { ...(await agent(node, 0.8, 20)), ip: '10.99.0.1' };
    expect((await proposeAs(node, member, 'tree-expansion', samplePayload('tree-expansion', 399))).json().economy.perIpProposeQuota).toMatchObject({ used: 1 });
    // Judging still needs a Bearer, and a published anonymous proposal settles nothing.
    const judges = [await agent(node, 0.8, 0), await agent(node, 0.8, 0), await agent(node, 0.8, 0)];
    const id = first.json().proposalId;
    let last;
    for (const j of judges) last = (await judgeAs(node, j, 'tree-expansion', id, signedBody(j, 'tree-expansion', id))).json();
    expect(last).toMatchObject({ newStatus: 'published', economy: { depositSettlement: 'none' } });
  });
});

describe('GET /api/knowledge/eval/proposals/{id}', () => {
  it('answers the eval proposal with its full signed manifest, which POST /api/knowledge/verify checks; 404 for other kinds', async () => {
    const a = await agent(node, 0.8, 40);
    const art = (await proposeAs(node, a, 'artifact', samplePayload('artifact', 80))).json();
    const ev = (await proposeAs(node, a, 'eval-result', samplePayload('eval-result', 80))).json();
    const res = await node.app.inject({ url: `/api/knowledge/eval/proposals/${ev.proposalId}` });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const payload = samplePayload('eval-result', 80);
    expect(body).toMatchObject({ proposalId: ev.proposalId, kind: 'eval-result', status: 'pending' });
    expect(body.manifest).toEqual({
      proposalId: ev.proposalId,
      status: 'pending',
      ...payload,
      samplesSha256: null,
      proposer: a.tag,
      submittedAt: body.submittedAt,
      decidedAt: null,
      fetchedAt: expect.any(Number),
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
      signingKeyId: 'hk_test',
    });
    // The HMAC covers the JCS of the fields under the manifest's own type.
    const { signature, signingKeyId, ...fields } = body.manifest;
    expect(signingKeyId).toBe('hk_test');
    const { createHmac } = await import('node:crypto');
    expect(
      createHmac('sha256', node.keys.hmac[0].key)
        .update(canonicalize({ type: 'akas.eval-manifest.v1', ...fields }))
        .digest('hex'),
    ).toBe(signature);
    const verify = async (manifest: unknown) => (await node.app.inject({ method: 'POST', url: '/api/knowledge/verify', payload: { manifest } })).json();
    expect(await verify(body.manifest)).toMatchObject({ valid: true, proposalId: ev.proposalId });
    expect(await verify({ ...body.manifest, score: 0.99 })).toMatchObject({ valid: false, reason: expect.any(String) });
    expect(await verify({ ...body.manifest, status: 'published' })).toMatchObject({ valid: false });
    expect((await node.app.inject({ url: `/api/knowledge/eval/proposals/${art.proposalId}` })).statusCode).toBe(404);
  });
});

describe('withdraw', () => {
  it('refunds the proposer while pending with no judgment, and refuses everyone else', async () => {
    const a = await agent(node, 0.8, 20);
    const other = await agent(node, 0.8, 20);
    const { proposalId } = (await proposeAs(node, a, 'artifact', samplePayload('artifact', 50))).json();
    const url = `/api/knowledge/proposals/${proposalId}/withdraw`;
    const notMine = await node.app.inject({ method: 'POST', url, headers: bearer(other.apiKey), remoteAddress: other.ip });
    expect([notMine.statusCode, notMine.json().code]).toEqual([403, 'not_proposer']);
    const ok = await node.app.inject({ method: 'POST', url, headers: bearer(a.apiKey), remoteAddress: a.ip });
    expect(ok.json()).toMatchObject({ status: 'withdrawn', depositRefunded: 2, balance: 20 });
    const twice = await node.app.inject({ method: 'POST', url, headers: bearer(a.apiKey), remoteAddress: a.ip });
    expect([twice.statusCode, twice.json().code]).toEqual([409, 'already_decided']);

    const judged = (await proposeAs(node, a, 'artifact', samplePayload('artifact', 51))).json();
    await judgeAs(node, other, 'artifact', judged.proposalId, signedBody(other, 'artifact', judged.proposalId));
    const late = await node.app.inject({
      method: 'POST',
      url: `/api/knowledge/proposals/${judged.proposalId}/withdraw`,
      headers: bearer(a.apiKey),
      remoteAddress: a.ip,
    });
    expect([late.statusCode, late.json().code]).toEqual([409, 'not_withdrawable']);
    expect(
      (await node.app.inject({ method: 'POST', url: '/api/knowledge/proposals/prop_0000000000000000/withdraw', headers: bearer(a.apiKey) })).statusCode,
    ).toBe(404);
  });
});

describe('the judge queue', () => {
  it('lists pending work the caller may judge, paged', async () => {
    const a = await agent(node, 0.8, 100);
    const judge = await agent(node, 0.8, 0);
    const ids = [];
    for (let i = 0; i < 5; i++) {
      node.clock.advance(1);
      ids.push((await proposeAs(node, a, 'spec-sharpening', samplePayload('spec-sharpening', 60 + i))).json().proposalId);
    }
    await judgeAs(node, judge, 'spec-sharpening', ids[0], signedBody(judge, 'spec-sharpening', ids[0]));
    const q = (url: string, who: Agent) => node.app.inject({ url, headers: bearer(who.apiKey), remoteAddress: who.ip }).then((r) => r.json());
    const page1 = await q('/api/judge/queue?expand=1&limit=2', judge);
    expect(page1.items.map((i: { proposalId: string }) => i.proposalId)).toEqual([ids[1], ids[2]]);
    expect(page1.items[0].proposal).toMatchObject({ proposalId: ids[1], status: 'pending' });
    const page2 = await q(`/api/judge/queue?limit=2&cursor=${encodeURIComponent(page1.nextCursor)}`, judge);
    expect(page2.items.map((i: { proposalId: string }) => i.proposalId)).toEqual([ids[3], ids[4]]);
    expect(page2.items[0]).not.toHaveProperty('proposal');
    expect((await q('/api/judge/queue', a)).items).toEqual([]);
    expect((await node.app.inject({ url: '/api/judge/queue' })).statusCode).toBe(401);
    expect((await q('/api/judge/queue?kind=spec-sharpening&limit=1', judge)).items.map((i: { proposalId: string }) => i.proposalId)).toEqual([ids[1]]);
    const badKind = await node.app.inject({ url: '/api/judge/queue?kind=poem', headers: bearer(judge.apiKey), remoteAddress: judge.ip });
    expect([badKind.statusCode, badKind.json().code, badKind.json().field]).toEqual([400, 'invalid_kind', 'kind']);
    // An unknown query parameter (a cache-buster) is ignored like an unknown body field.
    expect((await q('/api/judge/queue?limit=1&_=123', judge)).items).toHaveLength(1);
  });
});

describe('recover channel B', () => {
  it('recovers with proposalId + claimSecret, reusable until the key leaves the ring of 8', async () => {
    const a = await agent(node, 0.8, 20);
    const accepted = (await proposeAs(node, a, 'brief', samplePayload('brief', 70))).json();
    const recover = (payload: object) => node.app.inject({ method: 'POST', url: '/api/agent/v1/recover', payload });
    const first = await recover({ proposalId: accepted.proposalId, claimSecret: accepted.claimSecret });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ tag: a.tag, inherited: { balance: 18, reservedBalance: 2 } });
    const wrong = await recover({ proposalId: accepted.proposalId, claimSecret: 'cs_' + '1'.repeat(64) });
    expect([wrong.statusCode, wrong.json().code]).toEqual([401, 'recovery_failed']);
    // Channel B is evaluated first when both are present.
    const both = await recover({ proposalId: accepted.proposalId, claimSecret: 'cs_' + '1'.repeat(64), tag: a.tag, recoveryToken: first.json().recoveryToken });
    expect(both.statusCode).toBe(401);
    for (let i = 0; i < 7; i++) expect((await recover({ proposalId: accepted.proposalId, claimSecret: accepted.claimSecret })).statusCode).toBe(200);
    // 8 recovers later the key the claim was bound to is the oldest of a full ring: a 9th would push it out.
    const aged = await recover({ proposalId: accepted.proposalId, claimSecret: accepted.claimSecret });
    expect(aged.statusCode).toBe(401);
    expect(aged.body).toBe(wrong.body);
  });
});
