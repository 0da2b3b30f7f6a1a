// `akas log watch --tiles` (cli/commands/log/watch.ts watchTilesOnce) against a node's /log/ prefix
// read through app.inject: it follows the log through its tiles alone, and refuses an edited
// entry bundle, a tile that does not give the signed root, a fork, a rollback, and a checkpoint
// short of its witnesses' quorum.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cosignerVerifierKey, generateKeyPair } from '../../src/core/index.js';
import { enqueueLogEntry } from '../../src/domain/log/index.js';
import { tileFetcher, watchTilesOnce, type FetchBytes } from '../../cli/commands/log/watch.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { untilLogSettled } from '../helpers/written.js';

let node: TestNode;
let dir: string;
beforeAll(async () => {
  node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
  dir = mkdtempSync(join(tmpdir(), 'akas-tiles-watch-'));
});
afterAll(async () => {
  await node.close();
  rmSync(dir, { recursive: true, force: true });
});

async function append(n: number, tag = 'x') {
  const ids: string[] = [];
  await node.store.transact(['t'], async (tx) => {
    for (let i = 0; i < n; i++) ids.push(enqueueLogEntry(tx, node.app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { i, tag } }));
  });
  for (const id of ids) await node.app.akas.log.appended(id);
}

/** Reads the node's tiles; `edit` may change a resource's bytes on the way. */
const fetcher =
  (edit?: (path: string, bytes: Buffer) => Buffer): FetchBytes =>
  async (path) => {
    const r = await node.app.inject({ url: `/log/${path}` });
    if (r.statusCode !== 200) throw new Error(`${path}: ${r.statusCode}`);
    return edit ? edit(path, Buffer.from(r.rawPayload)) : Buffer.from(r.rawPayload);
  };

