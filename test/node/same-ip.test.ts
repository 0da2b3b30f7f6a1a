// The same-IP rule where it can mean something (issue 23, item 2): a node that listens on
// loopback only, without --trust-proxy, cannot tell its clients apart by IP and says so
// (/healthz); wherever it can, the rule holds, and the judge queue says why a pending
// proposal is not offered (withheld).
import { afterEach, describe, expect, it } from 'vitest';
import { isLoopbackHost, sameIpPolicy } from '../../src/node/index.js';
import { markCalibrated } from '../helpers/agents.js';
import { bearer, registerAgent, testNode, type TestNode } from '../helpers/app.js';
import { agent, judgeAs, proposeAs, signedBody, type Agent } from '../helpers/flows.js';
import { samplePayload } from '../fixtures/payloads.js';

let node: TestNode;
afterEach(async () => node?.close());

const queue = async (a: Agent) => {
  const r = await node.app.inject({ method: 'GET', url: '/api/judge/queue', headers: bearer(a.apiKey), remoteAddress: a.ip });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
};

describe('sameIpPolicy', () => {
  it('turns the rule off only where every client has the same address, or when the operator says so', () => {
    for (const host of ['127.0.0.1', '127.8.9.1', 'localhost', '::1', '[::1]']) {
      expect(isLoopbackHost(host), host).toBe(true);
      expect(sameIpPolicy({ host, trustProxy: false, allowSameIp: false })).toMatchObject({
        enforced: false,
        reason: expect.stringContaining('loopback only'),
      });
      expect(sameIpPolicy({ host, trustProxy: true, allowSameIp: false }).enforced).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.1.2.3', 'akas.example']) {
      expect(isLoopbackHost(host), host).toBe(false);
      expect(sameIpPolicy({ host, trustProxy: false, allowSameIp: false }).enforced).toBe(true);
    }
    expect(sameIpPolicy({ host: '0.0.0.0', trustProxy: true, allowSameIp: true })).toMatchObject({
      enforced: false,
      reason: expect.stringContaining('--allow-same-ip'),
    });
  });
});

describe('GET /healthz', () => {
  it('says whether the rule holds here and why', async () => {
    node = await testNode({ sameIpCollusionCheck: false, sameIpReason: 'off: loopback only' });
    expect((await node.app.inject({ url: '/healthz' })).json().sameIpRule).toEqual({ enforced: false, reason: 'off: loopback only' });
    await node.close();
    node = await testNode();
    expect((await node.app.inject({ url: '/healthz' })).json().sameIpRule).toMatchObject({ enforced: true });
  });
});

describe('the judge queue', () => {
  it('counts what it withholds, by reason, and names the first few', async () => {
    node = await testNode();
    const proposer = await agent(node);
    const judge = await agent(node);
    const r = await proposeAs(node, proposer, 'capability', samplePayload('capability', 1));
    const proposalId = r.json().proposalId;
    expect((await judgeAs(node, judge, 'capability', proposalId, signedBody(judge, 'capability', proposalId))).statusCode).toBe(200);
    // A second agent on the judge's IP.
    const neighbour = { ...(await registerAgent(node, judge.ip)), ip: judge.ip };
    await markCalibrated(node, neighbour.tag, 0.8, 20);

    const n = await queue(neighbour);
    expect(n.items).toEqual([]);
    expect(n.withheld).toEqual({ yours: 0, judgedByYou: 0, sameIp: 1, examples: [{ proposalId, reason: 'same_ip' }] });
    expect((await queue(proposer)).withheld).toMatchObject({ yours: 1, examples: [{ proposalId, reason: 'yours' }] });
    expect((await queue(judge)).withheld).toMatchObject({ judgedByYou: 1, examples: [{ proposalId, reason: 'judged_by_you' }] });
    expect((await queue(await agent(node))).items.map((i: { proposalId: string }) => i.proposalId)).toEqual([proposalId]);
  });

  it('offers the proposal to an agent on the same IP where the rule is off', async () => {
    node = await testNode({ sameIpCollusionCheck: false });
    const proposer = await agent(node);
    const judge = await agent(node);
    const proposalId = (await proposeAs(node, proposer, 'capability', samplePayload('capability', 2))).json().proposalId;
    expect((await judgeAs(node, judge, 'capability', proposalId, signedBody(judge, 'capability', proposalId))).statusCode).toBe(200);
    const neighbour = { ...(await registerAgent(node, judge.ip)), ip: judge.ip };
    await markCalibrated(node, neighbour.tag, 0.8, 20);
    const n = await queue(neighbour);
    expect(n.items.map((i: { proposalId: string }) => i.proposalId)).toEqual([proposalId]);
    expect(n.withheld.sameIp).toBe(0);
  });
});
