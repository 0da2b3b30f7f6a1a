// Lexical text similarity for calibration scoring (ARCHITECTURE 6: our own, no model). Both
// texts are normalised, then compared twice: by character trigrams (robust to inflection and
// small spelling differences: "sleeps" / "sleeping" share most trigrams) and by content
// words (robust to reordering and padding: "F = ma, force equals mass times acceleration"
// against "Force equals mass times acceleration"). The score is the MEAN of the two.
//
// Why the mean and not the max: the trigram cosine of any two English sentences is never near
// 0 (" th", "the", "ion" are everywhere), so max() would hand unrelated answers ~0.3-0.4 for
// free, while the content-word cosine of unrelated answers is ~0. The mean keeps a correct
// paraphrase high (both halves high) and a wrong answer low (word half near 0). Examples
// (see test/domain/calibration/similarity.test.ts):
//   "The dog is sleeping under the table." / "The dog sleeps under the table."  ~0.77
//   "Force equals mass times acceleration" / "Every action has an equal and opposite reaction" ~0.1
// Deterministic: no randomness, no locale, no model.
import { stopWords } from '../common/stopwords.js';

/**
 * The comparison form of a text: NFKC, lowercase, diacritics removed, every punctuation or
 * symbol character replaced by a space, white space collapsed and trimmed.
 */
export function normalizeText(s: string): string {
  return s
    .normalize('NFKC')
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFC')
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** Exact match after normalising case and white space only (NFKC, lowercase, runs of space collapsed, trimmed). */
export function exactMatch(a: string, b: string): boolean {
  const norm = (s: string) => s.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
  return norm(a) === norm(b);
}

type Vector = Map<string, number>;

// A bag of items as a sparse count vector.
function bag(items: Iterable<string>): Vector {
  const v: Vector = new Map();
  for (const x of items) v.set(x, (v.get(x) ?? 0) + 1);
  return v;
}

// Cosine of two count vectors; two empty vectors are identical (1), one empty is 0.
function cosine(a: Vector, b: Vector): number {
  if (a.size === 0 && b.size === 0) return 1;
  if (a.size === 0 || b.size === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (const [k, x] of a) {
    na += x * x;
    const y = b.get(k);
    if (y !== undefined) dot += x * y;
  }
  for (const y of b.values()) nb += y * y;
  return Math.min(1, dot / Math.sqrt(na * nb));
}

// Character trigrams of the normalised text padded with one space each side, by code point,
// so word starts and ends count and a one-letter answer still has a trigram.
function trigrams(norm: string): string[] {
  const cps = Array.from(` ${norm} `);
  const out: string[] = [];
  for (let i = 0; i + 3 <= cps.length; i++) out.push(cps[i] + cps[i + 1] + cps[i + 2]);
  return out;
}

/** Character-trigram cosine of the normalised texts, in [0, 1]. */
export function trigramCosine(a: string, b: string): number {
  const na = normalizeText(a);
  const nb = normalizeText(b);
  if (!na || !nb) return na === nb ? 1 : 0;
  return cosine(bag(trigrams(na)), bag(trigrams(nb)));
}

/**
 * Word cosine of the normalised texts, in [0, 1]: over content words (stop-words dropped)
 * when both texts have some, else over all words.
 */
export function wordCosine(a: string, b: string): number {
  const ta = normalizeText(a).split(' ').filter(Boolean);
  const tb = normalizeText(b).split(' ').filter(Boolean);
  const stops = stopWords();
  const ca = ta.filter((t) => !stops.has(t));
  const cb = tb.filter((t) => !stops.has(t));
  return ca.length && cb.length ? cosine(bag(ca), bag(cb)) : cosine(bag(ta), bag(tb));
}

/** Similarity of two texts in [0, 1]: the mean of trigramCosine and wordCosine (see the top of this file). */
export function cosineSimilarity(a: string, b: string): number {
  return (trigramCosine(a, b) + wordCosine(a, b)) / 2;
}
