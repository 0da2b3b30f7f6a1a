// The credit ledger of PROTOCOL 3.3 across processes: one agent's entries are ordered by the
// sequence its record holds, taken in the transaction that writes the record under the agent's
// lock, never by a clock or by a counter of the process that wrote them. So two processes on one
// PostgreSQL database writing an agent's entries in the same millisecond, or a process whose
// clock runs 90 s behind, leave entries checkLedger walks in the order they happened.
import { afterEach, describe, expect, it } from 'vitest';
import { cryptoRandom, FakeClock } from '../../src/core/index.js';
import * as ledgerOfOne from '../../src/domain/ledger.js';
import { LEDGER_ORDER_MIGRATION, ledgerMigration, migrateLedgerOrder, Migrations } from '../../src/domain/migrations.js';
import { Agents, agentLock, Ledger, type AgentRecord, type LedgerType } from '../../src/domain/records.js';
import { strategiesFor } from '../../src/node/strategies.js';
import { createApp } from '../../src/http/app.js';
import { openPgStore, type PgStore } from '../../src/store/postgres/index.js';
import type { Store } from '../../src/store/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { testKeys, testNode, type TestNode } from '../helpers/app.js';
import { agent, proposeAs } from '../helpers/flows.js';
import { describePg, dropSchema, freshSchemaUrl } from '../helpers/postgres.js';
import { openTestStore, type StoreKind, type TestStore } from '../helpers/stores.js';

const { checkLedger, ledgerKey } = ledgerOfOne;
type LedgerModule = typeof ledgerOfOne;

/**
 * The ledger module as a second process has it: an instance of its own (its own module state),
 * loaded under another URL. Each call answers a new one.
 */
let instances = 0;
async function anotherProcess(): Promise<LedgerModule> {
  const url = new URL(`../../src/domain/ledger.ts?process=${++instances}`, import.meta.url).href;
  return (await import(/* @vite-ignore */ url)) as LedgerModule;
}

/** An agent as registration stores it, with nothing in the ledger yet. */
function newAgent(tag: string, at: number): AgentRecord {
  return {
    tag,
    apiKeyHash: tag,
    createdAt: at,
    calibrationPoolId: 'A',
    registeredIp: '10.0.0.1',
    signing: { publicKey: tag, validFrom: at, priorKeys: [] },
    recoveryTokenHash: tag,
    keyGeneration: 0,
    calibration: { attempts: 1, score: 0.8, bonusPaid: true, lastAttemptAt: at },
    balance: 0,
    reservedBalance: 0,
    totalAnswered: 0,
    decoyAttempted: 0,
    decoyFailed: 0,
    bannedUntil: null,
    contributions: { proposals: 0, judgments: 0, published: 0 },
    alignment: { decided: 0, aligned: 0 },
    appeals: 0,
  };
}

/** One credit movement of an agent, as a process makes it: under the agent's lock, in the transaction that writes its record. */
async function move(ledger: LedgerModule, store: Store, clock: FakeClock, tag: string, type: LedgerType, amount: number) {
  await store.transact([agentLock(tag)], async (tx) => {
    const record = (await tx.get(Agents, tag)) ?? newAgent(tag, clock.now());
    ledger.moveCredits(tx, { clock, random: cryptoRandom }, record, type, amount, `test ${type}`);
  });
}

/** The types of an agent's entries in the order the ledger holds them. */
async function entriesOf(store: Store, tag: string): Promise<string[]> {
  return (await store.list(Ledger)).filter(([, e]) => e.agent === tag).map(([, e]) => e.type);
}

