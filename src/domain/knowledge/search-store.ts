// Search and suggest answered by the store's own text index (SharedStore.text: PostgreSQL's
// tsvector, GIN and pg_trgm, src/store/postgres/search.ts), for a store several processes
// share: no index in the process (its memory does not grow with the tree, and it starts in
// the same time at any size), and a node published through one process is found through any
// other in the next request, since publishing writes the document in its own transaction
// (search.ts storeSearch, from tree.ts putNode).
//
// A database whose nodes were written before the index existed (a store migrated from schema
// version 1) is backfilled: by `akas store migrate` and `akas store copy` (src/ops), or, when
// neither ran, by the first process that starts on it (search answers meanwhile from what is
// indexed). A marker in the store says the backfill of this index version is complete.
import { space, type Store, type TextIndex } from '../../store/index.js';
import type { SearchPage, Suggestion } from './search-index.js';
import { briefKey, kit, TEXT_BOOSTS, textDoc } from './search-doc.js';
import { Briefs, KnowledgeNodes, treeLock, type BriefRecord } from './tree.js';

/** The version of what the text index holds of a node: a change to textDoc raises it, and the next start backfills again. */
export const TEXT_INDEX_VERSION = 1;
/** The backfill marker's space (its only key: 'backfill'); `akas store copy` knows it is the target's own. */
export const SearchState = space<{ version: number; nodes: number; at: number }>('knowledge-search-state');
/** Nodes indexed per backfill transaction. */
const BACKFILL_BATCH = 500;

/** MiniSearch's fuzziness (search-index.ts): a fifth of a word's letters; at most 6. */
const edits = (word: string) => Math.min(6, Math.round(word.length * 0.2));

/**
 * Fills the store's text index with every published node, BACKFILL_BATCH nodes a transaction,
 * each transaction holding the tree locks of its nodes and reading them again inside (so a
 * node published meanwhile keeps the document its own transaction wrote), then sets the
 * marker. onProgress hears the nodes done so far; stopped ends it between batches. Answers how many nodes it indexed.
 */
export async function backfillSearch(
  store: Store,
  text: TextIndex,
  opts: { onProgress?: (done: number) => void; stopped?: () => boolean } = {},
): Promise<number> {
  let done = 0;
  let after: string | undefined;
  for (;;) {
    // Stopped (the process closing): the marker stays unset, and the next start goes on.
    if (opts.stopped?.()) return done;
    const keys = (await store.list(KnowledgeNodes, { ...(after === undefined ? {} : { gt: after }), limit: BACKFILL_BATCH })).map(([k]) => k);
    if (!keys.length) break;
    after = keys[keys.length - 1];
    // Brief versions (id@version) never change once written: read outside the transaction.
    const briefs = new Map<string, BriefRecord | undefined>();
    await store.transact(keys.map(treeLock), async (tx) => {
      const locked = new Set(keys);
      const nodes = (await tx.list(KnowledgeNodes, { gte: keys[0], lte: after })).filter(([k]) => locked.has(k));
      await Promise.all(
        nodes.map(async ([, node]) => {
          const key = briefKey(node);
          if (key && !briefs.has(key)) briefs.set(key, await store.get(Briefs, key));
        }),
      );
      for (const [path, node] of nodes) {
        const key = briefKey(node);
        text.write(tx, path, textDoc(node, key ? briefs.get(key)?.brief : undefined));
      }
    });
    done += keys.length;
    opts.onProgress?.(done);
  }
  await store.transact(['knowledge-search-state'], async (tx) => tx.put(SearchState, 'backfill', { version: TEXT_INDEX_VERSION, nodes: done, at: Date.now() }));
  return done;
}

/** Whether the store's text index holds every node written before it existed (the marker of this version is there). */
export async function backfilled(store: Store): Promise<boolean> {
  return (await store.get(SearchState, 'backfill'))?.version === TEXT_INDEX_VERSION;
}

