// The PostgreSQL store's text index (src/store/postgres/search.ts, schema.ts migration 2) and
// the search on it (src/domain/knowledge/search-store.ts): documents written in the
// publishing transaction and only if it commits; another store on the database (another
// process) finds them at once; a store at schema version 1 with published nodes is migrated
// online and backfilled; an index a failed concurrent build left invalid is built again; and
// without pg_trgm the store fails closed, saying what an operator must do.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, expect, it, vi } from 'vitest';
import { storeSearch } from '../../src/domain/knowledge/search.js';
import { backfilled } from '../../src/domain/knowledge/search-store.js';
import { publishToTree, treeLocks } from '../../src/domain/knowledge/tree.js';
import type { ProposalRecord } from '../../src/domain/records.js';
import { migrateDatabase } from '../../src/ops/index.js';
import { migratePg, openPgStore, type PgStore } from '../../src/store/postgres/index.js';
import { SEARCH_TIMEOUT_MS } from '../../src/store/postgres/connect.js';
import { RANKED, TITLED, type PgText } from '../../src/store/postgres/search.js';
import { KnowledgeNodes } from '../../src/domain/knowledge/tree.js';
import { samplePayload } from '../fixtures/payloads.js';
import { describePg, dropSchema, freshSchemaUrl, pgUrl } from '../helpers/postgres.js';

const opened: PgStore[] = [];
afterEach(async () => {
  const [first, ...rest] = opened.splice(0);
  for (const s of rest) await s.close();
  if (first) {
    await dropSchema(first).catch(() => undefined);
    await first.close();
  }
});
const open = async (url: string) => {
  const s = await openPgStore(url);
  opened.push(s);
  return s;
};

const capability = (n: number, title: string) =>
  ({
    proposalId: `cprop_${n}`,
    kind: 'capability',
    path: `/tools/t-${n}`,
    payload: { ...samplePayload('capability', n), path: `/tools/t-${n}`, title },
  }) as unknown as ProposalRecord;

const publish = (store: PgStore, p: ProposalRecord, then?: () => void) =>
  store.transact(treeLocks(p), async (tx) => {
    await publishToTree(tx, p, 1_767_268_800_000, storeSearch(store.text));
    then?.();
  });

const paths = async (store: PgStore, q: string) => {
  const search = storeSearch(store.text).open(store);
  try {
    return (await search.search(q, { limit: 20 })).items.map((i) => i.path);
  } finally {
    await search.close();
  }
};