describePg("one agent's ledger written by two processes on one PostgreSQL database", () => {
  const opened: Array<{ close: () => Promise<void> }> = [];
  afterEach(async () => {
    for (const o of opened.splice(0).reverse()) await o.close();
  });

  it('keeps the order the entries were made in when both write them in the same millisecond', async () => {
    const url = freshSchemaUrl();
    const [one, two] = [await openPgStore(url), await openPgStore(url)];
    opened.push({ close: () => one.close() }, { close: async () => (await dropSchema(two), await two.close()) });
    const [first, second] = [ledgerOfOne, await anotherProcess()];
    const clock = new FakeClock(); // both processes, the same millisecond throughout
    // The first process has made entries of other agents before (whatever it counts, it counts alone).
    for (let i = 0; i < 3; i++) await move(first, one, clock, 'ak_others00', 'mint', 1);
    await move(first, one, clock, 'ak_payer000', 'mint', 10);
    await move(second, two, clock, 'ak_payer000', 'spend', 10);
    await move(first, one, clock, 'ak_payer000', 'mint', 5);
    await move(second, two, clock, 'ak_payer000', 'reserve', 5);
    expect(await entriesOf(one, 'ak_payer000')).toEqual(['mint', 'spend', 'mint', 'reserve']);
    expect((await checkLedger(one)).problems).toEqual([]);
  });

  it('keeps the order the entries were made in when the second process runs 90 s behind', async () => {
    const url = freshSchemaUrl();
    const keys = testKeys();
    const ahead = new FakeClock();
    const behind = new FakeClock(ahead.now() - 90_000);
    const open = async (clock: FakeClock): Promise<TestNode> => {
      const store = await openPgStore(url);
      const app = await createApp({ store, strategies: strategiesFor(store), clock, keys, config: { rateLimit: { burst: 1e9, refillPerSecond: 1e9 } } });
      await app.ready();
      const node = { app, store, clock, keys, dir: url, close: async () => (await app.close(), await store.close()) };
      opened.push(node);
      return node;
    };
    const [one, two] = [await open(ahead), await open(behind)];
    opened.push({ close: () => dropSchema(two.store as PgStore) });
    // Funded through the first process, then a deposit taken through the second.
    const a = await agent(one, 0.8, 20);
    expect((await proposeAs(two, a, 'capability', samplePayload('capability', 1))).statusCode).toBe(200);
    expect(await entriesOf(one.store, a.tag)).toEqual(['mint', 'reserve']);
    expect((await checkLedger(one.store)).problems).toEqual([]);
  });
});

describe('a node whose clock steps back', () => {
  let node: TestNode;
  afterEach(async () => node?.close());

  it('keeps the order the entries were made in when the clock goes back 90 s between two of them', async () => {
    node = await testNode({ rateLimit: { burst: 1e9, refillPerSecond: 1e9 } });
    const a = await agent(node, 0.8, 20);
    node.clock.advance(-90_000);
    expect((await proposeAs(node, a, 'capability', samplePayload('capability', 2))).statusCode).toBe(200);
    expect(await entriesOf(node.store, a.tag)).toEqual(['mint', 'reserve']);
    expect((await checkLedger(node.store)).problems).toEqual([]);
  });
});

