// Search and suggest over the published tree (PROTOCOL 10.6), with MiniSearch (chosen by a
// measurement at 100,000 nodes against Orama and FlexSearch: bench/search.ts). One document
// per published node: its title, path, spec, and for a brief its three levels. The index
// lives in memory, is rebuilt from the store at start (in the background), and follows every
// write to a node through the store's watch (so on a shared store, every process's index
// follows, and is rebuilt when the store says writes may have been missed).
import MiniSearch, { type Options, type SearchResult } from 'minisearch';
import type { Store } from '../store/index.js';
import { Briefs, KnowledgeNodes, type BriefRecord, type KnowledgeNode } from './knowledge.js';
import type { PayloadOf } from './proposal-kinds.js';
import { stopWords } from './tools/stopwords.js';

type Brief = PayloadOf<'brief'>['brief'];

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

/** Field boosts: a word in a title says more than one in a spec, and far more than one deep in a brief. */
export const BOOST = { title: 3, path: 2, tldr: 2, spec: 1, core: 1, deep: 0.5 };

/** Paths, slugs and prose all split into words: on white space, punctuation, slashes and hyphens. */
const tokenize = (text: string) => text.split(/[\s\p{P}\p{S}]+/u).filter(Boolean);

/**
 * Index terms: lowercase, and no English function words ("the", "of", "with"...): they are
 * half the words of any text and find nothing, and leaving them out halves the index
 * (bench/search.ts: 4.8 million postings down to 2.2 at 100,000 nodes, the heap it holds
 * from about 250 MiB to 150).
 */
function indexTerm(term: string): string | null {
  const t = term.toLowerCase();
  return stopWords().has(t) ? null : t;
}

/**
 * The words of a query that can match: its function words left out, unless it has no other
 * word (then the last one stays, as the prefix of what is being typed: "to" finds "tools").
 */
export function queryText(q: string): string {
  const terms = tokenize(q).map((t) => t.toLowerCase());
  const kept = terms.filter((t) => !stopWords().has(t));
  return (kept.length ? kept : terms.slice(-1)).join(' ');
}

/**
 * What is indexed of a brief's levels: its tldr; its core with pitfalls and heuristics; and of
 * the deep level, the terms it defines and its sources (citation, author), not its prose.
 * The deep prose (definitions' text, examples, edge cases) was a fifth of the index's
 * postings at 100,000 nodes and some 50 MiB of the node's RSS (bench/search.ts), at the
 * lowest boost, for words a reader mostly meets in the levels above; the node response and
 * the brief route still serve all of it.
 */
export function briefFields(b: Brief): { tldr: string; core: string; deep: string } {
  const deep = b.levels.deep;
  return {
    tldr: b.levels.tldr,
    core: [...(b.levels.core ?? []), ...(b.pitfalls ?? []), ...(b.heuristics ?? [])].join('\n'),
    deep: [...Object.keys(deep?.definitions ?? {}), ...(deep?.sources ?? []).flatMap((s) => [s.citation, s.author ?? ''])].join('\n'),
  };
}

/**
 * The words of a path that its title does not already hold (where in the tree a node is:
 * its ancestors' names, and what its slug adds). A word in both is indexed once, in the
 * title, whose boost is the higher.
 */
export function pathWords(path: string, title: string): string {
  const inTitle = new Set(tokenize(title).map((t) => t.toLowerCase()));
  return [...new Set(tokenize(path).map((t) => t.toLowerCase()))].filter((t) => !inTitle.has(t)).join(' ');
}

/**
 * The index's options (bench/search.ts measures the same): typo tolerance of one edit in
 * five letters for words of 5 letters or more, the last word of a query also as a prefix
 * (search as you type), every word required.
 */
export const MINISEARCH_OPTIONS: Options<Doc> = {
  fields: ['title', 'path', 'tldr', 'spec', 'core', 'deep'],
  storeFields: ['kind', 'title'],
  tokenize,
  processTerm: indexTerm,
  // Queries come through queryText, which already left function words out.
  searchOptions: { processTerm: (term) => term.toLowerCase(), boost: BOOST, prefix: (_term, i, terms) => i === terms.length - 1, fuzzy: (term) => (term.length >= 5 ? 0.2 : false), combineWith: 'AND' },
};

