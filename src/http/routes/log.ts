// PROTOCOL 9.5: the transparency log's checkpoints, proofs and entries, and the event stream
// of appended entries (9.7).
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { leafHash, entryLeaf, parseTilePath, ServiceError, type LogEntry } from '../../core/index.js';
import { cosignedNote, servedCheckpoint } from '../../domain/log/index.js';
import { EventFeed } from '../event-feed.js';
import { Media } from '../../http-kit/media.js';
import { hijackWithHeaders } from '../../http-kit/security-headers.js';
import { entryView } from '../views/records.js';
import { ConsistencyProof, EntryRange, InclusionProof } from './log-schemas.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';

const b64 = (b: Buffer) => b.toString('base64');
const Int = (o: object = {}) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...o });

export const MAX_ENTRIES = 1000;

const CheckpointRoute = {
  schema: {
    operationId: 'checkpoint',
    summary: 'The newest signed checkpoint (C2SP tlog-checkpoint)',
    tags: ['attestations'],
    response: { 200: Media('text/plain', { type: 'string' }, 'A C2SP signed note: origin, size, base64 root hash, a blank line, the signature line.') },
  },
} satisfies RouteOptions;

const TileCheckpointRoute = {
  schema: {
    operationId: 'tileCheckpoint',
    summary: "The checkpoint of the C2SP tlog-tiles API, with the witnesses' cosignatures",
    tags: ['attestations'],
    response: { 200: Media('text/plain', { type: 'string' }, "A C2SP tlog-checkpoint: the log's signature, then each witness's cosignature/v1.") },
  },
} satisfies RouteOptions;

const TileRoute = {
  schema: {
    operationId: 'tile',
    summary: 'A Merkle tile or an entry bundle (C2SP tlog-tiles)',
    tags: ['attestations'],
    params: Type.Object({ '*': Type.String({ maxLength: 120, description: '<L>/<N>[.p/<W>] or entries/<N>[.p/<W>]' }) }),
    response: {
      200: Media('application/octet-stream', { type: 'string', format: 'binary' }, 'A tile: 32-byte hashes; an entry bundle: uint16 length-prefixed leaves.'),
    },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const InclusionRoute = {
  schema: {
    operationId: 'inclusionProof',
    summary: 'An inclusion proof of entry index in the tree of size',
    tags: ['attestations'],
    querystring: Type.Object({ index: Int(), size: Type.Optional(Int({ minimum: 1 })) }, { additionalProperties: false }),
    response: { 200: InclusionProof },
  },
} satisfies RouteOptions;

const ConsistencyRoute = {
  schema: {
    operationId: 'consistencyProof',
    summary: 'A consistency proof between two tree sizes',
    tags: ['attestations'],
    querystring: Type.Object({ old: Int({ minimum: 1 }), new: Type.Optional(Int({ minimum: 1 })) }, { additionalProperties: false }),
    response: { 200: ConsistencyProof },
  },
} satisfies RouteOptions;

const EntriesRoute = {
  schema: {
    operationId: 'logEntries',
    summary: 'Log entries by index',
    tags: ['attestations'],
    querystring: Type.Object({ start: Int(), end: Type.Optional(Int()) }, { additionalProperties: false }),
    response: { 200: EntryRange },
  },
} satisfies RouteOptions;

const EventsRoute = {
  schema: {
    operationId: 'events',
    summary: 'Server-Sent Events of log entries as they are appended',
    tags: ['attestations'],
    response: { 200: Media('text/event-stream', { type: 'string' }, 'id: <seq>, event: entry, data: <the entry as JSON>; resume with Last-Event-ID.') },
    querystring: Type.Object(
      {
        kind: Type.Optional(Type.String({ maxLength: 80 })),
        proposalId: Type.Optional(Type.String({ maxLength: 64 })),
        agent: Type.Optional(Type.String({ maxLength: 64 })),
        from: Type.Optional(Int()),
        follow: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal('true'), Type.Literal('false')])),
      },
      { additionalProperties: false },
    ),
  },
} satisfies RouteOptions;

export async function logRoutes(app: App) {
  const events = new EventStreams(app.akas.appConfig.eventStreams, new EventFeed(app.akas.store, eventOf));
  app.get('/api/log/checkpoint', CheckpointRoute, checkpoint);
  // PROTOCOL 9.8: the log as C2SP tlog-tiles under /log/. Tiles draw a token like every route
  // (PROTOCOL 1.4): immutable, they are made to be cached in front of the node.
  app.get('/log/checkpoint', TileCheckpointRoute, tileCheckpoint);
  app.get('/log/tile/*', TileRoute, tile);
  app.get('/api/log/proof/inclusion', InclusionRoute, inclusion);
  app.get('/api/log/proof/consistency', ConsistencyRoute, consistency);
  app.get('/api/log/entries', EntriesRoute, entries);
  // 9.7: Server-Sent Events of log entries as they are appended.
  app.get('/api/events', EventsRoute, events.serve);
}

