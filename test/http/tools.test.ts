import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/core/index.js';
import { loadChallengeBank } from '../../src/domain/calibration/bank.js';
import { checkLedger } from '../../src/domain/ledger.js';
import { bearer, testNode, type TestNode } from '../helpers/app.js';
import { agent } from '../helpers/flows.js';
import { generousRegexTimeLimit } from '../helpers/regex.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode();
});
afterEach(async () => {
  expect((await checkLedger(node.store)).problems).toEqual([]);
  await node.close();
});

const getChallenge = (apiKey: string) => node.app.inject({ url: '/api/agent/v1/challenge', headers: bearer(apiKey) });
const useTool = (apiKey: string, body: unknown) =>
  node.app.inject({ method: 'POST', url: '/api/agent/v1/use-tool', headers: bearer(apiKey), payload: body as object });
const me = async (apiKey: string) => (await node.app.inject({ url: '/api/agent/v1/me', headers: bearer(apiKey) })).json();

/** A well-formed answer for the challenge's schema (decoys get their accepted answer). */
function answerFor(challenge: { schemaName: string; userPrompt: string }, wrongDecoy = false) {
  const entry = loadChallengeBank().all.find((e) => e.userPrompt === challenge.userPrompt)!;
  if (entry.decoy) return { answer: wrongDecoy ? 'purple elephant' : entry.decoy.accept[0] };
  if (challenge.schemaName === 'tool-description') {
    return {
      answer:
        'Word Count reads any text you give it and tells you how many characters, words and sentences it holds, and how long it takes to ' +
        'read. Paste a draft, get the numbers at once, and trim it to fit the limit you are writing for.',
      confidence: 'high',
      model: { family: 'other', version: 'test' },
      via: 'local',
      elapsed_ms: 12,
    };
  }
  return { answer: 'a reasonable short answer' };
}

