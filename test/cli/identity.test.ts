// akas register and akas recover make the signing key on the agent's machine by default
// (PROTOCOL 2.10): the node gets and answers the public half only; --server-keys keeps the
// service contract's way, where the node makes the keypair and shows the private key once.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publicKeyFromPrivate } from '../../src/core/index.js';
import { loadIdentity } from '../../cli/kit/profile.js';
import { markCalibrated } from '../helpers/agents.js';
import { cliHarness, type CliHarness } from '../helpers/cli.js';

let h: CliHarness;
beforeEach(async () => {
  h = await cliHarness();
});
afterEach(async () => h.close());

describe('akas register / recover keys', () => {
  it('makes the key here: the profile holds the private half, the node only the public one', async () => {
    const r = await h.akas(['--json', '--show-secrets', 'register'], { profile: 'mine' });
    expect(r.code, r.stderr).toBe(0);
    const saved = loadIdentity('mine', h.baseUrl)!;
    expect(publicKeyFromPrivate(saved.signing.privateKey)).toBe(saved.signing.publicKey);
    const profile = (await h.node.app.inject({ url: `/api/agents/${saved.tag}` })).json();
    expect(profile.signing.publicKey).toBe(saved.signing.publicKey);
    expect(r.json().saveLocally.signingPrivateKey).toBeNull(); // the node never had it
    expect(r.stdout).toContain(saved.signing.privateKey); // --show-secrets shows the local one

    await markCalibrated(h.node, saved.tag, 0.8);
    const rec = await h.akas(['--json', '--show-secrets', 'recover'], { profile: 'mine' });
    expect(rec.code, rec.stdout + rec.stderr).toBe(0);
    expect(rec.json().saveLocally.signingPrivateKey).toBeNull();
    const after = loadIdentity('mine', h.baseUrl)!;
    expect(after.signing.publicKey).not.toBe(saved.signing.publicKey);
    expect(publicKeyFromPrivate(after.signing.privateKey)).toBe(after.signing.publicKey);
    expect((await h.node.app.inject({ url: `/api/agents/${saved.tag}` })).json().signing.publicKey).toBe(after.signing.publicKey);
  });

  it('--server-keys lets the node make the keypair, as the service contract describes', async () => {
    const r = await h.akas(['--json', '--show-secrets', 'register', '--server-keys'], { profile: 'theirs' });
    expect(r.code, r.stderr).toBe(0);
    const saved = loadIdentity('theirs', h.baseUrl)!;
    expect(r.json().saveLocally.signingPrivateKey).toBe(saved.signing.privateKey);
  });
});
