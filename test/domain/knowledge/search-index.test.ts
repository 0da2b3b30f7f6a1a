// The index's compact postings (src/domain/knowledge/search-index.ts createIndex) against MiniSearch's own
// Maps: the same hits, scores and matches for the benches' kinds of query, before and after
// documents are replaced (discarded, added again, the discarded postings dropped by searches
// and by a vacuum), and the postings really compact (else a MiniSearch upgrade silently undid it).
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { corpus, queries } from '../../../bench/search-corpus.js';
import { createIndex, type Doc } from '../../../src/domain/knowledge/search-index.js';
import { kit, queryText } from '../../../src/domain/knowledge/search.js';

const c = corpus(3000);
const docs = c.docs as Doc[];

/** Queries of every kind: the benches' six, and for a sample of documents a word, a prefix, a misspelling, two words, a word of a deep level. */
function questions(): string[] {
  const qs = queries(c).map((q) => q.q);
  for (const d of docs.filter((_, i) => i % 97 === 0)) {
    const words = `${d.title} ${d.spec} ${d.core ?? ''}`
      .toLowerCase()
      .split(/\W+/)
      .filter((w) => w.length >= 4);
    const [a, b] = words;
    qs.push(a, a.slice(0, 3), a.slice(0, -2) + a.slice(-1), `${a} ${b}`, (d.deep ?? d.path).split(/\s+/)[0] || a);
  }
  return qs;
}

const answers = (index: MiniSearch<Doc>, qs: string[]) =>
  qs.flatMap((q) => [
    index.search(queryText(q)).map((r) => [r.id, r.score, r.match, r.kind, r.title]),
    index.search(queryText(q), { filter: (r) => r.kind === 'leaf-brief' }).map((r) => [r.id, r.score]),
    index.search(queryText(q), { fields: ['title'], prefix: true, fuzzy: false, combineWith: 'AND' }).map((r) => [r.id, r.score]),
  ]);

describe('the compact index', () => {
  it('answers as MiniSearch with its own Maps does, also after documents are replaced and vacuumed', async () => {
    const compact = createIndex(MiniSearch, kit());
    const plain = new MiniSearch<Doc>(kit().options);
    const both = [compact, plain];
    for (const index of both) index.addAll(docs);
    const qs = questions();
    expect(answers(compact, qs)).toEqual(answers(plain, qs));

    // Rounds of refreshes (a node's old document out, a new one with another's text in) of two
    // nodes in three; searches meet the discarded postings and drop them, a vacuum drops the
    // rest, and the next round adds to postings that lost entries.
    for (const round of [1, 2, 3]) {
      for (let i = 0; i < docs.length; i++) {
        if (i % 3 === round % 3) continue;
        const next = { ...docs[(i + round) % docs.length], id: docs[i].id };
        for (const index of both) {
          index.discard(docs[i].id);
          index.add(next);
        }
      }
      expect(answers(compact, qs)).toEqual(answers(plain, qs));
      await Promise.all(both.map((index) => index.vacuum()));
      expect(answers(compact, qs)).toEqual(answers(plain, qs));
    }
    expect([compact.documentCount, compact.termCount, compact.dirtCount]).toEqual([plain.documentCount, plain.termCount, plain.dirtCount]);
    // The whole index as MiniSearch serializes it; field lengths by field (the compact arrays
    // hold every field's slot, a hole for a field the document lacks).
    const serialized = (index: MiniSearch<Doc>) => {
      const js = index.toJSON();
      return { ...js, fieldLength: Object.fromEntries(Object.entries(js.fieldLength).map(([id, lengths]) => [id, Object.entries(lengths)])) };
    };
    expect(serialized(compact)).toEqual(serialized(plain));
  });

  it("keeps postings in arrays, not Maps, and field lengths in arrays of the fields' count", () => {
    const index = createIndex(MiniSearch, kit());
    index.addAll(docs.slice(0, 10));
    const internals = index as unknown as { _index: Map<string, Map<number, unknown>>; _fieldLength: Map<number, unknown[]> };
    const postings = [...internals._index.values()].flatMap((fields) => [...fields.values()]);
    expect(postings.length).toBeGreaterThan(0);
    for (const p of postings) expect(p).not.toBeInstanceOf(Map);
    for (const lengths of internals._fieldLength.values()) expect(lengths).toHaveLength(kit().options.fields.length);
  });
});
