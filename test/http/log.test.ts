// PROTOCOL 9.5 and 9.7 over HTTP: checkpoints, proofs and entries for every log size up to
// 300, and the event stream (every entry after a resume point exactly once, in order; slow
// consumers dropped).
import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entryLeaf, leafHash, openNote, parseCheckpoint, verifyConsistency, type LogEntry } from '../../src/core/index.js';
import { verifyInclusion } from '../../src/core/merkle.js';
import { enqueueLogEntry } from '../../src/domain/log/index.js';
import { readEvents } from '../../cli/commands/log/sse.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { decide } from '../helpers/flows.js';

let node: TestNode;
beforeEach(async () => {
  // These tests read the log hundreds of times from one address.
  node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
});
afterEach(async () => node.close());

/** Appends n entries through the outbox, as writers do, and waits for the last. */
async function append(n: number) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(
      await node.store.transact([`t:${i}`], async (tx) =>
        enqueueLogEntry(tx, node.app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { i } }),
      ),
    );
  }
  for (const id of ids) await node.app.akas.log.appended(id);
}

const get = async (url: string) => {
  const r = await node.app.inject({ url });
  expect(r.statusCode, r.body).toBe(200);
  return r;
};

describe('the log routes', () => {
  it('prove every entry and every pair of sizes against the signed checkpoints, for every size from 1 to 300', async () => {
    const roots: Buffer[] = [];
    for (let size = 1; size <= 300; size++) {
      await append(1);
      const note = (await get('/api/log/checkpoint')).body;
      const opened = openNote(note, [node.keys.log.verifierKey]);
      expect(opened.ok).toBe(true);
      const cp = parseCheckpoint(opened.text!)!;
      expect(cp.size).toBe(size);
      roots[size] = cp.rootHash;
    }
    const entries: LogEntry[] = [];
    for (let start = 0; start < 300; start += 100) entries.push(...(await get(`/api/log/entries?start=${start}&end=${start + 100}`)).json().entries);
    expect(entries.map((e) => e.seq)).toEqual([...Array(300).keys()]);
    // Through the log object for speed (the routes are the same code, checked below).
    const log = node.app.akas.log;
    const leaves = entries.map((e) => leafHash(entryLeaf(e)));
    for (let size = 1; size <= 300; size++) {
      for (let i = 0; i < size; i++) {
        if (!verifyInclusion(i, size, leaves[i], await log.inclusion(i, size), roots[size])) throw new Error(`inclusion ${i} in ${size}`);
      }
      for (let old = 1; old < size; old++) {
        if (!verifyConsistency(old, size, await log.consistency(old, size), roots[old], roots[size])) throw new Error(`consistency ${old} -> ${size}`);
      }
    }
    const inc = (await get('/api/log/proof/inclusion?index=17&size=123')).json();
    expect(
      verifyInclusion(
        17,
        123,
        Buffer.from(inc.leafHash, 'base64'),
        inc.proof.map((p: string) => Buffer.from(p, 'base64')),
        roots[123],
      ),
    ).toBe(true);
    const con = (await get('/api/log/proof/consistency?old=50&new=300')).json();
    expect(
      verifyConsistency(
        50,
        300,
        con.proof.map((p: string) => Buffer.from(p, 'base64')),
        roots[50],
        roots[300],
      ),
    ).toBe(true);
  }, 120_000);

  it('answers 400 for proofs outside the log, and at most 1,000 entries a page', async () => {
    await append(3);
    for (const url of [
      '/api/log/proof/inclusion?index=3&size=3',
      '/api/log/proof/inclusion?index=0&size=4',
      '/api/log/proof/consistency?old=0&new=2',
      '/api/log/proof/consistency?old=3&new=2',
      '/api/log/proof/inclusion?index=-1',
    ]) {
      const r = await node.app.inject({ url });
      expect(r.statusCode, url).toBe(400);
      expect(r.json().code, url).toBe('validation_failed');
    }
    expect((await get('/api/log/entries?start=0&end=5000')).json().entries).toHaveLength(3);
  });

  it('puts every judgment and decision in the log, with the audit trail kind', async () => {
    const { proposalId, answers } = await decide(node, 'capability');
    await node.app.akas.log.drain();
    const list = (await get(`/api/attestations?proposalId=${proposalId}`)).json();
    expect(list.items.map((e: LogEntry) => [e.kind, e.body.event])).toEqual([
      ['attestation.event.v1', 'proposal.submitted'],
      ['attestation.event.v1', 'judgment.recorded'],
      ['attestation.event.v1', 'judgment.recorded'],
      ['attestation.event.v1', 'judgment.recorded'],
      ['attestation.event.v1', 'proposal.published'],
    ]);
    expect(list.items.slice(1, 4).map((e: LogEntry) => e.body.judgmentId)).toEqual(answers.map((a) => a.judgmentId));
    const one = (await get(`/api/attestations/${list.items[4].id}`)).json();
    expect(one).toMatchObject({ entry: { id: list.items[4].id }, inclusion: { index: list.items[4].seq }, logKey: node.keys.log.verifierKey });
  });
});

