import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../src/core/index.js';
import { validateWithSchema } from '../../../../src/domain/common/validate.js';
import { countWords, wordCount, wordCountTool } from '../../../../src/domain/challenges/tools/word-count.js';

describe('word-count', () => {
  it('counts an empty text as all zeros', async () => {
    expect(await wordCount({ text: '' })).toEqual({ characters: 0, words: 0, sentences: 0, readingTimeSeconds: 0 });
    expect(await wordCount({ text: '  \n ... !' })).toEqual({ characters: 9, words: 0, sentences: 0, readingTimeSeconds: 0 });
  });

  it('counts a plain paragraph', async () => {
    const out = await wordCount({ text: 'The quick brown fox jumps. Does it? Yes!' });
    expect(out).toEqual({ characters: 40, words: 8, sentences: 3, readingTimeSeconds: 3 });
    expect(validateWithSchema(wordCountTool.output, out).ok).toBe(true);
  });

  it('counts characters as code points', async () => {
    expect((await wordCount({ text: 'a😀b' })).characters).toBe(3);
  });

  it('keeps contractions, hyphenated words and numbers whole', () => {
    expect(countWords("Don't re-run the 3.14 test at 10:30 on 1,000 machines.")).toBe(10);
  });

  it('counts each CJK character as a word and cuts sentences at CJK full stops', async () => {
    const out = await wordCount({ text: '東京は首都です。大阪も大きい。' });
    expect(out.words).toBe(13);
    expect(out.sentences).toBe(2);
  });

  it('does not cut a sentence inside a number, and counts a text without final punctuation as one sentence', async () => {
    expect((await wordCount({ text: 'It costs 3.50 today' })).sentences).toBe(1);
    expect((await wordCount({ text: 'He said "stop." Then he left.' })).sentences).toBe(2);
  });

  it('rounds reading time up at 200 words per minute', async () => {
    expect((await wordCount({ text: 'word' })).readingTimeSeconds).toBe(1);
    expect((await wordCount({ text: 'word '.repeat(200) })).readingTimeSeconds).toBe(60);
    expect((await wordCount({ text: 'word '.repeat(201) })).readingTimeSeconds).toBe(61);
  });

  it('handles the 100000-character limit', async () => {
    const text = 'Lorem ipsum dolor sit amet. '.repeat(4000).slice(0, 100_000);
    const out = await wordCount({ text });
    expect(out.characters).toBe(100_000);
    expect(out.sentences).toBeGreaterThan(3500);
  });

  it('refuses input outside the schema with invalid_tool_input', async () => {
    for (const input of [{ text: 'x'.repeat(100_001) }, {}, { text: 'a', lang: 'en' }]) {
      await expect(wordCount(input as never)).rejects.toSatisfy((e) => e instanceof ServiceError && e.code === 'invalid_tool_input');
    }
  });
});
