// akas monitor binds every tile it relies on to the signed root (issue 34; cli/commands/log/bundle-check.ts),
// the built binary against a log of 65,836 entries served by a static HTTP server: its level-1
// tile 0 is full, so the root is folded from the level-2 tile and the right edge, never from it.
// A log that rewrites the first 256 entries, with a level-0 tile and a level-1 tile made to
// agree with them but not with the level-2 tile the checkpoint signs, is a malformed-log alert;
// the honest log is not.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  bundlePath,
  encodeBundle,
  formatCheckpoint,
  generateKeyPair,
  leafHash,
  perfectRoot,
  signNote,
  TILE_WIDTH,
  TileHashReader,
  tilePath,
  tileWidthAt,
} from '../../src/core/index.js';
import { verifierKeyString } from '../../src/core/note.js';
import { CLI } from '../helpers/e2e.js';

const SIZE = 65_536 + 300;
const ORIGIN = 'tree.example/log';

/** Every tile and bundle of a tree of SIZE leaves. */
function tilesOf(leaves: Buffer[]) {
  const files = new Map<string, Buffer>();
  const levels: Buffer[][] = [leaves.map((l) => leafHash(l))];
  while (levels[levels.length - 1].length >= TILE_WIDTH) {
    const below = levels[levels.length - 1];
    const up: Buffer[] = [];
    for (let i = 0; i + TILE_WIDTH <= below.length; i += TILE_WIDTH) up.push(perfectRoot(below.slice(i, i + TILE_WIDTH)));
    levels.push(up);
  }
  for (let l = 0; l < levels.length; l++)
    for (let n = 0; tileWidthAt(l, n, SIZE) > 0; n++) {
      const w = tileWidthAt(l, n, SIZE);
      files.set(tilePath(l, n, w), Buffer.concat(levels[l].slice(n * TILE_WIDTH, n * TILE_WIDTH + w)));
      if (l === 0) files.set(bundlePath(n, w), encodeBundle(leaves.slice(n * TILE_WIDTH, n * TILE_WIDTH + w)));
    }
  return files;
}

const entry = (seq: number, what: string) => Buffer.from(JSON.stringify({ seq, kind: 'attestation.event.v1', body: { event: what }, agent: null }));

let server: Server;
let url: string;
let logKey: string;
let dir: string;
let served: Map<string, Buffer>;
let honest: Map<string, Buffer>;
let forged: Map<string, Buffer>;

beforeAll(async () => {
  const keys = generateKeyPair();
  logKey = verifierKeyString(ORIGIN, keys.publicKey);
  const leaves = Array.from({ length: SIZE }, (_, seq) => entry(seq, 'honest'));
  honest = tilesOf(leaves);
  const root = await new TileHashReader(SIZE, async (l, i, w) => honest.get(tilePath(l, i, w))!).root();
  const note = signNote(formatCheckpoint({ origin: ORIGIN, size: SIZE, rootHash: root }), ORIGIN, keys.privateKey);
  honest.set('checkpoint', Buffer.from(note));
  // The first 256 entries rewritten, with their level-0 tile and the level-1 tile 0 made to agree.
  const rewritten = leaves.map((l, seq) => (seq < TILE_WIDTH ? entry(seq, 'rewritten') : l));
  const lie = tilesOf(rewritten);
  forged = new Map(honest);
  for (const path of [bundlePath(0), tilePath(0, 0), tilePath(1, 0)]) forged.set(path, lie.get(path)!);
  expect(forged.get(tilePath(2, 0, 1))).toEqual(honest.get(tilePath(2, 0, 1)));
  served = honest;
  server = createServer((req, res) => {
    const path = (req.url ?? '/').replace(/^\/log\//, '');
    if (path === '/api/node/keys') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ log: { verifierKey: logKey } }));
    const body = served.get(path);
    if (!body) res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such resource","code":"not_found"}');
    else res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'akas-monitor-tree-'));
});
afterAll(() => {
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function monitor(state: string): Promise<{ code: number | null; lines: Array<Record<string, any>>; stderr: string }> {
  return new Promise((resolve) => {
    const args = ['--json', '--base-url', url, 'monitor', '--once', '--agent', 'ak_treetest', '--log-key', logKey, '--state', join(dir, state)];
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, AKAS_CONFIG_DIR: dir, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) =>
      resolve({
        code,
        stderr,
        lines: stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      }),
    );
  });
}

it('alerts on a full level-1 tile that does not hash to the level-2 tile the checkpoint signs, and not on the honest log', async () => {
  served = honest;
  const ok = await monitor('honest.json');
  expect(ok.code, ok.stderr).toBe(0);
  expect(ok.lines.at(-1)).toMatchObject({ what: 'caught-up', read: SIZE });
  served = forged;
  const r = await monitor('forged.json');
  expect(r.code, r.stderr).toBe(1);
  expect(r.lines.filter((l) => l.type === 'alert')).toEqual([
    expect.objectContaining({ what: 'malformed-log', message: expect.stringContaining('tile/1/000') }),
  ]);
});
