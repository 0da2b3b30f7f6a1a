// The search index proper (PROTOCOL 10.6): MiniSearch's options, and how a query, a title
// completion or an update is put to the index. search.ts runs it in a worker thread of its own
// and feeds it from the store; bench/search-lib.ts measures the same options in-process.
//
// The worker is started from the source text of the functions below (Function#toString, with
// `eval: true`), as the regex-test worker is, so one code runs from the TypeScript sources under
// vitest, from tsc's dist/ and from the esbuild bundle without locating a file. Hence every
// function here is self-contained: it imports nothing but types, reads nothing outside itself,
// and declares no class (a bundler may add helpers around a class).
import type MiniSearch from 'minisearch';
import type { Options, SearchResult } from 'minisearch';

/** What is indexed of a node. `id` is its path; `path` the words of its path not in its title. */
export interface Doc {
  id: string;
  path: string;
  kind: string;
  title: string;
  spec: string;
  tldr?: string;
  core?: string;
  deep?: string;
}

export interface SearchHit {
  path: string;
  kind: string;
  title: string;
  score: number;
  /** The query terms each hit matched, by the field that matched them. */
  match: Record<string, string[]>;
}

export interface SearchPage {
  items: SearchHit[];
  total: number;
  /** Present when total is an estimate (PostgreSQL, a query matching more documents than it ranks). */
  totalIsEstimate?: true;
  nextCursor: string | null;
}

export interface Suggestion {
  path: string;
  title: string;
  kind: string;
}

/**
 * The index's terms and options, given the stop-word list (data/extract/stopwords.json, read by
 * the caller: the worker reads no file).
 */
export function searchKit(stopWordList: readonly string[]) {
  const stop = new Set(stopWordList);
  /** Field boosts: a word in a title says more than one in a spec, and far more than one deep in a brief. */
  const boost = { title: 3, path: 2, tldr: 2, spec: 1, core: 1, deep: 0.5 };
  /** Paths, slugs and prose all split into words: on white space, punctuation, slashes and hyphens. */
  const tokenize = (text: string) => text.split(/[\s\p{P}\p{S}]+/u).filter(Boolean);
  /**
   * Index terms: lowercase, and no English function words ("the", "of", "with"...): they are
   * half the words of any text and find nothing, and leaving them out halves the index
   * (bench/search.ts: 4.8 million postings down to 2.2 at 100,000 nodes, the heap it holds
   * from about 250 MiB to 150).
   */
  const indexTerm = (term: string): string | null => {
    const t = term.toLowerCase();
    return stop.has(t) ? null : t;
  };
  /**
   * A query's budget (PROTOCOL 10.6, 14), the same on both stores: the words it searches, and
   * the words looked up for typos. A typo lookup is the costly part of a query (on PostgreSQL
   * a pg_trgm scan of the index's words: a 200-character query of 33 five-letter words made 33
   * of them, and one address's burst of such queries held the node's reads for seconds).
   */
  const limits = { words: 10, typoWords: 4, minTypoLength: 5 };
  /**
   * The words of a query that can match: its function words left out, unless it has no other
   * word (then the last one stays, as the prefix of what is being typed: "to" finds "tools");
   * its first `limits.words` only.
   */
  const queryText = (q: string): string => {
    const terms = tokenize(q).map((t) => t.toLowerCase());
    const kept = terms.filter((t) => !stop.has(t));
    return (kept.length ? kept : terms.slice(-1)).slice(0, limits.words).join(' ');
  };
  /** Which words of a query (queryText's) match with typos: the first `limits.typoWords` of 5 letters or more; the others exactly. */
  const typos = (terms: readonly string[]): boolean[] => {
    let left = limits.typoWords;
    return terms.map((t) => t.length >= limits.minTypoLength && left-- > 0);
  };
  /**
   * Typo tolerance of one edit in five letters for the words typos() picks, the last word
   * of a query also as a prefix (search as you type), every word required.
   */
  const options: Options<Doc> = {
    fields: ['title', 'path', 'tldr', 'spec', 'core', 'deep'],
    storeFields: ['kind', 'title'],
    tokenize,
    processTerm: indexTerm,
    // Queries come through queryText, which already left function words out.
    searchOptions: {
      processTerm: (term) => term.toLowerCase(),
      boost,
      prefix: (_term, i, terms) => i === terms.length - 1,
      fuzzy: (_term, i, terms) => (typos(terms)[i] ? 0.2 : false),
      combineWith: 'AND',
    },
  };
  return { boost, tokenize, queryText, typos, limits, options };
}

export type SearchKit = ReturnType<typeof searchKit>;

/** A message to the index: an update (no answer), or a call answered with {id, value} or {id, error}. */
export type IndexMessage =
  | { put: string; doc: Doc | null }
  | { id: number; op: 'add'; docs: Doc[] }
  | { id: number; op: 'search'; q: string; kind: string | null; limit: number; offset: number }
  | { id: number; op: 'suggest'; q: string; limit: number }
  | { id: number; op: 'kinds'; paths: string[] };

