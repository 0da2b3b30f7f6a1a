// The PostgreSQL store's own text index (SharedStore.text; ARCHITECTURE 7): one row per document
// in akas_search (kind, title, the words of each field as JSON, and a weighted tsvector under a
// GIN index), and every word ever indexed in akas_search_words (under a pg_trgm GIN index),
// for typo tolerance. Rows are written by write(), in the batch the transaction commits, so a
// document is found by every process from the moment its transaction committed.
//
// Nothing of a user's text reaches PostgreSQL as syntax: the tsvector is built here from the
// words the caller cut (never parsed by PostgreSQL's text parser, so the index holds exactly
// those words), and a query's tsquery is built here from its words, each one a quoted lexeme,
// and bound as a parameter.
import type pg from 'pg';
import { ServiceError } from '../../core/index.js';
import type { TextDoc, TextIndex, TextPage, TextQuery, Tx } from '../types.js';
import { literal, PgTx } from './store.js';

/** The weight letters of a tsvector, by TextDoc weight (4 highest). */
const LETTER = { 1: 'D', 2: 'C', 3: 'B', 4: 'A' } as const;
/** Longer words are left out of the index (a tsvector lexeme holds at most 2 KiB; no one types such a word). */
export const MAX_WORD = 200;
/** PostgreSQL keeps positions up to 16,383 and 256 positions a lexeme. */
const MAX_POSITION = 16_383;
const MAX_POSITIONS = 256;
/**
 * Title matches ranked at most. A query's candidates are its title matches first (the
 * akas_search_title index: the A-weight words alone, migration 3), the first TITLED of them
 * in storage order; when there are more, they are the ranked set, and nothing else is read.
 * Reading a candidate is a heap read, so this bound is the query's cost: at 1,000,000 nodes a
 * common word matched 19,387 documents, and ranking and counting them all read 17,000 pages.
 */
export const TITLED = 200;
/** Matches ranked at most when there are no more than TITLED title matches: the first RANKED found (in storage order), with those. */
export const RANKED = 500;
/** Words of the index a misspelt word is compared with at most (the most similar by trigrams). */
const CANDIDATES = 200;

/**
 * Whether a word can be in the index: not empty, not too long, and without U+0000, which
 * PostgreSQL text cannot hold (such a word is left out of a document; a query with one finds nothing).
 */
const indexable = (w: string) => w.length > 0 && w.length <= MAX_WORD && !w.includes('\u0000');

