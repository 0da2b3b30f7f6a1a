import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../src/core/index.js';
import { jsonValidate, jsonValidateTool } from '../../../../src/domain/challenges/tools/json-validate.js';
import { validateWithSchema } from '../../../../src/domain/common/validate.js';

describe('json-validate', () => {
  it.each([
    ['{"a": [1, 2]}', 'object'],
    ['[1, {"b": null}]', 'array'],
    ['"text"', 'string'],
    ['-1.5e3', 'number'],
    ['true', 'boolean'],
    ['null', 'null'],
    ['  \n {}  ', 'object'],
  ])('reports %s as valid %s', async (text, type) => {
    const out = await jsonValidate({ text });
    expect(out).toEqual({ valid: true, type, bytes: Buffer.byteLength(text) });
    expect(validateWithSchema(jsonValidateTool.output, out).ok).toBe(true);
  });

  it.each(['', '{a: 1}', "{'a': 1}", '[1, 2,]', '01', 'NaN', '{"a": 1} x', 'undefined'])('reports %j as invalid', async (text) => {
    expect(await jsonValidate({ text })).toEqual({ valid: false, type: 'invalid', bytes: Buffer.byteLength(text) });
  });

  it('counts UTF-8 bytes, not characters', async () => {
    expect((await jsonValidate({ text: '"é😀"' })).bytes).toBe(1 + 2 + 4 + 1);
  });

  it('handles deep nesting at the size limit', async () => {
    const text = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    expect(await jsonValidate({ text })).toEqual({ valid: true, type: 'array', bytes: 100_000 });
  });

  it('refuses a text over 100000 characters with invalid_tool_input', async () => {
    await expect(jsonValidate({ text: ' '.repeat(100_001) })).rejects.toSatisfy((e) => e instanceof ServiceError && e.code === 'invalid_tool_input');
  });
});