export type IndexAnswer = { id: number; value: unknown } | { id: number; error: string };

/** What the worker's side needs of its port (the worker's parentPort). */
export interface IndexPort {
  on(event: 'message', listener: (m: IndexMessage) => void): unknown;
  postMessage(m: IndexAnswer): void;
}

/**
 * A MiniSearch index with the kit's options, holding its postings compactly.
 *
 * MiniSearch keeps the postings of a term in a field in a Map (document -> term frequency):
 * with V8's hash tables, 40 to 60 bytes a posting and 180 bytes for the smallest Map, 75 MiB
 * of the 140 MiB its index held at 100,000 nodes (1.8 million postings, 134,000 Maps:
 * bench/search.ts). Here each is a Postings: one array of numbers, document * 2^21 + frequency,
 * in ascending document order (MiniSearch numbers documents in the order they are added, so
 * that is also the order a Map would iterate them in, and ranking ties come out the same),
 * grown to its exact length while small: 8 to 10 bytes a posting. Likewise each document's
 * field lengths start as an array of the fields' count, not the 17 slots V8 gives `[]` on its
 * first write (holes stay holes, as MiniSearch reads them). Together about 45 MiB less at
 * 100,000 nodes (94 MiB of heap instead of 131, and 8 less for the field lengths).
 *
 * Both replace methods MiniSearch declares private (addTerm, addFieldLength), keeping their
 * behaviour; the rest of MiniSearch reads a Postings as the Map it stands for. When the
 * internals are not what this expects (another MiniSearch version), the index is left as
 * MiniSearch makes it: larger, still right (test/domain/knowledge/search-index.test.ts fails then).
 */
export function createIndex(MiniSearchClass: typeof MiniSearch, kit: SearchKit): MiniSearch<Doc> {
  const index = new MiniSearchClass<Doc>(kit.options);
  const fieldCount = kit.options.fields.length;
  // Term frequencies stay under 2^21: a body is at most 1 MiB (PROTOCOL 14), so a field holds
  // at most 2^19 words; documents under 2^32 (added documents, renumbered at each rebuild).
  const SHIFT = 2 ** 21;
  /** A Map<document, frequency> as MiniSearch uses one; a deleted entry is kept as frequency 0 until the next append. */
  class Postings {
    private a: number[] = [];
    private dead = 0;
    /** Where the last iteration stopped: MiniSearch reads each document it iterates. */
    private at = 0;
    size = 0;
    private find(doc: number): number {
      const a = this.a;
      const at = this.at;
      if (at < a.length && Math.floor(a[at] / SHIFT) === doc) return at;
      let lo = 0;
      let hi = a.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const d = Math.floor(a[mid] / SHIFT);
        if (d === doc) return mid;
        if (d < doc) lo = mid + 1;
        else hi = mid - 1;
      }
      return -lo - 1;
    }
    get(doc: number): number | undefined {
      const i = this.find(doc);
      return i >= 0 ? this.a[i] % SHIFT || undefined : undefined;
    }
    has(doc: number): boolean {
      return this.get(doc) !== undefined;
    }
    set(doc: number, freq: number): this {
      if (!(Number.isInteger(freq) && freq >= 1 && freq < SHIFT && Number.isInteger(doc) && doc >= 0 && doc < 2 ** 32))
        throw new RangeError(`posting out of range: document ${doc}, frequency ${freq}`);
      const a = this.a;
      const n = a.length;
      const v = doc * SHIFT + freq;
      if (n === 0 || Math.floor(a[n - 1] / SHIFT) < doc) {
        // Appending is the only change made while no iteration can be under way (MiniSearch
        // adds no document while it searches or vacuums): deleted entries are dropped here.
        if (this.dead > this.size) {
          this.a = a.filter((x) => x % SHIFT !== 0);
          this.dead = 0;
          this.at = 0;
        }
        // Pushed, not copied to an exact length: a list of up to 17 then never moves, where
        // copies left the old arrays as garbage among the index (a third more heap kept).
        this.a.push(v);
        this.size++;
        return this;
      }
      const i = this.find(doc);
      if (i >= 0) {
        if (a[i] % SHIFT === 0) {
          this.size++;
          this.dead--;
        }
        a[i] = v;
      } else {
        // Not reached from MiniSearch, which never adds a document before one it has.
        a.splice(-i - 1, 0, v);
        this.size++;
      }
      return this;
    }
    delete(doc: number): boolean {
      const i = this.find(doc);
      if (i < 0 || this.a[i] % SHIFT === 0) return false;
      this.a[i] = doc * SHIFT;
      this.size--;
      this.dead++;
      return true;
    }
    *keys(): IterableIterator<number> {
      // Deletions during the iteration (MiniSearch makes them) only zero entries: none moves.
      const a = this.a;
      for (let i = 0; i < a.length; i++) {
        if (a[i] % SHIFT === 0) continue;
        this.at = i;
        yield Math.floor(a[i] / SHIFT);
      }
    }
    *entries(): IterableIterator<[number, number]> {
      const a = this.a;
      for (let i = 0; i < a.length; i++) {
        const freq = a[i] % SHIFT;
        if (freq === 0) continue;
        this.at = i;
        yield [(a[i] - freq) / SHIFT, freq];
      }
    }
    [Symbol.iterator]() {
      return this.entries();
    }
  }
  type FieldTermData = Map<number, Postings>;
  const internals = index as unknown as {
    _index?: { fetch?: (term: string, make: () => FieldTermData) => FieldTermData };
    _fieldLength?: unknown;
    addTerm?: (fieldId: number, doc: number, term: string) => void;
    addFieldLength?: (doc: number, fieldId: number, count: number, length: number) => void;
  };
  const { addFieldLength } = internals;
  if (
    typeof internals._index?.fetch !== 'function' ||
    !(internals._fieldLength instanceof Map) ||
    typeof internals.addTerm !== 'function' ||
    typeof addFieldLength !== 'function'
  )
    return index;
  const terms = internals._index as { fetch: (term: string, make: () => FieldTermData) => FieldTermData };
  const lengths = internals._fieldLength as Map<number, number[]>;
  // MiniSearch's addTerm, with a Postings where it makes a Map.
  internals.addTerm = (fieldId, doc, term) => {
    const data = terms.fetch(term, () => new Map());
    const postings = data.get(fieldId);
    if (postings == null) data.set(fieldId, new Postings().set(doc, 1));
    else postings.set(doc, (postings.get(doc) || 0) + 1);
  };
  internals.addFieldLength = function (this: unknown, doc, fieldId, count, length) {
    if (!lengths.has(doc)) lengths.set(doc, new Array(fieldCount));
    addFieldLength.call(this, doc, fieldId, count, length);
  };
  return index;
}

