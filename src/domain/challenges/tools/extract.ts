// extract (PROTOCOL 4.4): the keywords of a short phrase. The query is text, never a regex.
//
// Rules: the query is normalised (NFKC, lowercase, curly apostrophes straightened, white
// space collapsed); words are runs of letters and digits, joined by an inner apostrophe or
// hyphen ("don't", "state-of-the-art"), a possessive "'s" dropped; stop-words
// (data/extract/stopwords.json) and one-letter words are dropped; numbers are kept. The
// keywords are the remaining words in order of first appearance, then the bigrams of two
// kept words that stand next to each other in the query (no stop-word or punctuation
// between them: "machine learning" from "machine learning, for images"), also in order of
// first appearance; at most 100 in all. Results are cached in an LRU of 1000 entries keyed by
// the normalised query; `cached` is true when the answer came from it.
import { checkToolInput } from './check-input.js';
import { Lru } from '../../../core/index.js';
import { stopWords } from '../../common/stopwords.js';
import type { ToolSpec } from './types.js';

/** PROTOCOL 14: extract query length. */
export const EXTRACT_QUERY_MAX = 500;
/** At most this many keywords are returned. */
export const EXTRACT_MAX_KEYWORDS = 100;
/** Entries kept in the extract cache. */
export const EXTRACT_CACHE_SIZE = 1000;

/** toolInput of extract. */
export interface ExtractInput {
  query: string;
}

/** The result of extract. */
export interface ExtractOutput {
  keywords: string[];
  cached: boolean;
}

/** JSON Schema of extract toolInput (PROTOCOL 4.4). */
export const extractInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: { type: 'string', minLength: 1, maxLength: EXTRACT_QUERY_MAX, description: 'A keyword or phrase (1..500 characters); plain text, not a regex.' },
  },
} as const;

/** JSON Schema of the extract result. */
export const extractOutputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['keywords', 'cached'],
  properties: {
    keywords: {
      type: 'array',
      maxItems: EXTRACT_MAX_KEYWORDS,
      items: { type: 'string' },
      description: 'Content words in order of first appearance, then adjacent two-word phrases.',
    },
    cached: { type: 'boolean', description: 'True when the result came from the cache.' },
  },
} as const;

// Keyed by the normalised query, so "Signed  Judgments" and "signed judgments" share an entry.
const cache = new Lru<readonly string[]>(EXTRACT_CACHE_SIZE);

/** The cache key of a query: NFKC, lowercase, straight apostrophes, white space collapsed and trimmed. */
export function normalizeQuery(query: string): string {
  return query
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/gu, "'")
    .replace(/\s+/gu, ' ')
    .trim();
}

// A word: letters, digits and marks, with inner apostrophes or hyphens; the two sets do not
// overlap, so matching is linear on any query.
const WORD = /[\p{L}\p{N}\p{M}]+(?:['-][\p{L}\p{N}\p{M}]+)*/gu;

/** The keywords of a normalised query (the rules at the top of this file), uncached. */
export function keywordsOf(normalized: string): string[] {
  const stops = stopWords();
  const unigrams: string[] = [];
  const bigrams: string[] = [];
  const seen = new Set<string>();
  let prev: string | undefined;
  let prevEnd = -1;
  for (const m of normalized.matchAll(WORD)) {
    const word = m[0].replace(/'s$/u, '');
    const start = m.index as number;
    const adjacent = prev !== undefined && /^\s+$/u.test(normalized.slice(prevEnd, start));
    prevEnd = start + m[0].length;
    const keep = !stops.has(word) && !stops.has(m[0]) && (Array.from(word).length > 1 || /^\p{N}$/u.test(word));
    if (!keep) {
      prev = undefined;
      continue;
    }
    if (!seen.has(word)) {
      seen.add(word);
      unigrams.push(word);
    }
    if (adjacent) {
      const pair = `${prev} ${word}`;
      if (!seen.has(pair)) {
        seen.add(pair);
        bigrams.push(pair);
      }
    }
    prev = word;
  }
  return [...unigrams, ...bigrams].slice(0, EXTRACT_MAX_KEYWORDS);
}

/** extract: keywords of a phrase, from the LRU cache when the normalised query was seen. */
export async function extract(input: ExtractInput): Promise<ExtractOutput> {
  checkToolInput(extractInputSchema, input);
  const key = normalizeQuery(input.query);
  const hit = cache.get(key);
  if (hit) return { keywords: [...hit], cached: true };
  const keywords = keywordsOf(key);
  cache.set(key, keywords);
  return { keywords: [...keywords], cached: false };
}

/** Empties the extract cache (tests). */
export const clearExtractCache = (): void => cache.clear();

/** extract as a registry entry (PROTOCOL 4.4, cost multiplier 2). */
export const extractTool: ToolSpec<ExtractInput, ExtractOutput> = {
  name: 'extract',
  description:
    'Extracts the keywords of a short phrase (1..500 characters, plain text, not a regex): content words in order of first appearance with ' +
    'English stop-words removed, then adjacent two-word phrases. Results are cached; cached says whether this one was.',
  costMultiplier: 2,
  input: extractInputSchema,
  output: extractOutputSchema,
  run: extract,
};