async function challengeFor(apiKey: string) {
  const res = await getChallenge(apiKey);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('GET /api/agent/v1/challenge', () => {
  it('serves a challenge without revealing decoys, each at most once a day, then 503 no_work', async () => {
    const a = await agent(node, 0.8, 10);
    const first = await challengeFor(a.apiKey);
    expect(first).toMatchObject({
      challengeId: expect.stringMatching(/^ch_[0-9a-f]{16}$/),
      expiresIn: expect.any(Number),
      submitVia: '/api/agent/v1/use-tool',
      reputation: 1,
    });
    expect(Object.keys(first.challenge).sort()).toEqual(['category', 'schemaName', 'systemPrompt', 'userPrompt']);
    const seen = new Set([first.challenge.userPrompt]);
    const bank = loadChallengeBank();
    for (;;) {
      const res = await getChallenge(a.apiKey);
      if (res.statusCode === 503) {
        expect(res.json().code).toBe('no_work');
        break;
      }
      const prompt = res.json().challenge.userPrompt;
      expect(seen.has(prompt)).toBe(false);
      seen.add(prompt);
      expect(seen.size).toBeLessThanOrEqual(bank.all.length);
    }
    // Every ordinary entry was served before the bank ran dry; decoys never outnumber them.
    for (const e of bank.normal) expect(seen.has(e.userPrompt)).toBe(true);
    // A day later the bank is open again.
    node.clock.advance(DAY_MS);
    expect((await getChallenge(a.apiKey)).statusCode).toBe(200);
  });

  it('needs a Bearer', async () => {
    expect((await getChallenge('')).statusCode).toBe(401);
  });
});

describe('POST /api/agent/v1/use-tool', () => {
  // A starved machine must not turn a refused pattern into regex_timeout (test/helpers/regex.ts).
  generousRegexTimeLimit();

  it('runs the tool, charges tier price x multiplier and piggybacks the next challenge', async () => {
    const a = await agent(node, 0.75, 20); // strong: price 2
    const c = await challengeFor(a.apiKey);
    const res = await useTool(a.apiKey, {
      challengeId: c.challengeId,
      answer: answerFor(c.challenge),
      tool: 'word-count',
      toolInput: { text: 'One two three. Four five!' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ ok: true, tool: 'word-count', result: { words: 5, sentences: 2 }, economy: { charged: 2, balance: 18 } });
    expect(body.nextChallenge).toMatchObject({ challengeId: expect.any(String), challenge: { schemaName: expect.any(String) } });
    const c2 = body.nextChallenge;
    const ex = await useTool(a.apiKey, {
      challengeId: c2.challengeId,
      answer: answerFor(c2.challenge),
      tool: 'extract',
      toolInput: { query: 'exponential backoff with jitter' },
    });
    expect(ex.json()).toMatchObject({
      result: { keywords: expect.arrayContaining(['exponential', 'backoff', 'jitter']), cached: false },
      economy: { charged: 4, balance: 14 },
    });
    expect((await me(a.apiKey)).totalAnswered + (await me(a.apiKey)).decoyAttempted).toBe(2);
  });

  it('refuses bad input with its envelope and charges nothing', async () => {
    const a = await agent(node, 0.95, 5); // frontier: price 1
    const c = await challengeFor(a.apiKey);
    const ok = { challengeId: c.challengeId, answer: answerFor(c.challenge), tool: 'url-info', toolInput: { url: 'https://example.org:8443/a/b?q=1' } };
    const cases: Array<[unknown, number, string]> = [
      [{ ...ok, tool: undefined }, 400, 'validation_failed'],
      [{ ...ok, toolInput: undefined }, 400, 'validation_failed'],
      [{ ...ok, answer: undefined }, 400, 'validation_failed'],
      [{ ...ok, tool: 'rm-rf' }, 400, 'validation_failed'],
      [{ ...ok, toolInput: { url: 'x', extra: 1 } }, 400, 'invalid_tool_input'],
      [{ ...ok, tool: 'regex-test', toolInput: { pattern: 'a' } }, 400, 'invalid_tool_input'],
      [{ ...ok, tool: 'regex-test', toolInput: { pattern: '(', text: 'a' } }, 400, 'invalid_pattern'],
      [{ ...ok, tool: 'regex-test', toolInput: { pattern: 'a', text: 'a', flags: 'q' } }, 400, 'invalid_pattern'],
      [{ ...ok, tool: 'word-count', toolInput: { text: 'x'.repeat(100_001) } }, 400, 'invalid_tool_input'],
      [{ ...ok, answer: { nope: 1 } }, 400, 'invalid_answer'],
      [{ ...ok, challengeId: 'ch_0000000000000000' }, 400, 'challenge_expired'],
    ];
    for (const [body, status, code] of cases) {
      const r = await useTool(a.apiKey, body);
      expect([r.statusCode, r.json().code], JSON.stringify(body).slice(0, 120)).toEqual([status, code]);
    }
    // A tool input's size limits come first (issue 22): 60 unknown keys get one error, not 60.
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    const wide = await useTool(a.apiKey, { ...ok, toolInput: { url: 'x', ...keys(60) } });
    expect([wide.statusCode, wide.json().code]).toEqual([400, 'invalid_tool_input']);
    expect(wide.json().errors).toHaveLength(1);
    expect(wide.json().errorCount ?? 1).toBe(1);
    // 5,000 are past what the route takes at all, refused before the body is parsed (issue 30).
    const wider = await useTool(a.apiKey, { ...ok, toolInput: { url: 'x', ...keys(5000) } });
    expect([wider.statusCode, wider.json().code]).toEqual([413, 'too_many_members']);
    expect((await me(a.apiKey)).balance).toBe(5);
    const good = await useTool(a.apiKey, ok);
    expect(good.json()).toMatchObject({
      result: { valid: true, protocol: 'https', host: 'example.org', port: '8443', path: '/a/b' },
      economy: { charged: 1, balance: 4 },
    });
    const reused = await useTool(a.apiKey, ok);
    expect(reused.json().code).toBe('challenge_expired');
    const bad = await useTool(a.apiKey, {
      ...ok,
      challengeId: good.json().nextChallenge.challengeId,
      answer: answerFor(good.json().nextChallenge.challenge),
      toolInput: { url: 'not a url' },
    });
    expect(bad.json().result).toMatchObject({ valid: false });
  });

  it('answers 402 for uncalibrated and poor agents, 403 for a refused tier', async () => {
    const uncal = await agent(node, null);
    const c = await challengeFor(uncal.apiKey);
    const body = { challengeId: c.challengeId, answer: answerFor(c.challenge), tool: 'word-count', toolInput: { text: 'hi' } };
    expect((await useTool(uncal.apiKey, body)).json().code).toBe('calibration_required');
    const refused = await agent(node, 0.1, 50);
    const rc = await challengeFor(refused.apiKey);
    const r = await useTool(refused.apiKey, { ...body, challengeId: rc.challengeId, answer: answerFor(rc.challenge) });
    expect([r.statusCode, r.json().code]).toEqual([403, 'tier_too_low']);
    const poor = await agent(node, 0.35, 14); // weak: 15 per call
    const pc = await challengeFor(poor.apiKey);
    const p = await useTool(poor.apiKey, { ...body, challengeId: pc.challengeId, answer: answerFor(pc.challenge) });
    expect([p.statusCode, p.json().code]).toEqual([402, 'insufficient_balance']);
    expect((await me(poor.apiKey)).balance).toBe(14);
  });

  it('lets exactly one of many concurrent calls spend the last credits', async () => {
    const a = await agent(node, 0.95, 3); // frontier: 1 per word-count, 2 per extract
    const challenges = [];
    for (let i = 0; i < 8; i++) challenges.push(await challengeFor(a.apiKey));
    const answers = await Promise.all(
      challenges.map((c, i) =>
        useTool(a.apiKey, {
          challengeId: c.challengeId,
          answer: answerFor(c.challenge),
          tool: i % 2 ? 'extract' : 'word-count',
          toolInput: i % 2 ? { query: 'race' } : { text: 'race' },
        }),
      ),
    );
    const charged = answers.filter((r) => r.statusCode === 200).reduce((s, r) => s + r.json().economy.charged, 0);
    expect(charged).toBeLessThanOrEqual(3);
    expect(charged).toBeGreaterThanOrEqual(2);
    for (const r of answers.filter((x) => x.statusCode !== 200)) expect(r.json().code).toBe('insufficient_balance');
    expect((await me(a.apiKey)).balance).toBe(3 - charged);
  });
  // A pattern stopped at the regex time limit is charged: test/http/regex-limits.test.ts.
});

describe('decoys and bans', () => {
  it('counts decoys, bans at the third failure for 24 hours, keeps /me and appeal open', async () => {
    await node.close();
    node = await testNode({ decoyRate: 1 });
    const a = await agent(node, 0.95, 20);
    let c = await challengeFor(a.apiKey);
    // A correct decoy answer counts as attempted, not failed.
    let r = (await useTool(a.apiKey, { challengeId: c.challengeId, answer: answerFor(c.challenge), tool: 'word-count', toolInput: { text: 'x' } })).json();
    expect(r.reputation).toMatchObject({ decoyFailed: 0, status: 'healthy' });
    for (let i = 1; i <= 3; i++) {
      c = r.nextChallenge;
      r = (await useTool(a.apiKey, { challengeId: c.challengeId, answer: answerFor(c.challenge, true), tool: 'word-count', toolInput: { text: 'x' } })).json();
      expect(r.reputation.decoyFailed).toBe(i);
    }
    expect(r.reputation.status).toBe('banned');
    expect(r.nextChallenge).toBeNull();
    const state = await me(a.apiKey);
    expect(state).toMatchObject({
      decoyAttempted: 4,
      bannedView: true,
      reputation: { status: 'banned', decoyFailed: 3, recovery: { appeal: { url: '/api/agent/v1/appeal', banExempt: true } } },
    });
    expect(state.banBlock).toMatchObject({ bannedUntil: node.clock.now() + DAY_MS, decoyFailed: 3, banRemainingSec: 86400 });
    const refused = await getChallenge(a.apiKey);
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'banned']);
    const appeal = await node.app.inject({
      method: 'POST',
      url: '/api/agent/v1/appeal',
      headers: bearer(a.apiKey),
      payload: { message: 'I misread the question.' },
    });
    expect(appeal.json()).toMatchObject({ status: 'received', slaHours: 72, appealId: expect.any(String) });
    node.clock.advance(DAY_MS);
    expect((await getChallenge(a.apiKey)).statusCode).toBe(200);
    expect((await me(a.apiKey)).reputation.decoyFailed).toBe(3);
  });
});

describe('GET /api/agent/v1/schemas', () => {
  it('lists every challenge schema and every tool with its multiplier and schemas', async () => {
    const body = (await node.app.inject({ url: '/api/agent/v1/schemas' })).json();
    expect(Object.keys(body.challenges).sort()).toEqual(['decoy', 'short-text', 'tool-description']);
    expect(body.challenges['tool-description'].responseSchema.required).toEqual(expect.arrayContaining(['answer', 'confidence', 'model', 'via', 'elapsed_ms']));
    expect(Object.fromEntries(Object.entries(body.tools).map(([k, v]) => [k, (v as { costMultiplier: number }).costMultiplier]))).toEqual({
      extract: 2,
      'regex-test': 1,
      'json-validate': 1,
      'word-count': 1,
      'url-info': 1,
    });
    for (const t of Object.values(body.tools) as Array<{ input: { additionalProperties: boolean } }>) expect(t.input.additionalProperties).toBe(false);
    expect(body).toMatchObject({ attestationCatalogUrl: expect.stringContaining('/credentials/index.json'), knowledgeDescriptorUrl: expect.any(String) });
  });
});
