// Event streams (PROTOCOL 9.7) under many readers: the time to append 50 log entries and have
// every one of 500 open streams (the node's cap) receive them. Its floor is the sockets: 500
// streams x 50 entries is 25,000 writes, one per stream per entry since each entry goes out as
// it lands. So the baseline, measured in the same run, is a bare node:http server writing the
// same 50 events to 500 connections, one event per turn of the event loop; and, for scale, the
// same appends with no stream open. The streams share one reader and one serialised text per
// entry (src/http/event-feed.ts); before that, each stream read the store and serialised each
// entry itself (3.1 s here, against 0.6 s after). Target: within 2.5x the bare writes.
import { createServer, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { enqueueLogEntry } from '../src/domain/log/index.js';
import { strategiesFor } from '../src/node/strategies.js';
import { createApp } from '../src/http/app.js';
import { openTempStore } from '../src/store/index.js';
import { benchKeys, header, line } from './lib.js';

const STREAMS = 500;
const APPENDS = 50;
const TARGET = 2.5;

/** A raw SSE connection from its own client address (X-Forwarded-For, one per stream), counting the entries it receives. */
function stream(port: number, i: number, path = '/api/events?follow=1&from=0'): { socket: Socket; entries: () => number; ready: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  let entries = 0;
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    text += d;
    if (text.includes('resume with Last-Event-ID')) ready();
    // Count whole events and keep only the unfinished tail.
    const parts = text.split('\n\n');
    text = parts.pop() ?? '';
    entries += parts.filter((p) => p.includes('event: entry')).length;
  });
  socket.on('error', () => undefined);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: bench\r\nX-Forwarded-For: 10.${(i >> 8) & 255}.${i & 255}.1\r\n\r\n`);
  return { socket, entries: () => entries, ready: isReady };
}

async function appendAndDeliver(
  app: Awaited<ReturnType<typeof createApp>>,
  store: Awaited<ReturnType<typeof openTempStore>>['store'],
  streams: Array<ReturnType<typeof stream>>,
  from: number,
) {
  const start = performance.now();
  for (let i = 0; i < APPENDS; i++) {
    const id = await store.transact([`bench:${from + i}`], async (tx) =>
      enqueueLogEntry(tx, app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { i: from + i } }),
    );
    await app.akas.log.appended(id);
  }
  const want = from + APPENDS;
  while (streams.some((s) => s.entries() < want)) await new Promise((r) => setTimeout(r, 2));
  return performance.now() - start;
}

/** The floor: a bare node:http server writing 50 events of the node's size to 500 connections, one event per turn of the loop. */
async function bareWrites(eventText: string): Promise<number> {
  const open: ServerResponse[] = [];
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write(': akas log events; resume with Last-Event-ID\n\n');
    open.push(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const streams = Array.from({ length: STREAMS }, (_, i) => stream(port, i, '/bare'));
  await Promise.all(streams.map((s) => s.ready));
  const start = performance.now();
  for (let i = 0; i < APPENDS; i++) {
    for (const res of open) res.write(eventText);
    await new Promise((r) => setImmediate(r));
  }
  while (streams.some((s) => s.entries() < APPENDS)) await new Promise((r) => setTimeout(r, 2));
  const ms = performance.now() - start;
  for (const s of streams) s.socket.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  return ms;
}

export async function run() {
  header(`events: ${APPENDS} log appends delivered to ${STREAMS} open event streams, against bare writes of the same events to as many connections`);
  const { store, dispose } = await openTempStore();
  const app = await createApp({
    store,
    strategies: strategiesFor(store),
    keys: benchKeys(),
    config: { trustProxy: true, rateLimit: { burst: 1e9, refillPerSecond: 1e9 } },
    logger: false,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  try {
    await appendAndDeliver(app, store, [], 0); // warm-up
    const alone = await appendAndDeliver(app, store, [], APPENDS);
    const streams = Array.from({ length: STREAMS }, (_, i) => stream(port, i));
    await Promise.all(streams.map((s) => s.ready));
    // Every stream first receives the backlog (from=0): wait for it, then time the new appends.
    while (streams.some((s) => s.entries() < 2 * APPENDS)) await new Promise((r) => setTimeout(r, 5));
    const rss = process.memoryUsage.rss();
    const shared = await appendAndDeliver(app, store, streams, 2 * APPENDS);
    for (const s of streams) s.socket.destroy();
    const sample = `id: 123\nevent: entry\ndata: ${JSON.stringify((await app.inject({ url: '/api/log/entries?start=0&end=1' })).json().entries[0])}\n\n`;
    const bare = await bareWrites(sample);
    const ratio = shared / bare;
    line(`${APPENDS} appends, no stream open`, `${alone.toFixed(0)} ms`);
    line(`bare: ${APPENDS} events written to ${STREAMS} connections (the floor)`, `${bare.toFixed(0)} ms`);
    line(`${APPENDS} appends, each delivered to ${STREAMS} streams`, `${shared.toFixed(0)} ms`, ratio, `<= ${TARGET} x bare`, ratio <= TARGET);
    line('resident memory with the streams open', `${(rss / 1048576).toFixed(0)} MiB`);
  } finally {
    await app.close();
    await dispose();
  }
}
