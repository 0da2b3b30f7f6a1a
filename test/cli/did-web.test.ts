// The node as a did:web (PROTOCOL 8.10): GET /.well-known/did.json names its issuer keys as
// Multikey methods with their windows, its log key and witness policy as services; akas trust pin
// --did-web pins that document on an explicit ask; a standing issued under the did:web verifies
// from that trust file, and without it the did:web method is not resolved (nothing is fetched).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519Multibase } from '../../src/core/didkey.js';
import { cliHarness, type CliHarness } from '../helpers/cli.js';

let h: CliHarness;
let me: { profile: string; tag: string };
const file = (name: string) => join(h.configDir, name);
const at = () => ['--at', String(h.node.clock.now())];

beforeAll(async () => {
  h = await cliHarness({ issuerDidWeb: true });
  h.node.app.akas.config.listenOrigin = h.baseUrl;
  me = await h.agent(0.8, 10);
});
afterAll(() => h.close());

describe('GET /.well-known/did.json', () => {
  it('is the did:web of the node, its issuer keys as Multikey methods, its log key and witness policy as services', async () => {
    const res = await fetch(`${h.baseUrl}/.well-known/did.json`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    const did = `did:web:127.0.0.1%3A${new URL(h.baseUrl).port}`;
    const mb = ed25519Multibase(h.node.keys.issuer.publicKey);
    expect(doc).toMatchObject({
      '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/multikey/v1'],
      id: did,
      verificationMethod: [{ id: `${did}#${mb}`, type: 'Multikey', controller: did, publicKeyMultibase: mb, validUntil: null }],
      assertionMethod: [`${did}#${mb}`],
      service: [
        { id: `${did}#log`, type: 'AkasTransparencyLog', verifierKey: h.node.keys.log.verifierKey },
        { id: `${did}#witness-policy`, type: 'AkasWitnessPolicy', policy: `log ${h.node.keys.log.verifierKey}\nquorum none\n` },
      ],
    });
  });
});

describe('a standing under the did:web', () => {
  it('names the did:web as issuer, and verifies from a trust file that pinned its document (trust pin --did-web)', async () => {
    const s = await h.akas(['standing', '-o', file('standing.json')], { profile: me.profile });
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toContain('issuer did:web:127.0.0.1%3A');
    const pinned = await h.akas(['trust', 'pin', '--did-web']);
    expect(pinned.code, pinned.stderr).toBe(0);
    expect(JSON.parse(pinned.stdout).didWeb[0].id).toMatch(/^did:web:/);
    writeFileSync(file('trust-did-web.json'), pinned.stdout);
    const r = await h.akas(['--json', 'verify', 'standing', file('standing.json'), '--trust', file('trust-did-web.json'), ...at(), '--status']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json()).toMatchObject({ verdict: 'verified', issuer: expect.stringMatching(/^did:web:/) });
  });

  it('is not resolved without the pinned document: the did:web method is refused, never fetched', async () => {
    const plain = await h.akas(['trust', 'pin']);
    writeFileSync(file('trust-plain.json'), plain.stdout);
    const r = await h.akas(['--json', 'verify', 'standing', file('standing.json'), '--trust', file('trust-plain.json'), ...at(), '--no-status']);
    expect(r.code).toBe(1);
    expect(
      r
        .json()
        .checks.filter((c: { result: string }) => c.result === 'failed')
        .map((c: { id: string }) => c.id),
    ).toContain('proof.verificationMethod');
  });
});
