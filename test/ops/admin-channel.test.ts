// The local admin channel in-process (PROTOCOL 8.7; issue 54): a line is held to the channel's
// schema and refused in the channel's own codes (an unknown action changes nothing and writes
// nothing to the log; a line that is not JSON gets no JavaScript error text), a connection is
// bounded in its line, its idleness and the number open at once; and a data folder whose
// DATA/admin.sock is too long for a socket address gets its socket in a private runtime folder,
// where the asking side finds it, and never asks in a folder others may enter.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adminSocketPlaces, askAdminChannel, MAX_SOCKET_PATH, prepareAdminSocket } from '../../src/ops/admin-ask.js';
import { MAX_LINE_BYTES, openAdminChannel } from '../../src/ops/admin-channel.js';
import { testNode, type TestNode } from '../helpers/app.js';
import { decide } from '../helpers/flows.js';
import { untilLogSettled } from '../helpers/written.js';

let node: TestNode;
let dir: string;
let closeChannel: (() => Promise<void>) | undefined;

beforeEach(async () => {
  node = await testNode({ allowAnonymousPropose: false, sameIpCollusionCheck: false });
  dir = mkdtempSync(join(tmpdir(), 'akas-admin-'));
});
afterEach(async () => {
  await closeChannel?.();
  closeChannel = undefined;
  await node.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open(options: Parameters<typeof openAdminChannel>[2] = {}, path = join(dir, 'admin.sock')) {
  const channel = await openAdminChannel(path, node.app.akas, options);
  closeChannel = channel.close;
  return channel.path;
}

/** Sends `text` (if any) on a fresh connection and answers the line the channel sent back before it closed. */
function exchange(path: string, text?: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let got = '';
    socket.on('connect', () => text !== undefined && socket.write(text));
    socket.on('data', (c) => (got += c));
    socket.on('error', reject);
    socket.on('close', () => resolve(got ? JSON.parse(got) : undefined));
  });
}

const connected = (path: string) =>
  new Promise<Socket>((resolve, reject) => {
    const s = connect(path, () => resolve(s));
    s.on('error', reject);
  });

/** A judgment credential of a decided proposal: its id. */
async function judgmentId(): Promise<string> {
  const { answers } = await decide(node, 'brief');
  const url = answers[0].credentialUrl ?? answers[0].judgment.credentialUrl;
  const credential = (await node.app.inject({ url })).json();
  return credential.credentialSubject.id.split(':').at(-1);
}

const logSize = async () => {
  await untilLogSettled(node);
  return (await node.app.inject({ url: '/api/log/entries?start=0&end=1000' })).json().entries.length as number;
};

