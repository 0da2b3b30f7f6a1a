// The reader's pins and checkpoints (issue 50, 1 and 3; PROTOCOL 8.6, "The reader's pins and
// checkpoints"): akas register pins the node's keys in the profile (trust on first use, said so);
// a later contact follows a rotation signed by both keys and records it, and shows any other key
// as an event with the pin unchanged until akas trust accept; the reader keeps the newest
// checkpoint it verified and refuses a node rolled back to a history of its own, or one that
// shows another history, with evidence akas verify fork proves. Nodes listen on 127.0.0.1 port
// 0; a node's keys are served by a stub where they must change, and a switching proxy stands at
// one URL in front of two nodes that share their keys (the twin of test/cli/monitor.test.ts).
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceCheckpoint } from '../../cli/commands/trust/checkpoints.js';
import { pinnedTrust, readerStatePath, readReaderState } from '../../cli/commands/trust/pins.js';
import { AkasClient } from '../../cli/kit/client.js';
import { cryptoRandom, FakeClock, type NodeKeyMaterial, newNodeKeyMaterial, nodeKeysFrom, rotateIssuerKey } from '../../src/core/index.js';
import { strategiesFor } from '../../src/node/strategies.js';
import { createApp } from '../../src/http/app.js';
import { nodeKeysView } from '../../src/http/views/records.js';
import { parseTrust } from '../../verifier/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { type CliHarness, cliHarness } from '../helpers/cli.js';
import { agent, proposeAs } from '../helpers/flows.js';
import { openTestStore } from '../helpers/stores.js';
import { untilLogSettled } from '../helpers/written.js';

const LIMITS = { rateLimit: { burst: 1e6, refillPerSecond: 1e6 }, sameIpCollusionCheck: false };
let h: CliHarness;
beforeAll(async () => {
  h = await cliHarness(LIMITS);
});
afterAll(() => h.close());

const listen = (server: Server) =>
  new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));

