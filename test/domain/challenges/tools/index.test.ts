import AjvModule from 'ajv';
import { describe, expect, it } from 'vitest';
import { isToolName, runTool, TOOL_NAMES, TOOLS, validateToolInput } from '../../../../src/domain/challenges/tools/index.js';
import { generousRegexBackstop, generousRegexTimeLimit } from '../../../helpers/regex.js';

const Ajv = AjvModule as unknown as typeof AjvModule.default;

// A generous backstop so a CPU-starved test machine cannot fail the one regex call here.
generousRegexBackstop();

describe('tool registry', () => {
  generousRegexTimeLimit();

  it('lists the five tools of PROTOCOL 4.4 with their cost multipliers', () => {
    expect(TOOL_NAMES).toEqual(['extract', 'regex-test', 'json-validate', 'word-count', 'url-info']);
    expect(Object.fromEntries(TOOL_NAMES.map((n) => [n, TOOLS[n].costMultiplier]))).toEqual({
      extract: 2,
      'regex-test': 1,
      'json-validate': 1,
      'word-count': 1,
      'url-info': 1,
    });
    for (const n of TOOL_NAMES) {
      expect(TOOLS[n].name).toBe(n);
      expect(TOOLS[n].description.length).toBeGreaterThan(20);
    }
  });

  it('publishes input and output schemas that a strict ajv 8 compiles, inputs closed', () => {
    const ajv = new Ajv({ strict: true, strictTypes: false });
    for (const n of TOOL_NAMES) {
      expect(() => ajv.compile(TOOLS[n].input)).not.toThrow();
      expect(() => ajv.compile(TOOLS[n].output)).not.toThrow();
      expect(TOOLS[n].input.additionalProperties).toBe(false);
      expect(TOOLS[n].output.additionalProperties).toBe(false);
    }
  });

  it('validates a tool input and names the fields under toolInput', () => {
    expect(validateToolInput('extract', { query: 'ok' })).toEqual({ ok: true });
    const bad = validateToolInput('regex-test', { text: 'a', flags: 1, other: true });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.errors.map((e) => e.field).sort()).toEqual(['toolInput.flags', 'toolInput.other', 'toolInput.pattern']);
    }
  });

  it('runs a tool by name', async () => {
    expect(await runTool('url-info', { url: 'https://a.example/x' })).toMatchObject({ valid: true, host: 'a.example' });
    expect((await runTool('regex-test', { pattern: 'b', text: 'abc' })).matches[0].index).toBe(1);
    expect(isToolName('extract')).toBe(true);
    expect(isToolName('toString')).toBe(false);
  });
});
