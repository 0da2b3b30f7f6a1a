// src/store/node-keys.ts: the node's key file: created 0600, upgraded from version 1,
// rotated with prior keys kept, refused when others may read it.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cryptoRandom, didKeyFromPublicKey, generateKeyPair, publicKeyFromPrivate } from '../../src/core/index.js';
import { loadOrCreateNodeKeys, NODE_KEYS_FILE, rotateNodeKeys } from '../../src/store/index.js';
import { trustIssuerKeys } from '../../verifier/index.js';

let dir: string;
beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), 'akas-keys-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const file = () => join(dir, NODE_KEYS_FILE);

describe('node keys', () => {
  it('are created once with mode 0600 and read back the same', () => {
    const a = loadOrCreateNodeKeys(dir, cryptoRandom, 1000);
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    const b = loadOrCreateNodeKeys(dir, cryptoRandom, 2000);
    expect(b.issuer).toEqual(a.issuer);
    expect(b.log).toEqual(a.log);
    expect(a.issuers).toEqual([{ did: a.issuer.did, publicKeyMultibase: expect.stringMatching(/^z6Mk/), validFrom: 1000, validUntil: null }]);
    expect(a.log.publicKey).not.toBe(a.issuer.publicKey);
  });

  it('are refused, with a clear error, when others may read the file', () => {
    loadOrCreateNodeKeys(dir, cryptoRandom, 1000);
    chmodSync(file(), 0o644);
    expect(() => loadOrCreateNodeKeys(dir, cryptoRandom, 1000)).toThrow(/mode 0644.*chmod 600/);
  });

  it('upgrade a version 1 file, keeping its issuer and HMAC keys', () => {
    const issuer = generateKeyPair();
    writeFileSync(
      file(),
      JSON.stringify({ version: 1, issuer: { privateKey: issuer.privateKey }, hmac: [{ signingKeyId: 'hk_old', key: '07'.repeat(32), createdAt: 500 }] }),
      { mode: 0o600 },
    );
    const keys = loadOrCreateNodeKeys(dir, cryptoRandom, 9000);
    expect(keys.issuer.did).toBe(didKeyFromPublicKey(issuer.publicKey));
    expect(keys.issuers[0]).toMatchObject({ validFrom: 500, validUntil: null });
    expect(keys.hmac[0].signingKeyId).toBe('hk_old');
    expect(JSON.parse(readFileSync(file(), 'utf8')).version).toBe(2);
  });

  it('rotate the issuer key with both keys signing, and the HMAC key keeping the prior ones', () => {
    const first = loadOrCreateNodeKeys(dir, cryptoRandom, 1000);
    const second = rotateNodeKeys(dir, { issuer: true, hmac: true }, cryptoRandom, 5000);
    expect(second.issuer.did).not.toBe(first.issuer.did);
    expect(second.issuers.map((k) => [k.did, k.validFrom, k.validUntil])).toEqual([
      [first.issuer.did, 1000, 5000],
      [second.issuer.did, 5000, null],
    ]);
    expect(second.hmac.map((h) => h.signingKeyId)).toEqual([expect.stringMatching(/^hk_[0-9a-f]{16}$/), first.hmac[0].signingKeyId]);
    const trust = trustIssuerKeys(first.issuer.did, { keys: second.issuers, rotations: second.rotations });
    expect(trust.problems).toEqual([]);
    expect([...trust.keys.keys()]).toEqual([first.issuer.did, second.issuer.did]);
    // The file keeps every private key, the public list none.
    const material = JSON.parse(readFileSync(file(), 'utf8'));
    expect(material.issuers.map((k: { privateKey: string }) => didKeyFromPublicKey(publicKeyFromPrivate(k.privateKey)))).toEqual([
      first.issuer.did,
      second.issuer.did,
    ]);
    expect(JSON.stringify(second.issuers)).not.toContain(material.issuers[0].privateKey);
  });
});
