// What search indexes of a published node, on either store: the index's terms and options
// (search-index.ts's kit), a brief's indexed levels, the words of a path, and a node's
// document for a store that indexes text itself (SharedStore.text: PostgreSQL), which publishing
// writes in its own transaction (search.ts storeSearch, from tree.ts putNode). Imports nothing
// of the tree but types, so the tree can import it.
import type { TextDoc } from '../../store/index.js';
import type { PayloadOf } from '../proposals/kinds.js';
import { stopWords } from '../common/stopwords.js';
import { searchKit, type SearchKit } from './search-index.js';
import type { KnowledgeNode } from './tree.js';

type Brief = PayloadOf<'brief'>['brief'];

let kitOnce: SearchKit | undefined;
/** The index's terms and options (search-index.ts), built at first use. */
export const kit = (): SearchKit => (kitOnce ??= searchKit([...stopWords()]));

/** The words of a query that can match (search-index.ts). */
export const queryText = (q: string): string => kit().queryText(q);

/** How many words of a query are looked up for typos (the kit's budget): what the query costs beyond one token (PROTOCOL 1.4, 10.6). */
export function typoLookups(q: string): number {
  return kit().typos(queryText(q).split(' ').filter(Boolean)).filter(Boolean).length;
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
  const { tokenize } = kit();
  const inTitle = new Set(tokenize(title).map((t) => t.toLowerCase()));
  return [...new Set(tokenize(path).map((t) => t.toLowerCase()))].filter((t) => !inTitle.has(t)).join(' ');
}

/** The fields of a node's document, its brief's levels with it (a brief's spec is its tldr: indexed once, as the tldr). */
export function docFields(node: Pick<KnowledgeNode, 'path' | 'title' | 'spec'>, brief?: Brief): Record<string, string> {
  const fields: Record<string, string> = { title: node.title, path: pathWords(node.path, node.title), spec: node.spec };
  if (!brief) return fields;
  Object.assign(fields, briefFields(brief));
  if (fields.spec === fields.tldr) fields.spec = '';
  return fields;
}

/**
 * A field's weight in a store's text index (1 to 4), from the kit's boosts: title 3 -> 4;
 * path and tldr 2 -> 3; spec and core 1 -> 2; deep 0.5 -> 1. The store ranks with the boosts
 * themselves (TEXT_BOOSTS).
 */
const WEIGHT = { title: 4, path: 3, tldr: 3, spec: 2, core: 2, deep: 1 } as const;
/** How much a match counts at weights 1 to 4: the kit's boosts, over the highest. */
export const TEXT_BOOSTS: [number, number, number, number] = [0.5 / 3, 1 / 3, 2 / 3, 1];

/** A node's document for a store's text index: each field's index terms, as MiniSearch would hold them. */
export function textDoc(node: Pick<KnowledgeNode, 'path' | 'title' | 'spec' | 'kind'>, brief?: Brief): TextDoc {
  return textDocOf(node.kind, node.title, docFields(node, brief));
}

/** The document of a node of this kind and title with these fields (docFields'), cut into index terms. */
export function textDocOf(kind: string, title: string, texts: Record<string, string | undefined>): TextDoc {
  const { tokenize, options } = kit();
  const term = options.processTerm as (t: string) => string | null;
  const fields: TextDoc['fields'] = {};
  for (const [name, text] of Object.entries(texts)) {
    if (!text || !(name in WEIGHT)) continue;
    const words = tokenize(text)
      .map(term)
      .filter((w): w is string => Boolean(w));
    if (words.length) fields[name] = { words, weight: WEIGHT[name as keyof typeof WEIGHT] };
  }
  return { kind, title, fields };
}

/** The key of the brief version a leaf-brief node shows, or null for any other node. */
export function briefKey(node: Pick<KnowledgeNode, 'kind' | 'briefId' | 'briefVersion'>): string | null {
  if (node.kind !== 'leaf-brief' || !node.briefId) return null;
  return node.briefVersion ? `${node.briefId}@${node.briefVersion}` : node.briefId;
}
