// A node for tests: a fresh store (a temp folder, or a fresh PostgreSQL schema when the suite
// runs on PostgreSQL: test/helpers/stores.ts), a fake clock, and app.inject().
import type { FastifyInstance } from 'fastify';
import { cryptoRandom, FakeClock, freshNodeKeys, type NodeKeys } from '../../src/core/index.js';
import { createApp, type AppConfig } from '../../src/http/app.js';
import { strategiesFor } from '../../src/node/strategies.js';
import type { OpenedStore } from '../../src/store/index.js';
import { openTestStore } from './stores.js';

export interface TestNode {
  app: FastifyInstance;
  store: OpenedStore;
  clock: FakeClock;
  keys: NodeKeys;
  /** The data folder, or the database URL on PostgreSQL. */
  dir: string;
  close: () => Promise<void>;
}

/** Fresh node keys with a fixed HMAC key named hk_test (tests read that id back). */
export function testKeys(now = 0): NodeKeys {
  const keys = freshNodeKeys(cryptoRandom, now);
  return { ...keys, hmac: [{ signingKeyId: 'hk_test', key: Buffer.alloc(32, 7), createdAt: now }] };
}

export async function testNode(config: Partial<AppConfig> = {}): Promise<TestNode> {
  const { store, dir, dispose } = await openTestStore();
  const clock = new FakeClock();
  const keys = testKeys(clock.now());
  const app = await createApp({ store, clock, keys, strategies: strategiesFor(store), config: { checkResponses: true, ...config } });
  await app.ready();
  return {
    app,
    store,
    clock,
    keys,
    dir,
    close: async () => {
      await app.close();
      await dispose();
    },
  };
}

/** Registers an agent from ip and returns the register body. */
export async function registerAgent(node: TestNode, ip = '10.0.0.1', query = '') {
  const res = await node.app.inject({ method: 'POST', url: `/api/agent/v1/register${query}`, remoteAddress: ip });
  if (res.statusCode !== 200) throw new Error(`register failed ${res.statusCode} ${res.body}`);
  return res.json() as { apiKey: string; tag: string; recoveryToken: string; signing: { publicKey: string; privateKey: string }; [k: string]: unknown };
}

export const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });
