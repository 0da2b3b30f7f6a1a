// Start-up errors that say what happened (the built binary): a folder in use by another node,
// a read-only folder, a full disk, a port already taken, an unknown --log-level; and audits of
// a folder that holds no node. Each is refused with exit 2 and one line naming the cause and
// the fix, and a start that fails leaves no folder and no keys behind.
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';
import { bindReadOnly, fillDisk, mountSmallFs, type SmallFs } from '../helpers/faults.js';

const work = tempDir('akas-e2e-startup-');
let node: RunningNode | undefined;
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await node?.stop();
  node = undefined;
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  cleanups = [];
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** `akas serve` that must refuse to start: its exit code and its stderr as lines. */
async function refusedServe(args: string[]) {
  const r = await runCli(['serve', '--port', '0', '--log-level', 'warn', ...args], { timeoutMs: 30_000 });
  return { code: r.code, lines: r.stderr.trim().split('\n').filter(Boolean), stdout: r.stdout };
}

describe('akas serve refuses to start, saying why in one line (e2e)', () => {
  it('on a data folder another akas process holds, naming its pid', async () => {
    const dataDir = join(work, 'in-use');
    node = await startServe([], { dataDir });
    const r = await refusedServe(['--data', dataDir]);
    expect(r.code).toBe(2);
    expect(r.lines).toEqual([expect.stringContaining(`the data folder ${dataDir} is in use by another akas process (pid ${node.process.pid})`)]);
    // The running node is untouched.
    expect((await fetch(`${node.url}/healthz`)).status).toBe(200);
  });

  it('on a port already taken, before making any folder or key', async () => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise((r) => taken.close(() => r())));
    const port = (taken.address() as { port: number }).port;
    const dataDir = join(work, 'port-taken');
    const r = await runCli(['serve', '--port', String(port), '--data', dataDir], { timeoutMs: 30_000 });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use.*--port`))]);
    expect(existsSync(dataDir), 'no data folder made').toBe(false);
  });

  it('on an admin socket it cannot open (a folder where DATA/admin.sock goes), before listening, leaving no keys', async () => {
    const dataDir = join(work, 'admin-socket');
    mkdirSync(join(dataDir, 'admin.sock', 'inside'), { recursive: true, mode: 0o700 });
    const r = await refusedServe(['--data', dataDir]);
    expect(r.code).toBe(2);
    expect(r.lines).toEqual([expect.stringContaining(`the admin socket ${join(dataDir, 'admin.sock')} cannot be opened`)]);
    expect(r.stdout).not.toContain('listening on');
    expect(readdirSync(dataDir)).toEqual(['admin.sock']);
  });

  it('on an unknown --log-level, before making any folder', async () => {
    const dataDir = join(work, 'log-level');
    const r = await refusedServe(['--data', dataDir, '--log-level', 'loud']);
    expect(r.code).toBe(2);
    expect(r.lines).toEqual([expect.stringContaining('unknown --log-level loud: use one of fatal, error, warn, info, debug, trace, silent')]);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('on a read-only data folder, leaving it as it was', async (ctx) => {
    const dataDir = join(work, 'read-only');
    mkdirSync(dataDir, { mode: 0o700 });
    const undo = await bindReadOnly(dataDir);
    if ('skip' in undo) {
      console.warn(`read-only start test skipped: ${undo.skip}`);
      return ctx.skip();
    }
    cleanups.push(undo);
    const r = await refusedServe(['--data', dataDir]);
    expect(r.code).toBe(2);
    expect(r.lines).toEqual([
      expect.stringMatching(
        /the data folder .* is on a read-only file system \(EROFS|Read-only file system\).*make it writable, or choose another folder with --data/,
      ),
    ]);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('on a full disk, leaving no folder and no keys', async (ctx) => {
    const fs = await mountSmallFs(join(work, 'full'), 2);
    if ('skip' in fs) {
      console.warn(`full-disk start test skipped: ${fs.skip}`);
      return ctx.skip();
    }
    cleanups.push(() => (fs as SmallFs).unmount());
    fillDisk(fs.dir);
    const dataDir = join(fs.dir, 'data');
    const r = await refusedServe(['--data', dataDir]);
    expect(r.code).toBe(2);
    expect(r.lines).toEqual([
      expect.stringMatching(/the disk holding the data folder .* is full \(.*\): free some space, or choose another folder with --data/),
    ]);
    expect(existsSync(dataDir), 'no data folder left behind').toBe(false);
  });
});

describe('audits of a folder that holds no node refuse with exit 2 (e2e)', () => {
  it('akas log check and akas serve --check on a folder that does not exist, making nothing', async () => {
    const missing = join(work, 'no-such-folder');
    const check = await runCli(['log', 'check', '--data', missing]);
    expect(check.code).toBe(2);
    expect(check.stderr).toContain(`there is no folder ${missing}: nothing to check (is --data right?)`);
    const serve = await refusedServe(['--check', '--data', missing]);
    expect(serve.code).toBe(2);
    expect(serve.lines.join('\n')).toContain(`there is no folder ${missing}`);
    expect(existsSync(missing)).toBe(false);
  });

  it('akas log check on an empty folder: no node in it, and no keys made', async () => {
    const empty = join(work, 'empty');
    mkdirSync(empty);
    const check = await runCli(['log', 'check', '--data', empty, '--json']);
    expect(check.code).toBe(2);
    expect(JSON.parse(check.stdout)).toMatchObject({ code: 'no_node' });
    expect(readdirSync(empty)).toEqual([]);
  });
});