describe('GET /api/events', () => {
  let url: string;
  beforeEach(async () => {
    await node.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(node.app.server.address() as { port: number }).port}`;
  });

  it('delivers every entry after a resume point exactly once, in order, while entries keep coming', async () => {
    await append(40);
    const seen: number[] = [];
    const stop = new AbortController();
    const producing = append(60);
    // First connection: stop after 25 entries.
    await readEvents(
      `${url}/api/events`,
      {},
      (e) => {
        seen.push(Number(e.id));
        if (seen.length === 25) stop.abort();
      },
      stop.signal,
    );
    // Resume from the last id received, until every one of the 100 arrived.
    const again = new AbortController();
    const resumed = readEvents(
      `${url}/api/events`,
      { 'last-event-id': String(seen[seen.length - 1]) },
      (e) => {
        seen.push(Number(e.id));
        if (seen.length === 100) again.abort();
      },
      again.signal,
    );
    await producing;
    await resumed;
    expect(seen).toEqual([...Array(100).keys()]);
  });

  it('gives each of several streams, caught up or behind, every entry exactly once while appends keep coming (one shared reader)', async () => {
    await append(30);
    const starts = [0, 0, 10, 29, 30, 30, 30, 30]; // eight: as many as one client may hold open
    const total = 120;
    const seen = starts.map(() => [] as number[]);
    const stops = starts.map(() => new AbortController());
    const reading = starts.map((from, i) =>
      readEvents(
        `${url}/api/events?from=${from}`,
        {},
        (e) => {
          seen[i].push(Number(e.id));
          if (seen[i].length === total - from) stops[i].abort();
        },
        stops[i].signal,
      ),
    );
    // Appends in concurrent bursts, so that wake-ups arrive while reads are in flight.
    for (let burst = 0; burst < 9; burst++) await Promise.all([append(5), append(5)]);
    await Promise.all(reading);
    for (const [i, from] of starts.entries()) expect(seen[i], `stream from ${from}`).toEqual([...Array(total - from).keys()].map((k) => k + from));
  });

  it('filters by kind, proposal and agent, and closes after the backlog without follow', async () => {
    const { proposalId, judges } = await decide(node, 'capability');
    await append(5);
    const got: Array<Record<string, unknown>> = [];
    await readEvents(`${url}/api/events?follow=0&proposalId=${proposalId}`, {}, (e) => got.push(JSON.parse(e.data)));
    expect(got.map((e) => (e.body as Record<string, unknown>).event)).toEqual([
      'proposal.submitted',
      'judgment.recorded',
      'judgment.recorded',
      'judgment.recorded',
      'proposal.published',
    ]);
    const byAgent: unknown[] = [];
    await readEvents(`${url}/api/events?follow=0&agent=${judges[0].tag}`, {}, (e) => byAgent.push(e));
    expect(byAgent).toHaveLength(1);
    const byKind: unknown[] = [];
    await readEvents(`${url}/api/events?follow=0&kind=pipeline.facet.v1`, {}, (e) => byKind.push(e));
    expect(byKind).toHaveLength(5);
  });

  it('drops a consumer that does not read, instead of holding what it has not taken', async () => {
    await append(1);
    const { port } = node.app.server.address() as { port: number };
    // The node's end of this connection: it closes when the node drops the consumer.
    const nodeSide = new Promise<Socket>((r) => node.app.server.once('connection', r));
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.on('connect', () => r()));
    const dropped = nodeSide.then((s) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r()))));
    socket.pause(); // this consumer reads nothing until the end
    socket.write('GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n');
    let received = 0;
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    socket.on('error', () => undefined);
    // Big entries so the backlog passes the limit quickly.
    const big = 'x'.repeat(20_000);
    for (let i = 0; i < 1500; i++)
      await node.store.transact([`b:${i}`], async (tx) => enqueueLogEntry(tx, node.app.akas, { kind: 'k', tier: 'event', agent: null, body: { big } }));
    await node.app.akas.log.drain();
    // Once the node has dropped it (it saw the backlog), read what is left: the stream ends early.
    await dropped;
    socket.on('data', (c: Buffer) => (received += c.length));
    socket.resume();
    await closed;
    expect(received).toBeLessThan(1500 * 20_000);
  }, 60_000);
});
