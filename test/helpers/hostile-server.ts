// Servers on 127.0.0.1 (port 0) that misbehave the ways a reader must bound: a body without end,
// a redirect to another origin, no answer at all. Each records what it was asked and, for an
// endless body, how much it sent and whether the reader hung up before the test's ceiling.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';

export interface TestServer {
  url: string;
  /** The paths asked for (with their query), in order. */
  asked: string[];
  close(): Promise<void>;
}

/** An HTTP server whose every request `handle` answers. */
export async function testServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> {
  const asked: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    asked.push(req.url ?? '/');
    handle(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What an endless body sent: its bytes, and whether it reached the test's ceiling (the reader never hung up). */
export interface Stream {
  sent: number;
  reachedCeiling: boolean;
}

/** The ceiling an "endless" body stops at, so that a reader without a bound ends the test rather than the machine. */
export const ENDLESS_CEILING = 64 * 1024 * 1024;

/** Streams `fill` bytes (chunked, no length) until the reader hangs up or ENDLESS_CEILING is sent. */
export function endless(res: ServerResponse, stream: Stream, contentType = 'application/json', fill = 0x20): void {
  const chunk = Buffer.alloc(64 * 1024, fill);
  res.writeHead(200, { 'content-type': contentType });
  res.write('{"a":"');
  const pump = () => {
    while (!res.destroyed) {
      if (stream.sent >= ENDLESS_CEILING) {
        stream.reachedCeiling = true;
        res.end('"}');
        return;
      }
      stream.sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  res.on('error', () => undefined);
  pump();
}

/** A TCP server that takes connections and never answers; `asked` resolves when a request's head has arrived. */
export async function silentServer(): Promise<{ url: string; asked: Promise<string>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let heard: (head: string) => void;
  const asked = new Promise<string>((resolve) => (heard = resolve));
  const server = createTcpServer((s) => {
    sockets.add(s);
    let seen = '';
    s.on('data', (d) => {
      seen += d.toString('latin1');
      if (seen.includes('\r\n\r\n')) heard(seen.split('\r\n')[0]);
    });
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
