// "All evals of" an artifact, and lookups, verified as a reader meets them (issue 51, 2; PROTOCOL
// 9.3, 9.10, 12.5): the built `akas` CLI and the built `akas mcp --stdio`, launched over stdio by
// the official MCP client, reading a node that listens on 127.0.0.1 (port 0) in this test's own
// process, so the test can do to the node what a dishonest or broken one would: drop an eval from
// its store (the read leaves out one the log records), change an eval's score (the read shows one
// the log does not record as shown), and drop an index from a key's list in its store (a lookup
// that hides an entry).
import { readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/client';
import AjvModule from 'ajv';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookupKeyHash } from '../../src/core/lookup.js';
import { Evals } from '../../src/domain/knowledge/tree.js';
import { LookupLists } from '../../src/domain/log/lookup.js';
import { samplePayload } from '../fixtures/payloads.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { CLI, defaultConfigDir, runCli, tempDir } from '../helpers/e2e.js';
import { decide } from '../helpers/flows.js';
import { untilLogSettled } from '../helpers/written.js';

type Json = Record<string, any>;
const Ajv = AjvModule as unknown as typeof AjvModule.default;
const LIMITS = { rateLimit: { burst: 1e6, refillPerSecond: 1e6 }, sameIpCollusionCheck: false };
const listen = (server: Server) =>
  new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));

let a: TestNode;
let url: string;
let stateDir: string;
const sessions: Array<{ close(): Promise<void> }> = [];

const ARTIFACT = 931;
const PATH = `/models/tiny-classifier-x${ARTIFACT}`;
const SHA256 = 'a'.repeat(64); // samplePayload('artifact')'s bytes

/** The built `akas mcp --stdio` of a profile, launched and spoken to by the official client over stdio. */
async function mcp(profile: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, '--base-url', url, '--profile', profile, 'mcp', '--stdio'],
    env: { ...getDefaultEnvironment(), AKAS_CONFIG_DIR: defaultConfigDir(), XDG_STATE_HOME: stateDir, NO_COLOR: '1' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'verified-evals', version: '1.0.0' });
  await client.connect(transport);
  sessions.push(client);
  return {
    call: async (name: string, args: Json) => (await client.callTool({ name, arguments: args })) as Json,
    tools: async () => (await client.listTools()).tools,
  };
}

const akas = (profile: string, ...args: string[]) => runCli(['--base-url', url, '--profile', profile, ...args], { env: { XDG_STATE_HOME: stateDir } });
const textOf = (r: Json) => String(r.content?.[0]?.text ?? '');
const failedIds = (v: Json) => [...new Set((v.failed as Json[]).map((f) => f.id))];

/** Publishes an eval of the artifact (three judges, v2 signatures). */
async function publishedEval(score: number, runner: string) {
  const { proposalId } = await decide(a, 'eval-result', { payload: { ...samplePayload('eval-result', ARTIFACT), score, runner }, sign: 'v2' });
  return proposalId;
}

/** Lets the node's index map what was appended (a lookup appends a root when the newest is a second old by the node's clock). */
async function mapped() {
  await untilLogSettled(a);
  a.clock.advance(2000);
}

let evals: string[] = [];

