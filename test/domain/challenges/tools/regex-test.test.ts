import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../src/core/index.js';
import { ToolError } from '../../../../src/domain/challenges/tools/errors.js';
import { generousRegexBackstop, generousRegexTimeLimit } from '../../../helpers/regex.js';
import {
  closeRegexWorker,
  holdNextRegexForTests,
  REGEX_MAX_MATCHES,
  REGEX_PATTERN_MAX,
  regexTest,
  regexTestTool,
  setRegexLimitsForTests,
  warmRegexWorker,
} from '../../../../src/domain/challenges/tools/regex-test.js';
import { validateWithSchema } from '../../../../src/domain/common/validate.js';

// Room for a CPU-starved test machine (test/helpers/regex.ts); one test below sets a short
// backstop on purpose.
generousRegexBackstop();

// The code a rejected promise carries, or 'resolved'.
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    if (e instanceof ServiceError || e instanceof ToolError) return e.code;
    throw e;
  }
}

describe('regex-test matching', () => {
  generousRegexTimeLimit();

  it('lists every match with its index and capture groups, appending g', async () => {
    const out = await regexTest({ pattern: '(\\w+)@(\\w+)\\.org', text: 'mail ann@foo.org or bob@bar.org', flags: '' });
    expect(out).toEqual({
      matches: [
        { match: 'ann@foo.org', index: 5, groups: ['ann', 'foo'] },
        { match: 'bob@bar.org', index: 20, groups: ['bob', 'bar'] },
      ],
    });
    expect(validateWithSchema(regexTestTool.output, out).ok).toBe(true);
  });

  it('appends g when flags are omitted and keeps the other flags', async () => {
    expect((await regexTest({ pattern: 'a', text: 'aXa' })).matches.map((m) => m.index)).toEqual([0, 2]);
    const ci = await regexTest({ pattern: 'x', text: 'xX', flags: 'i' });
    expect(ci.matches.map((m) => m.match)).toEqual(['x', 'X']);
    const already = await regexTest({ pattern: 'x', text: 'xx', flags: 'gi' });
    expect(already.matches).toHaveLength(2);
  });

  it("gives '' for a group that did not take part, and named groups by position", async () => {
    const out = await regexTest({ pattern: '(?<a>a)|(?<b>b)', text: 'ab' });
    expect(out.matches).toEqual([
      { match: 'a', index: 0, groups: ['a', ''] },
      { match: 'b', index: 1, groups: ['', 'b'] },
    ]);
  });

  it('handles empty matches without looping, and unicode indexes in UTF-16 units', async () => {
    expect((await regexTest({ pattern: 'x*', text: 'ab' })).matches).toHaveLength(3);
    const out = await regexTest({ pattern: '\\p{Emoji_Presentation}', text: 'a😀b😀', flags: 'u' });
    expect(out.matches.map((m) => m.index)).toEqual([1, 4]);
  });

  it('supports backreferences and lookaround (ECMAScript, not RE2)', async () => {
    const out = await regexTest({ pattern: '(\\w)\\1(?=!)', text: 'aa! bb? cc!' });
    expect(out.matches.map((m) => m.match)).toEqual(['aa', 'cc']);
  });

  it('returns no matches as an empty list', async () => {
    expect(await regexTest({ pattern: 'z', text: 'abc' })).toEqual({ matches: [] });
  });

  it('caps the number of matches and says so', async () => {
    const out = await regexTest({ pattern: '.', text: 'x'.repeat(REGEX_MAX_MATCHES + 50) });
    expect(out.matches).toHaveLength(REGEX_MAX_MATCHES);
    expect(out.truncated).toBe(true);
    expect(validateWithSchema(regexTestTool.output, out).ok).toBe(true);
  });

  it('caps the total output size of many groups over every position', async () => {
    const pattern = '(?=(.*))'.repeat(50);
    const out = await regexTest({ pattern, text: 'y'.repeat(5000) });
    expect(out.truncated).toBe(true);
    expect(out.matches.length).toBeLessThan(REGEX_MAX_MATCHES);
  });
});

