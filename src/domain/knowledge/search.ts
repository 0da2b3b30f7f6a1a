// Search and suggest over the published tree (PROTOCOL 10.6), behind one interface
// (KnowledgeSearch) with two implementations, chosen where the node is assembled
// (Strategies.search, src/node/strategies.ts): on a store several processes share, the store's
// own text index (SharedStore.text: PostgreSQL, search-store.ts), which publishing writes in its
// own transaction; on the embedded store, this file's MiniSearch index. With MiniSearch (chosen by a
// measurement at 100,000 nodes against Orama and FlexSearch: bench/search.ts). One document
// per published node: its title, path, spec, and for a brief its three levels. The index
// (search-index.ts) is rebuilt from the store at start (in the background), and follows every
// write to a node through the store's watch (so on a shared store, every process's index
// follows, and is rebuilt when the store says writes may have been missed).
//
// The index lives in a worker thread of its own, fed by this side, which reads the store:
// - memory: V8 grows a heap by up to 4 times what survived its last full collection when the
//   heap may grow to gigabytes, and compacts only nearly empty pages, so the index built in
//   the main heap, among the requests' and the store's garbage, left about 100 MiB of free
//   heap the process kept. A worker's heap holds the index alone, grown under a smaller
//   young generation (WORKER_YOUNG_MB); a rebuild fills a new worker and the old one is
//   terminated, which hands its whole heap back at once instead of leaving an old index for
//   the collector;
// - latency: a query for a common word (about 3 ms at 100,000 nodes) no longer holds the
//   event loop; the message round trip costs tens of microseconds.
// Messages to the worker are handled in the order they are posted: an update posted before a
// search is in the index that search reads.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Store, TextIndex, Tx } from '../../store/index.js';
import { Briefs, KnowledgeNodes, type BriefRecord, type KnowledgeNode } from './tree.js';
import { createIndex, searchKit, serveIndex, type Doc, type IndexAnswer, type IndexMessage, type SearchPage, type Suggestion } from './search-index.js';
import { stopWords } from '../common/stopwords.js';
import { briefKey, docFields, textDoc } from './search-doc.js';
import { StoreSearch, suggestPaths } from './search-store.js';

export type { Doc, SearchHit, SearchPage } from './search-index.js';
export { kit, queryText, typoLookups, briefFields, pathWords } from './search-doc.js';

/** Search and suggest over the published tree, whichever index answers. */
export interface KnowledgeSearch {
  /** Resolves once every write committed so far (in this process) is found. */
  settled(): Promise<void>;
  /** Ranked hits of a query (typo tolerant, prefix on the last word), filtered by kind, paged by offset. */
  search(q: string, opts: { kind?: string; limit: number; cursor?: string }): Promise<SearchPage>;
  /**
   * Completions of a prefix: for `/...`, the published paths that start with it (and the branches
   * on the way); otherwise titles with a word starting with it.
   */
  suggest(q: string, limit?: number): Promise<Suggestion[]>;
  close(): Promise<void>;
}

/** Where the published tree is searched: chosen where the node is assembled (Strategies.search). */
export interface SearchPlace {
  /** This node's search over the store. */
  open(store: Store): KnowledgeSearch;
  /**
   * Gives search a node's document in the transaction that publishes it (tx), where search must
   * find it once that commits: the store's own text index. MiniSearch needs nothing here (it
   * follows the store's watch).
   */
  index(tx: Tx, node: KnowledgeNode): Promise<void>;
}

/** MiniSearch in this process, following the store's watch: a node that holds its store alone. */
export const processSearch: SearchPlace = {
  open: (store) => new MiniSearchIndex(store),
  index: async () => undefined,
};

/** The store's own text index, every process reading what any wrote: a node on a shared store. */
export function storeSearch(text: TextIndex): SearchPlace {
  return {
    open: (store) => new StoreSearch(store, text),
    async index(tx, node) {
      // A brief's record was put before its node: the transaction reads its own write.
      const key = briefKey(node);
      text.write(tx, node.path, textDoc(node, key ? (await tx.get(Briefs, key))?.brief : undefined));
    },
  };
}

/** Documents sent to the worker in one message while rebuilding. */
const REBUILD_CHUNK = 200;
/**
 * Chunks on their way to the worker at most: the store is read faster than the worker
 * indexes, and without a bound the whole tree would wait in the worker's message queue.
 */
const REBUILD_WINDOW = 4;
/**
 * The worker's young generation, in MiB (V8's default is 48 at most). Measured at 100,000
 * nodes (bench/search.ts): below 8 the rebuild slows, above it the free heap the rebuild
 * leaves grows.
 */