describe('akas log watch --tiles', () => {
  it('follows the log through its tiles, auditing only what is new', async () => {
    await append(300);
    const state = join(dir, 'a.json');
    const key = node.keys.log.verifierKey;
    expect(await watchTilesOnce(fetcher(), state)).toMatchObject({ ok: false, message: expect.stringMatching(/--log-key/) });
    expect(await watchTilesOnce(fetcher(), state, { logKey: key })).toMatchObject({ ok: true, size: 300, audited: 300 });
    await append(20);
    expect(await watchTilesOnce(fetcher(), state)).toMatchObject({ ok: true, size: 320, previousSize: 300, audited: 20 });
  });

  it('waits out a 429 as its Retry-After says: a first audit reads more tiles than a burst holds', async () => {
    // A node with a burst of 3, over real HTTP (tiles draw a token like every route).
    const small = await testNode({ rateLimit: { burst: 3, refillPerSecond: 1 } });
    try {
      await small.store.transact(['t'], async (tx) => {
        for (let i = 0; i < 600; i++) enqueueLogEntry(tx, small.app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { i } });
      });
      await untilLogSettled(small);
      await small.app.akas.log.checkpoint();
      const url = await small.app.listen({ host: '127.0.0.1', port: 0 });
      const waited: number[] = [];
      // The fake sleep moves the node's clock: the bucket refills as the wait says.
      const sleep = async (ms: number) => {
        waited.push(ms);
        small.clock.advance(ms);
      };
      const r = await watchTilesOnce(tileFetcher(`${url}/log`, { sleep }), join(dir, 'limited.json'), { logKey: small.keys.log.verifierKey });
      expect(r, r.message).toMatchObject({ ok: true });
      expect(waited.length).toBeGreaterThan(0);
      expect(waited.every((ms) => ms >= 1000 && ms <= 60_000)).toBe(true);
      // With no waits allowed, the same read says it was refused.
      const never = await watchTilesOnce(tileFetcher(`${url}/log`, { maxWaits: 0, sleep }), join(dir, 'limited-2.json'), {
        logKey: small.keys.log.verifierKey,
      }).catch((e: Error) => e);
      expect(String((never as Error).message ?? never)).toMatch(/answered 429/);
    } finally {
      await small.close();
    }
  });

  it('refuses an edited entry bundle: the entry is not the leaf its tile names', async () => {
    const edit = (path: string, b: Buffer) => {
      if (!path.startsWith('tile/entries/')) return b;
      const s = b.toString('latin1').replace('"tag":"x"', '"tag":"y"');
      return Buffer.from(s, 'latin1');
    };
    const r = await watchTilesOnce(fetcher(edit), join(dir, 'b.json'), { logKey: node.keys.log.verifierKey });
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/REWRITE: entry 0 of the bundle is not the leaf its tile names/);
  });

  it('refuses tiles that do not give the signed root', async () => {
    const edit = (path: string, b: Buffer) => (path === 'tile/0/000' ? Buffer.concat([b.subarray(0, 32), Buffer.alloc(32, 9), b.subarray(64)]) : b);
    const r = await watchTilesOnce(fetcher(edit), join(dir, 'c.json'), { logKey: node.keys.log.verifierKey });
    expect(r).toMatchObject({ ok: false, message: expect.stringMatching(/REWRITE: tile\/0\/000 does not hash/) });
    // A tile the root is folded from directly: the root differs.
    const top = (path: string, b: Buffer) => (path === 'tile/1/000.p/1' ? Buffer.alloc(32, 9) : b);
    expect(await watchTilesOnce(fetcher(top), join(dir, 'c2.json'), { logKey: node.keys.log.verifierKey })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/REWRITE: the tiles of \d+ entries give another root/),
    });
  });

  it('refuses a checkpoint short of its witnesses quorum', async () => {
    const stranger = cosignerVerifierKey('w.example/w', generateKeyPair().publicKey);
    const r = await watchTilesOnce(fetcher(), join(dir, 'd.json'), { logKey: node.keys.log.verifierKey, witnesses: { keys: [stranger], quorum: 1 } });
    expect(r).toMatchObject({ ok: false, message: expect.stringMatching(/quorum/) });
  });

  it('catches a fork and a rollback against the kept state', async () => {
    const state = join(dir, 'e.json');
    expect((await watchTilesOnce(fetcher(), state, { logKey: node.keys.log.verifierKey })).ok).toBe(true);
    const { readFileSync, writeFileSync } = await import('node:fs');
    const kept = JSON.parse(readFileSync(state, 'utf8'));
    // Another root kept for the same size: the served log is another one.
    writeFileSync(state, JSON.stringify({ ...kept, root: 'ab'.repeat(32) }));
    expect(await watchTilesOnce(fetcher(), state)).toMatchObject({ ok: false, message: expect.stringMatching(/^FORK/) });
    writeFileSync(state, JSON.stringify({ ...kept, size: kept.size + 5 }));
    expect(await watchTilesOnce(fetcher(), state)).toMatchObject({ ok: false, message: expect.stringMatching(/^ROLLBACK/) });
    // An older state whose root the tiles' consistency proof does not reach.
    writeFileSync(state, JSON.stringify({ ...kept, size: 10, root: 'cd'.repeat(32) }));
    expect(await watchTilesOnce(fetcher(), state)).toMatchObject({ ok: false, message: expect.stringMatching(/^FORK: the tiles/) });
  });
});

describe('--witness and --witness-quorum (cli/commands/witness/index.ts)', () => {
  it('take KEY or KEY@URL, default the quorum to all, and refuse a quorum without witnesses or out of range (exit 2)', async () => {
    const { witnessPolicyArg } = await import('../../cli/commands/verify/shared.js');
    const k = cosignerVerifierKey('w.example/w', generateKeyPair().publicKey);
    expect(witnessPolicyArg([], undefined)).toBeUndefined();
    expect(witnessPolicyArg([k, `${k}@http://127.0.0.1:7380`])).toMatchObject({ keys: [k, k], quorum: 2 });
    expect(witnessPolicyArg([k], '1')!.quorum).toBe(1);
    for (const [w, q] of [
      [[], '1'],
      [[k], '2'],
      [[k], '0'],
      [[k], 'x'],
    ] as Array<[string[], string]>) {
      expect(() => witnessPolicyArg(w, q)).toThrow(expect.objectContaining({ exitCode: 2 }));
    }
  });
});
