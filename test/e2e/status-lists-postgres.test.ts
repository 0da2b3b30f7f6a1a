// Status lists on PostgreSQL (issue 32, 3; PROTOCOL 8.7): two `akas serve` processes share one
// database, and `akas admin revoke --store URL` changes the list directly on the database while
// both run; the other process serves the new version on its very next request, for revoke,
// suspend and unsuspend alike.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgStore } from '../../src/store/postgres/index.js';
import { samplePayload } from '../fixtures/payloads.js';
import { calibratedProfiles, defaultStateDir, runCli, startServe, tempDir, type RunningNode, judgeCommand } from '../helpers/e2e.js';
import { describePg, dropSchema, freshSchemaUrl } from '../helpers/postgres.js';

const SECRET = `test-node-secret-${randomBytes(8).toString('hex')}`;
const env = { AKAS_NODE_SECRET: SECRET };

/** The bit of `index` in a list credential as served. */
function bitOf(list: { credentialSubject: { encodedList: string } }, index: number): boolean {
  const bits = gunzipSync(Buffer.from(list.credentialSubject.encodedList.slice(1), 'base64url'));
  return ((bits[index >> 3] >> (7 - (index & 7))) & 1) === 1;
}

describePg('status lists on one PostgreSQL database served by two processes (e2e)', () => {
  describe('akas admin revoke --store while both run', () => {
    let url: string;
    let a: RunningNode;
    let b: RunningNode;
    let work: string;
    let judgmentId: string;
    let credential: { credentialStatus: Array<{ statusPurpose: string; statusListIndex: string }> };
    const args = ['--allow-same-ip', '--public-url', 'https://akas.example.org'];
    const admin = (extra: string[]) => runCli(['admin', 'revoke', judgmentId, '--store', url, ...extra], { cwd: work, env });
    const listOn = async (node: RunningNode, purpose: string) => {
      const r = await fetch(`${node.url}/credentials/status/${purpose}`);
      return { version: Number(r.headers.get('x-status-list-version')), list: (await r.json()) as { credentialSubject: { encodedList: string } } };
    };
    const indexOf = (purpose: string) => Number(credential.credentialStatus.find((e) => e.statusPurpose === purpose)!.statusListIndex);

    beforeAll(async () => {
      url = freshSchemaUrl('status');
      a = await startServe(args, { store: url, env });
      b = await startServe(args, { store: url, env });
      work = tempDir('akas-e2e-status-pg-');
      await calibratedProfiles(a.url, work, ['p1', 'p2', 'p3', 'p4']);
      writeFileSync(join(work, 'capability.json'), JSON.stringify(samplePayload('capability', 1)));
      const on = (profile: string, rest: string[]) => runCli(['--base-url', a.url, '--profile', profile, '--json', ...rest], { cwd: work });
      const proposed = await on('p1', ['propose', 'capability', '--file', join(work, 'capability.json')]);
      expect(proposed.code, proposed.stderr).toBe(0);
      const proposalId = JSON.parse(proposed.stdout).proposalId;
      const judged = await on('p2', judgeCommand(proposalId, 'Checked.'));
      expect(judged.code, judged.stdout + judged.stderr).toBe(0);
      const detail = (await (await fetch(`${b.url}/api/knowledge/proposals/${proposalId}`)).json()) as {
        judgments: Array<{ judgmentId: string; credentialUrl: string }>;
      };
      judgmentId = detail.judgments[0].judgmentId;
      credential = (await (await fetch(`${b.url}${detail.judgments[0].credentialUrl}`)).json()) as typeof credential;
    }, 120_000);
    afterAll(async () => {
      await a?.stop();
      await b?.stop();
      const store = await openPgStore(url, { migrate: false }).catch(() => undefined);
      if (store) {
        await dropSchema(store);
        await store.close();
      }
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it('names the public URL in the entries, on both processes', () => {
      expect(credential.credentialStatus.map((e) => (e as unknown as { statusListCredential: string }).statusListCredential)).toEqual([
        'https://akas.example.org/credentials/status/revocation',
        'https://akas.example.org/credentials/status/suspension',
      ]);
    });

    it('revokes on the database: both processes serve the new version at once; revoking twice changes nothing', async () => {
      const r = await admin(['--reason', 'collusion found']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('via the database');
      for (const node of [b, a]) {
        const { version, list } = await listOn(node, 'revocation');
        expect(version).toBe(1);
        expect(bitOf(list, indexOf('revocation'))).toBe(true);
      }
      const again = await admin(['--reason', 'collusion found']);
      expect(again.code).toBe(0);
      expect((await listOn(b, 'revocation')).version).toBe(1);
    });

    it('records each process by its store URL, no folder, no socket; admin revoke names the database and its running nodes (issue 47, 3)', async () => {
      const folder = join(defaultStateDir(), 'akas', 'nodes');
      const records = readdirSync(folder).map((f) => JSON.parse(readFileSync(join(folder, f), 'utf8')) as Record<string, unknown>);
      expect(records.map((r) => r.pid).sort()).toEqual([a.process.pid, b.process.pid].sort());
      for (const r of records) {
        expect(r).toMatchObject({ store: expect.stringContaining('127.0.0.1') });
        expect(r).not.toHaveProperty('dataDir');
        expect(r).not.toHaveProperty('socket');
      }
      // With a password in the URL (the test cluster trusts local connections): never printed, and the nodes still found.
      const withPassword = url.replace('://postgres@', '://postgres:s3cret@');
      const r = await runCli(['--json', 'admin', 'revoke', judgmentId, '--store', withPassword, '--reason', 'collusion found'], { cwd: work, env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).not.toContain('s3cret');
      expect(JSON.parse(r.stdout)).toMatchObject({ via: 'the database', node: { running: true, store: expect.stringContaining('127.0.0.1') } });
      // Named by no flag, a node on a database is never taken for the node meant: its password and node secret are in no record.
      const unnamed = await runCli(['--json', 'admin', 'revoke', judgmentId, '--reason', 'x'], { cwd: work, env });
      expect(unnamed.code).toBe(2);
      expect(JSON.parse(unnamed.stdout)).toMatchObject({ code: 'store_nodes' });
      expect(JSON.parse(unnamed.stdout).nodes).toHaveLength(2);
    });

    it('suspends and unsuspends on the database: the other process sees each version at once', async () => {
      expect((await admin(['--suspend', '--reason', 'review'])).code).toBe(0);
      let seen = await listOn(b, 'suspension');
      expect(seen.version).toBe(1);
      expect(bitOf(seen.list, indexOf('suspension'))).toBe(true);
      expect((await admin(['--unsuspend', '--reason', 'cleared'])).code).toBe(0);
      seen = await listOn(b, 'suspension');
      expect(seen.version).toBe(2);
      expect(bitOf(seen.list, indexOf('suspension'))).toBe(false);
      const versions = (await (await fetch(`${a.url}/credentials/status/suspension/versions`)).json()) as {
        versions: Array<{ action: string; reason: string }>;
      };
      expect(versions.versions.map((v: { action: string; reason: string }) => [v.action, v.reason])).toEqual([
        ['create', 'the list is made, every bit clear'],
        ['suspend', 'review'],
        ['unsuspend', 'cleared'],
      ]);
    });
  });
});