describe('regex-test refusals', () => {
  generousRegexTimeLimit();

  it('refuses an invalid pattern with invalid_pattern', async () => {
    for (const pattern of ['(', '[a-', 'a{2,1}', '*a', '(?<n>a)(?<n>b)']) {
      expect(await codeOf(regexTest({ pattern, text: 'abc' }))).toBe('invalid_pattern');
    }
  });

  it('refuses invalid flags with invalid_pattern', async () => {
    for (const flags of ['x', 'ii', 'uv', 'g g']) {
      expect(await codeOf(regexTest({ pattern: 'a', text: 'a', flags }))).toBe('invalid_pattern');
    }
  });

  it('refuses input outside the schema with invalid_tool_input', async () => {
    expect(await codeOf(regexTest({ pattern: 'a', text: 'a'.repeat(5001) }))).toBe('invalid_tool_input');
    expect(await codeOf(regexTest({ pattern: 'a'.repeat(REGEX_PATTERN_MAX + 1), text: 'a' }))).toBe('invalid_tool_input');
    expect(await codeOf(regexTest({ pattern: 'a', text: 'a', flags: 'dgimsuvy!' }))).toBe('invalid_tool_input');
    expect(await codeOf(regexTest({ pattern: 'a', text: 'a', extra: 1 } as never))).toBe('invalid_tool_input');
    expect(await codeOf(regexTest({ text: 'a' } as never))).toBe('invalid_tool_input');
  });
});

describe('regex-test time limit', () => {
  it.each([
    ['(a+)+$', `${'a'.repeat(30)}!`],
    ['(x+x+)+y', 'x'.repeat(5000)],
    ['(a|aa)+$', `${'a'.repeat(100)}!`],
    ['^(\\w+\\s?)*$', `${'word '.repeat(40)}!`],
  ])('stops %s with regex_timeout', async (pattern, text) => {
    expect(await codeOf(regexTest({ pattern, text }))).toBe('regex_timeout');
  });

  it('keeps the main thread free while a bad pattern runs', async () => {
    await warmRegexWorker();
    // Held in the worker with no limit until expired: the main thread's timers run meanwhile,
    // whatever the machine's load (no tick count raced against the 50 ms).
    const held = holdNextRegexForTests();
    let settled = false;
    const code = codeOf(regexTest({ pattern: '(a+)+$', text: `${'a'.repeat(40)}!` })).finally(() => (settled = true));
    await held.sent;
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(settled).toBe(false);
    held.expire();
    expect(await code).toBe('regex_timeout');
    expect((await regexTest({ pattern: 'a', text: 'ba' })).matches).toHaveLength(1);
  });

  it('answers the calls queued behind a bad pattern, in order', async () => {
    const bad = codeOf(regexTest({ pattern: '(a|aa)+$', text: `${'a'.repeat(100)}!` }));
    const good = regexTest({ pattern: 'b', text: 'abc' });
    expect(await bad).toBe('regex_timeout');
    expect((await good).matches).toEqual([{ match: 'b', index: 1, groups: [] }]);
  });

  it('replaces a worker that does not answer in time (backstop) and serves the next call', async () => {
    // A vm limit far above the backstop makes the worker "stuck" as far as the main side knows.
    const prev = setRegexLimitsForTests({ timeLimitMs: 60_000, backstopMs: 300 });
    try {
      expect(await codeOf(regexTest({ pattern: '(a+)+$', text: `${'a'.repeat(40)}!` }))).toBe('regex_timeout');
    } finally {
      setRegexLimitsForTests(prev);
    }
    expect((await regexTest({ pattern: 'a', text: 'ba' })).matches).toEqual([{ match: 'a', index: 1, groups: [] }]);
  });

  it('starts a fresh worker after closeRegexWorker', async () => {
    await closeRegexWorker();
    expect((await regexTest({ pattern: 'c', text: 'abc' })).matches[0].index).toBe(2);
  });

  it('fails calls still waiting when closed with regex_unavailable', async () => {
    holdNextRegexForTests();
    const slow = codeOf(regexTest({ pattern: '(a+)+$', text: `${'a'.repeat(40)}!` }));
    const waiting = codeOf(regexTest({ pattern: 'a', text: 'a' }));
    await closeRegexWorker();
    expect(await slow).toBe('regex_unavailable');
    expect(await waiting).toBe('regex_unavailable');
  });
});