const WORKER_YOUNG_MB = 8;

/** The worker's source: search-index.ts's functions, with MiniSearch and the stop words it is handed. */
const WORKER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const MiniSearch = require(workerData.minisearch);
const kit = (${searchKit.toString()})(workerData.stopWords);
(${serveIndex.toString()})(parentPort, (${createIndex.toString()})(MiniSearch.default ?? MiniSearch, kit), kit);
`;

/** A call to the index, as this side asks it (search-index.ts adds nothing but an id). */
type Ask = Extract<IndexMessage, { id: number }> extends infer M ? (M extends unknown ? Omit<M, 'id'> : never) : never;

/** One index in its worker thread: calls answered in order, updates posted. */
class IndexWorker {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly calls = new Map<number, { resolve: (v: never) => void; reject: (e: Error) => void }>();
  /** Why calls fail from now on (the worker ended, or is ending). */
  private ended: Error | null = null;
  /** Told to end: its exit is no death. */
  private stopping = false;
  private retiring = false;

  /** onDeath: the worker stopped without being told to (an error in it, out of memory). */
  constructor(onDeath: (w: IndexWorker) => void) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { minisearch: createRequire(import.meta.url).resolve('minisearch'), stopWords: [...stopWords()] },
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB },
    });
    // Alive only while a call waits: the index never keeps a process alive by itself.
    this.worker.unref();
    this.worker.on('message', (m: IndexAnswer) => {
      const call = this.calls.get(m.id);
      if (!call) return;
      this.calls.delete(m.id);
      if (this.calls.size === 0) this.worker.unref();
      if ('error' in m) call.reject(new Error(`search index: ${m.error}`));
      else call.resolve(m.value as never);
      if (this.retiring && this.calls.size === 0) void this.terminate();
    });
    // The exit event that follows does the clean-up.
    this.worker.on('error', (e) => (this.ended ??= e));
    this.worker.on('exit', (code) => {
      this.ended ??= new Error(`the search index worker exited with code ${code}`);
      for (const call of this.calls.values()) call.reject(this.ended);
      this.calls.clear();
      if (!this.stopping) onDeath(this);
    });
  }

  call<T>(ask: Ask): Promise<T> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.calls.set(id, { resolve: resolve as (v: never) => void, reject });
      this.worker.ref();
      this.worker.postMessage({ ...ask, id } as IndexMessage);
    });
  }

  /** Puts a node's current document in the index (null: takes it out). */
  put(path: string, doc: Doc | null): void {
    if (!this.ended) this.worker.postMessage({ put: path, doc } satisfies IndexMessage);
  }

  /** Terminates the worker once the calls it is answering have their answers. */
  retire(): void {
    this.retiring = true;
    if (this.calls.size === 0) void this.terminate();
  }

  async terminate(): Promise<void> {
    this.stopping = true;
    this.ended ??= new Error('the search index was closed');
    await this.worker.terminate();
  }
}

export class MiniSearchIndex implements KnowledgeSearch {
  /** The worker holding the index; null while no node is indexed (an empty tree needs no thread). */
  private worker: IndexWorker | null = null;
  private readonly unwatch: () => void;
  private ready: Promise<void>;
  private closed = false;
  /** Paths written while a rebuild runs: re-read once it ends, so none is lost. */
  private dirty: Set<string> | null = null;
  /**
   * Refreshes run one after another: two writes to one path in quick succession must land in
   * the order they were committed, and a refresh's reads must not interleave with another's
   * update.
   */
  private refreshing: Promise<void> = Promise.resolve();
  /** Writes may have been missed while a rebuild ran: build again once it ends. */
  private rebuildAgain = false;

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
      () => this.lost(),
    );
    this.ready = this.rebuild();
    // Whoever awaits whenReady() sees a failure; nobody else must get an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  /** Resolves once the index was first built. */
  whenReady() {
    return this.ready;
  }

  private lost() {
    if (this.closed) return;
    if (this.dirty) this.rebuildAgain = true;
    else this.ready = this.rebuild().catch(() => undefined);
  }

  /** The worker stopped by itself: its index is gone, so it is built again, as after a loss. */
  private died(w: IndexWorker) {
    if (w !== this.worker) return;
    this.worker = null;
    // A rebuild under way replaces it anyway.
    if (!this.closed && !this.dirty) this.ready = this.rebuild().catch(() => undefined);
  }

  private spawn(): IndexWorker {
    return new IndexWorker((w) => this.died(w));
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
    return { id: node.path, kind: node.kind, ...docFields(node) } as Doc;
  }

  /** Adds a brief's three levels to its node's document (search-doc.ts: a brief's spec equal to its tldr is indexed once). */
  private static briefLevels(doc: Doc, b: BriefRecord | undefined): Doc {
    return b ? Object.assign(doc, docFields({ path: doc.id, title: doc.title, spec: doc.spec }, b.brief)) : doc;
  }

  /**
   * Builds the index from every published node in a new worker (at start, in the background:
   * the node serves other routes meanwhile, and search waits for it; after a loss, search
   * answers from the previous index until the new one is complete). Two passes of one iterator
   * each: the nodes, then the briefs the leaf-brief nodes show (not one read per brief: at
   * 100,000 nodes those reads cost seconds, and filled the store's read cache with cold
   * records). Documents go to the worker by chunks, a few chunks ahead of its indexing at most.
   */
  async rebuild(): Promise<void> {
    this.dirty = new Set();
    let fresh: IndexWorker | null = null;
    const indexing: Promise<unknown>[] = [];
    let batch: Doc[] = [];
    const send = async () => {
      if (!batch.length) return;
      fresh ??= this.spawn();
      const added = fresh.call({ op: 'add', docs: batch });
      // Awaited below; a failure must not surface before then as an unhandled rejection.
      added.catch(() => undefined);
      indexing.push(added);
      batch = [];
      if (indexing.length >= REBUILD_WINDOW) await indexing.shift();
      // A turn of the event loop between two chunks: requests do not wait behind the scan.
      await new Promise((r) => setImmediate(r));
    };
    const add = async (doc: Doc) => {
      batch.push(doc);
      if (batch.length >= REBUILD_CHUNK) await send();
    };
    try {
      const waiting = new Map<string, Doc[]>();
      for await (const [, node] of this.store.iterate(KnowledgeNodes)) {
        if (this.closed) return;
        const key = briefKey(node);
        if (key === null) await add(MiniSearchIndex.docOf(node));
        else waiting.set(key, [...(waiting.get(key) ?? []), MiniSearchIndex.docOf(node)]);
      }
      if (waiting.size) {
        for await (const [key, b] of this.store.iterate(Briefs)) {
          if (this.closed) return;
          for (const doc of waiting.get(key) ?? []) await add(MiniSearchIndex.briefLevels(doc, b));
          waiting.delete(key);
        }
      }
      // A brief node whose brief record is missing is still found by its title, path and spec.
      for (const docs of waiting.values()) for (const doc of docs) await add(doc);
      await send();
      await Promise.all(indexing);
    } catch (e) {
      void (fresh as IndexWorker | null)?.terminate();
      throw e;
    } finally {
      if (this.closed) void (fresh as IndexWorker | null)?.terminate();
    }
    if (this.closed) return;
    // Searches already asked of the previous index get their answers before it goes.
    this.worker?.retire();
    this.worker = fresh;
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
    const key = node && briefKey(node);
    const doc = node && MiniSearchIndex.briefLevels(MiniSearchIndex.docOf(node), key ? await this.store.get(Briefs, key) : undefined);
    if (this.closed || (!doc && !this.worker)) return;
    (this.worker ??= this.spawn()).put(path, doc ?? null);
  }

  /** Ranked hits of a query (typo tolerant, prefix on the last word), filtered by kind, paged by offset. */
  async search(q: string, opts: { kind?: string; limit: number; cursor?: string }): Promise<SearchPage> {
    const offset = opts.cursor ? Number(opts.cursor) : 0;
    if (!this.worker) return { items: [], total: 0, nextCursor: null };
    return this.worker.call<SearchPage>({ op: 'search', q, kind: opts.kind ?? null, limit: opts.limit, offset });
  }

  /**
   * Completions of a prefix: for `/...`, the published paths that start with it (and the
   * branches on the way); otherwise titles with a word starting with it.
   */
  async suggest(q: string, limit = 10): Promise<Suggestion[]> {
    const prefix = q.trim();
    if (prefix.startsWith('/')) return suggestPaths(this.store, prefix, limit, async (paths) => (this.worker ? this.worker.call({ op: 'kinds', paths }) : []));
    if (!prefix || !this.worker) return [];
    return this.worker.call<Suggestion[]>({ op: 'suggest', q: prefix, limit });
  }

  /** Stops following the store, once a rebuild in flight has ended (it reads the store), and ends the worker. */
  async close(): Promise<void> {
    this.closed = true;
    this.unwatch();
    await this.ready.catch(() => undefined);
    await this.worker?.terminate();
    this.worker = null;
  }
}