describe('the ledger audit', () => {
  let node: TestNode;
  afterEach(async () => node?.close());

  /** An agent funded with 20 and holding a deposit of 2 (entries 1 and 2), and the keys of its entries. */
  async function funded() {
    node = await testNode({ rateLimit: { burst: 1e9, refillPerSecond: 1e9 } });
    const a = await agent(node, 0.8, 20);
    expect((await proposeAs(node, a, 'capability', samplePayload('capability', 3))).statusCode).toBe(200);
    const keys = (await node.store.list(Ledger)).filter(([, e]) => e.agent === a.tag).map(([k]) => k);
    expect(keys).toEqual([ledgerKey(a.tag, 1), ledgerKey(a.tag, 2)]);
    expect((await checkLedger(node.store)).problems).toEqual([]);
    return { tag: a.tag, keys };
  }

  it('names an entry missing from an agent’s sequence', async () => {
    const { tag, keys } = await funded();
    await node.store.transact([agentLock(tag)], async (tx) => tx.del(Ledger, keys[0]));
    const problems = (await checkLedger(node.store)).problems.join('\n');
    expect(problems).toContain(`${tag}: entry 2 follows entry 0 (entries missing)`);
    expect(problems).toContain(`${tag} went negative at entry 2 (reserve`);
  });

  it('names entries out of the order they were made in, and walks them in the order their numbers say', async () => {
    const { tag, keys } = await funded();
    // The deposit put where the funding was and the funding after it: the deposit came first now.
    await node.store.transact([agentLock(tag)], async (tx) => {
      const [mint, reserve] = [await tx.get(Ledger, keys[0]), await tx.get(Ledger, keys[1])];
      tx.put(Ledger, keys[0], reserve!);
      tx.put(Ledger, keys[1], mint!);
    });
    const problems = (await checkLedger(node.store)).problems.join('\n');
    expect(problems).toContain(`entry ${keys[0]} says it is entry 2 of ${tag}: it was moved`);
    expect(problems).toContain(`${tag} went negative at entry 1 (reserve 2)`);
  });

  it('names a record whose sequence is not at its last entry', async () => {
    const { tag } = await funded();
    await node.store.transact([agentLock(tag)], async (tx) => {
      const a = (await tx.get(Agents, tag))!;
      tx.put(Agents, tag, { ...a, ledgerSeq: 1 });
    });
    expect((await checkLedger(node.store)).problems).toEqual([`${tag}: the record's ledger sequence is at 1, its last entry is 2`]);
  });
});

/** Entries as the version before wrote them: keyed `<ms>:<counter of the process>:<id>`, no number. */
const LEGACY: Array<[number, string, LedgerType, number]> = [
  [0, 'ak_aaaaaaaa', 'mint', 10],
  [0, 'ak_bbbbbbbb', 'mint', 5],
  [1, 'ak_aaaaaaaa', 'spend', 4],
  [2, 'ak_bbbbbbbb', 'reserve', 5],
  [2, 'ak_aaaaaaaa', 'reserve', 6],
  [3, 'ak_bbbbbbbb', 'refund', 5],
];

async function writeLegacy(store: Store, clock: FakeClock) {
  await store.transact(['ak_aaaaaaaa', 'ak_bbbbbbbb'].map(agentLock), async (tx) => {
    tx.put(Agents, 'ak_aaaaaaaa', { ...newAgent('ak_aaaaaaaa', clock.now()), balance: 0, reservedBalance: 6 });
    tx.put(Agents, 'ak_bbbbbbbb', { ...newAgent('ak_bbbbbbbb', clock.now()), balance: 5, reservedBalance: 0 });
    for (const [i, [ms, agent, type, amount]] of LEGACY.entries()) {
      const at = clock.now() + ms;
      tx.put(Ledger, `${String(at).padStart(15, '0')}:${String(i).padStart(12, '0')}:lg_${i}`, { id: `lg_${i}`, at, agent, type, amount, reason: 'before' });
    }
  });
}

/** What the migration must leave: each agent's entries numbered in their old order, its record's sequence at the last. */
async function expectMigrated(store: Store) {
  const entries = await store.list(Ledger);
  expect(entries.map(([k, e]) => [k, e.seq, e.type, e.id])).toEqual([
    [ledgerKey('ak_aaaaaaaa', 1), 1, 'mint', 'lg_0'],
    [ledgerKey('ak_aaaaaaaa', 2), 2, 'spend', 'lg_2'],
    [ledgerKey('ak_aaaaaaaa', 3), 3, 'reserve', 'lg_4'],
    [ledgerKey('ak_bbbbbbbb', 1), 1, 'mint', 'lg_1'],
    [ledgerKey('ak_bbbbbbbb', 2), 2, 'reserve', 'lg_3'],
    [ledgerKey('ak_bbbbbbbb', 3), 3, 'refund', 'lg_5'],
  ]);
  expect((await store.get(Agents, 'ak_aaaaaaaa'))?.ledgerSeq).toBe(3);
  expect((await store.get(Agents, 'ak_bbbbbbbb'))?.ledgerSeq).toBe(3);
  expect((await checkLedger(store)).problems).toEqual([]);
}

