// Keys that never leave the agent (PROTOCOL 2.10): register and recover with the agent's own
// Ed25519 public key and a proof of possession; the node then never makes, sees or returns a
// private key, and judgments signed with the kept key verify as any other.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeyPair, proveKeyPossession } from '../../src/core/index.js';
import { KEY_POSSESSION_WINDOW_MS } from '../../src/core/possession.js';
import { samplePayload } from '../fixtures/payloads.js';
import { markCalibrated } from '../helpers/agents.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { agent, judgeAs, proposeAs, signedBody, type Agent } from '../helpers/flows.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode();
});
afterEach(async () => node.close());

const register = (payload: unknown, ip = '10.7.0.1') =>
  node.app.inject({ method: 'POST', url: '/api/agent/v1/register', payload: payload as object, remoteAddress: ip });
const remaining = async (ip = '10.7.0.1') => (await node.app.inject({ url: '/api/agent/v1/preview', remoteAddress: ip })).json().registration.remaining;

describe('register with your own key', () => {
  it('takes the public key, returns no private key anywhere, and judgments signed with the kept key count', async () => {
    const keys = generateKeyPair();
    const r = await register(proveKeyPossession(keys, 'register', node.clock.now()));
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(body.signing).toMatchObject({ algorithm: 'Ed25519', publicKey: keys.publicKey, keyHeldBy: expect.stringContaining('agent only') });
    expect(body.signing).not.toHaveProperty('privateKey');
    expect(body.saveLocally).toMatchObject({ apiKey: body.apiKey, recoveryToken: body.recoveryToken, signingPrivateKey: null });
    expect(r.body).not.toContain(keys.privateKey);
    expect((await node.app.inject({ url: `/api/agents/${body.tag}` })).json().signing.publicKey).toBe(keys.publicKey);

    // The agent judges with the key it kept.
    await markCalibrated(node, body.tag, 0.9, 10);
    const judge = { ...body, signing: keys, ip: '10.7.0.1' } as Agent;
    const proposer = await agent(node);
    const p = (await proposeAs(node, proposer, 'capability', samplePayload('capability', 1))).json();
    const j = await judgeAs(node, judge, 'capability', p.proposalId, signedBody(judge, 'capability', p.proposalId));
    expect(j.statusCode, j.body).toBe(200);
  });

  it('refuses a proof that does not verify, a stale one, and half of the pair, spending no registration', async () => {
    const keys = generateKeyPair();
    const before = await remaining();
    const other = generateKeyPair();
    const forged = { publicKey: keys.publicKey, proof: proveKeyPossession(other, 'register', node.clock.now()).proof };
    const bad = await register(forged);
    expect([bad.statusCode, bad.json().code, bad.json().errors]).toEqual([
      400,
      'invalid_signature',
      [{ field: 'proof.signature', reason: expect.stringContaining('does not verify') }],
    ]);
    // A proof made for recover is not one for register.
    expect((await register(proveKeyPossession(keys, 'recover', node.clock.now()))).json().code).toBe('invalid_signature');
    const stale = await register(proveKeyPossession(keys, 'register', node.clock.now() - KEY_POSSESSION_WINDOW_MS - 1));
    expect([stale.statusCode, stale.json().code, stale.json().errors[0].field]).toEqual([400, 'validation_failed', 'proof.at']);
    const half = await register({ publicKey: keys.publicKey });
    expect([half.statusCode, half.json().errors[0].field]).toEqual([400, 'proof']);
    expect(await remaining()).toBe(before);
  });

  it("keeps the service contract's no-body registration: the node makes the keypair and shows it once", async () => {
    const r = (await register(undefined)).json();
    expect(r.signing.privateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(r.saveLocally.signingPrivateKey).toBe(r.signing.privateKey);
  });
});

describe('recover onto your own key', () => {
  it('makes the new key current, keeps the old one in priorKeys, and refuses a key already held', async () => {
    const a = await agent(node);
    const next = generateKeyPair();
    const r = await node.app.inject({
      method: 'POST',
      url: '/api/agent/v1/recover',
      payload: { tag: a.tag, recoveryToken: a.recoveryToken, ...proveKeyPossession(next, 'recover', node.clock.now()) },
    });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().signing).not.toHaveProperty('privateKey');
    expect(r.json().saveLocally.signingPrivateKey).toBeNull();
    const profile = (await node.app.inject({ url: `/api/agents/${a.tag}` })).json();
    expect(profile.signing.publicKey).toBe(next.publicKey);
    expect(profile.signing.priorKeys.map((k: { publicKey: string }) => k.publicKey)).toContain(a.signing.publicKey);

    // Back onto the first key: refused, and the recovery token it came with is not spent.
    const again = await node.app.inject({
      method: 'POST',
      url: '/api/agent/v1/recover',
      payload: { tag: a.tag, recoveryToken: r.json().recoveryToken, ...proveKeyPossession(a.signing, 'recover', node.clock.now()) },
    });
    expect([again.statusCode, again.json().errors?.[0]?.field]).toEqual([400, 'publicKey']);
    const ok = await node.app.inject({ method: 'POST', url: '/api/agent/v1/recover', payload: { tag: a.tag, recoveryToken: r.json().recoveryToken } });
    expect(ok.statusCode).toBe(200);
    expect((await node.app.inject({ url: '/api/agent/v1/me', headers: bearer(ok.json().apiKey) })).statusCode).toBe(200);
  });

  it('checks the proof before the recovery secret, spending nothing on a bad one', async () => {
    const a = await agent(node);
    const keys = generateKeyPair();
    const bad = { publicKey: keys.publicKey, proof: { at: node.clock.now(), signature: 'ab'.repeat(64) } };
    const r = await node.app.inject({ method: 'POST', url: '/api/agent/v1/recover', payload: { tag: a.tag, recoveryToken: a.recoveryToken, ...bad } });
    expect([r.statusCode, r.json().code]).toEqual([400, 'invalid_signature']);
    expect((await node.app.inject({ method: 'POST', url: '/api/agent/v1/recover', payload: { tag: a.tag, recoveryToken: a.recoveryToken } })).statusCode).toBe(
      200,
    );
  });
});
