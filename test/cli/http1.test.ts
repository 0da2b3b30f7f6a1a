// cli/kit/http1.ts: the CLI's HTTP/1.1 exchange over a TCP socket, against a raw server on
// 127.0.0.1 that answers exactly the bytes a test gives it, split as the test wants; and its
// bounded reads (boundedGet) against servers that misbehave (test/helpers/hostile-server.ts).
import { createServer, type Server, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { boundedGet, decodeChunked, type FetchCaps, formatRequest, http1Request, MAX_REDIRECTS, parseResponse } from '../../cli/kit/http1.js';
import { endless, silentServer, type Stream, type TestServer, testServer } from '../helpers/hostile-server.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** A server that records the request and answers with `parts`, then closes unless keepOpen. */
async function answering(parts: Array<string | Buffer>, keepOpen = false): Promise<{ url: URL; request: () => string }> {
  let seen = '';
  server = createServer((socket: Socket) => {
    socket.on('data', async (d) => {
      seen += d.toString('latin1');
      if (!seen.includes('\r\n\r\n')) return;
      for (const p of parts) {
        socket.write(p);
        await new Promise((r) => setTimeout(r, 5));
      }
      if (!keepOpen) socket.end();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return { url: new URL(`http://127.0.0.1:${port}/api/x?y=1`), request: () => seen };
}

describe('http1Request', () => {
  it('sends one request with Host, Connection: close and the body length, and reads a Content-Length answer', async () => {
    const s = await answering(['HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n', '{"ok":true}']);
    const r = await http1Request(s.url, 'POST', { accept: 'application/json', 'content-type': 'application/json' }, '{"a":"é"}');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.body.toString()).toBe('{"ok":true}');
    expect(s.request()).toBe(
      (
        `POST /api/x?y=1 HTTP/1.1\r\nHost: ${s.url.host}\r\nConnection: close\r\n` +
        'accept: application/json\r\ncontent-type: application/json\r\nContent-Length: 10\r\n\r\n{"a":"é"}'
      ).replace('é', '\xc3\xa9'),
    );
  });

  it('answers as soon as a Content-Length body is in, even when the server keeps the connection', async () => {
    const s = await answering(['HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}'], true);
    const r = await http1Request(s.url, 'GET', {});
    expect([r.status, r.body.toString()]).toEqual([404, '{}']);
  });

  it('decodes a chunked answer split across packets', async () => {
    const s = await answering(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel', 'lo\r\n6;ext=1\r\n world\r\n0\r\n\r\n']);
    expect((await http1Request(s.url, 'GET', {})).body.toString()).toBe('hello world');
  });

  it('skips an interim 1xx answer and reads a body framed by the close', async () => {
    const s = await answering(['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nall of it']);
    const r = await http1Request(s.url, 'GET', {});
    expect([r.status, r.body.toString()]).toEqual([200, 'all of it']);
  });

  it('refuses a truncated answer, and rejects with the socket error when nothing listens', async () => {
    const s = await answering(['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort']);
    await expect(http1Request(s.url, 'GET', {})).rejects.toThrow(/before the whole body/);
    const port = (server!.address() as { port: number }).port;
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    await expect(http1Request(new URL(`http://127.0.0.1:${port}/`), 'GET', {})).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('the request and answer formats', () => {
  it('refuses a header value that could split the request', () => {
    expect(() => formatRequest(new URL('http://h/'), 'GET', { authorization: 'Bearer x\r\nX-Evil: 1' })).toThrow(TypeError);
    expect(() => formatRequest(new URL('http://h/'), 'GET', { 'bad name': 'x' })).toThrow(TypeError);
    expect(() => formatRequest(new URL('http://h/'), 'G ET', {})).toThrow(TypeError);
  });

  it('joins repeated header fields and has no body for 204 and 304', () => {
    const r = parseResponse(Buffer.from('HTTP/1.1 304 Not Modified\r\nVary: a\r\nvary: b\r\n\r\n'));
    expect([r.status, r.headers.get('vary'), r.body.length]).toEqual([304, 'a, b', 0]);
  });

  it('refuses malformed heads and chunk framing', () => {
    expect(() => parseResponse(Buffer.from('HTTP/2 200\r\n\r\n'))).toThrow();
    expect(() => parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nno-colon\r\n\r\n'))).toThrow();
    expect(() => parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'))).toThrow();
    expect(() => decodeChunked(Buffer.from('zz\r\n'))).toThrow();
    expect(() => decodeChunked(Buffer.from('5\r\nabc'))).toThrow();
    expect(() => decodeChunked(Buffer.from('3\r\nabcXX0\r\n\r\n'))).toThrow();
  });
});

describe('boundedGet', () => {
  const caps: FetchCaps = { maxBytes: 1024 * 1024, headersMs: 10_000, totalMs: 20_000 };
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  const serve = async (handle: Parameters<typeof testServer>[0]) => {
    const s = await testServer(handle);
    servers.push(s);
    return s;
  };

  it('refuses a body over its cap, hanging up long before an endless stream ends', async () => {
    const stream: Stream = { sent: 0, reachedCeiling: false };
    const s = await serve((_req, res) => endless(res, stream));
    await expect(boundedGet(`${s.url}/list`, caps)).rejects.toMatchObject({ name: 'FetchError', code: 'too_large' });
    expect(stream.reachedCeiling).toBe(false);
  });

  it('refuses a gzip body that inflates past its cap', async () => {
    const bomb = gzipSync(Buffer.alloc(caps.maxBytes + 1));
    const s = await serve((_req, res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end(bomb));
    await expect(boundedGet(`${s.url}/tile`, caps, { 'accept-encoding': 'gzip' })).rejects.toMatchObject({ code: 'too_large' });
  });

  it('follows redirects within the origin, at most MAX_REDIRECTS, and none to another origin (asking nothing of it)', async () => {
    const other = await serve((_req, res) => res.end('elsewhere'));
    const s = await serve((req, res) => {
      const n = Number(/^\/hop\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
      if (req.url === '/away') return void res.writeHead(307, { location: `${other.url}/x` }).end();
      if (n > 0) return void res.writeHead(302, { location: `/hop/${n - 1}` }).end();
      res.end('here');
    });
    const r = await boundedGet(`${s.url}/hop/${MAX_REDIRECTS}`, caps);
    expect([r.status, r.body.toString(), r.url]).toEqual([200, 'here', `${s.url}/hop/0`]);
    await expect(boundedGet(`${s.url}/hop/${MAX_REDIRECTS + 1}`, caps)).rejects.toMatchObject({ code: 'too_many_redirects' });
    await expect(boundedGet(`${s.url}/away`, caps)).rejects.toMatchObject({ code: 'redirect_refused' });
    expect(other.asked).toEqual([]);
  });

  it('gives up on a server that never answers once its time cap passes', async () => {
    const silent = await silentServer();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const read = boundedGet(`${silent.url}/checkpoint`, caps);
      const settled = read.catch((e: unknown) => e);
      await silent.asked;
      await vi.advanceTimersByTimeAsync(caps.headersMs);
      expect(await settled).toMatchObject({ name: 'FetchError', code: 'timeout', url: `${silent.url}/checkpoint` });
    } finally {
      vi.useRealTimers();
      await silent.close();
    }
  });

  it('gives up on a server that sends its head and then its body for ever slowly, once the whole-answer cap passes', async () => {
    let cut = false;
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      res.on('close', () => (cut = true));
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const settled = boundedGet(`${s.url}/slow`, caps).catch((e: unknown) => e);
      await vi.waitFor(() => expect(s.asked).toHaveLength(1), { interval: 1 });
      await vi.advanceTimersByTimeAsync(caps.totalMs);
      expect(await settled).toMatchObject({ code: 'timeout' });
    } finally {
      vi.useRealTimers();
    }
    await vi.waitFor(() => expect(cut).toBe(true));
  });
});