/** The store with every transaction after the first `ok` failing, as a process that dies there leaves it. */
function dyingAfter(store: Store, ok: number): Store {
  let n = 0;
  const transact: Store['transact'] = (locks, fn, options) => (n++ < ok ? store.transact(locks, fn, options) : Promise.reject(new Error('the process died')));
  return new Proxy(store, { get: (target, name) => (name === 'transact' ? transact : Reflect.get(target, name, target)) });
}

function migrationSuite(kind: StoreKind) {
  let opened: TestStore | undefined;
  afterEach(async () => {
    ledgerMigration.batch = 500;
    await opened?.dispose();
    opened = undefined;
  });

  it('numbers the entries of a ledger keyed by time per agent in their old order, batch by batch, once', async () => {
    opened = await openTestStore(kind);
    const { store } = opened;
    await writeLegacy(store, new FakeClock());
    // Before the migration the audit walks them in their old order: the ledger is sound.
    expect((await checkLedger(store)).problems).toEqual([]);
    ledgerMigration.batch = 2;
    expect(await migrateLedgerOrder({ store })).toBe(6);
    await expectMigrated(store);
    expect(await migrateLedgerOrder({ store })).toBe(0);
    await expectMigrated(store);
  });

  it('goes on where a process that died in it stopped, and the audit holds in between', async () => {
    opened = await openTestStore(kind);
    const { store } = opened;
    await writeLegacy(store, new FakeClock());
    ledgerMigration.batch = 2;
    await expect(migrateLedgerOrder({ store: dyingAfter(store, 1) })).rejects.toThrow('the process died');
    // Half done: two entries numbered, four still keyed by time, and the audit walks them so.
    expect((await store.list(Ledger)).filter(([, e]) => e.seq !== undefined)).toHaveLength(2);
    expect((await checkLedger(store)).problems).toEqual([]);
    expect(await migrateLedgerOrder({ store })).toBe(4);
    await expectMigrated(store);
  });
}

describe('the ledger-order migration at a start', () => {
  it('runs once, at the first start of a node on a ledger keyed by time, and is recorded', async () => {
    const opened = await openTestStore();
    try {
      const clock = new FakeClock();
      await writeLegacy(opened.store, clock);
      const start = async () => {
        const app = await createApp({ store: opened.store, strategies: strategiesFor(opened.store), clock, keys: testKeys() });
        await app.close();
      };
      await start();
      await expectMigrated(opened.store);
      expect(await opened.store.get(Migrations, LEDGER_ORDER_MIGRATION)).toEqual({ at: clock.now(), changed: 6 });
      clock.advance(1000);
      await start();
      expect(await opened.store.get(Migrations, LEDGER_ORDER_MIGRATION)).toEqual({ at: clock.now() - 1000, changed: 6 });
    } finally {
      await opened.dispose();
    }
  });
});

describe('the ledger-order migration on LevelDB', () => migrationSuite('level'));
describePg('the ledger-order migration on PostgreSQL', () => {
  migrationSuite('postgres');

  it('numbers each entry once when two processes migrate at once', async () => {
    const url = freshSchemaUrl();
    const [one, two] = [await openPgStore(url), await openPgStore(url)];
    try {
      await writeLegacy(one, new FakeClock());
      ledgerMigration.batch = 1;
      const [a, b] = await Promise.all([migrateLedgerOrder({ store: one }), migrateLedgerOrder({ store: two })]);
      expect(a + b).toBe(6);
      await expectMigrated(two);
    } finally {
      ledgerMigration.batch = 500;
      await one.close();
      await dropSchema(two);
      await two.close();
    }
  });
});
