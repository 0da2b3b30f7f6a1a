import { describe, expect, it } from 'vitest';
import { cosineSimilarity, exactMatch, normalizeText, trigramCosine, wordCosine } from '../../../src/domain/calibration/similarity.js';

describe('normalizeText', () => {
  it('folds compatibility forms, case, diacritics, punctuation and white space', () => {
    expect(normalizeText('  Ｈｅｌｌｏ,\tWÖRLD!!  Café—crème ')).toBe('hello world cafe creme');
    expect(normalizeText('H₂O')).toBe('h2o');
    expect(normalizeText('...')).toBe('');
  });
});

describe('exactMatch', () => {
  it('ignores case and white space only', () => {
    expect(exactMatch('  Hello   World ', 'hello world')).toBe(true);
    expect(exactMatch('ＡＢＣ', 'abc')).toBe(true);
    expect(exactMatch('hello world', 'hello, world')).toBe(false);
    expect(exactMatch('42', '43')).toBe(false);
  });
});

describe('cosineSimilarity', () => {
  it('is 1 for texts equal after normalisation, and symmetric', () => {
    expect(cosineSimilarity('The cat sat.', 'the CAT sat')).toBe(1);
    const a = 'Force equals mass times acceleration';
    const b = 'The acceleration of a body is proportional to the net force';
    expect(cosineSimilarity(a, b)).toBeCloseTo(cosineSimilarity(b, a), 12);
  });

  it('stays in [0, 1] and is deterministic', () => {
    const pairs: Array<[string, string]> = [
      ['', ''],
      ['', 'x'],
      ['a', 'a a a'],
      ['!!!', '???'],
      ['東京は首都です', '東京は大きい'],
    ];
    for (const [a, b] of pairs) {
      const s = cosineSimilarity(a, b);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThanOrEqual(1);
      expect(cosineSimilarity(a, b)).toBe(s);
    }
    expect(cosineSimilarity('', 'something')).toBe(0);
    expect(cosineSimilarity('', '')).toBe(1);
  });

  it('scores a paraphrase high and an unrelated answer low (the examples at the top of similarity.ts)', () => {
    expect(cosineSimilarity('The dog is sleeping under the table.', 'The dog sleeps under the table.')).toBeGreaterThan(0.7);
    expect(cosineSimilarity('Force equals mass times acceleration', 'Every action has an equal and opposite reaction')).toBeLessThan(0.2);
  });

  it('is the mean of the trigram and content-word cosines', () => {
    const a = 'Rate limiting protects the public API from abuse';
    const b = 'The public API is protected from abuse by rate limits';
    expect(cosineSimilarity(a, b)).toBeCloseTo((trigramCosine(a, b) + wordCosine(a, b)) / 2, 12);
  });

  it('ignores stop-words in the word half, unless a text has nothing else', () => {
    expect(wordCosine('the capital of France', 'capital France')).toBe(1);
    expect(wordCosine('to be or not to be', 'to be or not to be')).toBe(1);
    expect(wordCosine('of the', 'in a')).toBe(0);
  });

  it('gives partial credit for inflected forms through trigrams', () => {
    expect(wordCosine('sleeping', 'sleeps')).toBe(0);
    expect(trigramCosine('sleeping', 'sleeps')).toBeGreaterThan(0.3);
  });
});