/**
 * Path completions of a prefix starting with `/`: the published paths under it, and the
 * branches on the way, each branch that is itself a published node with its own kind
 * (kinds: the kind of each of those paths, or null).
 */
export async function suggestPaths(
  store: Store,
  prefix: string,
  limit: number,
  kinds: (paths: string[]) => Promise<Array<string | null>>,
): Promise<Suggestion[]> {
  const rows = await store.list(KnowledgeNodes, { gte: prefix, lt: `${prefix}\uffff`, limit: limit * 4 });
  const out = new Map<string, Suggestion>();
  const branches: string[] = [];
  for (const [, n] of rows) {
    // The next segment after the prefix is a branch to complete to, when the node lies deeper.
    const rest = n.path.slice(prefix.length);
    const cut = rest.indexOf('/', rest.startsWith('/') ? 1 : 0);
    if (cut > 0) {
      const branch = n.path.slice(0, prefix.length + cut);
      if (!out.has(branch)) {
        out.set(branch, { path: branch, title: branch.split('/').pop()!, kind: 'branch' });
        branches.push(branch);
      }
    }
    if (!out.has(n.path)) out.set(n.path, { path: n.path, title: n.title, kind: n.kind });
    if (out.size >= limit) break;
  }
  const found = branches.length ? await kinds(branches) : [];
  for (const [i, kind] of found.entries()) if (kind) out.get(branches[i])!.kind = kind;
  return [...out.values()].slice(0, limit);
}

export class StoreSearch {
  private readonly ready: Promise<void>;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly text: TextIndex,
  ) {
    // A store whose nodes predate the index is backfilled in the background; the node serves
    // meanwhile, and search answers from what is indexed so far.
    this.ready = backfilled(store)
      .then(async (done) => {
        if (!done && !this.closed) await backfillSearch(store, text, { stopped: () => this.closed });
      })
      .catch(() => undefined);
  }

  /** Every write committed is in the index already (it was written in the same transaction). */
  async settled(): Promise<void> {}

  async search(q: string, opts: { kind?: string; limit: number; cursor?: string }): Promise<SearchPage> {
    const offset = opts.cursor ? Number(opts.cursor) : 0;
    const words = kit().queryText(q).split(' ').filter(Boolean);
    if (!words.length) return { items: [], total: 0, nextCursor: null };
    // Typos for the words the kit picks (its budget: PROTOCOL 10.6), as MiniSearch's fuzzy option does.
    const typos = kit().typos(words);
    const terms = words.map((word, i) => ({ word, prefix: i === words.length - 1, edits: typos[i] ? edits(word) : 0 }));
    const r = await this.text.search({ terms, kind: opts.kind ?? null, boosts: TEXT_BOOSTS, limit: opts.limit, offset });
    const items = r.items.map((h) => ({ path: h.id, kind: h.kind, title: h.title, score: Math.round(h.score * 1000) / 1000, match: h.match }));
    const end = offset + items.length;
    return { items, total: r.total, ...(r.estimated ? { totalIsEstimate: true as const } : {}), nextCursor: r.more ? String(end) : null };
  }

  async suggest(q: string, limit = 10): Promise<Suggestion[]> {
    const prefix = q.trim();
    if (prefix.startsWith('/')) return suggestPaths(this.store, prefix, limit, (paths) => this.text.kinds(paths));
    const words = kit().queryText(prefix).split(' ').filter(Boolean);
    if (!words.length) return [];
    // Titles with a word starting with each word typed.
    const r = await this.text.search({
      terms: words.map((word) => ({ word, prefix: true, edits: 0 })),
      weight: 4,
      total: false,
      boosts: TEXT_BOOSTS,
      limit,
      offset: 0,
    });
    return r.items.map((h) => ({ path: h.id, title: h.title, kind: h.kind }));
  }

  /** Waits for a backfill under way (it writes to the store). */
  async close(): Promise<void> {
    this.closed = true;
    await this.ready;
  }
}
