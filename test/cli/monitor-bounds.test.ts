// akas monitor and akas log watch bound what the node they watch may cost them (issue 54, 3),
// run in-process against logs served on 127.0.0.1 by the test and signed with its own log key.
// A node that never answers is given up on (exit 2, naming it); an endless checkpoint or tile is
// refused at its cap (the reader hangs up long before the test's ceiling); a redirect to another
// origin is not followed, and a status list named on another origin is read from the node
// itself; a validly signed, self-consistent log of 2^40 repeated leaves is read --max-entries at
// a time, said, and stopped (exit 3); the state is never written through a link planted at its
// temporary file. log watch refuses such a log outright, and gives up on a silent node too.
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { commandGroups } from '../../cli/commands/index.js';
import { LOG_WATCH_CAPS } from '../../cli/commands/log/watch.js';
import { MONITOR_API_CAPS } from '../../cli/commands/monitor/follow.js';
import { run } from '../../cli/program.js';
import {
  bundlePath,
  encodeBundle,
  formatCheckpoint,
  generateKeyPair,
  leafHash,
  parseTilePath,
  perfectRoot,
  signNote,
  STATUS_LIST_EVENT_KIND,
  TILE_WIDTH,
  TileHashReader,
  tilePath,
} from '../../src/core/index.js';
import { verifierKeyString } from '../../src/core/note.js';
import { Capture } from '../helpers/cli.js';
import { endless, silentServer, type Stream, type TestServer, testServer } from '../helpers/hostile-server.js';

const ORIGIN = 'bounds.example/log';
const keys = generateKeyPair();
const logKey = verifierKeyString(ORIGIN, keys.publicKey);
const AGENT = 'ak_boundtst';

let dir: string;
let savedConfig: string | undefined;
const servers: TestServer[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'akas-monitor-bounds-'));
  savedConfig = process.env.AKAS_CONFIG_DIR;
  process.env.AKAS_CONFIG_DIR = dir;
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
afterAll(() => {
  if (savedConfig === undefined) delete process.env.AKAS_CONFIG_DIR;
  else process.env.AKAS_CONFIG_DIR = savedConfig;
  rmSync(dir, { recursive: true, force: true });
});

const sign = (size: number, root: Buffer) => signNote(formatCheckpoint({ origin: ORIGIN, size, rootHash: root }), ORIGIN, keys.privateKey);

/** A log of a few leaves (under 256): its one partial tile and bundle, and its signed checkpoint. */
async function smallLog(leaves: Buffer[]): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  files.set(tilePath(0, 0, leaves.length), Buffer.concat(leaves.map((l) => leafHash(l))));
  files.set(bundlePath(0, leaves.length), encodeBundle(leaves));
  const root = await new TileHashReader(leaves.length, async (l, i, w) => files.get(tilePath(l, i, w))!).root();
  files.set('checkpoint', Buffer.from(sign(leaves.length, root)));
  return files;
}

/**
 * A perfect log of 256^levels copies of one leaf: every tile at level l is the same hash (the
 * root of 256^l leaves) repeated, every bundle the same leaf: self-consistent, validly signed.
 */
function repeatedLog(levels: number, leaf: Buffer): (path: string) => Buffer | undefined {
  const hashes = [leafHash(leaf)];
  for (let l = 0; l < levels; l++) hashes.push(perfectRoot(Array<Buffer>(TILE_WIDTH).fill(hashes[l])));
  const checkpoint = Buffer.from(sign(TILE_WIDTH ** levels, hashes[levels]));
  return (path) => {
    if (path === 'checkpoint') return checkpoint;
    const ref = path.startsWith('tile/') ? parseTilePath(path.slice(5)) : null;
    if (!ref) return undefined;
    if (ref.kind === 'entries') return encodeBundle(Array<Buffer>(ref.width).fill(leaf));
    return Buffer.concat(Array<Buffer>(ref.width).fill(hashes[ref.level]));
  };
}

