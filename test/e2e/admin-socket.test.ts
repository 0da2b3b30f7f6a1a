// A data folder whose path is too long for DATA/admin.sock (issue 54, item 5), with the built
// binary: `akas serve --data <a 120-character path>` starts (it crashed after writing its keys:
// the socket path overflowed the 108 bytes of a Unix socket address) with its admin socket in a
// private runtime folder and no stray socket beside the data folder, and `akas admin revoke`
// finds it there and revokes through the running node.
import { readdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningNode, runCli, startServe, tempDir } from '../helpers/e2e.js';
import { eventually } from '../helpers/written.js';

let node: RunningNode;
let base: string;
let dataDir: string;
let runtime: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  base = tempDir('akas-e2e-long-');
  dataDir = join(base, 'd'.repeat(120 - base.length - 1));
  // A runtime folder of the test's own (mkdtemp makes it 0700), for the node and the asking side alike.
  runtime = tempDir('akas-e2e-run-');
  env = { XDG_RUNTIME_DIR: runtime };
  // --demo: four demo agents propose and judge, so there are judgment credentials to revoke.
  node = await startServe(['--demo'], { dataDir, env });
  // /healthz answers 503 `seeding` until the demo tree is in.
  await eventually(async () => (await fetch(`${node.url}/healthz`)).status === 200, 200);
}, 180_000);
afterAll(async () => {
  await node?.stop();
  rmSync(base, { recursive: true, force: true });
  rmSync(runtime, { recursive: true, force: true });
});

describe('akas serve with a data folder of 120 characters', () => {
  it('starts with its admin socket in a private runtime folder, none in or beside the data folder', () => {
    expect(dataDir.length).toBe(120);
    const line = /admin socket (\S+)/.exec(node.stdout());
    expect(line, node.stdout()).not.toBeNull();
    const socket = line![1];
    expect(dirname(socket)).toBe(join(runtime, 'akas'));
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(socket)).mode & 0o777).toBe(0o700);
    expect(readdirSync(dataDir)).not.toContain('admin.sock');
    expect(readdirSync(base)).toEqual([basename(dataDir)]);
  });

  it('revokes through the running node: akas admin revoke finds the socket from the data folder alone', async () => {
    const entries = (await (await fetch(`${node.url}/api/log/entries?start=0&end=1000`)).json()) as { entries: Array<{ body: Record<string, unknown> }> };
    const judgmentId = entries.entries.map((e) => e.body).find((b) => b.event === 'judgment.recorded')?.judgmentId as string;
    expect(judgmentId).toMatch(/^jdg_[0-9a-f]{16}$/);
    const r = await runCli(['--json', 'admin', 'revoke', '--data', dataDir, judgmentId, '--reason', 'the key was stolen'], { env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ via: 'the running node', action: 'revoke', changed: true });
    const status = (await (await fetch(`${node.url}/api/credentials/status/${judgmentId}`)).json()) as { revocation: { set: boolean } };
    expect(status.revocation).toMatchObject({ set: true, reason: 'the key was stolen' });
  });

  it('is found through the socket its record names from a shell of another XDG_RUNTIME_DIR, with or without --data (issue 47, 3)', async () => {
    const entries = (await (await fetch(`${node.url}/api/log/entries?start=0&end=1000`)).json()) as { entries: Array<{ body: Record<string, unknown> }> };
    const judgmentId = entries.entries.map((e) => e.body).filter((b) => b.event === 'judgment.recorded')[1]?.judgmentId as string;
    const elsewhere = tempDir('akas-e2e-run-other-');
    try {
      for (const data of [['--data', dataDir], []]) {
        const r = await runCli(['--json', 'admin', 'revoke', ...data, judgmentId, '--suspend', '--reason', 'under review'], {
          env: { XDG_RUNTIME_DIR: elsewhere },
        });
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ via: 'the running node', node: { running: true, dataDir, url: node.url } });
      }
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
