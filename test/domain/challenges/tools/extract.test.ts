import { beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../src/core/index.js';
import { clearExtractCache, extract, extractTool, keywordsOf, normalizeQuery } from '../../../../src/domain/challenges/tools/extract.js';
import { validateWithSchema } from '../../../../src/domain/common/validate.js';

beforeEach(() => clearExtractCache());

describe('extract', () => {
  it('drops stop-words and keeps content words in order of first appearance, then adjacent pairs', async () => {
    const out = await extract({ query: 'How do I train a machine learning model on my own images?' });
    expect(out).toEqual({
      keywords: ['train', 'machine', 'learning', 'model', 'images', 'machine learning', 'learning model'],
      cached: false,
    });
    expect(validateWithSchema(extractTool.output, out).ok).toBe(true);
  });

  it('does not pair words across punctuation or a stop-word', () => {
    expect(keywordsOf(normalizeQuery('apples, oranges and pears'))).toEqual(['apples', 'oranges', 'pears']);
  });

  it('lowercases, deduplicates and drops possessives and one-letter words (which break a pair), keeping numbers', () => {
    expect(keywordsOf(normalizeQuery("Newton's Laws: NEWTON laws x 3 state-of-the-art"))).toEqual([
      'newton',
      'laws',
      '3',
      'state-of-the-art',
      'newton laws',
      '3 state-of-the-art',
    ]);
  });

  it('treats the query as text, never as a regex', async () => {
    const out = await extract({ query: '(a+)+$ [unclosed *' });
    expect(out.keywords).toEqual(['unclosed']);
  });

  it('answers only-stop-word queries with no keywords', async () => {
    expect((await extract({ query: 'what is the' })).keywords).toEqual([]);
  });

  it('handles non-Latin scripts and accents', async () => {
    expect((await extract({ query: 'Café crème à Zürich' })).keywords).toEqual(['café', 'crème', 'zürich', 'café crème']);
  });

  it('serves a repeated query from the cache, keyed by the normalised query', async () => {
    const first = await extract({ query: 'Signed  Judgments' });
    const second = await extract({ query: '  signed judgments ' });
    expect(first.cached).toBe(false);
    expect(second).toEqual({ keywords: first.keywords, cached: true });
    second.keywords.push('mutated');
    expect((await extract({ query: 'signed judgments' })).keywords).toEqual(first.keywords);
  });

  it('refuses input outside the schema with invalid_tool_input', async () => {
    for (const input of [{ query: '' }, { query: 'x'.repeat(501) }, { query: 'ok', more: true }, {}, { query: 3 }]) {
      await expect(extract(input as never)).rejects.toSatisfy((e) => e instanceof ServiceError && e.code === 'invalid_tool_input');
    }
  });

  it('accepts a query of exactly 500 characters', async () => {
    const out = await extract({ query: 'word '.repeat(100) });
    expect(out.keywords).toEqual(['word', 'word word']);
  });
});
