// word-count (PROTOCOL 4.4). Rules, chosen to be linear-time and the same on every Node version
// (Intl.Segmenter was measured at seconds on 100000 characters on Node 20, and its ICU data
// changes between releases):
// - characters: Unicode code points (an emoji is 1, "é" written as e + accent is 2).
// - words: runs of letters, marks and digits, joined by an inner apostrophe, hyphen, period,
//   comma or colon ("don't", "e-mail", "3.14", "1,000", "10:30"); each Han, Hiragana or
//   Katakana character counts as one word, as word processors count CJK text.
// - sentences: the text cut after each run of terminal punctuation (. ! ? … ‼ ⁇ ⁈ ⁉ and
//   the CJK 。！？) that is followed by white space, a closing quote or bracket, or the end;
//   CJK full stops cut anywhere. A piece counts when it holds at least one word, so a text
//   with words and no final period is one sentence, and an empty text is 0. Abbreviations
//   ("Dr. Smith") count as a cut, as in Unicode's default sentence rules.
// - readingTimeSeconds: words at 200 words per minute, rounded up to a whole second; 0 for
//   no words.
import { checkToolInput } from './check-input.js';
import type { ToolSpec } from './types.js';

/** PROTOCOL 14: word-count text max. */
export const WORD_COUNT_TEXT_MAX = 100_000;
/** Reading speed of readingTimeSeconds. */
export const WORDS_PER_MINUTE = 200;

/** toolInput of word-count. */
export interface WordCountInput {
  text: string;
}

/** The result of word-count (all integers). */
export interface WordCountOutput {
  characters: number;
  words: number;
  sentences: number;
  readingTimeSeconds: number;
}

/** JSON Schema of word-count toolInput (PROTOCOL 4.4). */
export const wordCountInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['text'],
  properties: {
    text: { type: 'string', maxLength: WORD_COUNT_TEXT_MAX, description: 'The text to count (max 100000 characters).' },
  },
} as const;

/** JSON Schema of the word-count result. */
export const wordCountOutputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['characters', 'words', 'sentences', 'readingTimeSeconds'],
  properties: {
    characters: { type: 'integer', minimum: 0, description: 'Unicode code points.' },
    words: {
      type: 'integer',
      minimum: 0,
      description: 'Letter/digit runs (inner apostrophes, hyphens and number separators kept); each CJK ideograph or kana is a word.',
    },
    sentences: { type: 'integer', minimum: 0, description: 'Pieces holding a word, cut at terminal punctuation followed by white space or the end.' },
    readingTimeSeconds: { type: 'integer', minimum: 0, description: 'words at 200 per minute, rounded up.' },
  },
} as const;

// Han (with extensions and compatibility ideographs), Hiragana, Katakana (with phonetic
// extensions and half-width forms): the scripts written without spaces between words.
const CJK_RUN = /[\u3040-\u30FA\u30FC-\u30FF\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF\uFF66-\uFF9F\u{20000}-\u{3134F}]+/gu;
// A run of letters, marks and digits with inner joiners. The joiner and letter sets do not
// overlap, so matching stays linear.
const WORD = /[\p{L}\p{M}\p{N}]+(?:['\u2019\-.,:][\p{L}\p{M}\p{N}]+)*/gu;
const SENTENCE_END = /(?:[.!?\u2026\u203C\u2047-\u2049]+["'\u201D\u2019\u00BB)\]]*(?=\s|$)|[\u3002\uFF01\uFF1F]+["'\u201D\u2019\u300D\u300F)\]]*)/gu;
const HAS_WORD = /[\p{L}\p{N}]/u;

/** The number of words in text (rules at the top of this file). */
export function countWords(text: string): number {
  let cjk = 0;
  // Each CJK character is a word of its own; the run becomes a space so it also ends a word.
  const rest = text.replace(CJK_RUN, (run) => {
    for (const _ of run) cjk++;
    return ' ';
  });
  return cjk + (rest.match(WORD)?.length ?? 0);
}

/** word-count: characters, words, sentences and reading time of a text. */
export async function wordCount(input: WordCountInput): Promise<WordCountOutput> {
  checkToolInput(wordCountInputSchema, input);
  const { text } = input;
  let characters = 0;
  for (const _ of text) characters++;
  const words = countWords(text);
  let sentences = 0;
  for (const piece of text.split(SENTENCE_END)) if (HAS_WORD.test(piece)) sentences++;
  return { characters, words, sentences, readingTimeSeconds: Math.ceil((words * 60) / WORDS_PER_MINUTE) };
}

/** word-count as a registry entry (PROTOCOL 4.4, cost multiplier 1). */
export const wordCountTool: ToolSpec<WordCountInput, WordCountOutput> = {
  name: 'word-count',
  description:
    'Counts a text (max 100000 characters): characters (Unicode code points), words, sentences, and reading time in seconds at 200 words ' +
    'per minute, rounded up. All integers.',
  costMultiplier: 1,
  input: wordCountInputSchema,
  output: wordCountOutputSchema,
  run: wordCount,
};
