// akas's offline check of a standing (verifier/standing.ts, PROTOCOL 8.9): the credential, its
// checkpoint under a pinned log key, and every figure computed again from the log's entries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/core/log-entry.js';
import { loadPools } from '../../src/domain/calibration/scoring.js';
import { verifyStanding, verifyStandingAsync } from '../../verifier/standing.js';
import { bearer, registerAgent, testNode, type TestNode } from '../helpers/app.js';
import { decide } from '../helpers/flows.js';

let node: TestNode;
let credential: Record<string, any>;
let entries: LogEntry[];
let logKey: string;

beforeAll(async () => {
  node = await testNode();
  const a = await registerAgent(node, '10.8.0.1');
  const pool = loadPools()[a.calibrationPoolId as 'A' | 'B'];
  await node.app.inject({
    method: 'POST',
    url: '/api/agent/v1/calibrate',
    headers: bearer(a.apiKey),
    payload: { answers: Object.fromEntries(pool.map((q, i) => [q.id, i < 4 ? q.expected : ''])) },
  });
  await decide(node, 'brief');
  credential = (await node.app.inject({ url: `/api/agents/${a.tag}/standing` })).json();
  entries = (await node.app.inject({ url: `/api/log/entries?start=0&end=${credential.credentialSubject.checkpoint.size}` })).json().entries;
  logKey = (await node.app.inject({ url: '/api/node/keys' })).json().log.verifierKey;
});
afterAll(async () => node.close());

const failed = (r: { checks: Array<{ id: string; valid: boolean | null; subject?: string }> }) =>
  r.checks.filter((c) => c.valid === false).map((c) => (c.subject ? `${c.id}:${c.subject}` : c.id));

describe('verifyStanding', () => {
  it('holds with the issuer and log key pinned, and every figure recomputed from the entries agrees', () => {
    const r = verifyStanding(credential, { issuer: node.keys.issuer.did, logKeys: [logKey], entries, at: node.clock.now() });
    expect(failed(r)).toEqual([]);
    expect(r.verified).toBe(true);
    expect(r.anchored).toBe(true);
    expect(r.figures).toEqual({ tier: true, calibration: true, judgments: true, proposals: true, reputation: true, window: true });
    expect(credential.credentialSubject).toMatchObject({ tier: 'strong', calibration: { score: 0.8 } });
  });

  it('holds in the browser form too (asynchronous Ed25519)', async () => {
    const r = await verifyStandingAsync(JSON.stringify(credential), { issuer: node.keys.issuer.did, logKeys: [logKey], entries, at: node.clock.now() });
    expect(r.verified).toBe(true);
  });

  it('refuses an edited figure, and says which figure the entries do not give', () => {
    const edited = { ...credential, credentialSubject: { ...credential.credentialSubject, tier: 'frontier', calibration: { score: 0.95, at: null } } };
    const r = verifyStanding(edited, { issuer: node.keys.issuer.did, logKeys: [logKey], entries, at: node.clock.now() });
    expect(r.verified).toBe(false);
    expect(failed(r)).toEqual(['proof.signature', 'standing.figure:tier', 'standing.figure:calibration']);
    expect(r.figures).toMatchObject({ tier: false, calibration: false, judgments: true });
  });

  it("refuses entries that are not the checkpoint's tree", () => {
    const bent = entries.map((e) => (e.seq === 0 ? { ...e, attestedAt: e.attestedAt + 1 } : e));
    expect(failed(verifyStanding(credential, { issuer: node.keys.issuer.did, logKeys: [logKey], entries: bent, at: node.clock.now() }))).toEqual([
      'standing.entries',
    ]);
    const short = entries.slice(1);
    expect(failed(verifyStanding(credential, { issuer: node.keys.issuer.did, logKeys: [logKey], entries: short, at: node.clock.now() }))).toEqual([
      'standing.entries',
    ]);
  });

  it('leaves the figures unchecked without entries, and unanchored without a log key', () => {
    const r = verifyStanding(credential, { issuer: node.keys.issuer.did, at: node.clock.now() });
    expect(r.verified).toBe(true);
    expect(r.anchored).toBe(false);
    expect(r.checks.filter((c) => c.valid === null).map((c) => c.id)).toEqual(['standing.checkpoint', 'standing.entries']);
  });
});

describe('verifyStanding through the verifiable index (PROTOCOL 9.10)', () => {
  it("recomputes a judge's figures from the lookups of agent:TAG and credential:J, and refuses them with one left out", async () => {
    const { judges } = await decide(node, 'capability', { n: 7 });
    const judge = judges[0];
    const standing = (await node.app.inject({ url: `/api/agents/${judge.tag}/standing` })).json();
    const lookup = async (key: string) => (await node.app.inject({ url: `/api/index/${encodeURIComponent(key)}?entries=true` })).json();
    const own = await lookup(`agent:${judge.tag}`);
    const judgmentIds = own.entries.filter((e: LogEntry) => e.body.event === 'judgment.recorded').map((e: LogEntry) => e.body.judgmentId);
    expect(judgmentIds).toHaveLength(1);
    const lookups = [own, await lookup(`credential:${judgmentIds[0]}`)];
    const o = { issuer: node.keys.issuer.did, logKeys: [logKey], at: node.clock.now() };
    const r = verifyStanding(standing, { ...o, lookups });
    expect(failed(r)).toEqual([]);
    expect(r.figures).toEqual({ tier: true, calibration: true, judgments: true, proposals: true, reputation: true, window: true });
    expect(standing.credentialSubject.judgments).toMatchObject({ made: 1, decided: 1, agreed: 1 });
    expect(failed(verifyStanding(standing, { ...o, lookups: [own] }))).toEqual(['standing.entries']);
  });
});
