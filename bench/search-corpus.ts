// A synthetic knowledge tree for bench/search.ts: n published nodes (a quarter each brief,
// capability, decision graph, artifact) whose text is drawn from a 30,000-word vocabulary
// with Zipf frequencies, as natural text has (no stop-word list: the commonest words play
// that part), from a seeded generator: every run (and every
// child process) builds the same corpus. Also the queries the benches ask, chosen by how many
// documents hold their words, and a misspelt word whose document must still be found.
import type { ProposalKind } from '../src/core/index.js';
import { briefFields, pathWords } from '../src/domain/knowledge/search.js';
import type { Doc } from '../src/domain/knowledge/search-index.js';
import { stopWords } from '../src/domain/common/stopwords.js';
import type { ProposalRecord } from '../src/domain/records.js';

/** mulberry32: a small seeded PRNG (deterministic corpora, not security). */
export function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CONSONANTS = 'bcdfghjklmnprstvwz';
const VOWELS = 'aeiou';
const FINALS = 'nrstlk';
export const VOCABULARY = 30_000;

/**
 * The vocabulary, most frequent first: English's function words (the stop-word list of
 * data/extract/stopwords.json, which hold the top ranks of any English text), then distinct
 * pronounceable words of 2 to 4 consonant-vowel syllables (90 of them, and a final consonant
 * half the time), shortest first as in natural text. Drawn from ~10 million possible words,
 * 30,000 are about as far apart in edit distance as English words are (a few neighbours one
 * edit away).
 */