/** PROTOCOL 9.5: the newest checkpoint, covering every entry appended before the request. */
async function checkpoint(request: Req<typeof CheckpointRoute.schema>, reply: FastifyReply) {
  const { log, witnesses, appConfig } = request.server.akas;
  // With witnesses, cosigned by them when their round ends within witnessWaitMs (PROTOCOL 9.9).
  const { note } = await servedCheckpoint(log, witnesses, (await log.head()).size, appConfig.witnessWaitMs);
  reply.header('cache-control', 'no-cache').type('text/plain; charset=utf-8');
  return note;
}

/** PROTOCOL 9.8: the tlog-tiles checkpoint. */
async function tileCheckpoint(request: Req<typeof TileCheckpointRoute.schema>, reply: FastifyReply) {
  const { log, witnesses } = request.server.akas;
  // With witnesses: the newest checkpoint whose witness round ended; else the newest.
  const cp = (witnesses ? await log.latestWitnessed() : undefined) ?? (await log.checkpoint());
  // tlog-tiles: "MUST be served ... with `Content-Type: text/plain; charset=utf-8`"; "its
  // headers SHOULD prevent caching beyond a few seconds".
  reply.header('cache-control', 'no-cache').type('text/plain; charset=utf-8');
  return cosignedNote((await log.checkpointAt(cp.size)) ?? cp);
}

/** PROTOCOL 9.8: a hash tile or an entry bundle, full or partial. */
async function tile(request: Req<typeof TileRoute.schema>, reply: FastifyReply) {
  const rest = request.params['*'];
  const ref = parseTilePath(rest);
  const t = ref ? await request.server.akas.tiles.read(ref) : undefined;
  if (!ref || !t) {
    throw new ServiceError('not_found', ref ? `The log holds no tile/${rest} yet.` : `tile/${rest} is not a tile path.`, {
      hint: 'Tiles are tile/<L>/<N>[.p/<W>] and tile/entries/<N>[.p/<W>] (C2SP tlog-tiles); read /log/checkpoint first for the size.',
    });
  }
  // "This endpoint is immutable, so its caching headers SHOULD be long-lived": a tile's
  // bytes at a width never change, partial ones included.
  reply.header('cache-control', 'public, max-age=31536000, immutable').header('vary', 'accept-encoding').type('application/octet-stream');
  // Entry bundles "SHOULD be compressed at the HTTP layer" (gzip, when the client takes it);
  // full hash tiles too.
  const gzip = (ref.kind === 'entries' || ref.width === 256) && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  if (gzip) {
    reply.header('content-encoding', 'gzip');
    return reply.send(t.gzip());
  }
  return reply.send(t.bytes);
}

/** PROTOCOL 9.5: an inclusion proof, against the newest checkpoint when no size is named. */
async function inclusion(request: Req<typeof InclusionRoute.schema>) {
  const { log } = request.server.akas;
  const q = request.query;
  const cp = q.size === undefined ? await log.checkpoint() : undefined;
  const size = q.size ?? cp?.size ?? 0;
  const proof = await log.inclusion(q.index, size);
  const e = await log.entry(q.index);
  return { index: q.index, size, leafHash: b64(leafHash(entryLeaf(e!))), proof: proof.map(b64), ...(cp ? { checkpoint: cosignedNote(cp) } : {}) };
}

/** PROTOCOL 9.5: a consistency proof, to the newest checkpoint when no new size is named. */
async function consistency(request: Req<typeof ConsistencyRoute.schema>) {
  const { log } = request.server.akas;
  const q = request.query;
  const cp = q.new === undefined ? await log.checkpoint() : undefined;
  const to = q.new ?? cp?.size ?? 0;
  return { old: q.old, new: to, proof: (await log.consistency(q.old, to)).map(b64), ...(cp ? { checkpoint: cosignedNote(cp) } : {}) };
}

/** PROTOCOL 9.5: entries start to end, at most MAX_ENTRIES. */
async function entries(request: Req<typeof EntriesRoute.schema>) {
  const { log } = request.server.akas;
  const q = request.query;
  const head = await log.head();
  const end = Math.min(q.end ?? q.start + 100, q.start + MAX_ENTRIES, head.size);
  const list = await log.entries(q.start, end);
  return { start: q.start, end: Math.max(q.start, end), size: head.size, entries: list.map(entryView) };
}

/** One entry as an event of the stream. */
const eventOf = (e: LogEntry) => `id: ${e.seq}\nevent: entry\ndata: ${JSON.stringify(entryView(e))}\n\n`;