describePg('the text index of the PostgreSQL store', () => {
  it('holds a document only once its transaction commits, and another store on the database finds it at once', async () => {
    const url = freshSchemaUrl();
    const [one, two] = [await open(url), await open(url)];
    await expect(
      publish(one, capability(1, 'Quaternion interpolator'), () => {
        throw new Error('abandoned');
      }),
    ).rejects.toThrow('abandoned');
    expect(await paths(two, 'quaternion')).toEqual([]);
    await publish(one, capability(1, 'Quaternion interpolator'));
    expect(await paths(two, 'quaternion')).toEqual(['/tools/t-1']);
    expect(await paths(two, 'quaternon')).toEqual(['/tools/t-1']);
    expect(await paths(two, 'interp')).toEqual(['/tools/t-1']);
    // A refresh replaces the document: the old title's words find nothing.
    await publish(two, capability(1, 'Slerp for robot arms'));
    expect(await paths(one, 'quaternion')).toEqual([]);
    expect(await paths(one, 'slerp')).toEqual(['/tools/t-1']);
  });

  /** Writes documents in one transaction: each id with its words in the title (weight 4) and in the spec (weight 1). */
  const put = (store: PgStore, docs: Array<{ id: string; title: string[]; spec?: string[] }>) =>
    store.transact(['bulk'], async (tx) => {
      for (const d of docs)
        store.text.write(tx, d.id, {
          kind: 'leaf-capability',
          title: d.id,
          fields: { title: { words: d.title, weight: 4 }, spec: { words: d.spec ?? [], weight: 1 } },
        });
    });
  const boosts = [1, 1, 1, 1] as [number, number, number, number];
  const word = (w: string) => ({ terms: [{ word: w, prefix: false, edits: 0 }], boosts, limit: 100 });
  /** Every page of a query, following `more`: the ids in page order, and the totals each page answered. */
  const allPages = async (store: PgStore, query: ReturnType<typeof word>) => {
    const ids: string[] = [];
    const totals: Array<{ total: number; estimated: boolean }> = [];
    for (let offset = 0; ; offset += query.limit) {
      const page = await store.text.search({ ...query, offset });
      ids.push(...page.items.map((i) => i.id));
      totals.push({ total: page.total, estimated: page.estimated });
      expect(page.total).toBeGreaterThanOrEqual(ids.length + (page.more ? 1 : 0));
      if (!page.more) return { ids, totals };
      expect(page.items).toHaveLength(query.limit);
    }
  };
  const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `/bulk/${prefix}-${String(i).padStart(5, '0')}`);

  it(`ranks the first ${TITLED} title matches of a query matching more, then the rest, and estimates the total: every match on a page, once`, async () => {
    const store = await open(freshSchemaUrl());
    const all = ids('d', TITLED + 150);
    await put(
      store,
      all.map((id, i) => ({ id, title: ['common', `w${i}`] })),
    );
    const { ids: seen, totals } = await allPages(store, word('common'));
    expect(seen.sort()).toEqual(all);
    expect(totals.every((t) => t.estimated)).toBe(true);
    // A query matching fewer is ranked whole and counted exactly.
    expect(await store.text.search({ ...word('w7'), offset: 0 })).toMatchObject({ items: [{ id: '/bulk/d-00007' }], total: 1, estimated: false, more: false });
  });

  it(`ranks the first ${RANKED} matches of a word in few titles and many other fields, then the rest: every match on some page, once`, async () => {
    const store = await open(freshSchemaUrl());
    const all = ids('s', RANKED + 150);
    await put(
      store,
      all.map((id, i) => ({ id, title: [`w${i}`], spec: ['common'] })),
    );
    const { ids: seen, totals } = await allPages(store, word('common'));
    expect(seen.sort()).toEqual(all);
    expect(totals[0].estimated).toBe(true);
    // Estimated from the part of the table read to find the first ones: near the truth when the matches spread evenly.
    expect(totals[0].total).toBeGreaterThan(all.length / 2);
    expect(totals[0].total).toBeLessThan(all.length * 2);
  });

  it('ranks the title matches first, wherever they are stored among many matches in other fields', async () => {
    const store = await open(freshSchemaUrl());
    // 2,100 matches in the spec stored first (more than the first matches ranked, before or now), then 3 in the title.
    await put(
      store,
      ids('s', 2_100).map((id, i) => ({ id, title: [`w${i}`], spec: ['gyroscope'] })),
    );
    await put(
      store,
      ids('t', 3).map((id) => ({ id, title: ['gyroscope'] })),
    );
    const first = await store.text.search({ ...word('gyroscope'), limit: 5, offset: 0 });
    expect(first.items.slice(0, 3).map((i) => i.id)).toEqual(ids('t', 3));
    expect(first.more).toBe(true);
  });

  it('looks up at most 4 words of a 200-character query of 33 long words for typos, all in one statement', async () => {
    const store = await open(freshSchemaUrl());
    await publish(store, capability(1, 'Quaternion interpolator'));
    const words = Array.from({ length: 33 }, (_, i) => `qu${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}n`);
    const q = words.join(' ');
    expect(q.length).toBeLessThanOrEqual(200);
    const sent: Array<[string, unknown]> = [];
    const original = pg.Pool.prototype.query;
    const spy = vi.spyOn(pg.Pool.prototype, 'query').mockImplementation(function (this: pg.Pool, ...args: unknown[]) {
      const [text, values] = args as [string | { text: string }, unknown];
      if (this === (store.text as PgText).pool) sent.push([typeof text === 'string' ? text : text.text, values]);
      return Reflect.apply(original, this, args) as never;
    } as never);
    const search = storeSearch(store.text).open(store);
    try {
      await search.search(q, { limit: 20 });
    } finally {
      spy.mockRestore();
      await search.close();
    }
    // On the search pool: one lookup statement for the first four words (the others match exactly), and the search; three statements at most.
    const lookups = sent.filter(([sql]) => sql.includes('akas_search_words'));
    expect(lookups.map(([, values]) => (values as unknown[])[0])).toEqual([words.slice(0, 4)]);
    expect(sent.length).toBeLessThanOrEqual(3);
    // Words past the tenth are not searched at all.
    expect(JSON.stringify(sent)).toContain(words[9]);
    expect(JSON.stringify(sent)).not.toContain(words[10]);
  });

  it('runs search on a pool of its own, whose statements time out: with all its connections taken, a bucket draw and a read still answer', async () => {
    const store = await open(freshSchemaUrl());
    const pool = (store.text as PgText).pool;
    const [row] = (await pool.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows;
    expect(row.statement_timeout).toBe(`${SEARCH_TIMEOUT_MS}ms`);
    const held = await Promise.all(Array.from({ length: pool.options.max ?? 0 }, () => pool.connect()));
    try {
      expect(held.length).toBe(4);
      expect(await store.buckets.draw('ip:9', 10, 1, 1_000, true)).toEqual({ tokens: 9, taken: true });
      expect(await store.get(KnowledgeNodes, '/nowhere')).toBeUndefined();
    } finally {
      for (const c of held) c.release();
    }
  });

  it('migrates a version-1 store holding published nodes: the indexes built online, every node backfilled with progress, found at once', async () => {
    const url = freshSchemaUrl();
    const store = await open(url);
    for (let i = 0; i < 7; i++) await publish(store, capability(i, `Gyroscope calibration ${i}`));
    // Back to version 1, as a store written before the text index existed.
    await store.sql('DROP TABLE $schema.akas_search, $schema.akas_search_words');
    await store.sql('DELETE FROM $schema.akas_schema_version WHERE version > 1');
    await store.sql("DELETE FROM $schema.akas_kv WHERE space = 'knowledge-search-state'");
    const steps: string[] = [];
    const report = await migrateDatabase(url, (what) => steps.push(what));
    const built = ['akas_search_tsv', 'akas_search_words_trgm', 'akas_search_title'];
    expect(report).toMatchObject({ from: 1, to: 3, applied: [{ version: 2 }, { version: 3 }], indexes: built, search: { indexed: 7 } });
    expect(steps).toEqual([...built.map((ix) => `building index ${ix}`), 'indexing nodes for search: 7']);
    expect(await backfilled(store)).toBe(true);
    expect((await paths(store, 'gyroscpe')).sort()).toEqual(Array.from({ length: 7 }, (_, i) => `/tools/t-${i}`));
    // Nothing left to do the second time.
    expect(await migrateDatabase(url)).toMatchObject({ applied: [], indexes: [], search: { indexed: 0 } });
  });

  it('drops an index a failed concurrent build left invalid, and builds it again', async () => {
    const url = freshSchemaUrl();
    const store = await open(url);
    await store.sql("UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass('$schema.akas_search_tsv')");
    expect((await migratePg(url)).indexes).toEqual(['akas_search_tsv']);
    const [row] = await store.sql<{ valid: boolean }>("SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass('$schema.akas_search_tsv')");
    expect(row.valid).toBe(true);
  });

  it('fails closed when pg_trgm cannot be created, saying what an operator must grant', async () => {
    const admin = await open(freshSchemaUrl());
    const suffix = randomBytes(4).toString('hex');
    const [db, role] = [`akas_noext_${suffix}`, `akas_low_${suffix}`];
    await admin.sql(`CREATE DATABASE ${db}`);
    await admin.sql(`CREATE ROLE ${role} LOGIN`);
    const base = new URL(pgUrl()!);
    const dbUrl = (user: string) => Object.assign(new URL(base), { username: user, pathname: `/${db}` }).toString();
    // The schema is the role's (an operator's least-privilege set-up); the database's CREATE is not.
    const setup = await import('pg').then(({ default: pg }) => new pg.Client({ connectionString: dbUrl('postgres') }));
    await setup.connect();
    try {
      await setup.query(`CREATE SCHEMA akas AUTHORIZATION ${role}`);
      await expect(openPgStore(`${dbUrl(role)}?schema=akas`)).rejects.toThrow(/pg_trgm.*trusted extension.*CREATE EXTENSION pg_trgm/);
      // Nothing half-made: the migration's transaction rolled back.
      expect((await setup.query("SELECT to_regclass('akas.akas_kv') AS t")).rows[0].t).toBeNull();
      // Once the extension is there, the same role's store opens.
      await setup.query('CREATE EXTENSION pg_trgm');
      const ok = await openPgStore(`${dbUrl(role)}?schema=akas`);
      await ok.close();
    } finally {
      await setup.end();
      await admin.sql(`DROP DATABASE ${db} WITH (FORCE)`);
      await admin.sql(`DROP ROLE ${role}`);
    }
  });
});
