// Issue 30, finding 4: regex-test compiled a pattern before it limited it. A 720,000-character
// pattern compiled for over a second past the 50 ms limit, the call was free and its challenge
// could be sent again, so one agent kept the node's one regex worker busy. Now, over real HTTP
// against a node listening on 127.0.0.1: the pattern is capped in the schema, and a call stopped
// at the limit is charged and uses its challenge up. No assertion here reads a clock: the
// timeout is either a pattern that never finishes or a call a test hook holds and expires.
import { afterEach, describe, expect, it } from 'vitest';
import { loadChallengeBank } from '../../src/domain/calibration/bank.js';
import { checkLedger } from '../../src/domain/ledger.js';
import { holdNextRegexForTests, REGEX_PATTERN_MAX } from '../../src/domain/challenges/tools/regex-test.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { agent, type Agent } from '../helpers/flows.js';
import { generousRegexBackstop } from '../helpers/regex.js';

generousRegexBackstop();

let node: TestNode;
let base: string;

async function open() {
  // No decoys: every challenge takes the same kind of answer.
  node = await testNode({ decoyRate: 0 });
  base = await node.app.listen({ host: '127.0.0.1', port: 0 });
}
afterEach(async () => {
  expect((await checkLedger(node.store)).problems).toEqual([]);
  await node.close();
});

async function send(method: string, path: string, a?: Agent, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(a ? { authorization: `Bearer ${a.apiKey}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** A well-formed answer to a challenge of the bank. */
function answerFor(challenge: { schemaName: string; userPrompt: string }) {
  const entry = loadChallengeBank().all.find((e) => e.userPrompt === challenge.userPrompt)!;
  if (entry.decoy) return { answer: entry.decoy.accept[0] };
  if (challenge.schemaName !== 'tool-description') return { answer: 'a reasonable short answer' };
  return {
    answer: 'Word Count reads any text you give it and tells you how many characters, words and sentences it holds, and how long it takes to read.',
    confidence: 'high',
    model: { family: 'other', version: 'test' },
    via: 'local',
    elapsed_ms: 12,
  };
}

async function regexCall(a: Agent, toolInput: Record<string, unknown>) {
  const c = await send('GET', '/api/agent/v1/challenge', a);
  expect(c.status).toBe(200);
  const body = { challengeId: c.body.challengeId, answer: answerFor(c.body.challenge), tool: 'regex-test', toolInput };
  return { body, answer: send('POST', '/api/agent/v1/use-tool', a, body) };
}

const balanceOf = async (a: Agent) => (await send('GET', '/api/agent/v1/me', a)).body.balance as number;

/** A pattern no machine finishes on this text: 2^40 ways to split the a's before the '!'. */
const CATASTROPHIC = { pattern: '(a+)+$', text: `${'a'.repeat(40)}!` };

describe('finding 4: regex-test limits what it compiles, and a timeout is paid for', () => {
  it('refuses a pattern over 1,000 characters before anything runs, naming the field, charging nothing', async () => {
    await open();
    const a = await agent(node, 0.95, 10); // frontier: 1 credit per regex-test
    const { body, answer } = await regexCall(a, { pattern: 'a'.repeat(REGEX_PATTERN_MAX + 1), text: 'a' });
    const r = await answer;
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_tool_input');
    expect(r.body.errors).toEqual([{ field: 'toolInput.pattern', reason: `must NOT have more than ${REGEX_PATTERN_MAX} characters` }]);
    expect(await balanceOf(a)).toBe(10);
    // Nothing ran: the same challenge still answers, with a pattern at the cap.
    const ok = await send('POST', '/api/agent/v1/use-tool', a, {
      ...body,
      toolInput: { pattern: 'a'.repeat(REGEX_PATTERN_MAX), text: 'a'.repeat(REGEX_PATTERN_MAX) },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ result: { matches: [{ index: 0 }] }, economy: { charged: 1, balance: 9 } });
  });

  it('stops a catastrophic pattern with regex_timeout, charges the call and uses its challenge up', async () => {
    await open();
    const a = await agent(node, 0.75, 10); // strong: 2 credits per regex-test
    const { body, answer } = await regexCall(a, CATASTROPHIC);
    const r = await answer;
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'regex_timeout', tool: 'regex-test', charged: 2, balance: 8 });
    expect(await balanceOf(a)).toBe(8);
    const replay = await send('POST', '/api/agent/v1/use-tool', a, { ...body, toolInput: { pattern: 'a', text: 'a' } });
    expect([replay.status, replay.body.code]).toEqual([400, 'challenge_expired']);
    expect(await balanceOf(a)).toBe(8);
    expect((await send('GET', '/api/agent/v1/me', a)).body.totalAnswered).toBe(1);
  });

  it('keeps serving everyone while a pattern runs, and charges the call the limit stops', async () => {
    await open();
    const slow = await agent(node, 0.95, 10);
    const other = await agent(node, 0.95, 10);
    // The call is held in the worker, with no limit, until the test expires it as the limit would.
    const held = holdNextRegexForTests();
    const { body, answer } = await regexCall(slow, CATASTROPHIC);
    let settled = false;
    void answer.then(() => (settled = true));
    await held.sent;
    expect((await send('GET', '/healthz')).status).toBe(200);
    const c = await send('GET', '/api/agent/v1/challenge', other);
    const words = await send('POST', '/api/agent/v1/use-tool', other, {
      challengeId: c.body.challengeId,
      answer: answerFor(c.body.challenge),
      tool: 'word-count',
      toolInput: { text: 'one two' },
    });
    expect(words.body).toMatchObject({ result: { words: 2 }, economy: { charged: 1 } });
    expect(settled).toBe(false);
    held.expire();
    const r = await answer;
    expect([r.status, r.body.code, r.body.charged]).toEqual([400, 'regex_timeout', 1]);
    expect(await balanceOf(slow)).toBe(9);
    expect((await send('POST', '/api/agent/v1/use-tool', slow, body)).body.code).toBe('challenge_expired');
    // The worker was replaced: the next pattern runs.
    const next = await regexCall(slow, { pattern: 'b', text: 'abc' });
    expect((await next.answer).body).toMatchObject({ result: { matches: [{ match: 'b', index: 1, groups: [] }] }, economy: { charged: 1, balance: 8 } });
  });
});