/**
 * The worker's side: one index, its messages handled one at a time in the order they were
 * posted, so a search posted after an update finds what the update put in.
 */
export function serveIndex(port: IndexPort, index: MiniSearch<Doc>, kit: SearchKit): void {
  // A document's kind is one of five words; each message brings its own copy of it, which the
  // index would keep (3 MiB at 100,000 nodes): one copy of each is kept instead.
  const kinds = new Map<string, string>();
  const intern = (doc: Doc) => {
    const kind = kinds.get(doc.kind);
    if (kind === undefined) kinds.set(doc.kind, doc.kind);
    else doc.kind = kind;
    return doc;
  };
  // MiniSearch answers term -> fields; callers want field -> terms.
  const invert = (match: Record<string, string[]>) => {
    const out: Record<string, string[]> = {};
    for (const [term, fields] of Object.entries(match)) for (const f of fields) (out[f] ??= []).push(term);
    return out;
  };
  const answer = (m: Exclude<IndexMessage, { put: string }>): unknown => {
    switch (m.op) {
      case 'add':
        index.addAll(m.docs.map(intern));
        return m.docs.length;
      case 'search': {
        // Ranked hits (typo tolerant, prefix on the last word), filtered by kind, paged by offset.
        const kind = m.kind;
        const all = index.search(kit.queryText(m.q), kind ? { filter: (r) => r.kind === kind } : {});
        const items = all.slice(m.offset, m.offset + m.limit).map((r: SearchResult) => ({
          path: r.id as string,
          kind: r.kind as string,
          title: r.title as string,
          score: Math.round(r.score * 1000) / 1000,
          match: invert(r.match),
        }));
        const end = m.offset + items.length;
        return { items, total: all.length, nextCursor: end < all.length ? String(end) : null };
      }
      case 'suggest':
        // Titles with a word starting with the prefix.
        return index
          .search(kit.queryText(m.q), { fields: ['title'], prefix: true, fuzzy: false, combineWith: 'AND' })
          .slice(0, m.limit)
          .map((r) => ({ path: r.id as string, title: r.title as string, kind: r.kind as string }));
      case 'kinds':
        // The kind of each path that is an indexed node (null for any other).
        return m.paths.map((p) => (index.getStoredFields(p)?.kind as string | undefined) ?? null);
    }
  };
  port.on('message', (m) => {
    if ('put' in m) {
      // Synchronous: no search ever sees a half-replaced document.
      if (index.has(m.put)) index.discard(m.put);
      if (m.doc) index.add(intern(m.doc));
      return;
    }
    try {
      port.postMessage({ id: m.id, value: answer(m) });
    } catch (e) {
      port.postMessage({ id: m.id, error: String((e as Error)?.stack ?? e) });
    }
  });
}