/** Documents indexed between two turns of the event loop while rebuilding (a few ms each). */
const REBUILD_CHUNK = 200;

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
  nextCursor: string | null;
}

export class KnowledgeSearch {
  private index = KnowledgeSearch.empty();
  private readonly unwatch: () => void;
  private ready: Promise<void>;
  private closed = false;
  /** Paths written while a rebuild runs: re-read once it ends, so none is lost. */
  private dirty: Set<string> | null = null;
  /**
   * Refreshes run one after another: two writes to one path in quick succession must land in
   * the order they were committed, and a refresh's reads must not interleave with another's
   * discard and add.
   */
  private refreshing: Promise<void> = Promise.resolve();
  /** Writes may have been missed while a rebuild ran: build again once it ends. */
  private rebuildAgain = false;

  private static empty() {
    return new MiniSearch<Doc>(MINISEARCH_OPTIONS);
  }

  constructor(private readonly store: Store) {
    this.unwatch = store.watch(
      KnowledgeNodes,
      (path) => {
        if (this.closed) return;
        if (this.dirty) this.dirty.add(path);
        else this.enqueue(path);
      },
      // A shared store may have missed writes of other processes: the index is rebuilt
      // (once at a time; losses during a rebuild make one more).
      () => {
        if (this.closed) return;
        if (this.dirty) this.rebuildAgain = true;
        else this.ready = this.rebuild().catch(() => undefined);
      },
    );
    this.ready = this.rebuild();
    // Whoever awaits whenReady() sees a failure; nobody else must get an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  /** Resolves once the index was first built. */
  whenReady() {
    return this.ready;
  }

  private enqueue(path: string) {
    // A store closing under us leaves nothing to index: the failure is dropped.
    this.refreshing = this.refreshing.then(() => this.refresh(path)).catch(() => undefined);
  }

  /**
   * Resolves once every write committed so far is in the index: a search answered after a
   * publish (in this process) finds what was published.
   */
  async settled(): Promise<void> {
    await this.ready;
    await this.refreshing;
  }

  /** What is indexed of a node, its brief's levels aside (briefLevels adds them). */
  private static docOf(node: KnowledgeNode): Doc {
    return { id: node.path, path: pathWords(node.path, node.title), kind: node.kind, title: node.title, spec: node.spec };
  }

  /** Adds a brief's three levels to its node's document. */
  private static briefLevels(doc: Doc, b: BriefRecord | undefined): Doc {
    if (!b) return doc;
    Object.assign(doc, briefFields(b.brief));
    // A brief's spec is its tldr (until a sharpening changes it): indexed once, as the tldr.
    if (doc.spec === doc.tldr) doc.spec = '';
    return doc;
  }

  /** The key of the brief version a leaf-brief node shows, or null for any other node. */
  private static briefKey(node: KnowledgeNode): string | null {
    if (node.kind !== 'leaf-brief' || !node.briefId) return null;
    return node.briefVersion ? `${node.briefId}@${node.briefVersion}` : node.briefId;
  }

  /**
   * Builds the index from every published node (at start, in the background: the node serves
   * other routes meanwhile, and search waits for it). Two passes of one iterator each: the
   * nodes, then the briefs the leaf-brief nodes show (not one read per brief: at 100,000
   * nodes those reads cost seconds, and filled the store's read cache with cold records).
   * Documents go in by chunks, with a turn of the event loop between two, so no request
   * waits behind more than one chunk.
   */
  async rebuild(): Promise<void> {
    this.dirty = new Set();
    const fresh = KnowledgeSearch.empty();
    let batch: Doc[] = [];
    const add = async (doc: Doc) => {
      batch.push(doc);
      if (batch.length < REBUILD_CHUNK) return;
      fresh.addAll(batch);
      batch = [];
      await new Promise((r) => setImmediate(r));
    };
    const waiting = new Map<string, Doc[]>();
    for await (const [, node] of this.store.iterate(KnowledgeNodes)) {
      if (this.closed) return;
      const key = KnowledgeSearch.briefKey(node);
      if (key === null) await add(KnowledgeSearch.docOf(node));
      else waiting.set(key, [...(waiting.get(key) ?? []), KnowledgeSearch.docOf(node)]);
    }
    if (waiting.size) {
      for await (const [key, b] of this.store.iterate(Briefs)) {
        if (this.closed) return;
        for (const doc of waiting.get(key) ?? []) await add(KnowledgeSearch.briefLevels(doc, b));
        waiting.delete(key);
      }
    }
    // A brief node whose brief record is missing is still found by its title, path and spec.
    for (const docs of waiting.values()) for (const doc of docs) await add(doc);
    fresh.addAll(batch);
    this.index = fresh;
    const dirty = this.dirty;
    this.dirty = null;
    for (const path of dirty) this.enqueue(path);
    await this.refreshing;
    if (this.rebuildAgain && !this.closed) {
      this.rebuildAgain = false;
      await this.rebuild();
    }
  }

  /** Re-reads one node and puts its current version in the index (called through enqueue only). */
  private async refresh(path: string): Promise<void> {
    const node = await this.store.get(KnowledgeNodes, path);
    const key = node && KnowledgeSearch.briefKey(node);
    const doc = node && KnowledgeSearch.briefLevels(KnowledgeSearch.docOf(node), key ? await this.store.get(Briefs, key) : undefined);
    // From here on synchronous: the index never holds a half-replaced document.
    if (this.index.has(path)) this.index.discard(path);
    if (doc) this.index.add(doc);
  }

  get size() {
    return this.index.documentCount;
  }

  /** Ranked hits of a query (typo tolerant, prefix on the last word), filtered by kind, paged by offset. */
  search(q: string, opts: { kind?: string; limit: number; cursor?: string }): SearchPage {
    const offset = opts.cursor ? Number(opts.cursor) : 0;
    const all = this.index.search(queryText(q), opts.kind ? { filter: (r) => r.kind === opts.kind } : {});
    const page = all.slice(offset, offset + opts.limit).map((r: SearchResult) => ({
      path: r.id as string,
      kind: r.kind as string,
      title: r.title as string,
      score: Math.round(r.score * 1000) / 1000,
      match: invert(r.match),
    }));
    const end = offset + page.length;
    return { items: page, total: all.length, nextCursor: end < all.length ? String(end) : null };
  }

  /**
   * Completions of a prefix: for `/...`, the published paths that start with it (and the
   * branches on the way); otherwise titles with a word starting with it.
   */
  async suggest(q: string, limit = 10): Promise<Array<{ path: string; title: string; kind: string }>> {
    const prefix = q.trim();
    if (prefix.startsWith('/')) {
      const rows = await this.store.list(KnowledgeNodes, { gte: prefix, lt: `${prefix}\uffff`, limit: limit * 4 });
      const out = new Map<string, { path: string; title: string; kind: string }>();
      for (const [, n] of rows) {
        // The next segment after the prefix is a branch to complete to, when the node lies deeper.
        const rest = n.path.slice(prefix.length);
        const cut = rest.indexOf('/', rest.startsWith('/') ? 1 : 0);
        if (cut > 0) {
          const branch = n.path.slice(0, prefix.length + cut);
          if (!out.has(branch)) out.set(branch, { path: branch, title: branch.split('/').pop()!, kind: String(this.index.getStoredFields(branch)?.kind ?? 'branch') });
        }
        if (!out.has(n.path)) out.set(n.path, { path: n.path, title: n.title, kind: n.kind });
        if (out.size >= limit) break;
      }
      return [...out.values()].slice(0, limit);
    }
    if (!prefix) return [];
    return this.index
      .search(queryText(prefix), { fields: ['title'], prefix: true, fuzzy: false, combineWith: 'AND' })
      .slice(0, limit)
      .map((r) => ({ path: r.id as string, title: r.title as string, kind: r.kind as string }));
  }

  /** Stops following the store, once a rebuild in flight has ended (it reads the store). */
  async close(): Promise<void> {
    this.closed = true;
    this.unwatch();
    await this.ready.catch(() => undefined);
  }
}

// MiniSearch answers term -> fields; callers want field -> terms.
function invert(match: Record<string, string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [term, fields] of Object.entries(match)) for (const f of fields) (out[f] ??= []).push(term);
  return out;
}
