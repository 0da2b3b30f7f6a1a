// PROTOCOL 9.9: a node with witnesses. Two `akas witness` services (src/witness on real HTTP,
// 127.0.0.1) cosign every checkpoint; the node serves them with the checkpoint, in proofs and
// at /log/checkpoint, and /healthz says how far each lags. A witness that hangs never holds an
// append; a node restarted with no memory of the witnesses catches up through their 409s; a
// forked log (the same log key over other entries) gets no cosignature.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DAY_MS, FakeClock, generateKeyPair, openNote, parseAddCheckpoint, verifyCosignatures } from '../../src/core/index.js';
import { cosignedNote, enqueueLogEntry, LogCheckpoints, parseWitnessSpec } from '../../src/domain/log/index.js';
import { strategiesFor } from '../../src/node/strategies.js';
import { createApp } from '../../src/http/app.js';
import { openTempStore } from '../../src/store/index.js';
import { serveWitness, Witness } from '../../src/witness/index.js';
import { testKeys, testNode, type TestNode } from '../helpers/app.js';
import { untilWritten } from '../helpers/written.js';

// Reads that hand out a checkpoint wait for the witnesses' round at most witnessWaitMs (3 s by
// default) and then serve it without their cosignatures: a test asserting the cosignatures
// gives them a day, so the read waits for the round however busy the machine, never a budget.
const ROUND = { witnessWaitMs: DAY_MS };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startWitness(name: string, logKey: string) {
  const { store, dispose } = await openTempStore();
  const witness = new Witness({ store, clock: new FakeClock(), key: { name, seed: generateKeyPair().privateKey }, logs: [logKey] });
  const server = await serveWitness(witness, { host: '127.0.0.1', port: 0 });
  const stop = async () => (await server.close(), await dispose());
  cleanups.push(stop);
  return { witness, url: server.url, spec: `${witness.verifierKey}@${server.url}`, stop };
}

async function append(node: TestNode, n: number) {
  const ids: string[] = [];
  await node.store.transact(['t'], async (tx) => {
    for (let i = 0; i < n; i++) ids.push(enqueueLogEntry(tx, node.app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { i } }));
  });
  for (const id of ids) await node.app.akas.log.appended(id);
}

const get = async (node: TestNode, url: string) => {
  const r = await node.app.inject({ url });
  expect(r.statusCode, r.body).toBe(200);
  return r;
};