/** A node serving its keys and a log (`log(path)`); `special` may answer a path its own way first. */
async function node(log: (path: string) => Buffer | undefined, special: (path: string, res: ServerResponse) => boolean = () => false) {
  const s = await testServer((req, res) => {
    const path = req.url ?? '/';
    if (special(path, res)) return;
    if (path === '/api/node/keys') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ log: { verifierKey: logKey } }));
    const body = path.startsWith('/log/') ? log(path.slice('/log/'.length)) : undefined;
    if (body) res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
    else res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such resource","code":"not_found"}');
  });
  servers.push(s);
  return s;
}

let states = 0;
/** `akas monitor --once` in this process against `url`, watching AGENT with the test's log key. */
async function monitor(url: string, extra: string[] = [], state = join(dir, `state-${++states}.json`)) {
  const stdout = new Capture();
  const stderr = new Capture();
  const args = ['--json', '--base-url', url, 'monitor', '--once', '--agent', AGENT, '--log-key', logKey, '--state', state, ...extra];
  const code = await run(args, { stdout, stderr }, commandGroups, {});
  process.exitCode = 0;
  const text = stdout.text.trim();
  // Events are JSON lines; a failure is one JSON document.
  const lines = (): Array<Record<string, any>> =>
    text.startsWith('{\n')
      ? [JSON.parse(text)]
      : text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l));
  return { code, lines, stderr: stderr.text, state };
}

const leaf = (i: number) => Buffer.from(JSON.stringify({ seq: i, kind: 'bounds.test.v1', agent: null, body: { i } }));

describe('akas monitor bounds what it reads', () => {
  it('gives up on a node that never answers, naming it (exit 2)', async () => {
    const silent = await silentServer();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const ran = monitor(silent.url);
      await silent.asked;
      // The time cap, reached by the fake clock: nothing here waits for it.
      await vi.advanceTimersByTimeAsync(MONITOR_API_CAPS.headersMs);
      const r = await ran;
      expect(r.code, r.stderr).toBe(2);
      expect(r.lines()[0]).toMatchObject({ code: 'unreachable', baseUrl: silent.url });
    } finally {
      vi.useRealTimers();
      await silent.close();
    }
  }, 30_000);

  it('refuses an endless checkpoint at its cap, hanging up long before the stream ends (exit 2)', async () => {
    const stream: Stream = { sent: 0, reachedCeiling: false };
    const s = await node(
      () => undefined,
      (path, res) => path === '/log/checkpoint' && (endless(res, stream, 'text/plain; charset=utf-8'), true),
    );
    const r = await monitor(s.url);
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines()[0]).toMatchObject({ code: 'too_large' });
    expect(stream.reachedCeiling).toBe(false);
  });

  it('refuses an endless tile at the bytes its width allows: an alert, the stream cut short', async () => {
    const files = await smallLog(Array.from({ length: 200 }, (_, i) => leaf(i)));
    const stream: Stream = { sent: 0, reachedCeiling: false };
    const s = await node(
      (path) => files.get(path),
      (path, res) => path === `/log/${tilePath(0, 0, 200)}` && (endless(res, stream, 'application/octet-stream'), true),
    );
    const r = await monitor(s.url);
    expect(r.code, r.stderr).toBe(1);
    expect(r.lines().filter((l) => l.type === 'alert')).toEqual([expect.objectContaining({ what: 'malformed-log' })]);
    expect(stream.reachedCeiling).toBe(false);
  });

  it('does not follow a redirect to another origin (exit 2), and asks nothing of it', async () => {
    const files = await smallLog([leaf(0), leaf(1)]);
    const other = await node((path) => files.get(path));
    const s = await node(
      (path) => files.get(path),
      (path, res) => path === '/log/checkpoint' && (res.writeHead(302, { location: `${other.url}/log/checkpoint` }).end(), true),
    );
    const r = await monitor(s.url);
    expect(r.code, r.stderr).toBe(2);
    expect(r.lines()[0]).toMatchObject({ code: 'redirect_refused' });
    expect(other.asked).toEqual([]);
  });

  it('follows a redirect within the origin', async () => {
    const files = await smallLog([leaf(0), leaf(1)]);
    const s = await node(
      (path) => files.get(path.replace(/^moved\//, '')),
      (path, res) => path === '/log/checkpoint' && (res.writeHead(301, { location: '/log/moved/checkpoint' }).end(), true),
    );
    const r = await monitor(s.url);
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines().at(-1)).toMatchObject({ what: 'caught-up', read: 2 });
  });

  it('reads a self-consistent log of 2^40 repeated leaves --max-entries at a time, says so and stops (exit 3)', async () => {
    const s = await node(repeatedLog(5, leaf(0)));
    const state = join(dir, 'huge.json');
    const first = await monitor(s.url, ['--max-entries', '512'], state);
    expect(first.code, first.stderr).toBe(3);
    expect(first.lines().at(-1)).toMatchObject({ what: 'max-entries', max: 512, left: 2 ** 40 - 512 });
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ next: 512, checkpoint: null });
    // The next run reads on from where it stopped, no further than its bound.
    const second = await monitor(s.url, ['--max-entries', '300'], state);
    expect(second.code, second.stderr).toBe(3);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ next: 812 });
    expect(s.asked.filter((p) => p.startsWith('/log/tile/entries/'))).toHaveLength(2 + 2);
  });

  it('reads a status list the log names on another origin from the node itself, never from there', async () => {
    const other = await node(() => undefined);
    const version = {
      kind: STATUS_LIST_EVENT_KIND,
      agent: null,
      body: { list: `${other.url}/credentials/status/revocation`, purpose: 'revocation', version: 1, credentialSha256: '0'.repeat(64) },
    };
    const files = await smallLog([Buffer.from(JSON.stringify(version)), leaf(1)]);
    const s = await node((path) => files.get(path));
    const r = await monitor(s.url);
    // The node serves no such version: the log names a list it does not serve (an alert).
    expect(r.code, r.stderr).toBe(1);
    expect(r.lines().filter((l) => l.type === 'alert')).toEqual([expect.objectContaining({ what: 'status-list-missing' })]);
    expect(s.asked).toContain('/credentials/status/revocation?version=1');
    expect(other.asked).toEqual([]);
  });

  it('never writes its state through a link planted at its temporary file in a shared folder', async () => {
    const files = await smallLog([leaf(0)]);
    const s = await node((path) => files.get(path));
    const state = join(dir, 'shared-state.json');
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    // The temporary name the state was written through (`<state>.<pid>.tmp`).
    symlinkSync(victim, `${state}.${process.pid}.tmp`);
    const r = await monitor(s.url, [], state);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(state).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ next: 1 });
  });
});

