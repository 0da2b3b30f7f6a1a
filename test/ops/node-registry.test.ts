// The running nodes' registry (src/ops/node-registry.ts; PROTOCOL 8.7, issue 47 item 3): a node
// records itself in $XDG_STATE_HOME/akas/nodes in a file of its own, written whole and private;
// listing answers the nodes that run and removes the records of those that do not (their process
// gone, their socket silent, not a record); a registry others may enter is neither read nor written.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { liveNodes, NodeRegistryError, nodeRegistryFolder, recordNode } from '../../src/ops/node-registry.js';

let dir: string;
let env: NodeJS.ProcessEnv;
const servers: Server[] = [];

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'akas-registry-')));
  env = { XDG_STATE_HOME: join(dir, 'state') };
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  rmSync(dir, { recursive: true, force: true });
});

/** A data folder with a socket that answers, as a running node's. */
async function listeningFolder(name: string): Promise<{ dataDir: string; socket: string }> {
  const dataDir = join(dir, name);
  mkdirSync(dataDir, { mode: 0o700 });
  const socket = join(dataDir, 'admin.sock');
  const server = createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(socket, r));
  servers.push(server);
  return { dataDir, socket };
}

/** A pid no process has any more: a child that ran and was reaped. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

describe('the node registry', () => {
  it('is $XDG_STATE_HOME/akas/nodes, else ~/.local/state/akas/nodes (a relative XDG_STATE_HOME is ignored, as XDG says)', () => {
    expect(nodeRegistryFolder({ XDG_STATE_HOME: '/x/state', HOME: '/h' })).toBe('/x/state/akas/nodes');
    expect(nodeRegistryFolder({ HOME: '/h' })).toBe('/h/.local/state/akas/nodes');
    expect(nodeRegistryFolder({ XDG_STATE_HOME: 'state', HOME: '/h' })).toBe('/h/.local/state/akas/nodes');
  });

  it('records a node in a file of mode 0600 in a folder of 0700, lists it while it runs, and forgets it once removed', async () => {
    const { dataDir, socket } = await listeningFolder('a');
    const record = recordNode({ url: 'http://127.0.0.1:7373', dataDir, socket }, env);
    const folder = nodeRegistryFolder(env);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(record.file).mode & 0o777).toBe(0o600);
    // Written whole: no temporary file is left beside it.
    expect(readdirSync(folder)).toEqual([record.file.slice(folder.length + 1)]);
    expect(JSON.parse(readFileSync(record.file, 'utf8'))).toMatchObject({ pid: process.pid, url: 'http://127.0.0.1:7373', dataDir, socket });
    expect(await liveNodes(env)).toEqual([expect.objectContaining({ pid: process.pid, dataDir, socket, file: record.file })]);
    record.remove();
    record.remove();
    expect(readdirSync(folder)).toEqual([]);
    expect(await liveNodes(env)).toEqual([]);
  });

  it('lists several nodes at once, each in its own record', async () => {
    const a = await listeningFolder('a');
    const b = await listeningFolder('b');
    recordNode({ url: 'http://127.0.0.1:1', ...a }, env);
    recordNode({ url: 'http://127.0.0.1:2', ...b }, env);
    expect((await liveNodes(env)).map((n) => n.dataDir).sort()).toEqual([a.dataDir, b.dataDir]);
  });

  it('skips and removes the record of a process that is gone', async () => {
    const { dataDir, socket } = await listeningFolder('a');
    const live = recordNode({ url: 'http://127.0.0.1:1', dataDir, socket }, env);
    const pid = deadPid();
    const stale = join(nodeRegistryFolder(env), `0123456789abcdef-${pid}.json`);
    writeFileSync(stale, JSON.stringify({ pid, url: 'http://127.0.0.1:2', dataDir: join(dir, 'gone'), startedAt: new Date().toISOString() }), { mode: 0o600 });
    expect((await liveNodes(env)).map((n) => n.file)).toEqual([live.file]);
    expect(readdirSync(nodeRegistryFolder(env))).not.toContain(`0123456789abcdef-${pid}.json`);
  });

  it('skips and removes the record of a node whose socket no longer answers (its pid taken by another process)', async () => {
    const dataDir = join(dir, 'a');
    mkdirSync(dataDir, { mode: 0o700 });
    // This process is alive, but no socket listens where the record says.
    const record = recordNode({ url: 'http://127.0.0.1:1', dataDir, socket: join(dataDir, 'admin.sock') }, env);
    expect(await liveNodes(env)).toEqual([]);
    expect(readdirSync(nodeRegistryFolder(env))).not.toContain(record.file.slice(nodeRegistryFolder(env).length + 1));
  });

  it('records a node on PostgreSQL by its store URL, with no data folder and no socket', async () => {
    recordNode({ url: 'http://127.0.0.1:1', store: 'postgres://akas:***@127.0.0.1/akas' }, env);
    expect(await liveNodes(env)).toEqual([expect.objectContaining({ store: 'postgres://akas:***@127.0.0.1/akas', pid: process.pid })]);
    expect((await liveNodes(env))[0]).not.toHaveProperty('dataDir');
  });

  it('removes a file that is not a record, and leaves files of other names alone', async () => {
    const folder = nodeRegistryFolder(env);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    writeFileSync(join(folder, `0123456789abcdef-${process.pid}.json`), '{"pid": "not a number"}');
    writeFileSync(join(folder, 'notes.txt'), 'mine');
    expect(await liveNodes(env)).toEqual([]);
    expect(readdirSync(folder)).toEqual(['notes.txt']);
  });

  it('neither reads nor writes a registry folder others may enter (a record there could send a revocation anywhere)', async () => {
    const { dataDir, socket } = await listeningFolder('a');
    recordNode({ url: 'http://127.0.0.1:1', dataDir, socket }, env);
    chmodSync(nodeRegistryFolder(env), 0o755);
    await expect(liveNodes(env)).rejects.toThrow(NodeRegistryError);
    expect(() => recordNode({ url: 'http://127.0.0.1:1', dataDir, socket }, env)).toThrow(NodeRegistryError);
  });
});
