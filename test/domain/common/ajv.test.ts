// The one ajv factory (src/domain/common/ajv.ts): every validator of src/, cli/ and verifier/ is
// made there, and each preset differs from the others exactly where its users need it to.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createAjv } from '../../../src/domain/common/ajv.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (statSync(join(ROOT, rel)).isDirectory()) return sources(rel);
    return /\.(ts|tsx)$/.test(name) ? [rel] : [];
  });
}

describe('createAjv', () => {
  it('is the only maker of ajv instances: no other file constructs one or adds formats', () => {
    const makers = ['src', 'cli', 'verifier']
      .flatMap(sources)
      .filter((file) => file !== 'src/domain/common/ajv.ts')
      .filter((file) => /new Ajv\w*\(|from 'ajv-formats'|^import Ajv/m.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(makers).toEqual([]);
  });

  const schema = {
    type: 'object',
    properties: { n: { type: 'number' }, at: { type: 'string', format: 'date-time' }, d: { type: 'string', default: 'x' } },
    required: ['n'],
    additionalProperties: false,
  };

  it('body: drops unknown fields and fills defaults, coerces nothing, refuses what JSON cannot hold', () => {
    const validate = createAjv('body').compile(schema);
    const value: Record<string, unknown> = { n: 1, extra: true };
    expect(validate(value)).toBe(true);
    expect(value).toEqual({ n: 1, d: 'x' });
    expect(validate({ n: '1' })).toBe(false);
    expect(validate({ n: Infinity })).toBe(false);
  });

  it('params: as a body, with strings coerced (query strings, path parameters and headers)', () => {
    const value: Record<string, unknown> = { n: '1' };
    expect(createAjv('params').compile(schema)(value)).toBe(true);
    expect(value).toEqual({ n: 1, d: 'x' });
  });

  it('candidate: every error, formats checked, nothing changed in the value', () => {
    const validate = createAjv('candidate').compile(schema);
    const value = { n: Infinity, at: 'yesterday', extra: true };
    expect(validate(value)).toBe(false);
    expect(validate.errors!.map((e) => e.keyword).sort()).toEqual(['additionalProperties', 'format', 'type']);
    expect(value).toEqual({ n: Infinity, at: 'yesterday', extra: true });
  });

  it('answer: every error, no format checked, nothing changed in the value', () => {
    const validate = createAjv('answer').compile(schema);
    const value = { n: 'one', at: 'yesterday', extra: true };
    expect(validate(value)).toBe(false);
    expect(validate.errors!.map((e) => e.keyword).sort()).toEqual(['additionalProperties', 'type']);
    expect(value).toEqual({ n: 'one', at: 'yesterday', extra: true });
  });

  it('response: every error and formats, numbers as JavaScript holds them', () => {
    const validate = createAjv('response').compile(schema);
    expect(validate({ n: Infinity })).toBe(true);
    expect(validate({ n: 1, at: 'yesterday', extra: true })).toBe(false);
    expect(validate.errors).toHaveLength(2);
  });

  it('limits: stops at the first error', () => {
    const validate = createAjv('limits').compile(schema);
    expect(validate({ n: 'one', extra: true })).toBe(false);
    expect(validate.errors).toHaveLength(1);
  });

  it('makes a fresh instance each call (schemas added to one are not in another)', () => {
    const a = createAjv('response');
    a.addSchema({ $id: 'only-a', type: 'string' });
    expect(a.getSchema('only-a')).toBeDefined();
    expect(createAjv('response').getSchema('only-a')).toBeUndefined();
  });
});