/** GET /api/events: each stream within the node's bounds (StreamSlots), fed by one reader of the log (EventFeed). */
class EventStreams {
  private readonly slots: StreamSlots;
  constructor(
    limits: { perClient: number; total: number },
    private readonly feed: EventFeed,
  ) {
    this.slots = new StreamSlots(limits);
  }

  serve = (request: Req<typeof EventsRoute.schema>, reply: FastifyReply) => streamEvents(request, reply, this.slots, this.feed);
}

/**
 * The event streams open at once, per client (an IP, an IPv6 /64) and in all. Each stream is a
 * socket and a reader woken at every append: 3,000 of them, one token each from as many
 * addresses, held 800 MiB and made 50 attestations take 18 s. Past either bound a new stream is
 * a 429 (the client resumes with Last-Event-ID once one of its streams has closed).
 */
export class StreamSlots {
  private readonly byClient = new Map<string, number>();
  private total = 0;
  constructor(private readonly limits: { perClient: number; total: number }) {}

  /** Takes a slot for `client`, answering the function that gives it back (once), or throws 429. */
  take(client: string): () => void {
    const held = this.byClient.get(client) ?? 0;
    if (held >= this.limits.perClient) {
      throw new ServiceError('rate_limited', `This client has ${held} event streams open, the most this node serves to one client (an IP, an IPv6 /64).`, {
        scope: 'event-streams-per-client',
        limit: this.limits.perClient,
        retryAfter: 5,
        hint: 'Close a stream you no longer read; one stream with no filter carries every entry.',
      });
    }
    if (this.total >= this.limits.total) {
      throw new ServiceError('rate_limited', `This node serves ${this.total} event streams, the most it holds open at once.`, {
        scope: 'event-streams-per-node',
        limit: this.limits.total,
        retryAfter: 5,
        hint: 'Retry later, or page the log with GET /api/log/entries.',
      });
    }
    this.byClient.set(client, held + 1);
    this.total += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total -= 1;
      const left = (this.byClient.get(client) ?? 1) - 1;
      if (left > 0) this.byClient.set(client, left);
      else this.byClient.delete(client);
    };
  }
}

/** Bytes an SSE client may fall behind by before it is dropped (it resumes with Last-Event-ID). */
export const SLOW_CONSUMER_BYTES = 1024 * 1024;

function streamEvents(request: Req<typeof EventsRoute.schema>, reply: FastifyReply, streams: StreamSlots, feed: EventFeed) {
  // Before anything is written: a refused stream is an ordinary 429 in the envelope.
  const release = streams.take(request.caller?.ip ?? request.ip);
  const q = request.query;
  const lastId = request.headers['last-event-id'];
  const resumeAfter = typeof lastId === 'string' && /^\d+$/.test(lastId) ? Number(lastId) + 1 : undefined;
  let next = resumeAfter ?? q.from ?? 0;
  const follow = q.follow !== '0' && q.follow !== 'false';
  const matches = (e: LogEntry) => (!q.kind || e.kind === q.kind) && (!q.proposalId || e.body.proposalId === q.proposalId) && (!q.agent || e.agent === q.agent);

  hijackWithHeaders(reply);
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  res.write(': akas log events; resume with Last-Event-ID\n\n');

  let closed = false;
  let pumping: Promise<void> | null = null;
  let more = false;
  const close = (drop = false) => {
    if (closed) return;
    closed = true;
    release();
    unwatch();
    clearInterval(heartbeat);
    // A dropped consumer's backlog is discarded with its socket; a finished stream is flushed.
    if (drop) res.destroy();
    else res.end();
  };
  // Sends every entry from `next` on, in order, exactly once; a watcher wake-up only says
  // "there may be more", so gaps and out-of-order notifications cannot skip or repeat one.
  const pump = async () => {
    if (pumping) return void (more = true);
    pumping = (async () => {
      do {
        more = false;
        for (;;) {
          const batch = await feed.from(next);
          if (batch.length === 0 || closed) break;
          for (const { entry: e, event } of batch) {
            if (e.seq !== next) break; // not yet contiguous (another appender's batch still landing)
            next += 1;
            if (matches(e)) res.write(event);
          }
          // A consumer that does not read keeps the node's memory: it is dropped instead.
          if (res.writableLength > SLOW_CONSUMER_BYTES) return close(true);
          if (batch[batch.length - 1].entry.seq !== next - 1) break;
        }
      } while (more && !closed);
    })().finally(() => (pumping = null));
    await pumping;
  };
  const wake = () => void pump().catch(() => close(true));
  const unwatch = feed.subscribe(wake);
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  heartbeat.unref();
  request.raw.on('close', () => close(true));
  // The response's own close as well (its socket gone, whenever that was): a slot is never kept by a stream no one reads.
  res.on('close', () => close(true));
  if (res.destroyed) close(true);
  void pump()
    .then(() => {
      if (!follow) close();
    })
    .catch(() => close(true));
}
