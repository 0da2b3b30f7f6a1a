// What an honest node's history can hold that the verified read of an artifact's evals
// (cli/commands/read/evals.ts) must take as it is, on a node in this process (127.0.0.1, port 0):
// an eval published before its publication named the artifact (PROTOCOL 9.3), held to the log by
// its own proposal's lookup, and an eval the index has not mapped yet (a map is at most a second
// behind the log: 9.10), asked again a second later. A changed legacy eval and an eval the log
// never records still fail index.recorded.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSha256Of } from '../../src/core/content.js';
import { type EvalRecord, Evals } from '../../src/domain/knowledge/tree.js';
import { auditEvent, EVENT_KIND, enqueueLogEntry } from '../../src/domain/log/index.js';
import type { Trust } from '../../verifier/index.js';
import { AkasClient } from '../../cli/kit/index.js';
import { evalsComplete } from '../../cli/commands/read/evals.js';
import { samplePayload } from '../fixtures/payloads.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { decide } from '../helpers/flows.js';
import { untilLogSettled } from '../helpers/written.js';

type Json = Record<string, any>;
const LIMITS = { rateLimit: { burst: 1e6, refillPerSecond: 1e6 }, sameIpCollusionCheck: false };
const N = 941;
const PATH = `/models/tiny-classifier-x${N}`;

let node: TestNode;
let client: AkasClient;
let trust: Trust;

const read = async (): Promise<Json> => (await node.app.inject({ url: `/api/knowledge/node${PATH}?evidence=full` })).json();
const byId = (c: { checks: Array<{ id: string; valid: boolean | null; why?: string }> }) => Object.fromEntries(c.checks.map((k) => [k.id, k]));

/** Lets the node's index map what was appended (a lookup appends a root when the newest is a second old by the node's clock). */
async function mapped() {
  await untilLogSettled(node);
  node.clock.advance(2000);
}

/** An eval as a node published it before its publication named the artifact: the event without artifactPath and artifactSha256. */
async function legacyEval(id: string, score: number, logged: { score?: number } = {}) {
  type Fields = Omit<EvalRecord, 'proposalId' | 'artifactSha256' | 'proposer' | 'publishedAt'> & { artifactPath: string };
  const fields = { ...(samplePayload('eval-result', N) as Fields), score };
  const contentSha256 = contentSha256Of('eval-result', { ...fields, score: logged.score ?? score });
  const { artifactPath: _path, ...rest } = fields;
  await node.store.transact(['legacy'], async (tx) => {
    enqueueLogEntry(tx, node.app.akas, {
      kind: EVENT_KIND,
      tier: 'event',
      agent: null,
      body: auditEvent('proposal.published', { proposalId: id, kind: 'eval-result', contentSha256 }, node.clock.now(), { status: 'published', path: null }),
    });
    tx.put(Evals, `${PATH}\u0000${id}`, { proposalId: id, artifactSha256: 'a'.repeat(64), ...rest, proposer: null, publishedAt: node.clock.now() });
  });
}

beforeAll(async () => {
  node = await testNode(LIMITS);
  const server = node.app.server as Server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  client = new AkasClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  trust = { policy: { logs: [node.keys.log.verifierKey], witnesses: [] } } as unknown as Trust;
  await decide(node, 'artifact', { n: N, sign: 'v2' });
  await decide(node, 'eval-result', { payload: samplePayload('eval-result', N), sign: 'v2' });
}, 60_000);
afterAll(async () => node?.close());

describe("an artifact's evals held against the log", () => {
  it('takes an eval published before its publication named the artifact, held by its own proposal, and says so', async () => {
    await legacyEval('eprop_0123456789abcdef', 0.5);
    await mapped();
    const r = (await evalsComplete(client, trust, await read()))!;
    expect(byId(r)['index.complete']).toMatchObject({ valid: true, why: expect.stringContaining('1 shown published before the log named the artifact') });
    expect(byId(r)['index.recorded']).toMatchObject({ valid: true });
    expect(r.asOf).toMatchObject({ evals: 1 });
  });

  it('refuses a legacy eval shown other than the log records it', async () => {
    await legacyEval('eprop_00000000000000ff', 0.6, { score: 0.61 });
    await mapped();
    const r = (await evalsComplete(client, trust, await read()))!;
    expect(byId(r)['index.recorded']).toMatchObject({ valid: false, why: expect.stringContaining('eprop_00000000000000ff') });
    expect(r.asOf).toBeUndefined();
    await node.store.transact(['legacy'], async (tx) => tx.del(Evals, `${PATH}\u0000eprop_00000000000000ff`));
  });

  it('asks again for an eval the index has not mapped yet, and refuses one the log never records', async () => {
    // Published after the newest root, which is under a second old by the node's clock: the map does not cover it yet.
    const { proposalId } = await decide(node, 'eval-result', { payload: { ...samplePayload('eval-result', N), score: 0.3 }, sign: 'v2' });
    await untilLogSettled(node);
    // Still not mapped when asked again: the read shows an eval the log does not record (as of the map's size).
    const stale = (await evalsComplete(client, trust, await read()))!;
    expect(byId(stale)['index.recorded']).toMatchObject({ valid: false, why: expect.stringContaining(proposalId) });
    // Mapped by the time it is asked again (the node's clock moves a second on while the reader waits).
    const later = setTimeout(() => node.clock.advance(2000), 200);
    const r = (await evalsComplete(client, trust, await read()))!;
    clearTimeout(later);
    expect(byId(r)['index.complete']).toMatchObject({ valid: true });
    expect(byId(r)['index.recorded']).toMatchObject({ valid: true });
    expect(r.asOf).toMatchObject({ evals: 2 });
  });
});
