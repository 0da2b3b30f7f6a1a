// An agent's standing (PROTOCOL 8.9): GET /api/agents/{tag}/standing issues a credential whose
// figures the log's entries give again, which a newer standing supersedes and a ban revokes.
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import { createVerifyCryptosuite } from '@digitalbazaar/eddsa-jcs-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { checkStatus } from '@digitalbazaar/vc-bitstring-status-list';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/core/log-entry.js';
import { standingFigures } from '../../src/core/standing.js';
import { loadChallengeBank } from '../../src/domain/calibration/bank.js';
import { loadPools } from '../../src/domain/calibration/scoring.js';
import { documentLoader } from '../../src/domain/credentials/credentials.js';
import { credentialStatusOf } from '../../src/domain/credentials/status-lists.js';
import { migrateAgentEvents } from '../../src/domain/migrations.js';
import { Agents } from '../../src/domain/records.js';
import { verifyCredential } from '../../verifier/index.js';
import { bearer, registerAgent, testNode, type TestNode } from '../helpers/app.js';
import { agent, decide, judgeAs, proposeAs, signedBody, SCORES_LOW, type Agent } from '../helpers/flows.js';
import { samplePayload } from '../fixtures/payloads.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode({ decoyRate: 0 });
});
afterEach(async () => node.close());

const standingOf = async (tag: string) => {
  const res = await node.app.inject({ url: `/api/agents/${tag}/standing` });
  expect(res.statusCode, res.body).toBe(200);
  return { id: String(res.headers['x-standing-id']), credential: res.json() };
};

/** A registered agent calibrated through the route: every answer of its pool right (score 1). */
async function calibrated(ip: string): Promise<Agent> {
  const a = await registerAgent(node, ip);
  const pool = loadPools()[a.calibrationPoolId as 'A' | 'B'];
  const res = await node.app.inject({
    method: 'POST',
    url: '/api/agent/v1/calibrate',
    headers: bearer(a.apiKey),
    payload: { answers: Object.fromEntries(pool.map((q) => [q.id, q.expected])) },
  });
  expect(res.statusCode, res.body).toBe(200);
  return { ...a, ip };
}

async function logEntries(): Promise<{ entries: LogEntry[]; size: number }> {
  const cp = await node.app.akas.log.checkpoint();
  return { entries: await node.app.akas.log.entries(0, cp.size), size: cp.size };
}

async function lists() {
  const out: Record<string, unknown> = {};
  for (const p of ['revocation', 'suspension']) {
    const l = (await node.app.inject({ url: `/credentials/status/${p}` })).json();
    out[l.id] = l;
  }
  return out;
}

