// The node's request log (src/http/request-log.ts): the line it writes by hand is the line pino
// writes for the same request, and a turn's lines leave in one write, none left behind by a flush.
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Fastify, { LogController } from 'fastify';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/core/index.js';
import { createApp } from '../../src/http/app.js';
import { nodeLogger, requestLine, requestLoggerOnFirstUse, TurnBatch } from '../../src/http/request-log.js';
import { strategiesFor } from '../../src/node/strategies.js';
import { bearer, testKeys } from '../helpers/app.js';
import { openTestStore } from '../helpers/stores.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The same requests to a node: register an agent, read /me with its key and a query, a 404, a 401. */
async function requests(app: Awaited<ReturnType<typeof createApp>>) {
  const reg = (await app.inject({ method: 'POST', url: '/api/agent/v1/register', remoteAddress: '10.0.0.7' })).json();
  await app.inject({ url: '/api/agent/v1/me?token=secret-looking', headers: bearer(reg.apiKey), remoteAddress: '10.0.0.7' });
  await app.inject({ url: '/nope/"quoted"\\path' });
  await app.inject({ url: '/api/agent/v1/me', headers: bearer('ak_wrong') });
}

/** A node app on a fresh store with this logger; closed (and its store) by the caller's `close`. */
async function nodeWith(logger: { loggerInstance: Awaited<ReturnType<typeof nodeLogger>> } | { logger: { level: string; stream: Writable } }) {
  const { store, dispose } = await openTestStore();
  const app = await createApp({ store, strategies: strategiesFor(store), clock: new FakeClock(), keys: testKeys(), ...logger });
  return { app, close: async () => (await app.close(), await dispose()) };
}

// What differs between two runs of the same requests: when, how long each took, the agent's random tag.
const sameRun = (line: string) =>
  line
    .replace(/"time":\d+/, '"time":0')
    .replace(/"ms":[\d.]+/, '"ms":0')
    .replace(/"agent":"ak_\w+"/, '"agent":"ak_"');

describe("the node's request log", () => {
  it('writes each request line byte for byte as pino writes it, no query value in it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'akas-request-log-'));
    dirs.push(dir);
    const file = join(dir, 'log');
    const node = await nodeWith({ loggerInstance: await nodeLogger('info', openSync(file, 'w')) });
    await requests(node.app);
    await node.close();
    const ours = await vi.waitFor(() => {
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"msg":"request"'));
      expect(lines).toHaveLength(4);
      return lines;
    });

    const pinoLines: string[] = [];
    const stream = new Writable({ write: (chunk, _enc, cb) => (pinoLines.push(String(chunk).trimEnd()), cb()) });
    const reference = await nodeWith({ logger: { level: 'info', stream } });
    await requests(reference.app);
    await reference.close();
    const theirs = pinoLines.filter((l) => l.includes('"msg":"request"'));

    expect(ours.map(sameRun)).toEqual(theirs.map(sameRun));
    expect(JSON.parse(ours[1])).toMatchObject({ method: 'GET', path: '/api/agent/v1/me', status: 200, agent: expect.stringMatching(/^ak_/) });
    expect(ours.join('\n')).not.toContain('secret-looking');
  });

  it("hands a turn's lines to its destination in one write, at the end of the turn", async () => {
    const writes: string[] = [];
    const batch = new TurnBatch({ write: (s: string) => writes.push(s) });
    batch.write('a\n');
    batch.write('b\n');
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    batch.write('c\n');
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('writes what waits when flushed before the turn ends (pino.flush, the process exiting), once', async () => {
    const writes: string[] = [];
    const batch = new TurnBatch({ write: (s: string) => writes.push(s) });
    batch.write('waiting\n');
    let flushed = false;
    batch.flush(() => (flushed = true));
    expect([writes, flushed]).toEqual([['waiting\n'], true]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['waiting\n']);
  });

  it("makes a request's logger only when the request logs through it, writing what fastify's own child writes", async () => {
    /** A fastify app whose logger writes to `lines`: /quiet logs nothing, /loud logs through request.log at two levels. */
    const appWith = async (lines: string[], childLoggerFactory?: typeof requestLoggerOnFirstUse) => {
      const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk).trimEnd()), cb()) }));
      const child = vi.spyOn(logger, 'child');
      const app = Fastify({
        loggerInstance: logger,
        logController: new LogController({ disableRequestLogging: true }),
        ...(childLoggerFactory ? { childLoggerFactory } : {}),
      });
      app.get('/quiet', async () => ({ ok: true }));
      app.get('/loud', async (request) => {
        request.log.info({ step: 1 }, 'first');
        request.log.debug('below the level');
        request.log.warn('second');
        return { ok: true };
      });
      for (const url of ['/quiet', '/loud', '/quiet']) expect((await app.inject({ url })).statusCode).toBe(200);
      await app.close();
      // The children made for requests (fastify makes others of its own at start).
      return child.mock.calls.filter(([bindings]) => 'reqId' in bindings).length;
    };
    const ours: string[] = [];
    const theirs: string[] = [];
    expect(await appWith(ours, requestLoggerOnFirstUse)).toBe(1);
    expect(await appWith(theirs)).toBe(3);
    const same = (l: string) => l.replace(/"time":\d+/, '"time":0').replace(/"pid":\d+/, '"pid":0');
    expect(ours.map(same)).toEqual(theirs.map(same));
    expect(ours.map((l) => JSON.parse(l))).toMatchObject([
      { reqId: 'req-2', step: 1, msg: 'first' },
      { reqId: 'req-2', level: 40, msg: 'second' },
    ]);
  });

  it('quotes only what needs it, and leaves out a field that is undefined, as pino does', () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) }));
    const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
    const cases = [
      { id: 'req-1', method: 'GET', url: '/plain?q=1', route: '/plain', ip: '10.0.0.7', agent: 'ak_abc' },
      { id: 'req-"2"', method: 'GET', url: '/caf\u00e9/"q"\\x\u2028\t', route: undefined, ip: undefined, agent: undefined },
      { id: 7, method: 'POST', url: '/ctl\u0001', route: '/ctl', ip: '::ffff:10.0.0.8', agent: 'ak_\u00e9' },
    ];
    for (const c of cases) {
      const request = { id: c.id, method: c.method, url: c.url, ip: c.ip, routeOptions: { url: c.route }, caller: { agent: c.agent && { tag: c.agent } } };
      const reply = { statusCode: 200, elapsedTime: 1.25 };
      const ours = requestLine(bindings, request as never, reply as never);
      logger
        .child({ reqId: c.id })
        .info({ method: c.method, path: c.url.split('?')[0], route: c.route, status: 200, ms: 1.3, ip: c.ip, agent: c.agent }, 'request');
      const theirs = lines.pop()!;
      const same = (l: string) => l.replace(/"time":\d+/, '"time":0');
      expect(same(ours)).toBe(same(theirs));
      expect(JSON.parse(ours)).toMatchObject({ path: c.url.split('?')[0] });
    }
  });
});
