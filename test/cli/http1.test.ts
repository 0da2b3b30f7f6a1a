// cli/http1.ts: the CLI's HTTP/1.1 exchange over a TCP socket, against a raw server on
// 127.0.0.1 that answers exactly the bytes a test gives it, split as the test wants.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeChunked, formatRequest, http1Request, parseResponse } from '../../cli/http1.js';

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
