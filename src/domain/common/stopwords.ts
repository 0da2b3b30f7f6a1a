// The English stop-word list of data/extract/stopwords.json, shared by the extract tool and
// the word half of text similarity. Read once, lazily, at first use.
import { readFileSync } from 'node:fs';
import { dataPath } from '../../core/index.js';

let cached: ReadonlySet<string> | undefined;

/** The stop-words: lowercase, straight apostrophes (NLTK's English list plus common function words). */
export function stopWords(): ReadonlySet<string> {
  if (cached) return cached;
  const file = JSON.parse(readFileSync(dataPath('extract', 'stopwords.json'), 'utf8')) as { words: string[] };
  return (cached = new Set(file.words));
}