/** A word as a quoted lexeme of tsvector or tsquery input: quotes doubled, backslashes escaped. */
const lexeme = (w: string) => `'${w.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** The tsvector of a document as tsvector input text: each word at its positions, with its field's weight. */
export function tsvectorText(doc: TextDoc): string {
  const at = new Map<string, string[]>();
  let position = 0;
  for (const { words, weight } of Object.values(doc.fields)) {
    for (const w of words) {
      position = Math.min(position + 1, MAX_POSITION);
      if (!indexable(w)) continue;
      let list = at.get(w);
      if (!list) at.set(w, (list = []));
      if (list.length < MAX_POSITIONS) list.push(`${position}${LETTER[weight]}`);
    }
  }
  return [...at].map(([w, ps]) => `${lexeme(w)}:${ps.join(',')}`).join(' ');
}

/** The distinct words of a document, sorted (so concurrent writers insert new words in one order and never deadlock). */
export function docWords(doc: TextDoc): string[] {
  const set = new Set<string>();
  for (const { words } of Object.values(doc.fields)) for (const w of words) if (indexable(w)) set.add(w);
  return [...set].sort();
}

/** The words of each field, as kept beside the tsvector (a hit's match is read from them). */
export const fieldsJson = (doc: TextDoc) => JSON.stringify(Object.fromEntries(Object.entries(doc.fields).map(([f, v]) => [f, v.words.join(' ')])));

/**
 * The statements (CTEs of the batch: store.ts) that put and delete index rows and add new
 * words, as SQL text with every value a literal.
 */
export function indexBatch(s: string, writes: Map<string, TextDoc | null>): string[] {
  const puts: string[] = [];
  const dels: string[] = [];
  const words = new Set<string>();
  for (const [id, doc] of writes) {
    if (!doc) {
      dels.push(literal(id));
      continue;
    }
    // A title is shown, never searched as such: a U+0000 in it (which text cannot hold) is dropped.
    puts.push(
      `(${literal(id)}, ${literal(doc.kind)}, ${literal(doc.title.replaceAll('\u0000', ''))}, ${literal(fieldsJson(doc))}, ` +
        `${literal(tsvectorText(doc))}::tsvector)`,
    );
    for (const w of docWords(doc)) words.add(w);
  }
  const parts: string[] = [];
  if (puts.length)
    parts.push(
      `sx_put AS (INSERT INTO ${s}.akas_search (id, kind, title, fields, tsv) VALUES ${puts.join(', ')} ` +
        'ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, title = excluded.title, fields = excluded.fields, tsv = excluded.tsv)',
    );
  if (dels.length) parts.push(`sx_del AS (DELETE FROM ${s}.akas_search WHERE id IN (${dels.join(', ')}))`);
  if (words.size) {
    const list = [...words].sort().map(literal).join(', ');
    parts.push(`sx_words AS (INSERT INTO ${s}.akas_search_words (word) SELECT w FROM unnest(ARRAY[${list}]::text[]) AS w ORDER BY w ON CONFLICT DO NOTHING)`);
  }
  return parts;
}

/** Levenshtein distance of a and b, or max + 1 once it is sure to exceed max. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (row[j] < best) best = row[j];
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length];
}

/**
 * The index: queries on the store's search pool (its own connections, whose statements carry a
 * timeout: store.ts), never on the pool token buckets and /healthz read from.
 */
export class PgText implements TextIndex {
  constructor(
    /** The search pool (tests read it: which pool, and the statements it runs). */
    readonly pool: pg.Pool,
    /** The quoted schema of the store's tables. */
    private readonly s: string,
    /** The quoted schema pg_trgm lives in (schema.ts finds it). */
    private readonly trgm: () => string,
    private readonly failure: (e: unknown) => unknown,
  ) {}

  write(tx: Tx, id: string, doc: TextDoc | null): void {
    // A transaction of another store cannot carry this store's rows (TextIndex.write's contract).
    if (!(tx instanceof PgTx)) throw new TypeError('the text index is written in a transaction of its own store');
    tx.index(id, doc);
  }

  private query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    return this.pool.query<R>(text, values).catch((e) => Promise.reject(timedOut(e) ?? this.failure(e)));
  }

  /**
   * The index's words near each term that has edits (candidates by trigram similarity, then
   * counted exactly), by the term's index: one statement for them all, so a query holds one
   * connection at a time however many words it looks up (the kit bounds those: PROTOCOL 10.6).
   */
  private async near(terms: TextQuery['terms']): Promise<Map<number, string[]>> {
    const looked = [...terms.entries()].filter(([, t]) => t.edits > 0);
    const out = new Map<number, string[]>();
    if (!looked.length) return out;
    const t = this.trgm();
    const r = await this.query<{ i: number; word: string }>(
      `SELECT q.i::int AS i, w.word FROM unnest($1::text[], $2::int[], $3::int[]) WITH ORDINALITY AS q(word, lo, hi, i) ` +
        `CROSS JOIN LATERAL (SELECT word FROM ${this.s}.akas_search_words WHERE word OPERATOR(${t}.%) q.word AND length(word) BETWEEN q.lo AND q.hi ` +
        `ORDER BY ${t}.similarity(word, q.word) DESC LIMIT ${CANDIDATES}) w`,
      [looked.map(([, x]) => x.word), looked.map(([, x]) => x.word.length - x.edits), looked.map(([, x]) => x.word.length + x.edits)],
    );
    for (const [n, [i, term]] of looked.entries()) {
      const rows = r.rows.filter((row) => row.i === n + 1).map((row) => row.word);
      out.set(
        i,
        rows.filter((w) => w !== term.word && editDistance(term.word, w, term.edits) <= term.edits),
      );
    }
    return out;
  }

  /** The query as tsquery text, and the words each term matches exactly (prefixes aside), for the hits' match. */
  private async tsquery(q: TextQuery): Promise<{ text: string; exact: Array<Set<string>> }> {
    const weight = q.weight ? LETTER[q.weight] : '';
    const near = await this.near(q.terms);
    const exact = q.terms.map((t, i) => new Set([t.word, ...(near.get(i) ?? [])]));
    const text = q.terms
      .map((t, i) => {
        const alts = [...exact[i]].map((w) => `${lexeme(w)}${t.prefix && w === t.word ? ':*' : ':'}${weight}`.replace(/:$/, ''));
        return `(${alts.join(' | ')})`;
      })
      .join(' & ');
    return { text, exact };
  }

  async search(q: TextQuery): Promise<TextPage> {
    const terms = q.terms.filter((t) => indexable(t.word));
    if (!terms.length || terms.length !== q.terms.length) return { items: [], total: 0, estimated: false, more: false };
    // Titles only (suggest) are the title index's words; another weight is a tsquery weight letter, checked on the row.
    const titles = q.weight === 4;
    const { text, exact } = await this.tsquery({ ...q, terms, weight: titles ? undefined : q.weight });
    const kind = q.kind ? ' AND kind = $2' : '';
    const base = q.kind ? [text, q.kind] : [text];
    const b = base.length + 1;
    const t = `${this.s}.akas_search`;
    // A row's block: the candidates are read in storage order, so the block of the last one says how much of the table was read to find them.
    const block = '(ctid::text::point)[0]';
    // The candidates: t the first TITLED + 1 title matches; g the first RANKED + 1 matches,
    // read only when t did not overflow (then they hold every title match). A weight other than
    // the titles' has no title candidates.
    const ctes =
      `WITH t AS MATERIALIZED (SELECT id, tsv, ${block} AS blk FROM ${t} ` +
      `WHERE ${q.weight && !titles ? 'false' : `ts_filter(tsv, '{a}') @@ $1::tsquery${kind}`} ` +
      `LIMIT ${TITLED + 1}), ` +
      `g AS MATERIALIZED (SELECT id, tsv, ${block} AS blk FROM ${t} WHERE ${titles ? 'false' : `tsv @@ $1::tsquery${kind}`} ` +
      `AND (SELECT count(*) FROM t) <= ${TITLED} LIMIT ${RANKED + 1})`;
    const score = titles ? `ts_rank($${b}::float4[], ts_filter(tsv, '{a}'), $1::tsquery, 1)` : `ts_rank($${b}::float4[], tsv, $1::tsquery, 1)`;
    // Ranked by ts_rank over the field weights (normalized by the document's length: a word in a
    // short title counts more than in a long one), then by id; the page's part of them, and how many there were.
    const r = await this.query<{ nt: string; ng: string; n: string; tb: number | null; gb: number | null; pages: string } & Row>(
      `${ctes}, hits AS MATERIALIZED (SELECT id, ${score} AS score FROM ` +
        '(SELECT id, tsv FROM t UNION ALL SELECT id, tsv FROM g WHERE id NOT IN (SELECT id FROM t)) c), ' +
        `page AS (SELECT id, score FROM hits ORDER BY score DESC, id LIMIT $${b + 1} OFFSET $${b + 2}) ` +
        'SELECT (SELECT count(*) FROM t) AS nt, (SELECT count(*) FROM g) AS ng, (SELECT count(*) FROM hits) AS n, ' +
        '(SELECT max(blk) FROM t) AS tb, (SELECT max(blk) FROM g) AS gb, ' +
        `pg_relation_size($${b + 3}::regclass) / current_setting('block_size')::int AS pages, ` +
        `p.id, a.kind, a.title, a.fields, p.score FROM (SELECT 1) one LEFT JOIN (page p JOIN ${t} a ON a.id = p.id) ON true ORDER BY p.score DESC, p.id`,
      [...base, `{${q.boosts.join(',')}}`, q.limit, q.offset, t],
    );
    const hit = (row: Row) => ({ id: row.id!, kind: row.kind, title: row.title, score: row.score, match: matchOf(row.fields, terms, exact) });
    const items = r.rows.filter((row) => row.id !== null).map(hit);
    const [nt, ng, n] = [r.rows[0].nt, r.rows[0].ng, r.rows[0].n].map(Number);
    const end = q.offset + q.limit;
    // Every match is a candidate: all ranked, counted exactly.
    if (nt <= TITLED && ng <= RANKED) return { items, total: n, estimated: false, more: end < n };
    // More matches than candidates: the page goes on past the ranked ones with the others, in
    // storage order (one more row than needed says whether any lies after the page).
    let more = end < n;
    if (!more) {
      const from = Math.max(q.offset, n);
      const rest = await this.query<Row>(
        `${ctes} SELECT id, kind, title, fields, ${score} AS score FROM ${t} ` +
          `WHERE ${titles ? "ts_filter(tsv, '{a}')" : 'tsv'} @@ $1::tsquery${kind} AND id NOT IN (SELECT id FROM t) AND id NOT IN (SELECT id FROM g) ` +
          `OFFSET $${b + 1} LIMIT $${b + 2}`,
        [...base, `{${q.boosts.join(',')}}`, from - n, end - from + 1],
      );
      more = rest.rows.length > end - from;
      items.push(...rest.rows.slice(0, end - from).map(hit));
    }
    // The total, estimated (counting would read every match): the matches over the part of the
    // table read to find the candidates, times the table (the matches spread as the rows were
    // written); when only title matches were read, PostgreSQL's estimate from its statistics of
    // the words, and at least as many as the title matches extrapolated alike. Never below what the pages prove.
    const proven = Math.max(n, q.offset + items.length + (more ? 1 : 0));
    const pages = Number(r.rows[0].pages);
    const spread = (found: number, last: number | null) => (last === null ? 0 : Math.round((found * pages) / (Number(last) + 1)));
    let estimate = 0;
    if (ng > RANKED) estimate = spread(ng, r.rows[0].gb);
    else if (q.total !== false) {
      const planned = await this.estimate(`SELECT 1 FROM ${t} WHERE ${titles ? "ts_filter(tsv, '{a}')" : 'tsv'} @@ $1::tsquery${kind}`, base);
      estimate = Math.max(planned, spread(nt, r.rows[0].tb));
    }
    return { items, total: Math.max(proven, estimate), estimated: true, more };
  }

  /** The planner's estimate of the rows a statement answers (EXPLAIN plans it; nothing is read). */
  private async estimate(sql: string, values: unknown[]): Promise<number> {
    const r = await this.query<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(`EXPLAIN (FORMAT JSON) ${sql}`, values);
    return Math.round(r.rows[0]['QUERY PLAN'][0].Plan['Plan Rows']);
  }

  async kinds(ids: string[]): Promise<Array<string | null>> {
    if (!ids.length) return [];
    const r = await this.query<{ id: string; kind: string }>(`SELECT id, kind FROM ${this.s}.akas_search WHERE id = ANY($1::text[])`, [ids]);
    const byId = new Map(r.rows.map((row) => [row.id, row.kind]));
    return ids.map((id) => byId.get(id) ?? null);
  }
}

/**
 * A statement the server cancelled at the search pool's statement_timeout (SQLSTATE 57014):
 * the 503 search_busy of PROTOCOL 10.6, not a failure of the store.
 */
function timedOut(e: unknown): ServiceError | undefined {
  if ((e as { code?: unknown })?.code !== '57014') return undefined;
  return new ServiceError('search_busy', 'The search ran past its time on this node, and was stopped.', {
    retryAfter: 1,
    hint: 'Retry in a moment, or with fewer words: a query of many long words costs the most (PROTOCOL 10.6).',
  });
}

interface Row {
  id: string | null;
  kind: string;
  title: string;
  fields: string;
  score: number;
}

/** The document's words each field matched: a term's word or its near words, or (a prefix term) a word it starts. */
function matchOf(fieldsText: string, terms: TextQuery['terms'], exact: Array<Set<string>>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [field, text] of Object.entries(JSON.parse(fieldsText) as Record<string, string>)) {
    const words = new Set(text.split(' '));
    const hit = new Set<string>();
    for (const [i, t] of terms.entries()) for (const w of words) if (exact[i].has(w) || (t.prefix && w.startsWith(t.word))) hit.add(w);
    if (hit.size) out[field] = [...hit];
  }
  return out;
}