export function vocabulary(seed = 1): string[] {
  const rnd = prng(seed);
  const pick = (s: string) => s[Math.floor(rnd() * s.length)];
  const functionWords = [...stopWords()].filter((w) => /^[a-z]+$/.test(w));
  const words = new Set<string>(functionWords);
  while (words.size < VOCABULARY) {
    const n = 2 + Math.floor(rnd() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += pick(CONSONANTS) + pick(VOWELS);
    if (rnd() < 0.5) w += pick(FINALS);
    words.add(w);
  }
  return [...functionWords, ...[...words].slice(functionWords.length).sort((a, b) => a.length - b.length)];
}

/** Draws word ranks with Zipf's law (exponent 1.07): rank r with probability ∝ 1/r^1.07. */
function zipf(rnd: () => number, n: number) {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let r = 0; r < n; r++) cdf[r] = sum += 1 / (r + 1) ** 1.07;
  return () => {
    const x = rnd() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** A node as the node's index sees it: id is the path; path the words of it not in the title. */
export type SearchDoc = Doc;

export interface Corpus {
  docs: SearchDoc[];
  proposals: ProposalRecord[];
  words: string[];
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** n documents (and the proposals that publish them) from the seeded generator. */
export function corpus(n: number, seed = 7): Corpus {
  const docs: SearchDoc[] = [];
  const proposals: ProposalRecord[] = [];
  for (const { doc, proposal } of generate(n, seed)) {
    docs.push(doc);
    proposals.push(proposal);
  }
  return { docs, proposals, words: vocabulary() };
}

/**
 * The corpus one node at a time (bench/search-pg.ts writes a million without holding them):
 * the first n of a larger corpus are the corpus of n.
 */
export function* generate(n: number, seed = 7): Generator<{ doc: SearchDoc; proposal: ProposalRecord }> {
  const words = vocabulary();
  const rnd = prng(seed);
  const rank = zipf(rnd, words.length);
  const text = (min: number, max: number) => {
    const len = min + Math.floor(rnd() * (max - min + 1));
    const out: string[] = [];
    for (let i = 0; i < len; i++) out.push(words[rank()]);
    return out.join(' ');
  };
  const used = new Set<string>();
  for (let i = 0; i < n; i++) {
    const kind = (['brief', 'capability', 'graph', 'artifact'] as const)[i % 4];
    const title = cap(text(3, 7));
    const spec = cap(text(12, 30)) + '.';
    // A tree 3 levels deep: 40 domains of 25 topics, the leaves under them named by a slug of
    // their title, lengthened by a word when another leaf holds that slug (as people name paths).
    let path = `/${words[300 + (i % 40)]}/${words[400 + (i % 40) * 25 + (Math.floor(i / 40) % 25)]}/${title.toLowerCase().split(' ').slice(0, 3).join('-')}`;
    while (used.has(path)) path += `-${words[rank()]}`;
    used.add(path);
    const hex = i.toString(16).padStart(16, '0');
    const base = {
      proposalId: '',
      kind: kind as ProposalKind,
      status: 'published',
      submittedAt: 0,
      decidedAt: 0,
      proposer: null,
      proposerIp: '127.0.0.1',
      path,
      title,
      requiredJudgments: 3,
      judgments: [],
      deposit: 0,
      billable: false,
      tier: 'strong',
      conflictKeys: [],
      outcome: null,
    };
    if (kind === 'brief') {
      const tldr = cap(text(20, 40)) + '.';
      const core = Array.from({ length: 3 + Math.floor(rnd() * 4) }, () => cap(text(8, 15)) + '.');
      const definitions = Object.fromEntries(Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => [words[rank()], cap(text(10, 20)) + '.']));
      const deep = {
        definitions,
        edgeCases: [cap(text(30, 60)) + '.'],
        sources: [{ citation: cap(text(4, 8)), author: `${cap(words[rank()])} ${cap(words[rank()])}`, year: 2000 + Math.floor(rnd() * 26) }],
      };
      const brief = { id: `kb:bench-${i}`, domain: 'bench', topic: `topic ${i}`, title, version: '2026-11', levels: { tldr, core, deep } };
      // As the node indexes a brief (src/domain/knowledge/search.ts): its spec is its tldr, indexed once.
      yield {
        doc: { id: path, path: pathWords(path, title), kind: 'leaf-brief', title, spec: '', ...briefFields(brief as never) },
        proposal: { ...base, proposalId: `prop_${hex}`, payload: { brief, path } } as unknown as ProposalRecord,
      };
      continue;
    }
    const payload =
      kind === 'capability'
        ? { trigger: text(5, 10), alternative: text(5, 10), cost: text(2, 4), whenNot: text(5, 10), recipe: [text(5, 10)] }
        : kind === 'graph'
          ? {
              question: `${cap(text(4, 8))}?`,
              inputsRequired: ['x'],
              branches: [
                { id: 'a', condition: { '>': [{ var: 'x' }, 1] }, to: `${path}-a` },
                { id: 'b', condition: true, to: `${path}-b` },
              ],
            }
          : {
              uri: `https://example.org/models/${i}.onnx`,
              mediaType: 'application/octet-stream',
              sha256: hex.repeat(4),
              artifactKind: 'model',
              provenance: { trainedBy: 'ak_bench0001', on: 'bench', framework: 'onnx', metrics: { accuracy: 0.8 }, license: 'MIT', createdAt: 0 },
              bytes: 1000 + i,
            };
    const nodeKind = kind === 'capability' ? 'leaf-capability' : kind === 'graph' ? 'leaf-decision' : 'leaf-artifact';
    const prefix = kind === 'capability' ? 'cprop_' : kind === 'graph' ? 'gprop_' : 'aprop_';
    yield {
      doc: { id: path, path: pathWords(path, title), kind: nodeKind, title, spec },
      proposal: { ...base, proposalId: `${prefix}${hex}`, payload: { path, title, spec, payload } } as unknown as ProposalRecord,
    };
  }
}

export interface Query {
  name: string;
  q: string;
  /** A document that must be among the first 10 hits (the misspelt query's target). */
  expect?: string;
}

/** Drops the middle letter of a word: a typo one edit away. */
const misspell = (w: string) => w.slice(0, Math.floor(w.length / 2)) + w.slice(Math.floor(w.length / 2) + 1);

/**
 * The benches' queries, picked from the corpus by document frequency (so each names the same
 * kind of query at any size): a rare word, a word a few documents in a thousand hold, two such
 * words, a common word, the prefix of a word, and a misspelt rare title word whose document
 * must come back in the first 10.
 */
export function queries(c: Corpus, within = c.docs.length): Query[] {
  const df = new Map<string, number>();
  for (const d of c.docs)
    for (const w of new Set(`${d.title} ${d.spec} ${d.tldr ?? ''} ${d.core ?? ''}`.toLowerCase().split(/\W+/))) df.set(w, (df.get(w) ?? 0) + 1);
  const n = c.docs.length;
  const stop = stopWords();
  const nearest = (fraction: number, skip = 0, minLength = 6) => {
    const want = Math.max(1, fraction * n);
    return [...df.entries()].filter(([w]) => w.length >= minLength && !stop.has(w)).sort((a, b) => Math.abs(a[1] - want) - Math.abs(b[1] - want))[skip][0];
  };
  // The typo target: among the first `within` documents (so it is there at every size
  // measured), the long title word the fewest documents hold.
  let target = c.docs[0];
  let word = '';
  for (const d of c.docs.slice(0, within)) {
    for (const w of d.title.toLowerCase().split(' ')) {
      if (w.length >= 8 && !stop.has(w) && (!word || (df.get(w) ?? 0) < (df.get(word) ?? 0))) [target, word] = [d, w];
    }
  }
  const medium = nearest(0.003);
  // Two long words of one node's title (among the first `within`), whose node must come back.
  const long = (d: SearchDoc) =>
    d.title
      .toLowerCase()
      .split(' ')
      .filter((w) => w.length >= 6 && !stop.has(w));
  const pair = c.docs.slice(0, within).find((d) => long(d).length >= 2)!;
  const [w1, w2] = long(pair);
  return [
    { name: 'rare word', q: nearest(0.0001) },
    { name: 'medium word (0.3% of nodes)', q: medium },
    { name: 'two words of one title', q: `${w1} ${w2}`, expect: pair.id },
    { name: 'common word (5% of nodes)', q: nearest(0.05, 0, 4) },
    { name: 'prefix of a medium word', q: medium.slice(0, 5) },
    { name: `misspelt rare word (${word} as ${misspell(word)})`, q: misspell(word), expect: target.id },
  ];
}
