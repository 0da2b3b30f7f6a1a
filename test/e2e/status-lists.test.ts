// Status lists end to end (issue 32, 2 to 4; PROTOCOL 8.7) with the built binary against a real
// `akas serve` on LevelDB: every judgment credential names its entries in the node's lists; an
// operator revokes, suspends and unsuspends through the node's admin socket while it runs, and
// on its store once stopped; `akas verify credential --status` reads the list from the node and
// says revoked or suspended (exit 1, naming purpose, reason and time), good (0), or status
// unknown when the list cannot be read (3); a tampered list is refused; an unknown id exits 2.
import { spawnSync } from 'node:child_process';
import { statSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplePayload } from '../fixtures/payloads.js';
import { calibratedProfiles, runCli, setupCli, startServe, tempDir, type RunningNode, judgeCommand } from '../helpers/e2e.js';

let node: RunningNode;
let work: string;
let dataDir: string;
let issuer: string;
let judgments: Array<{ judgmentId: string; credentialUrl: string }>;
let proposalId: string;

const akas = (profile: string, args: string[]) => runCli(['--base-url', node.url, '--profile', profile, ...args], { cwd: work });
const admin = (args: string[]) => runCli(['admin', 'revoke', '--data', dataDir, ...args], { cwd: work });
const getJson = async (path: string) => (await fetch(`${node.url}${path}`)).json() as Promise<any>;

/** Saves the credential of judgment i to a file and answers its path. */
async function saveCredential(i: number): Promise<string> {
  const file = join(work, `credential-${i}.json`);
  writeFileSync(file, JSON.stringify(await getJson(judgments[i].credentialUrl)));
  return file;
}
/** The single-file verifier (dist/akas-verify.mjs), run as an auditor would: no install, the same flags. */
const SINGLE = fileURLToPath(new URL('../../dist/akas-verify.mjs', import.meta.url));
const single = (args: string[]) => spawnSync(process.execPath, [SINGLE, ...args], { cwd: work, encoding: 'utf8' });
const verifyStatus = (file: string, extra: string[] = []) => runCli(['verify', 'credential', file, '--issuer', issuer, ...extra], { cwd: work });
/** The log entries of status list versions. */
const versionEntries = async () =>
  ((await getJson('/api/log/entries?start=0&end=1000')).entries as Array<{ kind: string; body: Record<string, unknown> }>).filter(
    (e) => e.kind === 'status-list.version.v1',
  );