describe('akas log watch bounds what it reads', () => {
  /** `akas log watch --once` in this process against `url`. */
  async function logWatch(url: string, extra: string[]) {
    const stdout = new Capture();
    const stderr = new Capture();
    const code = await run(['--json', '--base-url', url, 'log', 'watch', '--once', ...extra], { stdout, stderr }, commandGroups, {});
    process.exitCode = 0;
    return { code, stdout: stdout.text, stderr: stderr.text };
  }

  it('refuses to audit a self-consistent log of 2^40 repeated leaves, reading none of its entries (exit 1)', async () => {
    const s = await node(repeatedLog(5, leaf(0)));
    const r = await logWatch(s.url, ['--tiles', `${s.url}/log`, '--log-key', logKey]);
    expect(r.code, r.stderr).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, size: 2 ** 40 });
    expect(s.asked.filter((p) => p.startsWith('/log/tile/entries/'))).toEqual([]);
  }, 30_000);

  it('gives up on a node that never answers, naming it (exit 2)', async () => {
    const silent = await silentServer();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const ran = logWatch(silent.url, ['--log-key', logKey]);
      await silent.asked;
      await vi.advanceTimersByTimeAsync(LOG_WATCH_CAPS.headersMs);
      const r = await ran;
      expect(r.code, r.stderr).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ code: 'unreachable', baseUrl: silent.url });
    } finally {
      vi.useRealTimers();
      await silent.close();
    }
  }, 30_000);
});