describe('a node with two witnesses', () => {
  it('serves checkpoints with both cosignatures: /api/log/checkpoint, /log/checkpoint, proofs; /healthz shows no lag', async () => {
    const keys = testKeys(new FakeClock().now());
    const [w1, w2] = [await startWitness('w1.example/witness', keys.log.verifierKey), await startWitness('w2.example/witness', keys.log.verifierKey)];
    const { store, dispose } = await openTempStore();
    const app = await createApp({
      store,
      strategies: strategiesFor(store),
      clock: new FakeClock(),
      keys,
      config: { ...ROUND, checkResponses: true, witnesses: [w1.spec, w2.spec].map(parseWitnessSpec), rateLimit: { burst: 1e6, refillPerSecond: 1e6 } },
    });
    await app.ready();
    cleanups.push(async () => (await app.close(), await dispose()));
    const node = { app, store, keys } as unknown as TestNode;
    await append(node, 5);

    const note = (await get(node, '/api/log/checkpoint')).body;
    expect(openNote(note, [keys.log.verifierKey]).ok).toBe(true);
    const cos = verifyCosignatures(note, [w1.witness.verifierKey, w2.witness.verifierKey]);
    expect(cos.valid.map((v) => v.name).sort()).toEqual(['w1.example/witness', 'w2.example/witness']);
    expect(note).toMatch(/\n5\n/);

    const tiles = (await get(node, '/log/checkpoint')).body;
    expect(verifyCosignatures(tiles, [w1.witness.verifierKey, w2.witness.verifierKey]).valid).toHaveLength(2);

    // A fresh entry's proof waits for the witnesses' round: its checkpoint is cosigned by both.
    await append(node, 1);
    const proof = (await get(node, '/api/attestations/att_0000000000000005')).json();
    expect(proof.inclusion.size).toBe(6);
    expect(verifyCosignatures(proof.checkpoint, [w1.witness.verifierKey, w2.witness.verifierKey]).valid).toHaveLength(2);

    const health = (await get(node, '/healthz')).json();
    expect(health.witnesses).toHaveLength(2);
    for (const w of health.witnesses) expect(w).toMatchObject({ cosignedSize: 6, lag: 0, lastError: null });
    // The witnesses hold the node's log at that size.
    expect((await w1.witness.status()).logs[0].size).toBe(6);
  });

  it('a witness that never answers holds no append; /healthz names it and its lag, the other still cosigns', async () => {
    const node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
    cleanups.push(() => node.close());
    const good = await startWitness('good.example/w', node.keys.log.verifierKey);
    // A witness that takes the request and never answers (the node gives it a day, so it holds
    // its round until the test ends); `asked` gives the size of the first checkpoint sent to it:
    // the round it holds is for the one made below, or for one the log's own timer made before.
    const held: Array<() => void> = [];
    let heard!: (size: number) => void;
    const asked = new Promise<number>((resolve) => (heard = resolve));
    const hang: Server = createServer((req) => {
      held.push(() => req.socket.destroy());
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const sent = parseAddCheckpoint(body);
        heard(sent.ok ? Number(sent.checkpoint.split('\n')[1]) : -1);
      });
    });
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
    cleanups.push(async () => {
      for (const f of held) f();
      await new Promise<void>((r) => hang.close(() => r()));
    });
    const silentKey = generateKeyPair();
    const { cosignerVerifierKey } = await import('../../src/core/index.js');
    const silent = `${cosignerVerifierKey('silent.example/w', silentKey.publicKey)}@http://127.0.0.1:${(hang.address() as AddressInfo).port}`;
    await node.app.close();
    const app = await createApp({
      store: node.store,
      strategies: strategiesFor(node.store),
      clock: node.clock,
      keys: node.keys,
      config: { checkResponses: true, witnesses: [parseWitnessSpec(good.spec), parseWitnessSpec(silent)], witnessWaitMs: 200, witnessTimeoutMs: DAY_MS },
    });
    await app.ready();
    cleanups.push(() => app.close());
    const n2 = { ...node, app } as TestNode;

    // Appends finish while the round to the silent witness is still waiting.
    await append(n2, 3);
    await app.akas.log.checkpoint();
    await append(n2, 2);
    expect((await app.akas.log.head()).size).toBe(5);
    const round = await asked;
    expect(round).toBeGreaterThanOrEqual(0);
    expect(held.length).toBeGreaterThan(0);
    const health = (await get(n2, '/healthz')).json();
    const silentStatus = health.witnesses.find((w: { name: string }) => w.name === 'silent.example/w');
    expect(silentStatus).toMatchObject({ cosignedSize: 0, cosignedAt: null });
    expect(silentStatus.lag).toBeGreaterThan(0);
    // The answering witness's cosignature is kept at once, while the round still waits for the
    // other: the checkpoint the silent witness holds carries it, and is not yet witnessed.
    const goodCosigned = async () => {
      const cp = await app.akas.log.checkpointAt(round);
      return cp !== undefined && verifyCosignatures(cosignedNote(cp), [good.witness.verifierKey]).valid.length === 1;
    };
    await untilWritten(node.store, LogCheckpoints, goodCosigned);
    expect((await app.akas.log.checkpointAt(round))?.witnessed).toBeUndefined();
  });

  it('a node that forgot what the witness holds resends from the size its 409 gives', async () => {
    const keys = testKeys(new FakeClock().now());
    const w = await startWitness('w.example/witness', keys.log.verifierKey);
    const { store, dispose } = await openTempStore();
    cleanups.push(dispose);
    const open = async () => {
      const app = await createApp({
        store,
        strategies: strategiesFor(store),
        clock: new FakeClock(),
        keys,
        config: { ...ROUND, witnesses: [parseWitnessSpec(w.spec)] },
      });
      await app.ready();
      return { app, store, keys } as unknown as TestNode;
    };
    const first = await open();
    await append(first, 4);
    expect(verifyCosignatures((await get(first, '/api/log/checkpoint')).body, [w.witness.verifierKey]).valid).toHaveLength(1);
    await first.app.close();
    const second = await open();
    cleanups.push(() => second.app.close());
    await append(second, 3);
    const note = (await get(second, '/api/log/checkpoint')).body;
    expect(note).toMatch(/\n7\n/);
    expect(verifyCosignatures(note, [w.witness.verifierKey]).valid).toHaveLength(1);
    expect((await w.witness.status()).logs[0].size).toBe(7);
  });

  it('a forked log under the same key gets no cosignature: the witness refuses it and /healthz says so', async () => {
    const keys = testKeys(new FakeClock().now());
    const w = await startWitness('w.example/witness', keys.log.verifierKey);
    const open = async (tag: string) => {
      const { store, dispose } = await openTempStore();
      const app = await createApp({
        store,
        strategies: strategiesFor(store),
        clock: new FakeClock(),
        keys,
        config: { ...ROUND, witnesses: [parseWitnessSpec(w.spec)] },
      });
      await app.ready();
      cleanups.push(async () => (await app.close(), await dispose()));
      const node = { app, store, keys } as unknown as TestNode;
      const ids: string[] = [];
      await store.transact(['t'], async (tx) => {
        for (let i = 0; i < 4; i++) ids.push(enqueueLogEntry(tx, app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { i, tag } }));
      });
      for (const id of ids) await app.akas.log.appended(id);
      return node;
    };
    const honest = await open('honest');
    expect(verifyCosignatures((await get(honest, '/api/log/checkpoint')).body, [w.witness.verifierKey]).valid).toHaveLength(1);
    const forked = await open('forked');
    const note = (await get(forked, '/api/log/checkpoint')).body;
    expect(openNote(note, [keys.log.verifierKey]).ok).toBe(true);
    expect(verifyCosignatures(note, [w.witness.verifierKey]).valid).toHaveLength(0);
    const health = (await get(forked, '/healthz')).json();
    expect(health.witnesses[0].lastError).toMatch(/refused with 422/);
    const ws = (await w.witness.status()).logs[0];
    expect(ws.size).toBe(4);
    expect(ws.refused).toBeGreaterThanOrEqual(1);
  });

  it("two nodes witness each other: each cosigns the other's checkpoints at /witness (akas serve --witness-log)", async () => {
    const keysA = testKeys(new FakeClock().now());
    const keysB = testKeys(new FakeClock().now());
    const wkA = { name: 'a.example/witness', seed: generateKeyPair().privateKey };
    const wkB = { name: 'b.example/witness', seed: generateKeyPair().privateKey };
    const { cosignerVerifierKey, publicKeyFromPrivate } = await import('../../src/core/index.js');
    const vkey = (k: { name: string; seed: string }) => cosignerVerifierKey(k.name, publicKeyFromPrivate(k.seed));
    const sa = await openTempStore();
    const sb = await openTempStore();
    cleanups.push(sa.dispose, sb.dispose);
    const make = (store: typeof sa.store, keys: typeof keysA, witnessFor: { logs: string[]; key: typeof wkA }, witnesses: string[] = []) =>
      createApp({
        store,
        strategies: strategiesFor(store),
        clock: new FakeClock(),
        keys,
        config: { ...ROUND, checkResponses: true, witnessFor, witnesses: witnesses.map(parseWitnessSpec) },
      });
    // B first, as a witness only, to learn its address; then A, asking B; then B again, asking A.
    const b0 = await make(sb.store, keysB, { logs: [keysA.log.verifierKey], key: wkB });
    const urlB = await b0.listen({ host: '127.0.0.1', port: 0 });
    const a = await make(sa.store, keysA, { logs: [keysB.log.verifierKey], key: wkA }, [`${vkey(wkB)}@${urlB}/witness`]);
    const urlA = await a.listen({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => a.close());
    await b0.close();
    const b = await make(sb.store, keysB, { logs: [keysA.log.verifierKey], key: wkB }, [`${vkey(wkA)}@${urlA}/witness`]);
    await b.listen({ host: '127.0.0.1', port: Number(new URL(urlB).port) });
    cleanups.push(() => b.close());
    const nodeA = { app: a, store: sa.store, keys: keysA } as unknown as TestNode;
    const nodeB = { app: b, store: sb.store, keys: keysB } as unknown as TestNode;
    await append(nodeA, 3);
    await append(nodeB, 2);
    const cpA = (await get(nodeA, '/api/log/checkpoint')).body;
    const cpB = (await get(nodeB, '/api/log/checkpoint')).body;
    expect(verifyCosignatures(cpA, [vkey(wkB)]).valid).toHaveLength(1);
    expect(verifyCosignatures(cpB, [vkey(wkA)]).valid).toHaveLength(1);
    // Each witness serves what it cosigned for the other's log.
    const { originHash } = await import('../../src/witness/index.js');
    const held = await fetch(`${urlA}/witness/${originHash(keysB.log.origin)}/checkpoint`);
    expect(held.status).toBe(200);
    expect(openNote(await held.text(), [keysB.log.verifierKey]).ok).toBe(true);
    // Bodies that are not the witness's are refused as the specification says, in text.
    const refused = await fetch(`${urlA}/witness/add-checkpoint`, { method: 'POST', body: 'old 1\n' });
    expect(refused.status).toBe(400);
  });
});
