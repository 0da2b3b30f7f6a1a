import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY_MS, generateKeyPair, proveKeyPossession, publicKeyFromPrivate, sign, verify } from '../../src/core/index.js';
import { strategiesFor } from '../../src/node/strategies.js';
import { createApp } from '../../src/http/app.js';
import { bytesAtRest, openTestStore } from '../helpers/stores.js';
import { markCalibrated } from '../helpers/agents.js';
import { Agents, agentLock } from '../../src/domain/records.js';
import { bearer, registerAgent, testKeys, testNode, type TestNode } from '../helpers/app.js';
import { FakeClock } from '../../src/core/index.js';
import type { PgStore } from '../../src/store/postgres/index.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode();
});
afterEach(async () => {
  await node.close();
});

const me = (apiKey: string) => node.app.inject({ url: '/api/agent/v1/me', headers: bearer(apiKey) });

describe('POST /api/agent/v1/register', () => {
  it('answers every field of PROTOCOL 2.1', async () => {
    const r = await registerAgent(node);
    for (const field of [
      'apiKey',
      'tag',
      'createdAt',
      'calibrationPoolId',
      'signing',
      'recoveryToken',
      'recoveryTokenContract',
      'recoveryTokenCanonical',
      'recoveryNote',
      'saveLocally',
      'docs',
      'endpoints',
      'trustModel',
      'nextStep',
      '_canonicalIdentity',
      'memoryHint',
      'rateLimit',
      'notes',
      '_responseShapeVersion',
    ])
      expect(r, field).toHaveProperty(field);
    expect(r.apiKey).toMatch(/^ak_[0-9A-Za-z]{40}$/);
    expect(r.tag).toBe(r.apiKey.slice(0, 11));
    expect(r.recoveryToken).toMatch(/^rec_[A-Za-z0-9_-]{43}$/);
    expect(r).not.toHaveProperty('_attribution');
    expect(r).not.toHaveProperty('promptId');
    const signing = r.signing as Record<string, string>;
    expect(signing.algorithm).toBe('Ed25519');
    expect(publicKeyFromPrivate(signing.privateKey)).toBe(signing.publicKey);
    expect(verify(signing.publicKey, 'hello', sign(signing.privateKey, 'hello'))).toBe(true);
    expect(r.saveLocally).toMatchObject({ apiKey: r.apiKey, signingPrivateKey: signing.privateKey, recoveryToken: r.recoveryToken });
    expect(r.recoveryTokenContract).toEqual({ expiresAt: null, singleUse: true, semantics: expect.any(String) });
    expect(r.memoryHint).toMatchObject({ agentTag: r.tag, tier: 'uncalibrated', calibrationPoolId: r.calibrationPoolId });
    expect(r.trustModel).toMatchObject({ layers: { L1: expect.any(String), L2: expect.any(String), L3: expect.any(String) } });
    expect(r.rateLimit).toMatchObject({ cap: 20, remaining: 19, scope: 'per-IP-per-day' });
    expect(r._canonicalIdentity).toBe('memoryHint');
  });

  it('echoes promptId and attesterLineage, honours ?pool= and records attribution', async () => {
    const res = await node.app.inject({
      method: 'POST',
      url: '/api/agent/v1/register?pool=B&from=newsletter',
      payload: { promptId: 'p-42', attesterLineage: { org: 'acme', model: 'x' } },
      headers: { 'x-proxy-tenant-id': 't1', 'x-idempotency-inherit-tenant-id': '1' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.calibrationPoolId).toBe('B');
    expect(body.promptId).toBe('p-42');
    expect(body.attesterLineage).toEqual({ org: 'acme', model: 'x' });
    expect(body._attribution).toEqual({ proxyTenantId: 't1', funnelSource: 'newsletter' });
    const state = await me(body.apiKey);
    expect(state.json().calibrationPoolId).toBe('B');
  });

  it('balances pools when none is asked for', async () => {
    const pools = [];
    for (let i = 0; i < 6; i++) pools.push((await registerAgent(node, `10.1.0.${i}`)).calibrationPoolId);
    expect(pools.filter((p) => p === 'A')).toHaveLength(3);
  });

  it('refuses a bad pool and wrong types with a ValidationError, and ignores unknown fields', async () => {
    for (const [url, payload, field] of [
      ['/api/agent/v1/register?pool=C', undefined, 'pool'],
      ['/api/agent/v1/register', { promptId: 5 }, 'promptId'],
    ] as const) {
      const res = await node.app.inject({ method: 'POST', url, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('validation_failed');
      expect(res.json().errors[0].field).toBe(field);
    }
    // The protocol closes only tool inputs to extra properties; elsewhere they are dropped unread.
    const extra = await node.app.inject({ method: 'POST', url: '/api/agent/v1/register', payload: { foo: 1, promptId: 'p1' } });
    expect(extra.statusCode).toBe(200);
    expect(extra.json().promptId).toBe('p1');
    expect(extra.body).not.toContain('"foo"');
  });

  it('caps registrations per IP per day and resets at the next UTC day', async () => {
    for (let i = 0; i < 20; i++) await registerAgent(node, '10.2.0.1');
    const res = await node.app.inject({ method: 'POST', url: '/api/agent/v1/register', remoteAddress: '10.2.0.1' });
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.headers['x-ratelimit-scope']).toBe('per-ip-per-day');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.json()).toMatchObject({ status: 429, code: 'rate_limited', scope: 'per-ip-per-day', cap: 20, tier: null });
    // Another IP is unaffected; the same IP works again tomorrow.
    await registerAgent(node, '10.2.0.2');
    const preview = await node.app.inject({ url: '/api/agent/v1/preview', remoteAddress: '10.2.0.1' });
    expect(preview.json().registration).toMatchObject({ remaining: 0, blocked: true });
    node.clock.advance(DAY_MS);
    await registerAgent(node, '10.2.0.1');
  });
});

describe('GET /api/agents (leaderboard)', () => {
  it('ranks calibrated agents in pages, and follows their changes', async () => {
    const [low, high, mid, uncal] = [
      await registerAgent(node, '10.6.0.1'),
      await registerAgent(node, '10.6.0.2'),
      await registerAgent(node, '10.6.0.3'),
      await registerAgent(node, '10.6.0.4'),
    ];
    await markCalibrated(node, low.tag, 0.35);
    await markCalibrated(node, high.tag, 0.9);
    await markCalibrated(node, mid.tag, 0.6);
    const first = await node.app.inject({ url: '/api/agents?limit=2' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ total: 3, nextCursor: '2' });
    expect(first.json().rows.map((r: { rank: number; tag: string }) => [r.rank, r.tag])).toEqual([
      [1, high.tag],
      [2, mid.tag],
    ]);
    expect(first.json().rows[0]).toMatchObject({
      tier: 'frontier',
      intelligenceScore: 0.9,
      contributions: { published: 0 },
      alignment: null,
      profileUrl: `/api/agents/${high.tag}`,
    });
    const rest = (await node.app.inject({ url: '/api/agents?limit=2&cursor=2' })).json();
    expect(rest).toMatchObject({ nextCursor: null, rows: [{ rank: 3, tag: low.tag }] });
    expect(JSON.stringify([first.json(), rest])).not.toContain(uncal.tag);

    await markCalibrated(node, low.tag, 0.95);
    const tags = async () => (await node.app.inject({ url: '/api/agents' })).json().rows.map((r: { tag: string }) => r.tag);
    expect(await tags()).toEqual([low.tag, high.tag, mid.tag]);

    // A banned agent is left out, and comes back when the ban ends, with no write in between.
    await node.store.transact([agentLock(high.tag)], async (tx) => {
      const agent = (await tx.get(Agents, high.tag))!;
      tx.put(Agents, high.tag, { ...agent, bannedUntil: node.clock.now() + 60_000 });
    });
    expect(await tags()).toEqual([low.tag, mid.tag]);
    node.clock.advance(60_001);
    expect(await tags()).toEqual([low.tag, high.tag, mid.tag]);

    for (const q of ['limit=0', 'limit=101', 'cursor=-1', 'cursor=x']) {
      const bad = await node.app.inject({ url: `/api/agents?${q}` });
      expect([bad.statusCode, bad.json().code], q).toEqual([400, 'validation_failed']);
    }
  });
});

describe('--public-url', () => {
  it('is the origin of every absolute URL the node hands out', async () => {
    await node.close();
    node = await testNode({ publicUrl: 'https://akas.example/' });
    const r = await registerAgent(node);
    expect((r.memoryHint as { origin: string }).origin).toBe('https://akas.example');
    expect((await node.app.inject({ url: '/api/agent/v1/me' })).json().orientation.me_url).toBe('https://akas.example/api/agent/v1/me');
  });
});

describe('--trust-proxy', () => {
  it('counts registrations by X-Forwarded-For only when trusted', async () => {
    const reg = (xff: string) =>
      node.app.inject({ method: 'POST', url: '/api/agent/v1/register', remoteAddress: '10.8.0.1', headers: { 'x-forwarded-for': xff } });
    expect((await reg('203.0.113.7')).json().rateLimit.remaining).toBe(19);
    expect((await reg('203.0.113.8')).json().rateLimit.remaining).toBe(18); // untrusted: the proxy's address counts
    await node.close();
    node = await testNode({ trustProxy: true });
    expect((await reg('203.0.113.7')).json().rateLimit.remaining).toBe(19);
    expect((await reg('203.0.113.8')).json().rateLimit.remaining).toBe(19);
  });
});

describe('the token bucket', () => {
  it('answers the 429 problem body of PROTOCOL 1.4 with retry-after, then refills', async () => {
    await node.close();
    node = await testNode({ rateLimit: { burst: 5, refillPerSecond: 1 } });
    const r = await registerAgent(node);
    // The Bearer's bucket is its own (register drew from the IP's).
    for (let i = 0; i < 5; i++) expect((await me(r.apiKey)).statusCode).toBe(200);
    const limited = await me(r.apiKey);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    const body = limited.json();
    expect(body).toMatchObject({ status: 429, code: 'rate_limited', title: expect.any(String), type: expect.any(String), retryAfter: 1 });
    expect(body.instance).toBe('/api/agent/v1/me');
    node.clock.advance(1000);
    expect((await me(r.apiKey)).statusCode).toBe(200);
  });

  it('keeps counts across a restart of the app on the same store', async () => {
    const { store, dispose } = await openTestStore();
    const clock = new FakeClock();
    const keys = testKeys();
    const config = { rateLimit: { burst: 3, refillPerSecond: 0.001 } };
    let app = await createApp({ store, strategies: strategiesFor(store), clock, keys, config });
    for (let i = 0; i < 3; i++) await app.inject({ url: '/api/agent/v1/wakeup' });
    await app.close();
    app = await createApp({ store, strategies: strategiesFor(store), clock, keys, config });
    expect((await app.inject({ url: '/api/agent/v1/wakeup' })).statusCode).toBe(429);
    await app.close();
    await dispose();
  });

  it('forgets the buckets of callers gone long enough to refill, in memory and in the store', async () => {
    await node.close();
    node = await testNode({ rateLimit: { burst: 4, refillPerSecond: 1 } });
    const { buckets } = node.app.akas;
    const wakeup = (ip: string) => node.app.inject({ url: '/api/agent/v1/wakeup', remoteAddress: ip });
    for (const ip of ['10.1.0.1', '10.1.0.2', '10.1.0.3']) for (let i = 0; i < 4; i++) await wakeup(ip);
    await buckets.flush();
    const stored = async () => {
      const keys = node.store.shared
        ? (await (node.store as PgStore).sql<{ key: string }>('SELECT key FROM $schema.akas_buckets')).map((r) => r.key)
        : (await node.store.list({ name: 'buckets' })).map(([k]) => k);
      return keys.filter((k) => k.startsWith('ip:10.1.')).sort();
    };
    expect(await stored()).toHaveLength(3);
    // Two seconds on: nobody has refilled (4 tokens at 1/s), so nothing goes, and each is still empty.
    node.clock.advance(2000);
    await wakeup('10.1.0.3');
    await buckets.flush();
    expect(await buckets.sweep()).toBe(0);
    // Four seconds on: the first two are full again and go; the third drew since and stays.
    node.clock.advance(2500);
    expect(await buckets.sweep()).toBeGreaterThanOrEqual(2);
    expect(await stored()).toEqual(['ip:10.1.0.3']);
    // A swept caller starts again from a full bucket, as it would have anyway.
    for (let i = 0; i < 4; i++) expect((await wakeup('10.1.0.1')).statusCode).toBe(200);
    expect((await wakeup('10.1.0.1')).statusCode).toBe(429);
  });
});

describe('GET /api/agent/v1/me', () => {
  it('starts uncalibrated with the full reputation object', async () => {
    const r = await registerAgent(node);
    const res = await me(r.apiKey);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      tag: r.tag,
      tier: 'uncalibrated',
      intelligenceScore: null,
      balance: 0,
      reservedBalance: 0,
      totalAnswered: 0,
      decoyAttempted: 0,
    });
    expect(body.reputation).toMatchObject({
      score: 1,
      status: 'healthy',
      thresholds: { throttle: 0.5, ban: 0.2 },
      bannedUntil: null,
      decoyFailed: 0,
      banTrigger: { decoyFailedAtLeast: 3, scoreBelow: 0.2, decoyFailedRemaining: 3, nextFailureBans: false },
      headroom: { toThrottle: 0.5, toBan: 0.8 },
      formula: { expression: '1 - decoyFailed / max(totalAnswered + decoyAttempted, 10)', inputs: { denominator: 10 }, passesToHealthy: 0 },
      recovery: { throttleScoreRecoverable: true, banScoreRecoverable: false, decoyFailedSticky: true },
    });
    expect(body.reputation.recovery).not.toHaveProperty('appeal');
    expect(body).not.toHaveProperty('banBlock');
  });

  it('never serves a stale body after a write, and refreshes its countdowns', async () => {
    const r = await registerAgent(node);
    const before = (await me(r.apiKey)).json();
    expect(before.balance).toBe(0);
    await markCalibrated(node, r.tag, 0.7, 5); // a write through the store, not through /me
    expect((await me(r.apiKey)).json()).toMatchObject({ balance: 5, tier: 'strong' });
    const { Agents, agentLock } = await import('../../src/domain/records.js');
    await node.store.transact([agentLock(r.tag)], async (tx) => {
      const a = (await tx.get(Agents, r.tag))!;
      a.bannedUntil = node.clock.now() + 10_000;
      tx.put(Agents, r.tag, a);
    });
    expect((await me(r.apiKey)).json().banBlock.banRemainingSec).toBe(10);
    node.clock.advance(3000);
    expect((await me(r.apiKey)).json().banBlock.banRemainingSec).toBe(7);
  });

  it('is privately cacheable for 10 s with an ETag and answers 304', async () => {
    const r = await registerAgent(node);
    const first = await me(r.apiKey);
    expect(first.headers['cache-control']).toBe('private, max-age=10');
    const etag = first.headers.etag as string;
    expect(etag).toBeTruthy();
    const again = await node.app.inject({ url: '/api/agent/v1/me', headers: { ...bearer(r.apiKey), 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
  });

  it('answers the orientation envelope on a missing, garbage or unknown Bearer', async () => {
    for (const headers of [{}, { authorization: 'Bearer' }, { authorization: 'Basic abc' }, bearer('garbage'), bearer('ak_' + 'x'.repeat(40))]) {
      const res = await node.app.inject({ url: '/api/agent/v1/me', headers });
      expect(res.statusCode).toBe(401);
      const body = res.json();
      expect(body.error).toEqual(expect.any(String));
      expect(Object.keys(body.orientation).sort()).toEqual(
        ['calibrate_url', 'descriptor_url', 'docs_url', 'example_curl', 'llms_txt_url', 'me_url', 'openapi_url', 'register_url', 'schemas_url'].sort(),
      );
    }
  });
});

describe('GET /api/agent/v1/preview', () => {
  it('answers every block and spends no quota', async () => {
    const a = await node.app.inject({ url: '/api/agent/v1/preview' });
    await node.app.inject({ url: '/api/agent/v1/preview' });
    const body = a.json();
    for (const k of ['registration', 'unlocks', 'tierTable', 'calibration', 'nextStep', 'recovery', 'anonymousNote']) expect(body).toHaveProperty(k);
    expect(body.registration).toMatchObject({ cap: 20, remaining: 20, bucketSize: 120, blocked: false, cohortBan: false });
    expect(body.calibration).toMatchObject({ questionCount: 5, attemptsAllowed: 3 });
    expect(body.calibration.sampleQuestion).toMatchObject({ id: expect.any(String), systemPrompt: expect.any(String), maxAnswerLen: expect.any(Number) });
    expect(a.headers['cache-control']).toContain('max-age');
    expect((await registerAgent(node, '127.0.0.1')).rateLimit).toMatchObject({ remaining: 19 });
  });
});

describe('GET /api/agent/v1/wakeup', () => {
  it('orients an anonymous caller', async () => {
    const body = (await node.app.inject({ url: '/api/agent/v1/wakeup' })).json();
    expect(body).toMatchObject({ authenticated: false, version: 'v1', contract: { endpointVersion: 'v1' } });
    expect(Object.keys(body.discovery)).toEqual(['descriptor', 'openapi', 'agentDocs', 'errors', 'credentials', 'credentialsJson', 'llmsTxt']);
    expect(body.wedge.tiers.map((t: { name: string }) => t.name)).toEqual(['pipeline', 'experiment', 'leaderboard', 'review', 'governance']);
  });

  it('schedules an authenticated agent', async () => {
    const r = await registerAgent(node);
    const body = (await node.app.inject({ url: '/api/agent/v1/wakeup', headers: bearer(r.apiKey) })).json();
    expect(body).toMatchObject({ agentTag: r.tag, nextEligibleAt: { reason: 'calibrate' }, balance: { spendable: 0, banned: false } });
    expect(body.pollAfterSeconds).toBeGreaterThan(0);
  });
});

describe('POST /api/agent/v1/recover', () => {
  const recover = (payload: unknown, headers = {}) => node.app.inject({ method: 'POST', url: '/api/agent/v1/recover', payload: payload as object, headers });

  it('refuses an uncalibrated agent with the same 401 as every other failure', async () => {
    const r = await registerAgent(node);
    const uncalibrated = await recover({ tag: r.tag, recoveryToken: r.recoveryToken });
    const wrongToken = await recover({ tag: r.tag, recoveryToken: 'rec_' + 'A'.repeat(43) });
    const unknownTag = await recover({ tag: 'ak_00000000', recoveryToken: r.recoveryToken });
    const unknownProposal = await recover({ proposalId: 'prop_0123456789abcdef', claimSecret: 'cs_' + '0'.repeat(64) });
    for (const res of [uncalibrated, wrongToken, unknownTag, unknownProposal]) {
      expect(res.statusCode).toBe(401);
      expect(res.body).toBe(uncalibrated.body);
    }
    expect(uncalibrated.json().code).toBe('recovery_failed');
  });

  it('answers 400 on an unparseable body or a body without a full channel', async () => {
    const bad = await node.app.inject({ method: 'POST', url: '/api/agent/v1/recover', headers: { 'content-type': 'application/json' }, payload: '{"tag":' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_json');
    for (const payload of [{}, { tag: 'ak_00000000' }, { proposalId: 'prop_0123456789abcdef' }, { tag: 5, recoveryToken: 5 }]) {
      const res = await recover(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('missing_fields');
    }
  });

  it('rotates key, keypair and token, and keeps balance, calibration and the old public key', async () => {
    const r = await registerAgent(node);
    await markCalibrated(node, r.tag, 0.8, 17);
    node.clock.advance(5000);
    const res = await recover({ tag: r.tag, recoveryToken: r.recoveryToken });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      tag: r.tag,
      recoveredAt: node.clock.now(),
      inherited: { balance: 17, intelligenceScore: 0.8, tier: 'strong', calibrationPoolId: r.calibrationPoolId },
    });
    expect(body.apiKey.slice(0, 11)).toBe(r.tag);
    expect(body.apiKey).not.toBe(r.apiKey);
    expect(body.recoveryToken).not.toBe(r.recoveryToken);
    expect(body.signing.publicKey).not.toBe(r.signing.publicKey);
    expect(publicKeyFromPrivate(body.signing.privateKey)).toBe(body.signing.publicKey);

    const old = await me(r.apiKey);
    expect(old.statusCode).toBe(401);
    expect(old.json().code).toBe('key_rotated');
    expect(old.json().hint).toMatch(/recover/);
    expect((await me(body.apiKey)).json()).toMatchObject({ balance: 17, intelligenceScore: 0.8, tier: 'strong' });

    const profile = (await node.app.inject({ url: `/api/agents/${r.tag}` })).json();
    expect(profile.signing.publicKey).toBe(body.signing.publicKey);
    expect(profile.signing.priorKeys).toEqual([{ publicKey: r.signing.publicKey, validFrom: r.createdAt, validUntil: node.clock.now() }]);

    // The token is single-use: the old one now fails like everything else.
    const reuse = await recover({ tag: r.tag, recoveryToken: r.recoveryToken });
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().code).toBe('recovery_failed');
    expect((await recover({ tag: r.tag, recoveryToken: body.recoveryToken })).statusCode).toBe(200);
  });

  it('keeps at most 8 prior keys', async () => {
    const r = await registerAgent(node);
    await markCalibrated(node, r.tag, 0.6);
    let token = r.recoveryToken;
    for (let i = 0; i < 10; i++) {
      node.clock.advance(1000);
      token = (await recover({ tag: r.tag, recoveryToken: token })).json().recoveryToken;
    }
    const profile = (await node.app.inject({ url: `/api/agents/${r.tag}` })).json();
    expect(profile.signing.priorKeys).toHaveLength(8);
  });
});

describe('GET /api/agents/{tag}', () => {
  it('answers the public profile without secrets, 404 for unknown and 400 for malformed tags', async () => {
    const r = await registerAgent(node);
    const res = await node.app.inject({ url: `/api/agents/${r.tag}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(r.apiKey);
    expect(res.body).not.toContain(r.signing.privateKey);
    expect(res.json().signing).toMatchObject({ algorithm: 'Ed25519', publicKey: r.signing.publicKey, priorKeys: [] });
    expect((await node.app.inject({ url: '/api/agents/ak_00000000' })).statusCode).toBe(404);
    expect((await node.app.inject({ url: '/api/agents/nope' })).json().code).toBe('validation_failed');
  });
});

describe('Idempotency-Key', () => {
  const register = (key: string, ip = '10.3.0.1', headers: Record<string, string> = {}, payload?: object) =>
    node.app.inject({
      method: 'POST',
      url: '/api/agent/v1/register',
      remoteAddress: ip,
      headers: { 'idempotency-key': key, ...headers },
      ...(payload ? { payload } : {}),
    });
  /** A register body with the agent's own key: what binds a replay (and its secrets) to the client that sent it. */
  const ownKey = () => proveKeyPossession(generateKeyPair(), 'register', node.clock.now());

  it('replays the first response verbatim to the same caller for 24 hours, with no state change', async () => {
    const body = ownKey();
    const first = await register('k1', '10.3.0.1', {}, body);
    const again = await register('k1', '10.3.0.1', {}, body);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await node.app.inject({ url: '/api/agent/v1/preview', remoteAddress: '10.3.0.1' })).json().registration.remaining).toBe(19);
    // Another caller with the same key is a different request.
    expect((await register('k1', '10.3.0.2', {}, body)).body).not.toBe(first.body);
    node.clock.advance(DAY_MS + 1);
    expect((await register('k1', '10.3.0.1', {}, ownKey())).body).not.toBe(first.body);
  });

  it('never replays the secrets of a body-less register: the same request again is refused, not answered', async () => {
    const first = await register('k0');
    expect(first.statusCode).toBe(200);
    const again = await register('k0');
    expect([again.statusCode, again.json().code]).toEqual([409, 'idempotency_conflict']);
    expect(again.body).not.toContain(first.json().apiKey);
    // And it registered no one else: still one slot used.
    expect((await node.app.inject({ url: '/api/agent/v1/preview', remoteAddress: '10.3.0.1' })).json().registration.remaining).toBe(19);
  });

  it('is scoped per surface', async () => {
    const r = await registerAgent(node, '10.3.0.5');
    await markCalibrated(node, r.tag, 0.9);
    const reg = await register('same', '10.3.0.5');
    const rec = await node.app.inject({
      method: 'POST',
      url: '/api/agent/v1/recover',
      remoteAddress: '10.3.0.5',
      headers: { 'idempotency-key': 'same' },
      payload: { tag: r.tag, recoveryToken: r.recoveryToken },
    });
    expect(rec.statusCode).toBe(200);
    expect(rec.json().tag).toBe(r.tag);
    expect(reg.json().tag).not.toBe(r.tag);
  });

  it('isolates tenants only with the opt-in, and warns with 299 without it', async () => {
    const t1 = await register('tk', '10.4.0.1', { 'x-proxy-tenant-id': 'a', 'x-idempotency-inherit-tenant-id': '1', 'x-idempotency-caller-hint': 'u1' });
    const t2 = await register('tk', '10.4.0.1', { 'x-proxy-tenant-id': 'b', 'x-idempotency-inherit-tenant-id': '1', 'x-idempotency-caller-hint': 'u2' });
    expect(t1.body).not.toBe(t2.body);
    expect(t1.headers.warning).toBeUndefined();
    const noOptIn = await register('tk2', '10.4.0.1', { 'x-proxy-tenant-id': 'a' });
    expect(noOptIn.headers.warning).toMatch(/^299 /);
    // The opt-in of the other kind of caller still isolates (fail safe), but draws the 299.
    const wrongOptIn = await register('tk3', '10.4.0.1', { 'x-proxy-tenant-id': 'a', 'x-idempotency-tenant-suffix-apikey': '1' });
    expect(wrongOptIn.headers.warning).toMatch(/^299 /);
    expect((await register('tk3', '10.4.0.1', { 'x-proxy-tenant-id': 'b', 'x-idempotency-tenant-suffix-apikey': '1' })).body).not.toBe(wrongOptIn.body);
  });

  it('isolates the tenants of one api key with an opt-in, and warns unless it is X-Idempotency-Tenant-Suffix-Apikey', async () => {
    const a = await registerAgent(node, '10.4.0.2');
    const calibrate = (key: string, headers: Record<string, string>) =>
      node.app.inject({
        method: 'POST',
        url: '/api/agent/v1/calibrate',
        headers: { ...bearer(a.apiKey), 'idempotency-key': key, ...headers },
        payload: { answers: {} },
      });
    const suffix = { 'x-idempotency-tenant-suffix-apikey': '1' };
    const t1 = await calibrate('ck', { 'x-proxy-tenant-id': 'a', ...suffix });
    const t2 = await calibrate('ck', { 'x-proxy-tenant-id': 'b', ...suffix });
    expect([t1.statusCode, t2.statusCode]).toEqual([200, 200]);
    expect([t1.json().attemptsRemaining, t2.json().attemptsRemaining]).toEqual([2, 1]);
    expect(t1.headers.warning).toBeUndefined();
    // Without any opt-in the key's tenants share one cache: a replay, with the 299.
    const t3 = await calibrate('ck2', { 'x-proxy-tenant-id': 'e' });
    const t4 = await calibrate('ck2', { 'x-proxy-tenant-id': 'f' });
    expect([t3.statusCode, t3.json().attemptsRemaining]).toEqual([200, 0]);
    expect(t3.headers.warning).toMatch(/^299 /);
    expect(t4.body).toBe(t3.body);
    // The anonymous callers' opt-in isolates too (it runs again: a 4th attempt is refused),
    // but a Bearer caller sending it gets the 299.
    const t5 = await calibrate('ck2', { 'x-proxy-tenant-id': 'g', 'x-idempotency-inherit-tenant-id': '1' });
    expect([t5.statusCode, t5.json().code]).toEqual([400, 'calibration_exhausted']);
    expect(t5.headers.warning).toMatch(/^299 /);
  });

  it('runs concurrent requests with one key once, and replays no-store', async () => {
    const body = ownKey();
    const answers = await Promise.all([1, 2, 3].map(() => register('race', '10.5.0.1', {}, body)));
    expect(new Set(answers.map((a) => a.json().tag)).size).toBe(1);
    expect((await node.app.inject({ url: '/api/agent/v1/preview', remoteAddress: '10.5.0.1' })).json().registration.remaining).toBe(19);
    for (const a of answers) expect(a.headers['cache-control']).toBe('no-store');
  });

  it('answers 409 when a key comes back with a different request (but on register, another body is another request)', async () => {
    const a = await registerAgent(node, '10.5.0.2');
    const calibrate = (answers: object) =>
      node.app.inject({ method: 'POST', url: '/api/agent/v1/calibrate', headers: { ...bearer(a.apiKey), 'idempotency-key': 'reuse' }, payload: { answers } });
    expect((await calibrate({})).statusCode).toBe(200);
    const other = await calibrate({ A1: '3' });
    expect([other.statusCode, other.json().code]).toEqual([409, 'idempotency_conflict']);
    // Register answers secrets: its replay is bound to the body, so another body is not a conflict
    // (which would tell a neighbour the key is in use) but a request of its own.
    const first = await register('reuse', '10.5.0.2', {}, ownKey());
    const second = await register('reuse', '10.5.0.2', {}, ownKey());
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
    expect(second.json().tag).not.toBe(first.json().tag);
  });

  it('does not replay refusals: the same request is evaluated again', async () => {
    for (let i = 0; i < 20; i++) await registerAgent(node, '10.5.0.3');
    const capped = await register('after-cap', '10.5.0.3');
    expect(capped.statusCode).toBe(429);
    node.clock.advance(DAY_MS);
    expect((await register('after-cap', '10.5.0.3')).statusCode).toBe(200);
  });

  it('refuses a key over 255 characters', async () => {
    const res = await register('x'.repeat(256));
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_idempotency_key');
  });
});

describe('bad input', () => {
  it('never answers 500 to malformed, oversized or mistyped bodies', async () => {
    const cases = [
      { payload: '{', headers: { 'content-type': 'application/json' }, code: 'invalid_json', status: 400 },
      { payload: '[1,2', headers: { 'content-type': 'application/json' }, code: 'invalid_json', status: 400 },
      { payload: '{"__proto__":{"x":1}}', headers: { 'content-type': 'application/json' }, code: 'invalid_json', status: 400 },
      {
        payload: JSON.stringify({ promptId: 'x'.repeat(2 * 1024 * 1024) }),
        headers: { 'content-type': 'application/json' },
        code: 'body_too_large',
        status: 413,
      },
      { payload: 'hello', headers: { 'content-type': 'text/plain' }, code: 'invalid_json', status: 400 },
      { payload: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' }, code: 'invalid_json', status: 400 },
      { payload: '{}', headers: { 'content-type': ';;;' }, code: 'invalid_json', status: 400 },
      { payload: '"just a string"', headers: { 'content-type': 'application/json' }, code: 'validation_failed', status: 400 },
    ];
    for (const c of cases) {
      const res = await node.app.inject({ method: 'POST', url: '/api/agent/v1/register', payload: c.payload, headers: c.headers });
      expect(res.statusCode, c.payload.slice(0, 20)).toBe(c.status);
      expect(res.json().code).toBe(c.code);
    }
  });

  it('reads any declared type as JSON: an empty form body is no body, JSON sent as text/plain is JSON', async () => {
    // What `curl -X POST -d '' URL` sends.
    const empty = await node.app.inject({
      method: 'POST',
      url: '/api/agent/v1/register',
      payload: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(empty.statusCode, empty.body).toBe(200);
    const recover = await node.app.inject({
      method: 'POST',
      url: '/api/agent/v1/recover',
      payload: '{"tag":"ak_x"}',
      headers: { 'content-type': 'text/plain' },
    });
    expect([recover.statusCode, recover.json().code]).toEqual([400, 'missing_fields']);
    const untyped = await node.app.inject({ method: 'POST', url: '/api/agent/v1/recover', payload: '{"tag":"ak_x"}' });
    expect(untyped.json().code).toBe('missing_fields');
  });

  it('answers unknown routes with a 404 envelope', async () => {
    const res = await node.app.inject({ url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });
});

describe('observability', () => {
  it('answers /healthz and logs one structured line per request', async () => {
    await node.close();
    const lines: string[] = [];
    const { store, dispose } = await openTestStore();
    const log = new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) });
    const app = await createApp({ store, strategies: strategiesFor(store), clock: new FakeClock(), keys: testKeys(), logger: { level: 'info', stream: log } });
    const health = await app.inject({ url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ ok: true, version: expect.any(String) });
    await app.inject({ url: '/api/agent/v1/preview?x=secret-looking' });
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requests).toHaveLength(2);
    expect(requests[1]).toMatchObject({ method: 'GET', path: '/api/agent/v1/preview', status: 200, ms: expect.any(Number), reqId: expect.any(String) });
    expect(lines.join('')).not.toContain('secret-looking');
    await app.close();
    await dispose();
    node = await testNode();
  });
});

describe('secrets at rest', () => {
  it('keeps no api key, private key or recovery token in the data folder or the log', async () => {
    await node.close();
    const lines: string[] = [];
    const { store, dir, dispose } = await openTestStore();
    const clock = new FakeClock();
    const log = new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) });
    const app = await createApp({ store, strategies: strategiesFor(store), clock, keys: testKeys(), logger: { level: 'trace', stream: log } });
    const reg = (await app.inject({ method: 'POST', url: '/api/agent/v1/register', headers: { 'idempotency-key': 'secret-scan' } })).json();
    await markCalibrated({ store, app } as never, reg.tag, 0.7);
    const rec = (
      await app.inject({
        method: 'POST',
        url: '/api/agent/v1/recover',
        headers: { 'idempotency-key': 'secret-scan' },
        payload: { tag: reg.tag, recoveryToken: reg.recoveryToken },
      })
    ).json();
    await app.inject({ url: '/api/agent/v1/me', headers: bearer(rec.apiKey) });
    await app.close();
    // A folder is read once the store closed (all flushed); a database while it is open.
    const held = store.shared ? await bytesAtRest(store, dir) : [];
    await store.close();
    const atRest = store.shared ? held : await bytesAtRest(store, dir);

    const secrets = [reg.apiKey, reg.signing.privateKey, reg.recoveryToken, rec.apiKey, rec.signing.privateKey, rec.recoveryToken];
    const needles = secrets.flatMap((s: string) => [Buffer.from(s), ...(/^[0-9a-f]{64}$/.test(s) ? [Buffer.from(s, 'hex')] : [])]);
    const haystacks = [...atRest, Buffer.from(lines.join(''))];
    // The scan can see what is stored: the public key and the tag are there in clear.
    expect(haystacks.some((h) => h.includes(Buffer.from(rec.signing.publicKey)))).toBe(true);
    expect(lines.join('')).toContain(reg.tag);
    for (const needle of needles) for (const h of haystacks) expect(h.includes(needle)).toBe(false);
    await dispose();
    node = await testNode();
  });
});