beforeAll(async () => {
  stateDir = tempDir('akas-e2e-evals-state-');
  a = await testNode(LIMITS);
  url = await listen(a.app.server);
  await decide(a, 'artifact', { n: ARTIFACT, sign: 'v2' });
  evals = [await publishedEval(0.7, 'ak_runner1'), await publishedEval(0.9, 'ak_runner2')];
  await mapped();
}, 120_000);
afterAll(async () => {
  for (const s of sessions) await s.close().catch(() => undefined);
  await a?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

describe("an artifact's evals, held against the log's record of its bytes", () => {
  it('verify when they are every eval the log records, as recorded, and say as of which log size', async () => {
    // Each eval's publication names the artifact's path and bytes, so the index files it under both.
    const lookup = (await a.app.inject({ url: `/api/index/${encodeURIComponent(`sha256:${SHA256}`)}?entries=true` })).json();
    const published = (lookup.entries as Json[]).filter((e) => e.body.event === 'proposal.published' && e.body.kind === 'eval-result');
    expect(published.map((e) => e.body)).toEqual(
      expect.arrayContaining(evals.map((proposalId) => expect.objectContaining({ proposalId, artifactPath: PATH, artifactSha256: SHA256 }))),
    );
    // As the kind's published schema says (data/attestations/attestation.event.v1.json, served at /credentials/schemas).
    const schema = JSON.parse(readFileSync(new URL('../../data/attestations/attestation.event.v1.json', import.meta.url), 'utf8'));
    const valid = new Ajv({ allErrors: true, strict: false }).compile(schema);
    for (const e of published) expect(valid(e.body), JSON.stringify(valid.errors)).toBe(true);

    const cli = await akas('honest', '--json', 'node', PATH);
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    const out = JSON.parse(cli.stdout);
    expect(out.independentEvals.map((e: Json) => e.proposalId).sort()).toEqual([...evals].sort());
    expect(out.verification).toMatchObject({ verdict: 'verified', failed: [], complete: { evals: 2, size: expect.any(Number) } });
    const text = await akas('honest', 'node', PATH);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('all 2 eval(s) the log records of its bytes');

    const r = await (await mcp('honest-mcp')).call('node', { path: PATH });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent.verification).toMatchObject({ verdict: 'verified', complete: { evals: 2 } });
    expect(textOf(r)).toContain('all 2 eval(s) the log records of its bytes');
  });

  it('fail index.recorded when the node shows an eval other than the log records it (a changed score)', async () => {
    const key = `${PATH}\u0000${evals[1]}`;
    const kept = (await a.store.get(Evals, key))!;
    await a.store.transact(['edit'], async (tx) => tx.put(Evals, key, { ...kept, score: 0.99 }));
    try {
      const cli = await akas('changed', '--json', 'node', PATH);
      expect(cli.code).toBe(1);
      const v = JSON.parse(cli.stdout).verification;
      expect(failedIds(v)).toEqual(['index.recorded']);
      expect(v.complete).toBeNull();
      const r = await (await mcp('changed-mcp')).call('node', { path: PATH });
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ code: 'not_verified', withheld: { path: PATH } });
      expect(failedIds(r.structuredContent.verification)).toEqual(['index.recorded']);
      expect(JSON.stringify(r)).not.toContain('0.99');
    } finally {
      await a.store.transact(['edit'], async (tx) => tx.put(Evals, key, kept));
    }
  });

  it('fail index.complete when the node leaves out an eval the log records (dropped from its store)', async () => {
    const key = `${PATH}\u0000${evals[0]}`;
    const kept = (await a.store.get(Evals, key))!;
    await a.store.transact(['edit'], async (tx) => tx.del(Evals, key));
    try {
      const cli = await akas('dropped', '--json', 'node', PATH);
      expect(cli.code).toBe(1);
      const v = JSON.parse(cli.stdout).verification;
      expect(failedIds(v)).toEqual(['index.complete']);
      expect(v.failed[0].why).toContain(evals[0]);
      // The summary the node recomputed from what it kept is consistent: only the log shows the eval left out.
      expect(JSON.parse(cli.stdout).evalSummary).toMatchObject({ count: 1 });
      const text = await akas('dropped', 'node', PATH);
      expect(text.code).toBe(1);
      expect(text.stdout).toContain('index.complete');
      const r = await (await mcp('dropped-mcp')).call('node', { path: PATH });
      expect(r.isError).toBe(true);
      expect(r.structuredContent.code).toBe('not_verified');
      expect(failedIds(r.structuredContent.verification)).toEqual(['index.complete']);
    } finally {
      await a.store.transact(['edit'], async (tx) => tx.put(Evals, key, kept));
    }
    expect((await akas('dropped', 'node', PATH)).code).toBe(0);
  });
});

describe('the lookup tool of akas mcp --stdio', () => {
  it("is the node's tool, answered once akas verify lookup's checks hold under the pinned keys", async () => {
    const session = await mcp('lookup');
    const listed = (await session.tools()).find((t) => t.name === 'lookup');
    expect(listed?.description).toContain('as akas verify lookup checks it');
    const r = await session.call('lookup', { key: `path:${PATH}`, entries: 'true' });
    expect(r.isError, textOf(r)).toBeFalsy();
    const v = r.structuredContent.verification;
    // The artifact's proposal (submitted, published) and its two evals' publications name the path.
    expect(v).toMatchObject({ verdict: 'verified', failed: [], lookup: { key: `path:${PATH}`, found: true, size: expect.any(Number) } });
    expect(v.lookup.entries).toBe(r.structuredContent.indices.length);
    expect(v.lookup.entries).toBeGreaterThanOrEqual(4);
    expect(r.structuredContent.untrustedContent).toMatchObject({ fields: ['entries'] });
    // The entries were asked with their inclusion proofs and held to the log with them (index.entries), then shown without them.
    expect(r.structuredContent.entries).toHaveLength(v.lookup.entries);
    expect(r.structuredContent.inclusions).toBeUndefined();
    expect(textOf(r)).toMatch(new RegExp(`^akas checked this on your machine: VERIFIED .*path:${PATH}: \\d+ entries, complete as of log size \\d+`));
    const absent = await session.call('lookup', { key: 'agent:ak_nobody00000' });
    expect(absent.structuredContent.verification).toMatchObject({ verdict: 'verified', lookup: { found: false, entries: 0 } });
    // A key that is not one is the node's refusal, as it answers it.
    const bad = await session.call('lookup', { key: 'nothing:here' });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent.code).toBe('invalid_lookup_key');
  });

  it('withholds a lookup whose proof does not hold (not_verified, naming the checks)', async () => {
    const session = await mcp('lookup-lie');
    const khex = lookupKeyHash(`path:${PATH}`).toString('hex');
    const [[item, seqs]] = await a.store.list(LookupLists, { gte: `${khex}:`, lt: `${khex};`, limit: 1 });
    // The node's store loses the key's first index: its answer hides that entry, and its map proof no longer leads to the logged root.
    await a.store.transact(['edit'], async (tx) => tx.put(LookupLists, item, seqs.slice(1)));
    try {
      const r = await session.call('lookup', { key: `path:${PATH}` });
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ code: 'not_verified', withheld: { key: `path:${PATH}` } });
      expect(failedIds(r.structuredContent.verification)).toEqual(['index.proof']);
      expect(textOf(r)).toContain('index.proof');
      expect(r.structuredContent.indices).toBeUndefined();
    } finally {
      await a.store.transact(['edit'], async (tx) => tx.put(LookupLists, item, seqs));
    }
    expect((await session.call('lookup', { key: `path:${PATH}` })).isError).toBeFalsy();
  });
});
