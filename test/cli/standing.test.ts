// akas standing, akas card, akas verify standing and akas verify card (PROTOCOL 8.9), in-process
// against a node listening on 127.0.0.1: an agent takes its standing and its signed A2A Agent Card
// elsewhere, and a reader checks both, the figures recomputed from the node's log or a saved range.
import { readFileSync, writeFileSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import { join } from 'node:path';
import { decodeProtectedHeader, flattenedVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/core/index.js';
import { publicKeyFromMultibase } from '../../src/core/didkey.js';
import { generateKeyPair } from '../../src/core/ed25519.js';
import { revokeStanding } from '../../src/domain/credentials/standing.js';
import { signCard } from '../../cli/commands/standing/card.js';
import { samplePayload } from '../fixtures/payloads.js';
import { cliHarness, type CliHarness } from '../helpers/cli.js';
import { agent, judgeAs, signedBody } from '../helpers/flows.js';

let h: CliHarness;
let me: { profile: string; tag: string };
let trust: string;
const file = (name: string) => join(h.configDir, name);
// The node runs on a fake clock: its credentials are checked at its time.
const at = () => ['--at', String(h.node.clock.now())];

beforeAll(async () => {
  h = await cliHarness();
  // As akas serve does: the status lists the credentials name are at the address the node listens on.
  h.node.app.akas.config.listenOrigin = h.baseUrl;
  me = await h.agent(0.9, 40);
  const payload = file('cap.json');
  writeFileSync(payload, JSON.stringify(samplePayload('capability', 1)));
  const p = await h.akas(['--json', 'propose', 'capability', '--file', payload], { profile: me.profile });
  expect(p.code, p.stdout + p.stderr).toBe(0);
  const id = p.json().proposalId as string;
  for (const j of [await agent(h.node, 0.9, 0), await agent(h.node, 0.8, 0), await agent(h.node, 0.7, 0)]) {
    expect((await judgeAs(h.node, j, 'capability', id, signedBody(j, 'capability', id))).statusCode).toBe(200);
  }
  const t = await h.akas(['trust', 'pin']);
  expect(t.code, t.stderr).toBe(0);
  trust = file('trust.json');
  writeFileSync(trust, t.stdout);
});
afterAll(() => h.close());

describe('akas standing and akas verify standing', () => {
  it('writes the standing, and verify standing recomputes every figure from the node: verified, exit 0', async () => {
    const s = await h.akas(['standing', '-o', file('standing.json')], { profile: me.profile });
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toContain('proposals 1 submitted, 1 published, 0 rejected');
    const r = await h.akas(['--json', 'verify', 'standing', file('standing.json'), '--trust', trust, ...at(), '--from-node', h.baseUrl, '--status']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json()).toMatchObject({
      verdict: 'verified',
      tag: me.tag,
      figures: { tier: true, calibration: true, judgments: true, proposals: true, reputation: true, window: true },
      recomputedFrom: 'index',
    });
  });

  it('recomputes from a saved log range offline', async () => {
    const size = JSON.parse(readFileSync(file('standing.json'), 'utf8')).credentialSubject.checkpoint.size;
    const range = (await h.node.app.inject({ url: `/api/log/entries?start=0&end=${size}` })).body;
    writeFileSync(file('range.json'), range);
    const r = await h.akas(['verify', 'standing', file('standing.json'), '--trust', trust, ...at(), '--log-range', file('range.json'), '--no-status']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain('agrees  proposals');
  });

  it('refuses a standing whose figure was edited: exit 1, naming the figure', async () => {
    const doc = JSON.parse(readFileSync(file('standing.json'), 'utf8'));
    doc.credentialSubject.proposals.published = 7;
    writeFileSync(file('edited.json'), JSON.stringify(doc));
    const r = await h.akas(['--json', 'verify', 'standing', file('edited.json'), '--trust', trust, ...at(), '--from-node', h.baseUrl, '--no-status']);
    expect(r.code).toBe(1);
    expect(r.json().figures).toMatchObject({ proposals: false, tier: true });
    expect(
      r
        .json()
        .checks.filter((c: { result: string }) => c.result === 'failed')
        .map((c: { id: string }) => c.id),
    ).toEqual(['proof.signature', 'standing.figure']);
    // With --status, the lists it names are not fetched on the word of a standing that fails, and the check says so.
    const asked = await h.akas(['--json', 'verify', 'standing', file('edited.json'), '--trust', trust, ...at(), '--from-node', h.baseUrl, '--status']);
    expect(asked.code).toBe(1);
    const status = asked.json().checks.filter((c: { id: string }) => c.id.startsWith('status.'));
    expect(status.length).toBeGreaterThan(0);
    for (const c of status) expect(c.why).toContain('not fetched: the standing does not verify');
  });
});

describe('akas card and akas verify card', () => {
  it('writes a card that jose verifies as an A2A SDK would (detached JWS over the JCS without signatures)', async () => {
    const c = await h.akas(['card', '-o', file('card.json'), '--url', 'https://agent.example/a2a', '--agent-name', 'PDF helper'], { profile: me.profile });
    expect(c.code, c.stderr).toBe(0);
    const card = JSON.parse(readFileSync(file('card.json'), 'utf8'));
    expect(card).toMatchObject({
      name: 'PDF helper',
      supportedInterfaces: [{ url: 'https://agent.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      skills: [{ id: '/tools/pdf-to-text-x1', name: 'Turn a PDF into plain text' }],
    });
    const [sig] = card.signatures;
    const header = decodeProtectedHeader({ protected: sig.protected, signature: sig.signature, payload: '' });
    expect(header).toMatchObject({ alg: 'EdDSA', typ: 'JOSE' });
    const raw = publicKeyFromMultibase(String(header.kid).split('#')[0])!;
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw, 'hex').toString('base64url') }, format: 'jwk' });
    const { signatures: _s, ...unsigned } = card;
    // The detached payload put back as jose takes it: base64url of the JCS bytes.
    const payload = Buffer.from(canonicalize(unsigned)).toString('base64url');
    await expect(flattenedVerify({ ...sig, payload }, key, { algorithms: ['EdDSA'] })).resolves.toBeTruthy();
    // Any change to the content: jose refuses it.
    const changed = Buffer.from(canonicalize({ ...unsigned, name: 'Another agent' })).toString('base64url');
    const refused = flattenedVerify({ ...sig, payload: changed }, key, { algorithms: ['EdDSA'] });
    await expect(refused).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });

  it('verify card checks the JWS, the key in the agent history on the node and the standing: exit 0', async () => {
    const r = await h.akas(['--json', 'verify', 'card', file('card.json'), '--trust', trust, ...at(), '--from-node', h.baseUrl, '--status']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json()).toMatchObject({ verdict: 'verified', tag: me.tag, signatures: [{ valid: true }] });
  });

  it('refuses a card whose content changed, or signed by another key: exit 1 on standing.card', async () => {
    const card = JSON.parse(readFileSync(file('card.json'), 'utf8'));
    writeFileSync(file('changed.json'), JSON.stringify({ ...card, description: 'Now says something else.' }));
    const changed = await h.akas(['--json', 'verify', 'card', file('changed.json'), '--trust', trust, ...at(), '--from-node', h.baseUrl, '--no-status']);
    expect(changed.code).toBe(1);
    expect(changed.json().checks.find((c: { id: string }) => c.id === 'standing.card').result).toBe('failed');
    const other = generateKeyPair();
    writeFileSync(file('other-key.json'), JSON.stringify(await signCard(card, other)));
    const rekeyed = await h.akas(['--json', 'verify', 'card', file('other-key.json'), '--trust', trust, ...at(), '--from-node', h.baseUrl, '--no-status']);
    expect(rekeyed.code).toBe(1);
    expect(rekeyed.json().signatures).toMatchObject([{ valid: true }]);
    expect(rekeyed.json().checks.find((c: { id: string }) => c.id === 'standing.card').why).toContain('is not one the node shows');
  });

  it('a revoked standing (a ban, a newer standing) no longer verifies: exit 1 on its status', async () => {
    await revokeStanding(h.node.app.akas, me.tag, 'a test of revocation');
    const r = await h.akas(['--json', 'verify', 'standing', file('standing.json'), '--trust', trust, ...at(), '--from-node', h.baseUrl, '--status']);
    expect(r.code).toBe(1);
    expect(
      r
        .json()
        .checks.filter((c: { result: string }) => c.result === 'failed')
        .map((c: { id: string }) => c.id),
    ).toEqual(['status.revocation']);
  });
});