describe('the admin channel refuses in its own codes', () => {
  it('refuses an action that is not revoke, suspend or unsuspend (invalid_request), and changes nothing nor logs anything', async () => {
    const id = await judgmentId();
    const path = await open();
    const before = { status: (await node.app.inject({ url: `/api/credentials/status/${id}` })).json(), log: await logSize() };
    const answer = await exchange(path, `${JSON.stringify({ op: 'status', request: { action: 'bogus<script>', reason: 'x', ids: [id] } })}\n`);
    expect(answer).toMatchObject({ ok: false, error: { code: 'invalid_request', status: 400 } });
    expect(answer.error.errors).toContainEqual({ field: 'request.action', reason: 'one of: revoke, suspend, unsuspend' });
    expect((await node.app.inject({ url: `/api/credentials/status/${id}` })).json()).toEqual(before.status);
    expect(await logSize()).toBe(before.log);
    // The same line with an action of the schema is taken.
    const taken = await exchange(path, `${JSON.stringify({ op: 'status', request: { action: 'suspend', reason: 'x', ids: [id] } })}\n`);
    expect(taken).toMatchObject({ ok: true, result: { action: 'suspend' } });
  });

  it('answers malformed_line to a line that is no JSON object, invalid_request to a wrong shape, never JavaScript error text', async () => {
    const path = await open();
    for (const line of ['{"op":', 'revoke everything', '[1]']) {
      const answer = await exchange(path, `${line}\n`);
      expect(answer.error.code).toBe('malformed_line');
      expect(answer.error.message).not.toMatch(/SyntaxError|Unexpected|JSON\.parse|position/);
    }
    for (const ask of [
      { op: 'status', request: null },
      { op: 'drop', request: {} },
      { op: 'status', request: { action: 'revoke', reason: 'x', ids: 'jdg_1' } },
    ]) {
      const answer = await exchange(path, `${JSON.stringify(ask)}\n`);
      expect(answer.error.code).toBe('invalid_request');
      expect(answer.error.message).not.toMatch(/TypeError|Cannot read|undefined|null \(/);
    }
  });

  it('answers a change the node refuses in the node code: an unknown id is not_found', async () => {
    const path = await open();
    const answer = await exchange(path, `${JSON.stringify({ op: 'status', request: { action: 'revoke', reason: 'x', ids: ['jdg_0000000000000000'] } })}\n`);
    expect(answer.error.code).toBe('not_found');
  });
});

describe('the admin channel bounds its connections', () => {
  it('closes a connection that sends no whole line within its idle time, answering idle_timeout', async () => {
    const path = await open({ idleMs: 20 });
    expect(await exchange(path, '{"op":"sta')).toMatchObject({ ok: false, error: { code: 'idle_timeout' } });
    expect(await exchange(path)).toMatchObject({ ok: false, error: { code: 'idle_timeout' } });
  });

  it('answers busy to a connection past the cap, and takes one again once another closes', async () => {
    const path = await open({ maxConnections: 2 });
    const held = [await connected(path), await connected(path)];
    expect(await exchange(path, '{}\n')).toMatchObject({ ok: false, error: { code: 'busy', status: 503 } });
    const closed = new Promise((r) => held[0].once('close', r));
    held[0].destroy();
    await closed;
    // The server counts the close once it sees it: ask until it has.
    let answer;
    do answer = await exchange(path, '{}\n');
    while (answer.error.code === 'busy');
    expect(answer.error.code).toBe('invalid_request');
    held[1].destroy();
  });

  it(`refuses a line longer than ${MAX_LINE_BYTES} bytes with line_too_long`, async () => {
    const path = await open();
    expect(await exchange(path, 'x'.repeat(MAX_LINE_BYTES + 1))).toMatchObject({ ok: false, error: { code: 'line_too_long', status: 413 } });
  });
});

describe('where the admin socket lives', () => {
  it('keeps it in the data folder when DATA/admin.sock fits a socket address', () => {
    expect(adminSocketPlaces(dir, {})).toEqual([join(dir, 'admin.sock')]);
    expect(prepareAdminSocket(dir, {})).toBe(join(dir, 'admin.sock'));
  });

  it('puts it in a private runtime folder when the data folder path is too long, and akas admin finds it there', async () => {
    const data = join(dir, 'd'.repeat(MAX_SOCKET_PATH));
    const runtime = join(dir, 'run');
    mkdirSync(runtime, { mode: 0o700 });
    const env = { XDG_RUNTIME_DIR: runtime };
    const place = prepareAdminSocket(data, env);
    expect(dirname(place)).toBe(join(runtime, 'akas'));
    expect(Buffer.byteLength(place)).toBeLessThanOrEqual(MAX_SOCKET_PATH);
    expect(statSync(dirname(place)).mode & 0o777).toBe(0o700);
    // The same place once the folder exists (the node makes it after placing the socket).
    mkdirSync(data);
    expect(adminSocketPlaces(data, env)[0]).toBe(place);
    await open({}, place);
    expect(statSync(place).isSocket()).toBe(true);
    const answer = await askAdminChannel(data, { action: 'revoke', reason: 'x', ids: ['jdg_0000000000000000'] }, env);
    expect(answer).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('never asks in a runtime folder others may enter', async () => {
    const data = join(dir, 'd'.repeat(MAX_SOCKET_PATH));
    mkdirSync(data);
    const runtime = join(dir, 'run');
    mkdirSync(join(runtime, 'akas'), { recursive: true });
    chmodSync(join(runtime, 'akas'), 0o755);
    const place = adminSocketPlaces(data, { XDG_RUNTIME_DIR: runtime })[0];
    let asked = 0;
    const planted = createServer((s) => {
      asked++;
      s.end('{"ok":true,"result":{}}\n');
    });
    await new Promise<void>((r) => planted.listen(place, r));
    try {
      expect(await askAdminChannel(data, { action: 'revoke', reason: 'x', ids: ['jdg_0000000000000000'] }, { XDG_RUNTIME_DIR: runtime })).toBeUndefined();
      expect(asked).toBe(0);
    } finally {
      await new Promise((r) => planted.close(r));
    }
  });
});