beforeAll(async () => {
  dataDir = tempDir('akas-e2e-status-data-');
  node = await startServe(['--allow-same-ip'], { dataDir });
  work = tempDir('akas-e2e-status-');
  await calibratedProfiles(node.url, work, ['p1', 'p2', 'p3', 'p4']);
  issuer = ((await (await fetch(`${node.url}/healthz`)).json()) as { issuer: string }).issuer;
  writeFileSync(join(work, 'capability.json'), JSON.stringify(samplePayload('capability', 1)));
  // The judgments whose credentials this file revokes, made through the CLI in this process (test/helpers/e2e.ts setupCli).
  const setup = (profile: string, args: string[]) => setupCli(['--base-url', node.url, '--profile', profile, ...args]);
  const proposed = await setup('p1', ['--json', 'propose', 'capability', '--file', join(work, 'capability.json')]);
  expect(proposed.code, proposed.stderr).toBe(0);
  proposalId = JSON.parse(proposed.stdout).proposalId;
  for (const j of ['p2', 'p3', 'p4']) {
    const r = await setup(j, ['--json', ...judgeCommand(proposalId, 'Checked.')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  }
  judgments = (await getJson(`/api/knowledge/proposals/${proposalId}`)).judgments;
}, 120_000);
afterAll(async () => {
  await node?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('status lists (e2e, LevelDB)', () => {
  it('gives every judgment credential a revocation and a suspension entry at random, unique indexes in lists on the node', async () => {
    const credentials = await Promise.all(judgments.map((j) => getJson(j.credentialUrl)));
    const seen = { revocation: new Set<string>(), suspension: new Set<string>() };
    for (const c of credentials) {
      expect(c.credentialStatus.map((e: { statusPurpose: string }) => e.statusPurpose)).toEqual(['revocation', 'suspension']);
      for (const e of c.credentialStatus) {
        expect(e).toMatchObject({ type: 'BitstringStatusListEntry', statusListCredential: `${node.url}/credentials/status/${e.statusPurpose}` });
        expect(Number(e.statusListIndex)).toBeLessThan(131_072);
        seen[e.statusPurpose as 'revocation' | 'suspension'].add(e.statusListIndex);
      }
    }
    expect(seen.revocation.size).toBe(3);
    expect(seen.suspension.size).toBe(3);
    const r = await fetch(`${node.url}/credentials/status/revocation`);
    expect(r.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await r.json()).toMatchObject({ type: ['VerifiableCredential', 'BitstringStatusListCredential'], issuer, credentialSubject: { ttl: 300_000 } });
  });

  it('opens its admin channel as a Unix socket of mode 0600 in the data folder', () => {
    const s = statSync(join(dataDir, 'admin.sock'));
    expect(s.isSocket()).toBe(true);
    expect(s.mode & 0o777).toBe(0o600);
  });

  it('verifies a credential whose status is clear (exit 0), and a bundle whose stapled lists say so, naming the time they speak for', async () => {
    const file = await saveCredential(0);
    const r = await verifyStatus(file, ['--status']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const bundle = join(work, 'clear.json');
    expect((await akas('p1', ['export', proposalId, '-o', bundle])).code).toBe(0);
    const v = await runCli(['verify', 'bundle', bundle, '--issuer', issuer], { cwd: work, env: { AKAS_BASE_URL: 'http://127.0.0.1:9' } });
    expect(v.code, v.stdout).toBe(0);
    expect(v.stdout.trimEnd().split('\n').at(-1)).toMatch(
      /^VERIFIED — .*status revocation v\d+ as of \d{4}-[\d-]+T[\d:.]+Z, suspension v\d+ as of .*stapled in the bundle/,
    );
  });

  it(
    'revokes while the node runs: a new logged version, verify --status exits 1 naming purpose, reason and time; revoking twice writes one ' + 'entry',
    async () => {
      const before = (await versionEntries()).length;
      const r = await admin([judgments[0].judgmentId, '--reason', 'the key was stolen']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('via the running node');
      const again = await admin([`${node.url}${judgments[0].credentialUrl}`, '--reason', 'the key was stolen']);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(again.stdout).toContain('nothing changed');
      await expect.poll(async () => (await versionEntries()).length).toBe(before + 1);
      const entry = (await versionEntries()).at(-1)!;
      expect(entry.body).toMatchObject({ purpose: 'revocation', version: 1, action: 'revoke', reason: 'the key was stolen', changed: 1 });

      const file = await saveCredential(0);
      const v = await verifyStatus(file, ['--status']);
      expect(v.code, v.stdout + v.stderr).toBe(1);
      expect(v.stdout).toMatch(/status\.revocation: REVOKED \d{4}-\d\d-\d\dT[\d:.]+Z: the key was stolen/);
      // The single file says the same: revoked with its status read, STATUS UNKNOWN without, and the reader's skip said.
      expect(single(['verify', 'credential', file, '--issuer', issuer, '--status']).status).toBe(1);
      const unread = single(['verify', 'credential', file, '--issuer', issuer]);
      expect(unread.status).toBe(3);
      expect(unread.stdout.trimEnd().split('\n').at(-1)).toMatch(/^STATUS UNKNOWN — /);
      const skipped = single(['verify', 'credential', file, '--issuer', issuer, '--no-status']);
      expect(skipped.status).toBe(0);
      expect(skipped.stdout).toContain('status not checked (--no-status)');
      const past = await fetch(`${node.url}/credentials/status/revocation?version=0`);
      expect(past.headers.get('cache-control')).toContain('immutable');
      const detail = await getJson(`/api/credentials/status/${judgments[0].judgmentId}`);
      expect(detail.revocation).toMatchObject({ set: true, reason: 'the key was stolen', version: 1 });

      // The bundle staples the list and the version that revoked, proven in the log: checked offline.
      const bundle = join(work, 'revoked.json');
      expect((await akas('p1', ['export', proposalId, '-o', bundle])).code).toBe(0);
      const offline = await runCli(['verify', 'bundle', bundle, '--issuer', issuer], { cwd: work, env: { AKAS_BASE_URL: 'http://127.0.0.1:9' } });
      expect(offline.code, offline.stdout).toBe(1);
      expect(offline.stdout).toMatch(/status\.revocation\s+jdg_[0-9a-f]{16}\s+REVOKED [\dT:.Z-]+: the key was stolen/);
      // Two judgments of the three the rule requires remain: the decision would not stand.
      expect(offline.stdout).toContain('status.decision');
      expect(offline.stdout).toContain(`withdrawn: ${judgments[0].judgmentId} (revocation)`);
      const report = JSON.parse((await runCli(['--json', 'verify', 'bundle', bundle, '--issuer', issuer], { cwd: work })).stdout);
      const held = report.checks.filter((k: { id: string; result: string }) => k.result === 'held').map((k: { id: string }) => k.id);
      expect(held).toEqual(expect.arrayContaining(['status.list', 'status.log', 'log.inclusion', 'status.suspension']));
    },
  );

  it('suspends and unsuspends by the credential path', async () => {
    const file = await saveCredential(1);
    expect((await admin([judgments[1].credentialUrl, '--suspend', '--reason', 'under review'])).code).toBe(0);
    const v = await verifyStatus(file, ['--status']);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain('SUSPENDED');
    expect(v.stdout).toContain('under review');
    expect((await admin([judgments[1].credentialUrl, '--unsuspend', '--reason', 'cleared'])).code).toBe(0);
    expect((await verifyStatus(file, ['--status'])).code).toBe(0);
  });

  it("refuses an unknown id with exit 2, naming it, and --json passes the node's code on with its status (docs/CLI.md: --json)", async () => {
    const r = await admin(['jdg_0000000000000000', '--reason', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr + r.stdout).toContain('jdg_0000000000000000');
    const j = await admin(['--json', 'jdg_0000000000000000', '--reason', 'x']);
    expect(j.code).toBe(2);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, code: 'not_found', status: 404 });
  });

  it('refuses a tampered list credential, and checks a saved list offline', async () => {
    const file = await saveCredential(2);
    const list = await getJson('/credentials/status/revocation');
    writeFileSync(join(work, 'list.json'), JSON.stringify(list));
    const good = await runCli(['verify', 'credential', file, '--issuer', issuer, '--status-list', join(work, 'list.json'), join(work, 'list.json')], {
      cwd: work,
    });
    // The suspension list is not given: its entry's status is unknown (3), never good.
    expect(good.code, good.stdout).toBe(3);
    const suspension = await getJson('/credentials/status/suspension');
    writeFileSync(join(work, 'suspension.json'), JSON.stringify(suspension));
    const both = await runCli(['verify', 'credential', file, '--issuer', issuer, '--status-list', join(work, 'list.json'), join(work, 'suspension.json')], {
      cwd: work,
    });
    expect(both.code, both.stdout).toBe(0);
    // The issuer pinned with the node's key list: the lists are checked against the same keys.
    writeFileSync(join(work, 'keys.json'), JSON.stringify(await getJson('/api/node/keys')));
    const keyed = await runCli(
      [
        'verify',
        'credential',
        file,
        '--issuer',
        issuer,
        '--issuer-keys',
        join(work, 'keys.json'),
        '--status-list',
        join(work, 'list.json'),
        join(work, 'suspension.json'),
      ],
      { cwd: work },
    );
    expect(keyed.code, keyed.stdout + keyed.stderr).toBe(0);
    // Every bit set: a list whose encodedList was changed no longer verifies.
    const tampered = { ...list, credentialSubject: { ...list.credentialSubject, encodedList: suspension.credentialSubject.encodedList } };
    writeFileSync(join(work, 'tampered.json'), JSON.stringify(tampered));
    const bad = await runCli(['verify', 'credential', file, '--issuer', issuer, '--status-list', join(work, 'tampered.json'), join(work, 'suspension.json')], {
      cwd: work,
    });
    expect(bad.code, bad.stdout).toBe(1);
    expect(bad.stdout).toContain('status.list');
  });

  it('takes a saved list as of a status head: older than the head names, refused; made before the credential and alone, status unknown', async () => {
    const file = await saveCredential(2);
    const save = async (name: string, path: string) => {
      writeFileSync(join(work, name), JSON.stringify(await getJson(path)));
      return join(work, name);
    };
    const v0 = [
      await save('revocation-0.json', '/credentials/status/revocation?version=0'),
      await save('suspension-0.json', '/credentials/status/suspension?version=0'),
    ];
    const now = [await save('revocation-now.json', '/credentials/status/revocation'), await save('suspension-now.json', '/credentials/status/suspension')];
    const head = await save('head.json', '/credentials/status/head');
    const verify = (lists: string[]) => runCli(['verify', 'credential', file, '--issuer', issuer, '--status-list', ...lists], { cwd: work });
    // Version 0 was made before the credential: alone it says nothing of it.
    const alone = await verify(v0);
    expect(alone.code, alone.stdout).toBe(3);
    expect(alone.stdout).toContain('predates the credential');
    // With the head, version 0 of the revocation list is an older version than the newest: a rollback, refused.
    const rolledBack = await verify([...v0, head]);
    expect(rolledBack.code, rolledBack.stdout).toBe(1);
    expect(rolledBack.stdout).toContain('status.fresh');
    // The lists the head names speak as of the head.
    const fresh = await runCli(['--json', 'verify', 'credential', file, '--issuer', issuer, '--status-list', ...now, head], { cwd: work });
    expect(fresh.code, fresh.stdout).toBe(0);
    const checks = JSON.parse(fresh.stdout).results[0].checks as Array<{ id: string; why?: string }>;
    expect(checks.find((k) => k.id === 'status.revocation')?.why).toMatch(/as of \d{4}-[\d-]+T[\d:.]+Z \(version \d+, the newest at tree size \d+\)/);
  });

  it('revokes on a stopped node directly on its store, and reports status unknown (exit 3) when the list cannot be read', async () => {
    const file = await saveCredential(2);
    await node.stop({ keepData: true });
    const down = await verifyStatus(file, ['--status']);
    expect(down.code, down.stdout + down.stderr).toBe(3);
    expect(down.stdout).toContain('status unknown');
    expect(single(['verify', 'credential', file, '--issuer', issuer, '--status']).status).toBe(3);
    const r = await admin([judgments[2].judgmentId, '--reason', 'found colluding']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('via the stopped node');
    node = await startServe(['--allow-same-ip'], { dataDir });
    const list = await getJson('/credentials/status/revocation');
    expect(list.id).toContain('/credentials/status/revocation');
    const versions = await getJson('/credentials/status/revocation/versions');
    expect(versions.versions.at(-1)).toMatchObject({ version: 2, reason: 'found colluding', changes: [{ judgmentId: judgments[2].judgmentId }] });
    expect(readFileSync(file, 'utf8')).toContain('credentialStatus');
  });
});
