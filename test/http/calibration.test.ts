import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CALIBRATION_BONUS, tierOf } from '../../src/core/index.js';
import { loadPools } from '../../src/domain/calibration/scoring.js';
import { checkLedger } from '../../src/domain/ledger.js';
import { bearer, registerAgent, testNode, type TestNode } from '../helpers/app.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode();
});
afterEach(async () => {
  expect((await checkLedger(node.store)).problems).toEqual([]);
  await node.close();
});

/** Answers: the first `right` questions with the expected answer, the rest left blank (score 0). */
function answers(pool: 'A' | 'B', right: number): Record<string, string> {
  return Object.fromEntries(loadPools()[pool].map((q, i) => [q.id, i < right ? q.expected : '']));
}

const post = (apiKey: string, body: unknown, headers: Record<string, string> = {}) =>
  node.app.inject({ method: 'POST', url: '/api/agent/v1/calibrate', headers: { ...bearer(apiKey), ...headers }, payload: body as object });

describe('tier bands (PROTOCOL 3.3)', () => {
  it('puts each edge in the higher band', () => {
    expect([
      tierOf(null),
      tierOf(0),
      tierOf(0.2999),
      tierOf(0.3),
      tierOf(0.4999),
      tierOf(0.5),
      tierOf(0.6999),
      tierOf(0.7),
      tierOf(0.8999),
      tierOf(0.9),
      tierOf(1),
    ]).toEqual(['uncalibrated', 'refused', 'refused', 'weak', 'weak', 'mid', 'mid', 'strong', 'strong', 'frontier', 'frontier']);
  });
});

describe('GET /api/agent/v1/calibrate', () => {
  it('serves the 5 questions of the sticky pool without expected answers', async () => {
    const a = await registerAgent(node, '10.0.0.1', '?pool=B');
    const res = await node.app.inject({ url: '/api/agent/v1/calibrate', headers: bearer(a.apiKey) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ poolId: 'B', attemptsRemaining: 3 });
    expect(body.questions).toHaveLength(5);
    for (const q of body.questions) expect(Object.keys(q).sort()).toEqual(['id', 'maxAnswerLen', 'systemPrompt', 'userPrompt']);
    expect((await node.app.inject({ url: '/api/agent/v1/calibrate' })).statusCode).toBe(401);
  });
});

describe('POST /api/agent/v1/calibrate', () => {
  it('scores a perfect attempt as frontier and pays the bonus once', async () => {
    const a = await registerAgent(node, '10.0.0.1', '?pool=A');
    const res = await post(a.apiKey, { answers: answers('A', 5) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      intelligenceScore: 1,
      tier: 'frontier',
      calibrationBonus: 10,
      balance: 10,
      attemptsRemaining: 2,
      nextStep: { action: 'judge' },
    });
    expect(Object.keys(body.perQuestion)).toEqual(loadPools().A.map((q) => q.id));
    // A worse re-attempt keeps the best score and pays nothing.
    const worse = (await post(a.apiKey, { answers: answers('A', 1) })).json();
    expect(worse).toMatchObject({
      intelligenceScore: 1,
      attemptScore: 0.2,
      tier: 'frontier',
      calibrationBonus: 0,
      balance: 10,
      attemptsRemaining: 1,
      improved: false,
    });
    await post(a.apiKey, { answers: answers('A', 5) });
    const exhausted = await post(a.apiKey, { answers: answers('A', 5) });
    expect([exhausted.statusCode, exhausted.json().code]).toEqual([400, 'calibration_exhausted']);
    const me = (await node.app.inject({ url: '/api/agent/v1/me', headers: bearer(a.apiKey) })).json();
    expect(me).toMatchObject({ tier: 'frontier', intelligenceScore: 1, balance: 10 });
  });

  it("pays the bonus at the first attempt scoring 0.3 or more, by that attempt's tier", async () => {
    const a = await registerAgent(node, '10.0.0.2', '?pool=B');
    const refused = (await post(a.apiKey, { answers: answers('B', 1) })).json();
    expect(refused).toMatchObject({ intelligenceScore: 0.2, tier: 'refused', calibrationBonus: 0, balance: 0, nextStep: { action: 'recalibrate' } });
    const weak = (await post(a.apiKey, { answers: answers('B', 2) })).json();
    expect(weak).toMatchObject({ intelligenceScore: 0.4, tier: 'weak', calibrationBonus: CALIBRATION_BONUS.weak, balance: 15 });
    const mid = (await post(a.apiKey, { answers: answers('B', 3) })).json();
    expect(mid).toMatchObject({ intelligenceScore: 0.6, tier: 'mid', calibrationBonus: 0, balance: 15, improved: true });
  });

  it('refuses answers outside the pool, bad shapes and a missing Bearer, and charges no attempt', async () => {
    const a = await registerAgent(node, '10.0.0.3', '?pool=A');
    const foreign = await post(a.apiKey, { answers: { B1: 'x' } });
    expect([foreign.statusCode, foreign.json().code]).toEqual([400, 'validation_failed']);
    expect(foreign.json().errors[0].field).toBe('answers.B1');
    for (const bad of [{}, { answers: 'x' }, { answers: { A1: 5 } }]) {
      const r = await post(a.apiKey, bad);
      expect([r.statusCode, r.json().code]).toEqual([400, 'validation_failed']);
    }
    const json = await node.app.inject({
      method: 'POST',
      url: '/api/agent/v1/calibrate',
      headers: { ...bearer(a.apiKey), 'content-type': 'application/json' },
      payload: '{',
    });
    expect(json.json().code).toBe('invalid_json');
    expect((await node.app.inject({ method: 'POST', url: '/api/agent/v1/calibrate', payload: { answers: {} } })).statusCode).toBe(401);
    const q = (await node.app.inject({ url: '/api/agent/v1/calibrate', headers: bearer(a.apiKey) })).json();
    expect(q.attemptsRemaining).toBe(3);
  });

  it('replays an attempt with the same Idempotency-Key without using another attempt', async () => {
    const a = await registerAgent(node, '10.0.0.4', '?pool=A');
    const h = { 'idempotency-key': 'cal-1' };
    const first = await post(a.apiKey, { answers: answers('A', 4) }, h);
    const again = await post(a.apiKey, { answers: answers('A', 4) }, h);
    expect(again.body).toBe(first.body);
    expect(first.json().attemptsRemaining).toBe(2);
    expect((await node.app.inject({ url: '/api/agent/v1/calibrate', headers: bearer(a.apiKey) })).json().attemptsRemaining).toBe(2);
  });
});
