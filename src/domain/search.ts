// Search and suggest over the published tree (PROTOCOL 10.6), with MiniSearch (chosen by a
// measurement at 100,000 nodes against Orama and FlexSearch: bench/search.ts). One document
// per published node: its path, title and spec, and for a brief its three levels. The index
// lives in memory, is rebuilt from the store at start, and follows every write to a node
// through the store's watch (so on a shared store, every process's index follows, and is
// rebuilt when the store says writes may have been missed).
import MiniSearch, { type SearchResult } from 'minisearch';
import type { Store } from '../store/index.js';
import { Briefs, KnowledgeNodes, type KnowledgeNode } from './knowledge.js';
import { deepText } from './manifests.js';

interface Doc {
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
const BOOST = { title: 3, path: 2, tldr: 2, spec: 1, core: 1, deep: 0.5 };

/** Paths, slugs and prose all split into words: on white space, punctuation, slashes and hyphens. */
const tokenize = (text: string) => text.split(/[\s\p{P}\p{S}]+/u).filter(Boolean);

export interface SearchHit {
  path: string;
  kind: string;
  title: string;
  score: number;
  /** The query terms each hit matched, by the field that matched them. */
  match: Record<string, string[]>;
  briefId?: string;
}

export interface SearchPage {
  items: SearchHit[];
  total: number;
  nextCursor: string | null;
}

export class KnowledgeSearch {
  private index = KnowledgeSearch.empty();
  private readonly kinds = new Map<string, string>();
  private readonly unwatch: () => void;
  private ready: Promise<void>;
  private closed = false;
  /** Paths written while a rebuild runs: re-read once it ends, so none is lost. */
  private dirty: Set<string> | null = null;
  /** Writes may have been missed while a rebuild ran: build again once it ends. */
  private rebuildAgain = false;

  private static empty() {
    return new MiniSearch<Doc>({
      fields: ['title', 'path', 'tldr', 'spec', 'core', 'deep'],
      storeFields: ['path', 'kind', 'title'],
      tokenize,
      searchOptions: { boost: BOOST, prefix: (term, i, terms) => i === terms.length - 1, fuzzy: (term) => (term.length >= 5 ? 0.2 : false), combineWith: 'AND' },
    });
  }

  constructor(private readonly store: Store) {
    this.unwatch = store.watch(
      KnowledgeNodes,
      (path) => {
        if (this.closed) return;
        if (this.dirty) this.dirty.add(path);
        else void this.refresh(path).catch(() => undefined); // a store closing under us: nothing to index
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

  private async docOf(node: KnowledgeNode): Promise<Doc> {
    const doc: Doc = { id: node.path, path: node.path, kind: node.kind, title: node.title, spec: node.spec };
    if (node.kind === 'leaf-brief' && node.briefId) {
      const b = await this.store.get(Briefs, node.briefVersion ? `${node.briefId}@${node.briefVersion}` : node.briefId);
      if (b) {
        doc.tldr = b.brief.levels.tldr;
        doc.core = [...(b.brief.levels.core ?? []), ...(b.brief.pitfalls ?? []), ...(b.brief.heuristics ?? [])].join('\n');
        doc.deep = deepText(b.brief);
      }
    }
    return doc;
  }

  /** Builds the index from every published node (at start). */
  async rebuild(): Promise<void> {
    this.dirty = new Set();
    const fresh = KnowledgeSearch.empty();
    const kinds = new Map<string, string>();
    const batch: Doc[] = [];
    for await (const [, node] of this.store.iterate(KnowledgeNodes)) {
      if (this.closed) return;
      batch.push(await this.docOf(node));
      kinds.set(node.path, node.kind);
      if (batch.length >= 1000) fresh.addAll(batch.splice(0));
    }
    fresh.addAll(batch);
    this.index = fresh;
    this.kinds.clear();
    for (const [k, v] of kinds) this.kinds.set(k, v);
    const dirty = this.dirty;
    this.dirty = null;
    for (const path of dirty) await this.refresh(path);
    if (this.rebuildAgain && !this.closed) {
      this.rebuildAgain = false;
      await this.rebuild();
    }
  }

  /** Re-reads one node and puts its current version in the index. */
  async refresh(path: string): Promise<void> {
    const node = await this.store.get(KnowledgeNodes, path);
    if (this.index.has(path)) this.index.discard(path);
    this.kinds.delete(path);
    if (node) {
      this.index.add(await this.docOf(node));
      this.kinds.set(path, node.kind);
    }
  }

  get size() {
    return this.index.documentCount;
  }

  /** Ranked hits of a query (typo tolerant, prefix on the last word), filtered by kind, paged by offset. */
  search(q: string, opts: { kind?: string; limit: number; cursor?: string }): SearchPage {
    const offset = opts.cursor ? Number(opts.cursor) : 0;
    const all = this.index.search(q, opts.kind ? { filter: (r) => r.kind === opts.kind } : {});
    const page = all.slice(offset, offset + opts.limit).map((r: SearchResult) => ({
      path: r.path as string,
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
          if (!out.has(branch)) out.set(branch, { path: branch, title: branch.split('/').pop()!, kind: this.kinds.get(branch) ?? 'branch' });
        }
        if (!out.has(n.path)) out.set(n.path, { path: n.path, title: n.title, kind: n.kind });
        if (out.size >= limit) break;
      }
      return [...out.values()].slice(0, limit);
    }
    if (!prefix) return [];
    return this.index
      .search(prefix, { fields: ['title'], prefix: true, fuzzy: false, combineWith: 'AND' })
      .slice(0, limit)
      .map((r) => ({ path: r.path as string, title: r.title as string, kind: r.kind as string }));
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