describe('GET /api/agents/{tag}/standing (PROTOCOL 8.9)', () => {
  it('issues a standing whose figures the log gives again, verified by akas and by @digitalbazaar/vc', async () => {
    const judge = await calibrated('10.9.0.1');
    const { proposalId } = await decide(node, 'brief');
    // Our judge judges a second proposal, low, with two others high: it disagrees with the decision.
    const proposer = await agent(node);
    const p2 = (await proposeAs(node, proposer, 'brief', samplePayload('brief', 2))).json().proposalId as string;
    expect((await judgeAs(node, judge, 'brief', p2, signedBody(judge, 'brief', p2, SCORES_LOW))).statusCode).toBe(200);
    for (const j of [await agent(node, 0.9, 0), await agent(node, 0.8, 0)]) {
      expect((await judgeAs(node, j, 'brief', p2, signedBody(j, 'brief', p2))).statusCode).toBe(200);
    }
    expect(proposalId).not.toBe(p2);
    const { credential } = await standingOf(judge.tag);
    expect(credential.type).toEqual(['VerifiableCredential', 'AgentStandingCredential']);
    expect(credential.credentialSubject).toMatchObject({
      tag: judge.tag,
      tier: 'frontier',
      calibration: { score: 1 },
      judgments: { made: 1, decided: 1, agreed: 0, agreementShare: 0 },
      proposals: { submitted: 0, published: 0, rejected: 0 },
      reputation: { status: 'clear', decoyFailed: 0, bannedUntil: null },
    });
    expect(credential.credentialSubject.id).toMatch(/^did:key:z6Mk/);

    const { entries, size } = await logEntries();
    const s = credential.credentialSubject;
    const again = standingFigures(
      judge.tag,
      entries.filter((e) => e.seq < s.checkpoint.size),
      s.checkpoint.size,
      Date.parse(credential.validFrom),
    );
    expect(size).toBeGreaterThanOrEqual(s.checkpoint.size);
    const { id: _id, tag: _tag, publicKey: _pk, checkpoint: _cp, ...figures } = s;
    expect({ ...again.figures, window: again.window }).toEqual(figures);

    expect(verifyCredential(credential, { issuer: node.keys.issuer.did, at: node.clock.now() }).verified).toBe(true);
    const byUrl = await lists();
    const loader = async (url: string) => (url in byUrl ? { contextUrl: null, documentUrl: url, document: byUrl[url] } : documentLoader(url));
    const suite = new DataIntegrityProof({ cryptosuite: createVerifyCryptosuite() });
    const checked = await vc.verifyCredential({ credential, suite, documentLoader: loader, checkStatus, now: new Date(node.clock.now()) });
    expect(checked.verified, JSON.stringify(checked.error ?? checked.statusResult)).toBe(true);
  });

  it('answers the kept standing while its figures hold, and a newer one supersedes it (its revocation bit set)', async () => {
    const judge = await calibrated('10.9.0.2');
    const first = await standingOf(judge.tag);
    expect((await standingOf(judge.tag)).id).toBe(first.id);
    const p = (await proposeAs(node, await agent(node), 'brief', samplePayload('brief', 3))).json().proposalId as string;
    expect((await judgeAs(node, judge, 'brief', p, signedBody(judge, 'brief', p))).statusCode).toBe(200);
    const second = await standingOf(judge.tag);
    expect(second.id).not.toBe(first.id);
    expect(second.credential.credentialSubject.judgments.made).toBe(1);
    expect((await credentialStatusOf(node.app.akas, first.id)).revocation).toMatchObject({ set: true, action: 'revoke' });
    expect((await credentialStatusOf(node.app.akas, second.id)).revocation).toBeUndefined();
  });

  it('refuses an edited figure: the proof no longer holds', async () => {
    const judge = await calibrated('10.9.0.3');
    const { credential } = await standingOf(judge.tag);
    const edited = { ...credential, credentialSubject: { ...credential.credentialSubject, tier: 'frontier', calibration: { score: 0.99, at: null } } };
    const r = verifyCredential(edited, { issuer: node.keys.issuer.did, at: node.clock.now() });
    expect(r.verified).toBe(false);
    expect(r.checks.filter((c) => c.valid === false).map((c) => c.id)).toContain('proof.signature');
  });

  it('answers the A2A Agent Card unsigned, its skills the published capabilities, its standing attached', async () => {
    const proposer = await calibrated('10.9.0.5');
    await decide(node, 'capability', { proposer });
    const card = (await node.app.inject({ url: `/api/agents/${proposer.tag}/card` })).json();
    expect(card.signatures).toBeUndefined();
    expect(card.skills).toEqual([expect.objectContaining({ id: expect.stringMatching(/^\/tools\//), name: 'Turn a PDF into plain text' })]);
    const [ext] = card.capabilities.extensions;
    expect(ext).toMatchObject({ uri: 'https://akas.dev/a2a/extensions/standing/v1', required: false });
    expect(ext.params.standing.credentialSubject).toMatchObject({ tag: proposer.tag, proposals: { submitted: 1, published: 1 } });
  });

  it('404s an unknown agent and 400s a malformed tag', async () => {
    const unknown = await node.app.inject({ url: '/api/agents/ak_zzzzzzzz/standing' });
    expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'not_found']);
    const bad = await node.app.inject({ url: '/api/agents/nope/standing' });
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'validation_failed']);
  });
});

describe('a ban (PROTOCOL 3.4) revokes the standing', () => {
  it('sets the revocation bit of the standing the agent holds, and its next standing reads banned and revoked', async () => {
    await node.close();
    node = await testNode({ decoyRate: 1 });
    const a = await calibrated('10.9.0.4');
    const before = await standingOf(a.tag);
    const bank = loadChallengeBank();
    let c = (await node.app.inject({ url: '/api/agent/v1/challenge', headers: bearer(a.apiKey) })).json();
    // Calibrated agents get credits from the bonus; each wrong decoy answer is a failure.
    for (let i = 0; i < 3; i++) {
      const entry = bank.all.find((e) => e.userPrompt === c.challenge.userPrompt)!;
      expect(entry.decoy).toBeTruthy();
      const r = await node.app.inject({
        method: 'POST',
        url: '/api/agent/v1/use-tool',
        headers: bearer(a.apiKey),
        payload: { challengeId: c.challengeId, answer: { answer: 'purple elephant' }, tool: 'word-count', toolInput: { text: 'x' } },
      });
      expect(r.statusCode, r.body).toBe(200);
      c = r.json().nextChallenge;
    }
    expect((await credentialStatusOf(node.app.akas, before.id)).revocation).toMatchObject({ set: true });
    const after = await standingOf(a.tag);
    expect(after.credential.credentialSubject.reputation).toMatchObject({ status: 'banned', decoyFailed: 3 });
    expect((await credentialStatusOf(node.app.akas, after.id)).revocation).toMatchObject({ set: true });
    // Asked again while banned: the same revoked standing, no new one.
    expect((await standingOf(a.tag)).id).toBe(after.id);
  });
});

describe('agents calibrated or banned before agent events were logged (PROTOCOL 8.9)', () => {
  it('are logged once by the agent-events migration, so their standing reads what their record holds', async () => {
    // markCalibrated (agent()) writes the record as a node of before did: no agent.calibrated entry.
    const before = await agent(node, 0.8, 0);
    const banned = await agent(node, 0.6, 0);
    await node.store.transact([`agent:${banned.tag}`], async (tx) => {
      const a = (await tx.get(Agents, banned.tag))!;
      tx.put(Agents, banned.tag, { ...a, decoyFailed: 3, bannedUntil: node.clock.now() + 86_400_000 });
    });
    expect((await standingOf(before.tag)).credential.credentialSubject).toMatchObject({ tier: 'uncalibrated', calibration: { score: null } });
    expect(await migrateAgentEvents(node.app.akas)).toBe(3);
    await node.app.akas.log.drain();
    expect(await migrateAgentEvents(node.app.akas)).toBe(0); // logged once: the log holds them now
    const s = (await standingOf(before.tag)).credential.credentialSubject;
    expect(s).toMatchObject({ tier: 'strong', calibration: { score: 0.8 } });
    expect((await standingOf(banned.tag)).credential.credentialSubject.reputation).toMatchObject({ status: 'banned', decoyFailed: 3 });
    // The figures are the log's: recomputed from its entries, they agree.
    const { entries } = await logEntries();
    const again = standingFigures(
      before.tag,
      entries.filter((e) => e.seq < s.checkpoint.size),
      s.checkpoint.size,
      node.clock.now(),
    );
    expect(again.figures.calibration.score).toBe(0.8);
  });
});