describe('akas register pins the node', () => {
  it('keeps its keys in the profile as a trust file, said as trust on first use, with its checkpoint', async () => {
    const r = await h.akas(['--json', 'register'], { profile: 'first' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('trust on first use');
    const { issuer, log } = h.node.keys;
    expect(r.json().trust).toMatchObject({ status: 'pinned', source: 'tofu', issuer: issuer.did, logKey: log.verifierKey });
    const path = readerStatePath('first', h.baseUrl);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const state = readReaderState(path)!;
    expect(state).toMatchObject({ source: 'tofu', issuer: issuer.did, logKey: log.verifierKey, trust: { type: 'akas.trust.v1', source: 'tofu' } });
    expect(state.changes).toEqual([expect.objectContaining({ what: 'pinned', source: 'tofu', to: { issuer: issuer.did, logKey: log.verifierKey } })]);
    // The pin is a trust file the verifier reads, and the checkpoint is the node's, kept.
    expect(parseTrust(state.trust).policy.logs).toEqual([log.verifierKey]);
    expect(state.checkpoint?.note).toMatch(/^akas\//);
    // The next contact finds the keys it pinned.
    expect((await pinnedTrust('first', new AkasClient({ baseUrl: h.baseUrl }))).status).toBe('unchanged');
  });
});

/** A node's keys as GET /api/node/keys answers them, served from `keys` (changed by the test). */
async function keysStub(first: NodeKeyMaterial) {
  const stub = { keys: first, url: '', server: createServer() };
  stub.server.on('request', (req, res) => {
    const found = req.url === '/api/node/keys';
    res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(found ? nodeKeysView(nodeKeysFrom(stub.keys)) : { code: 'not_found', error: 'no such route' }));
  });
  stub.url = await listen(stub.server);
  return stub;
}

describe('a later contact with a pinned node', () => {
  const T0 = Date.parse('2026-01-01T00:00:00Z');
  // A log origin of its own, so that another issuer key can come with the same log key.
  const m0 = newNodeKeyMaterial(cryptoRandom, T0, 'example.com/log');
  const m1 = rotateIssuerKey(m0, T0 + 60_000);
  const did = (m: NodeKeyMaterial) => nodeKeysFrom(m).issuer.did;
  let stub: Awaited<ReturnType<typeof keysStub>>;
  beforeAll(async () => {
    stub = await keysStub(m0);
  });
  afterAll(() => stub.server.close());

  it('follows an issuer key rotation signed by both keys, and records what changed and when', async () => {
    stub.keys = m0;
    const client = new AkasClient({ baseUrl: stub.url });
    expect((await pinnedTrust('rot', client)).status).toBe('pinned');
    stub.keys = m1;
    const p = await pinnedTrust('rot', client, { now: T0 + 120_000 });
    expect(p.status).toBe('followed');
    expect(p.notice).toContain('rotated its issuer key');
    expect(p.issuer).toBe(did(m1));
    const state = readReaderState(readerStatePath('rot', stub.url))!;
    expect(state.issuer).toBe(did(m1));
    expect(state.changes.at(-1)).toMatchObject({
      what: 'followed',
      at: new Date(T0 + 120_000).toISOString(),
      from: { issuer: did(m0) },
      to: { issuer: did(m1) },
      rotations: [{ type: 'akas.issuer-rotation.v1', from: did(m0), to: did(m1), at: T0 + 60_000 }],
    });
    // Each key is trusted in the window of the signed rotation.
    expect(state.trust.issuers).toEqual([
      { did: did(m0), validFrom: new Date(T0).toISOString(), validUntil: new Date(T0 + 60_000).toISOString() },
      { did: did(m1), validFrom: new Date(T0 + 60_000).toISOString(), validUntil: null },
    ]);
    expect((await pinnedTrust('rot', client)).status).toBe('unchanged');
  });

  it('shows another issuer key with no signed rotation as an event, the pin unchanged until akas trust accept --yes', async () => {
    stub.keys = m1;
    const client = new AkasClient({ baseUrl: stub.url });
    await pinnedTrust('evt', client);
    const path = readerStatePath('evt', stub.url);
    const before = readFileSync(path, 'utf8');
    // Another issuer key vouching for the same log key, and no rotation from the pinned one.
    const other: NodeKeyMaterial = { ...newNodeKeyMaterial(cryptoRandom, T0 + 200_000), log: m0.log };
    stub.keys = other;
    const e = await pinnedTrust('evt', client);
    expect(e).toMatchObject({ status: 'event', issuer: did(m1), event: { what: 'issuer-key-changed', shown: { issuer: did(other) } } });
    expect(e.notice).toContain('akas trust accept');
    expect(readFileSync(path, 'utf8')).toBe(before);

    // No terminal to ask on and no --yes: nothing moves (exit 2); at the prompt, n declines (exit 1).
    const unasked = await h.akas(['--json', '--base-url', stub.url, 'trust', 'accept'], { profile: 'evt' });
    expect(unasked.code, unasked.stdout).toBe(2);
    expect(unasked.json().code).toBe('confirm_needed');
    expect(unasked.stderr).toContain(did(m1));
    expect(unasked.stderr).toContain(did(other));
    const no = Object.assign(new PassThrough(), { isTTY: true });
    no.end('n\n');
    const declined = await h.akas(['--base-url', stub.url, 'trust', 'accept'], { profile: 'evt', stdin: no });
    expect(declined.code, declined.stderr).toBe(1);
    expect(declined.stderr).toContain('Not accepted');
    expect(readFileSync(path, 'utf8')).toBe(before);

    const accepted = await h.akas(['--json', '--base-url', stub.url, 'trust', 'accept', '--yes'], { profile: 'evt' });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.json()).toMatchObject({ accepted: true, status: 'accepted', old: { issuer: did(m1) }, pin: { issuer: did(other), source: 'accepted' } });
    expect(readReaderState(path)!.changes.at(-1)).toMatchObject({ what: 'accepted', from: { issuer: did(m1) }, to: { issuer: did(other) } });
    expect((await pinnedTrust('evt', client)).status).toBe('unchanged');
  });

  it('refuses a record others may write, or one that is not a record, rather than pinning again', async () => {
    stub.keys = m1;
    const client = new AkasClient({ baseUrl: stub.url });
    await pinnedTrust('bad', client);
    const path = readerStatePath('bad', stub.url);
    chmodSync(path, 0o664);
    await expect(pinnedTrust('bad', client)).rejects.toMatchObject({ body: { code: 'profile_mode' } });
    chmodSync(path, 0o600);
    writeFileSync(path, '{"type":"something else"}\n');
    await expect(pinnedTrust('bad', client)).rejects.toMatchObject({ body: { code: 'profile_unreadable', path } });
    expect(readFileSync(path, 'utf8')).toBe('{"type":"something else"}\n');
  });

  it('shows another log key as an event too', async () => {
    stub.keys = m1;
    const client = new AkasClient({ baseUrl: stub.url });
    await pinnedTrust('log', client);
    stub.keys = { ...m1, log: newNodeKeyMaterial(cryptoRandom, T0, 'example.com/log').log };
    const e = await pinnedTrust('log', client);
    expect(e).toMatchObject({ status: 'event', logKey: nodeKeysFrom(m1).log.verifierKey, event: { what: 'log-key-changed' } });
  });
});

/** A server at one URL forwarding every request to the node `to()` names now. */
async function switchingProxy(to: () => string) {
  const server = createServer((req, res) => {
    const up = httpRequest(new URL(req.url ?? '/', to()), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  return { server, url: await listen(server) };
}

describe("the reader's checkpoints", () => {
  let a: TestNode;
  let twin: TestNode;
  let aUrl: string;
  let twinUrl: string;
  let upstream: string;
  let proxy: Awaited<ReturnType<typeof switchingProxy>>;
  let seed = 0;
  const logKey = () => a.keys.log.verifierKey;

  /** Grows a node's log until it holds at least `size` entries; answers its checkpoint note. */
  async function growTo(node: TestNode, size: number): Promise<string> {
    for (;;) {
      await untilLogSettled(node);
      const note = (await node.app.inject({ url: '/api/log/checkpoint' })).body;
      if (Number(note.split('\n')[1]) >= size) return note;
      const res = await proposeAs(node, await agent(node), 'brief', samplePayload('brief', 500 + seed++));
      expect(res.statusCode, res.body).toBe(200);
    }
  }
  const sizeOf = (note: string) => Number(note.split('\n')[1]);

  beforeAll(async () => {
    a = await testNode(LIMITS);
    aUrl = await listen(a.app.server);
    const { store, dir, dispose } = await openTestStore();
    const clock = new FakeClock();
    const app = await createApp({ store, strategies: strategiesFor(store), clock, keys: a.keys, config: LIMITS });
    const close = async () => {
      await app.close();
      await dispose();
    };
    twin = { app, store, clock, keys: a.keys, dir, close };
    twinUrl = await listen(app.server);
    upstream = aUrl;
    proxy = await switchingProxy(() => upstream);
  });
  afterAll(async () => {
    proxy.server.close();
    await a.close();
    await twin.close();
  });

  it('keeps the newer of two reads at once, and verifies a read at an older tree the kept one extends', async () => {
    const client = new AkasClient({ baseUrl: aUrl });
    await pinnedTrust('two', client);
    const older = await growTo(a, 2);
    const newer = await growTo(a, sizeOf(older) + 2);
    const [n, o] = await Promise.all([advanceCheckpoint('two', client, newer), advanceCheckpoint('two', client, older)]);
    expect(n).toMatchObject({ checkpoint: { size: sizeOf(newer) }, kept: { size: sizeOf(newer) } });
    expect(o.refused).toBeUndefined();
    expect(o.checkpoint?.size).toBe(sizeOf(older));
    expect(readReaderState(readerStatePath('two', aUrl))!.checkpoint?.size).toBe(sizeOf(newer));
  });

  it('refuses a node rolled back to a history of its own, with evidence akas verify fork proves', async () => {
    upstream = aUrl;
    await growTo(a, 3);
    const reg = await h.akas(['--json', '--base-url', proxy.url, 'register'], { profile: 'rb' });
    expect(reg.code, reg.stderr).toBe(0);
    const registeredAt = reg.json().trust.checkpoint.size as number;
    expect(registeredAt).toBeGreaterThan(0);
    // The twin holds a history of its own, at least as long as the one registered at and shorter than the one read next.
    const rolledBack = await growTo(twin, registeredAt);
    const read = await growTo(a, sizeOf(rolledBack) + 2);
    const client = new AkasClient({ baseUrl: proxy.url });
    expect(await advanceCheckpoint('rb', client, read)).toMatchObject({ advanced: true, kept: { size: sizeOf(read) } });

    upstream = twinUrl;
    const note = (await client.call<string>('GET', '/api/log/checkpoint')).body;
    const r = await advanceCheckpoint('rb', client, note);
    expect(r).toMatchObject({ refused: 'rollback', proven: true, kept: { size: sizeOf(read) } });
    const check = await h.akas(['--json', 'verify', 'fork', r.evidenceFile!, '--log-key', logKey()]);
    expect(check.code, check.stdout).toBe(0);
    expect(check.json()).toMatchObject({ proven: true });
    expect(readReaderState(readerStatePath('rb', proxy.url))!.checkpoint?.size).toBe(sizeOf(read));
  });

  it('refuses a tree that does not extend the one kept (a fork), with evidence akas verify fork proves', async () => {
    upstream = aUrl;
    const client = new AkasClient({ baseUrl: proxy.url });
    await pinnedTrust('fork', client);
    const read = await growTo(a, 2);
    await advanceCheckpoint('fork', client, read);
    upstream = twinUrl;
    const forked = await growTo(twin, sizeOf(read) + 1);
    const r = await advanceCheckpoint('fork', client, forked);
    expect(r).toMatchObject({ refused: 'fork', proven: true, kept: { size: sizeOf(read) } });
    const check = await h.akas(['--json', 'verify', 'fork', r.evidenceFile!, '--log-key', logKey()]);
    expect(check.code, check.stdout).toBe(0);
    expect(statSync(r.evidenceFile!).mode & 0o777).toBe(0o600);
  });
});
