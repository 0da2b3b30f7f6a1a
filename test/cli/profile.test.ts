// The saved identity is changed under a lock file: concurrent akas processes of one profile
// (two `akas propose` at once) never lose each other's additions.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { identityPath, keptPath, loadIdentity, ProfileModeError, saveIdentity, updateIdentity, type SavedIdentity } from '../../cli/kit/profile.js';
import { cliHarness } from '../helpers/cli.js';
import { tempDir } from '../helpers/e2e.js';

const run = promisify(execFile);
// The built module (npm test builds first): each child is a separate akas-like process.
const builtProfile = fileURLToPath(new URL('../../dist/cli/kit/profile.js', import.meta.url));
const BASE = 'http://127.0.0.1:1';

const identity = (): SavedIdentity => ({
  baseUrl: BASE,
  tag: 'agent-1',
  apiKey: 'k',
  recoveryToken: 't',
  signing: { publicKey: 'p', privateKey: 's' },
  createdAt: 1,
});

let dir: string;
const saved = { AKAS_CONFIG_DIR: process.env.AKAS_CONFIG_DIR };
beforeEach(() => {
  dir = tempDir('akas-profile-');
  process.env.AKAS_CONFIG_DIR = dir;
});
afterEach(() => {
  process.env.AKAS_CONFIG_DIR = saved.AKAS_CONFIG_DIR;
  rmSync(dir, { recursive: true, force: true });
});

describe('saved identities', () => {
  it('keeps every claimSecret when several processes add theirs at once', async () => {
    saveIdentity('default', identity());
    const child = (n: number) => `
      import { updateIdentity } from ${JSON.stringify(builtProfile)};
      for (let i = 0; i < 15; i++) {
        updateIdentity('default', ${JSON.stringify(BASE)}, (c) => ({ ...c, claimSecrets: { ...c.claimSecrets, ['p-${n}-' + i]: 'cs' } }));
      }`;
    await Promise.all(
      Array.from({ length: 6 }, (_, n) => run(process.execPath, ['--input-type=module', '-e', child(n)], { env: { ...process.env, AKAS_CONFIG_DIR: dir } })),
    );
    const secrets = loadIdentity('default', BASE)!.claimSecrets!;
    expect(Object.keys(secrets)).toHaveLength(6 * 15);
    const path = identityPath('default', BASE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(path, '..')).filter((f) => f.endsWith('.lock') || f.endsWith('.tmp'))).toEqual([]);
  });

  it('leaves the file as it is when the change answers undefined, and takes over a stale lock', () => {
    expect(updateIdentity('default', BASE, () => undefined)).toBeUndefined();
    expect(existsSync(identityPath('default', BASE))).toBe(false);

    // A lock left by a process that died mid-change is taken over once it is old.
    const lock = `${identityPath('default', BASE)}.lock`;
    writeFileSync(lock, '');
    const old = (Date.now() - 60_000) / 1000;
    utimesSync(lock, old, old);
    expect(saveIdentity('default', identity())).toBe(identityPath('default', BASE));
    expect(existsSync(lock)).toBe(false);
  });

  it.skipIf(process.platform === 'win32')('refuses a profile file others can read, saying how to fix it', async () => {
    saveIdentity('default', identity());
    const path = identityPath('default', BASE);
    for (const mode of [0o644, 0o640, 0o604, 0o660]) {
      chmodSync(path, mode);
      expect(() => loadIdentity('default', BASE)).toThrow(ProfileModeError);
      expect(() => loadIdentity('default', BASE)).toThrow(`chmod 600 ${path}`);
    }
    chmodSync(path, 0o600);
    expect(loadIdentity('default', BASE)?.tag).toBe('agent-1');
    chmodSync(path, 0o400);
    expect(loadIdentity('default', BASE)?.tag).toBe('agent-1');
  });

  it.skipIf(process.platform === 'win32')('makes every command that reads the profile exit 2 with the reason', async () => {
    const h = await cliHarness();
    try {
      const { profile } = await h.agent();
      const path = readdirSync(join(h.configDir, 'profiles', profile)).map((f) => join(h.configDir, 'profiles', profile, f))[0];
      chmodSync(path, 0o644);
      const r = await h.akas(['--json', 'me'], { profile });
      expect(r.code).toBe(2);
      expect(r.json()).toMatchObject({ code: 'profile_mode' });
      expect(r.json().error ?? r.json().message).toContain('chmod 600');
    } finally {
      await h.close();
    }
  });
});

describe('an identity saved before identities recorded their node', () => {
  it('learns the node it belongs to on `akas me` (and an identity that knows it is left as it is)', async () => {
    const h = await cliHarness();
    try {
      const { profile } = await h.agent();
      const issuer = loadIdentity(profile, h.baseUrl)?.issuer;
      expect(issuer).toMatch(/^did:key:z6Mk/);
      updateIdentity(profile, h.baseUrl, (current) => (current ? { ...current, issuer: undefined } : undefined));
      expect(loadIdentity(profile, h.baseUrl)?.issuer).toBeUndefined();
      expect((await h.akas(['--json', 'me'], { profile })).code).toBe(0);
      expect(loadIdentity(profile, h.baseUrl)?.issuer).toBe(issuer);
      expect((await h.akas(['--json', 'me'], { profile })).code).toBe(0);
      expect(loadIdentity(profile, h.baseUrl)?.issuer).toBe(issuer);
    } finally {
      await h.close();
    }
  });
});

describe('identities kept for another node', () => {
  it("are named by the node's did:key, and by a hash of anything else its /healthz calls its issuer (never its text)", () => {
    const did = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
    expect(keptPath('default', BASE, did).endsWith(`@z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK.json`)).toBe(true);
    for (const issuer of ['../../x', 'x'.repeat(5000), 'did:key:z/../../y']) {
      const path = keptPath('default', BASE, issuer);
      expect(dirname(path)).toBe(join(dirname(identityPath('default', BASE)), 'kept'));
      expect(basename(path)).toMatch(/^127\.0\.0\.1_1@sha256_[0-9a-f]{32}\.json$/);
    }
  });
});
