// Security round three (issue 54, 1 and 7): a revocation cannot be rolled back offline. Every
// version of a status list stays validly signed, so a bundle of a revoked judgment must not
// verify once its revocation list is swapped for an older version (the empty version 0, or
// version 1 with version 1's own log entry and inclusion proof): the status head the bundle
// carries names the newest version logged at its checkpoint, signed by the issuer. Version 0 is
// logged like any other; version numbers have one spelling; an unknown credential is a 404; a
// bundle reads the versions it staples, not all of them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATUS_LIST_EVENT_KIND } from '../../src/core/index.js';
import { changeStatus } from '../../src/domain/credentials/status-lists.js';
import { verifyBundle } from '../../verifier/index.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { decide } from '../helpers/flows.js';

let node: TestNode;
beforeEach(async () => {
  node = await testNode({ sameIpCollusionCheck: false });
});
afterEach(async () => node.close());

const judgmentOf = (answer: { judgmentId?: string; judgment?: { judgmentId?: string } }) => (answer.judgmentId ?? answer.judgment?.judgmentId)!;
const get = async (url: string) => node.app.inject({ url });
const bundleOf = async (proposalId: string) => (await get(`/api/knowledge/proposals/${proposalId}/bundle`)).json();
const verify = (bundle: unknown) => verifyBundle(bundle, { issuer: node.keys.issuer.did, at: node.clock.now() });
const failed = (report: { checks: Array<{ id: string; valid: boolean | null }> }) => report.checks.filter((c) => c.valid === false).map((c) => c.id);

/** The bundle item of a version of a list, as the node staples one: the list, its log entry and its proof against `size`. */
async function stapledVersion(purpose: string, version: number, size: number) {
  const list = (await get(`/credentials/status/${purpose}?version=${version}`)).json();
  const entries = (await get(`/api/log/entries?start=0&end=${size}`)).json().entries as Array<{ seq: number; kind: string; body: Record<string, unknown> }>;
  const entry = entries.find((e) => e.kind === STATUS_LIST_EVENT_KIND && e.body.purpose === purpose && e.body.version === version)!;
  const inclusion = (await get(`/api/log/proof/inclusion?index=${entry.seq}&size=${size}`)).json();
  return { purpose, version, credential: list, entry, inclusion: { index: entry.seq, size, proof: inclusion.proof ?? inclusion.hashes } };
}

describe('a revoked judgment in a bundle (PROTOCOL 8.7)', () => {
  it('fails as exported, and still fails with its revocation list swapped for version 0 or version 1', async () => {
    const { proposalId, answers } = await decide(node, 'brief', { n: 1 });
    const other = await decide(node, 'brief', { n: 2 });
    // Version 1 revokes another credential; version 2 revokes this one.
    await changeStatus(node.app.akas, { action: 'revoke', reason: 'unrelated', ids: [judgmentOf(other.answers[0])] });
    await changeStatus(node.app.akas, { action: 'revoke', reason: 'stolen key', ids: [judgmentOf(answers[0])] });
    const bundle = await bundleOf(proposalId);
    expect(bundle.status.head).toMatchObject({
      type: 'akas.status-head.v1',
      lists: expect.arrayContaining([expect.objectContaining({ purpose: 'revocation', version: 2 })]),
    });
    const exported = await verify(bundle);
    expect(exported.verified).toBe(false);
    expect(failed(exported)).toContain('status.revocation');

    const size = bundle.log.entries[0].inclusion.size as number;
    for (const version of [0, 1]) {
      const swapped = structuredClone(bundle);
      const i = swapped.status.lists.findIndex((l: { purpose: string }) => l.purpose === 'revocation');
      swapped.status.lists[i] = await stapledVersion('revocation', version, size);
      // The change that revoked it is left out too, so nothing else in the bundle names version 2.
      swapped.status.versions = swapped.status.versions.filter((v: { purpose: string }) => v.purpose !== 'revocation');
      const report = await verify(swapped);
      expect(report.verified, `version ${version}`).toBe(false);
      expect(failed(report), `version ${version}`).toContain('status.fresh');
    }
  });

  it('is status unknown, never good, when the status head is taken out', async () => {
    const { proposalId } = await decide(node, 'brief');
    const bundle = await bundleOf(proposalId);
    expect((await verify(bundle)).verified).toBe(true);
    delete bundle.status.head;
    const report = await verify(bundle);
    // Nothing failed, and nothing about the status is known: the CLI's verdict is STATUS UNKNOWN, exit 3.
    expect(failed(report)).toEqual([]);
    expect(report.checks.find((c) => c.id === 'status.head')).toMatchObject({ valid: null });
    expect(report.checks.filter((c) => c.id === 'status.revocation').every((c) => c.valid === null)).toBe(true);
  });

  it('refuses a head of another checkpoint, and a head whose signature does not hold', async () => {
    const { proposalId } = await decide(node, 'brief', { n: 1 });
    const bundle = await bundleOf(proposalId);
    const moved = structuredClone(bundle);
    moved.status.head.treeSize += 1;
    expect(failed(await verify(moved))).toContain('status.head');
    const other = await decide(node, 'brief', { n: 2 });
    const later = await bundleOf(other.proposalId);
    const swapped = structuredClone(bundle);
    swapped.status.head = later.status.head;
    expect(failed(await verify(swapped))).toContain('status.checkpoint');
  });
});

