// `akas admin revoke` on the node meant (issue 47, item 3; PROTOCOL 8.7), with the built binary:
// a running `akas serve` records itself in $XDG_STATE_HOME/akas/nodes, so `akas admin revoke`
// with no --data, run from any folder, revokes on the one node running and names it; with two
// running it lists both and asks for --data (exit 2); with none it acts on the default folder
// and says no node runs there; a record a killed node left is ignored and removed, and a node
// stopped by SIGTERM takes its record with it. Every answer names the folder and whether its
// node ran. Each test file has its own XDG_STATE_HOME (test/helpers/e2e.ts); this one names
// its own too, to show where records live.
import { realpathSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningNode, runCli, startServe, tempDir } from '../helpers/e2e.js';
import { eventually } from '../helpers/written.js';

let state: string;
let env: NodeJS.ProcessEnv;
let work: string;
let elsewhere: string;
let node: RunningNode;
let dataDir: string;
let judgmentIds: string[];

const registry = () => join(state, 'akas', 'nodes');
const records = () => readdirSync(registry()).filter((f) => f.endsWith('.json'));
/** `akas admin revoke` with no --data, from a folder that holds no node (so no ./.akas to fall back on). */
const revoke = (args: string[], opts: { json?: boolean; cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  runCli([...(opts.json === false ? [] : ['--json']), 'admin', 'revoke', ...args], { cwd: opts.cwd ?? elsewhere, env: opts.env ?? env });

beforeAll(async () => {
  state = tempDir('akas-e2e-which-state-');
  env = { XDG_STATE_HOME: state };
  work = tempDir('akas-e2e-which-');
  elsewhere = tempDir('akas-e2e-which-cwd-');
  // The node's folder is ./.akas of `work`: once the node stops, it is the default folder there.
  dataDir = join(work, '.akas');
  node = await startServe(['--demo'], { dataDir, env });
  await eventually(async () => (await fetch(`${node.url}/healthz`)).status === 200, 200);
  const entries = (await (await fetch(`${node.url}/api/log/entries?start=0&end=1000`)).json()) as { entries: Array<{ body: Record<string, unknown> }> };
  judgmentIds = entries.entries
    .map((e) => e.body)
    .filter((b) => b.event === 'judgment.recorded')
    .map((b) => b.judgmentId as string);
  expect(judgmentIds.length).toBeGreaterThanOrEqual(3);
}, 180_000);
afterAll(async () => {
  await node?.stop();
  for (const d of [state, work, elsewhere]) if (d) rmSync(d, { recursive: true, force: true });
});

describe('a running node records itself', () => {
  it('in one private file naming its data folder, socket, address and pid', () => {
    expect(records()).toHaveLength(1);
    const record = JSON.parse(readFileSync(join(registry(), records()[0]), 'utf8'));
    expect(record).toMatchObject({ url: node.url, dataDir: realpathSync(dataDir), socket: join(realpathSync(dataDir), 'admin.sock'), pid: node.process.pid });
  });
});

describe('akas admin revoke with no --data', () => {
  it('revokes on the one running node, from any folder, and names it', async () => {
    const r = await revoke([judgmentIds[0], '--reason', 'the key was stolen']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      changed: true,
      via: 'the running node',
      node: { running: true, dataDir: realpathSync(dataDir), url: node.url, pid: node.process.pid, chosen: 'running' },
    });
    const status = (await (await fetch(`${node.url}/api/credentials/status/${judgmentIds[0]}`)).json()) as { revocation: { set: boolean } };
    expect(status.revocation).toMatchObject({ set: true, reason: 'the key was stolen' });
    const human = await revoke([judgmentIds[0], '--reason', 'the key was stolen'], { json: false });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`via the running node at ${node.url}, data folder ${realpathSync(dataDir)}`);
  });

  it('names the folder and its running node when the id is unknown (exit 2)', async () => {
    const r = await revoke(['jdg_0000000000000000', '--reason', 'x']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 'not_found', node: { running: true, dataDir: realpathSync(dataDir) } });
    const human = await revoke(['jdg_0000000000000000', '--reason', 'x'], { json: false });
    expect(human.code).toBe(2);
    expect(human.stderr).toContain(`the running node at ${node.url}, data folder ${realpathSync(dataDir)}`);
  });

  it('ignores and removes the record a killed node left (its pid gone)', async () => {
    const pid = spawnSync(process.execPath, ['-e', '']).pid!;
    const stale = `0123456789abcdef-${pid}.json`;
    writeFileSync(join(registry(), stale), JSON.stringify({ pid, url: 'http://127.0.0.1:9', dataDir: elsewhere, startedAt: new Date().toISOString() }), {
      mode: 0o600,
    });
    const r = await revoke([judgmentIds[1], '--suspend', '--reason', 'under review']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).node).toMatchObject({ running: true, dataDir: realpathSync(dataDir) });
    expect(records()).not.toContain(stale);
  });

  it('with a node on a shared database recorded as well, still takes the one on a data folder', async () => {
    // A record as `akas serve --store` writes it (no folder, no socket), of a process that runs: this test's.
    const pg = `fedcba9876543210-${process.pid}.json`;
    const body = { pid: process.pid, url: 'http://127.0.0.1:9', store: 'postgres://akas:***@127.0.0.1/akas', startedAt: new Date().toISOString() };
    writeFileSync(join(registry(), pg), JSON.stringify(body), { mode: 0o600 });
    try {
      const r = await revoke([judgmentIds[1], '--unsuspend', '--reason', 'cleared']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).node).toMatchObject({ running: true, dataDir: realpathSync(dataDir) });
      // Alone, it is never taken for the node meant: its password and node secret are in no record.
      const alone = tempDir('akas-e2e-which-pg-');
      mkdirSync(join(alone, 'akas', 'nodes'), { recursive: true, mode: 0o700 });
      writeFileSync(join(alone, 'akas', 'nodes', pg), JSON.stringify(body), { mode: 0o600 });
      const refused = await revoke([judgmentIds[1], '--reason', 'x'], { env: { XDG_STATE_HOME: alone } });
      expect(refused.code).toBe(2);
      expect(JSON.parse(refused.stdout)).toMatchObject({ code: 'store_nodes', nodes: [{ store: body.store, url: body.url, pid: process.pid }] });
      rmSync(alone, { recursive: true, force: true });
    } finally {
      rmSync(join(registry(), pg), { force: true });
    }
  });

  it('with two nodes running, lists both (folder, address, pid) and asks for --data (exit 2)', async () => {
    const second = await startServe([], { env });
    try {
      const r = await revoke([judgmentIds[2], '--reason', 'x']);
      expect(r.code).toBe(2);
      const body = JSON.parse(r.stdout);
      expect(body.code).toBe('several_nodes');
      expect(body.nodes).toEqual(
        expect.arrayContaining([
          { dataDir: realpathSync(dataDir), url: node.url, pid: node.process.pid },
          { dataDir: realpathSync(second.dataDir), url: second.url, pid: second.process.pid },
        ]),
      );
      const human = await revoke([judgmentIds[2], '--reason', 'x'], { json: false });
      expect(human.code).toBe(2);
      expect(human.stderr).toContain('--data');
      expect(human.stderr).toContain(realpathSync(second.dataDir));
      expect(human.stderr).toContain(node.url);
      // Naming one settles it.
      const named = await runCli(['--json', 'admin', 'revoke', '--data', dataDir, judgmentIds[2], '--reason', 'x'], { cwd: elsewhere, env });
      expect(named.code, named.stdout + named.stderr).toBe(0);
      expect(JSON.parse(named.stdout).node).toMatchObject({ running: true, dataDir: realpathSync(dataDir), chosen: 'named' });
      expect(records()).toHaveLength(2);
    } finally {
      await second.stop();
    }
    // Stopped by SIGTERM, the second node took its record with it.
    expect(records()).toHaveLength(1);
  });

  it('with none running, acts on the default folder and says its node is stopped; the stopped node took its record with it', async () => {
    await node.stop({ keepData: true });
    expect(records()).toEqual([]);
    const r = await revoke([judgmentIds[2], '--reason', 'found colluding'], { cwd: work });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ via: 'the stopped node', node: { running: false, dataDir: realpathSync(dataDir), chosen: 'default' } });
    // Where the default folder holds no node, the answer names it and says so.
    const none = await revoke([judgmentIds[2], '--reason', 'x'], { json: false });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(join(realpathSync(elsewhere), '.akas'));
    expect(none.stderr).toContain('no node is running here');
    const json = await revoke([judgmentIds[2], '--reason', 'x']);
    expect(JSON.parse(json.stdout)).toMatchObject({ code: 'no_node', node: { running: false, dataDir: join(realpathSync(elsewhere), '.akas') } });
  });
});
