// One full-text library over the synthetic corpus, in a process of its own (bench/search.ts
// runs one per library, with --expose-gc, so each heap and RSS is its own): build time, the
// memory the index holds, and query latency, with the same fields, boosts, stop words and
// typo tolerance as the node's index (src/domain/knowledge/search-index.ts) as far as each library can
// express them. Every library gets the query as the node passes it on (queryText).
//
// Usage: node --expose-gc search-lib.js '{"lib":"minisearch","n":100000}'
// Prints one JSON line: {lib, n, buildMs, heapMiB, rssMiB, queries[{name, q, samplesUs[], hits, found?}]}.
import MiniSearch from 'minisearch';
import { kit, queryText } from '../src/domain/knowledge/search.js';
import type { Doc } from '../src/domain/knowledge/search-index.js';
import { stopWords } from '../src/domain/common/stopwords.js';
import { corpus, queries, type SearchDoc } from './search-corpus.js';

type Lib = 'minisearch' | 'orama' | 'flexsearch';
const { lib, n } = JSON.parse(process.argv[2] ?? '{}') as { lib: Lib; n: number };
const FIELDS = ['title', 'path', 'tldr', 'spec', 'core', 'deep'] as const;
const LIMIT = 20;

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const mib = (b: number) => b / 1024 / 1024;

interface Engine {
  build(docs: SearchDoc[]): Promise<void>;
  /** The paths of the first LIMIT hits, best first, and how many hits there were in all (when the library says). */
  search(q: string): Promise<{ paths: string[]; total: number }>;
}

async function minisearch(): Promise<Engine> {
  const index = new MiniSearch<Doc>(kit().options);
  return {
    async build(docs) {
      index.addAll(docs as Doc[]);
    },
    async search(q) {
      const all = index.search(queryText(q));
      return { paths: all.slice(0, LIMIT).map((r) => r.id as string), total: all.length };
    },
  };
}

async function orama(): Promise<Engine> {
  const { create, insertMultiple, search } = await import('@orama/orama');
  const db = create({
    schema: { path: 'string', kind: 'string', title: 'string', spec: 'string', tldr: 'string', core: 'string', deep: 'string' } as const,
    components: { tokenizer: { stopWords: [...stopWords()] } },
  });
  return {
    async build(docs) {
      await insertMultiple(
        db,
        docs.map((d) => ({ tldr: '', core: '', deep: '', ...d })),
        1000,
      );
    },
    async search(q) {
      // tolerance 1: one edit per word (Levenshtein), Orama's nearest to MiniSearch's 0.2 on words of 5 to 9 letters.
      const r = await search(db, { term: queryText(q), properties: [...FIELDS], boost: kit().boost, tolerance: 1, limit: LIMIT });
      return { paths: r.hits.map((h) => String(h.id)), total: r.count };
    },
  };
}

async function flexsearch(): Promise<Engine> {
  const { Document, Charset } = await import('flexsearch');
  // forward: prefixes of every word (search as you type); LatinBalance folds case, accents and
  // doubled letters, FlexSearch's kind of typo tolerance; suggest keeps hits that miss a word.
  const index = new Document({
    document: {
      id: 'id',
      index: FIELDS.map((field) => ({ field, tokenize: 'forward' as const, encoder: { ...Charset.LatinBalance, filter: stopWords() as Set<string> } })),
    },
  });
  return {
    async build(docs) {
      for (const d of docs) index.add(d as unknown as Parameters<typeof index.add>[0]);
    },
    async search(q) {
      const r = index.search(queryText(q), {
        limit: LIMIT,
        suggest: true,
        merge: true,
        index: FIELDS.map((field) => ({ field, boost: kit().boost[field] })),
      } as never) as unknown as Array<{ id: string }>;
      return { paths: r.map((h) => String(h.id)), total: r.length };
    },
  };
}

const c = corpus(n);
const qs = queries(c);
gc();
const heap0 = process.memoryUsage().heapUsed;
const rss0 = process.memoryUsage().rss;
const engine = await { minisearch, orama, flexsearch }[lib]();
const start = performance.now();
await engine.build(c.docs);
const buildMs = performance.now() - start;
gc();
const heapMiB = mib(process.memoryUsage().heapUsed - heap0);
const rssMiB = mib(process.memoryUsage().rss - rss0);

const results = [];
for (const query of qs) {
  const first = await engine.search(query.q);
  for (let i = 0; i < 10; i++) await engine.search(query.q); // warm-up
  const samplesUs: number[] = [];
  const until = performance.now() + 1500;
  while (samplesUs.length < 400 && (samplesUs.length < 20 || performance.now() < until)) {
    const t = performance.now();
    await engine.search(query.q);
    samplesUs.push((performance.now() - t) * 1000);
  }
  results.push({
    name: query.name,
    q: query.q,
    samplesUs,
    hits: first.total,
    ...(query.expect ? { found: first.paths.slice(0, 10).includes(query.expect) } : {}),
  });
}
process.stdout.write(JSON.stringify({ lib, n, buildMs, heapMiB, rssMiB, queries: results }) + '\n');