describe('GET /credentials/status/{purpose} (PROTOCOL 8.7)', () => {
  it('logs version 0 like any other before a credential names the list, and serves no unlogged version', async () => {
    expect((await get('/credentials/status/revocation')).statusCode).toBe(404);
    await decide(node, 'brief');
    const v0 = await get('/credentials/status/revocation?version=0');
    expect(v0.statusCode).toBe(200);
    const entries = (await get('/api/log/entries?start=0&end=1000')).json().entries as Array<{ kind: string; body: Record<string, unknown> }>;
    const made = entries.filter((e) => e.kind === STATUS_LIST_EVENT_KIND);
    expect(made.map((e) => [e.body.purpose, e.body.version, e.body.action])).toEqual([
      ['revocation', 0, 'create'],
      ['suspension', 0, 'create'],
    ]);
    expect(made[0].body.credentialSha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await get('/credentials/status/revocation?version=1')).statusCode).toBe(404);
  });

  it('answers 400 to every other spelling of a version number', async () => {
    await changeStatus(node.app.akas, { action: 'suspend', reason: 'look', ids: [judgmentOf((await decide(node, 'brief')).answers[0])] });
    expect((await get('/credentials/status/suspension?version=1')).statusCode).toBe(200);
    for (const spelling of ['01', '1.0', '0x1', '%201', '+1', '1e0', '-0', '']) {
      const r = await get(`/credentials/status/suspension?version=${spelling}`);
      expect(r.statusCode, spelling).toBe(400);
      expect(r.json().code, spelling).toBe('validation_failed');
    }
    expect((await get('/credentials/status/suspension/versions?from=01')).statusCode).toBe(400);
    expect((await get('/credentials/status/suspension/versions?limit=101')).statusCode).toBe(400);
  });

  it('answers 404 for a credential it never issued', async () => {
    const { answers } = await decide(node, 'brief');
    expect((await get(`/api/credentials/status/${judgmentOf(answers[0])}`)).statusCode).toBe(200);
    for (const id of ['jdg_0000000000000000', 'anything', 'jdg_XYZ']) {
      const r = await get(`/api/credentials/status/${id}`);
      expect(r.statusCode, id).toBe(404);
      expect(r.json().code).toBe('not_found');
    }
  });
});

describe('a bundle reads the status versions it staples', () => {
  it('reads as many status records after 40 changes of other credentials as after 2', async () => {
    const { proposalId, answers } = await decide(node, 'brief', { n: 1 });
    const others = [];
    for (let i = 2; i < 4; i++) others.push(...(await decide(node, 'brief', { n: i })).answers.map(judgmentOf));
    await changeStatus(node.app.akas, { action: 'suspend', reason: 'mine', ids: [judgmentOf(answers[1])] });
    const reads = async () => {
      const store = node.app.akas.store;
      const { get: g, list: l } = store;
      let n = 0;
      store.get = ((space: { name: string }, key: string) => {
        if (space.name.startsWith('status') || String(key).startsWith('status')) n++;
        return g.call(store, space as never, key);
      }) as typeof store.get;
      store.list = ((space: { name: string }, o?: { gte?: string; gt?: string }) => {
        if (space.name.startsWith('status') || String(o?.gte ?? o?.gt ?? '').startsWith(`kind:${STATUS_LIST_EVENT_KIND}`)) n++;
        return l.call(store, space as never, o as never);
      }) as typeof store.list;
      try {
        const b = await bundleOf(proposalId);
        expect(b.status.versions.map((v: { version: number }) => v.version)).toEqual([1]);
      } finally {
        store.get = g;
        store.list = l;
      }
      return n;
    };
    const before = await reads();
    for (let i = 0; i < 40; i++)
      await changeStatus(node.app.akas, { action: i % 2 ? 'unsuspend' : 'suspend', reason: `flip ${i}`, ids: [others[i % others.length]] });
    expect(await reads()).toBe(before);
  });
});
