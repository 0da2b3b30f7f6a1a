// PROTOCOL 5: the content-addressable store. POST /api/cas takes raw bytes (streamed: hashed
// while they arrive, never parsed, never held whole in memory); GET /api/cas/{hex} serves
// them back, checked against their hash on every read, with immutable caching, ETag and
// Range support; ?head=1 answers whether a blob exists without touching its bytes.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { ServiceError } from '../../core/index.js';
import { blobInfo, CAS_MAX_BYTES, openCas, openVerifiedBlob, parseSha256, putBlob, tooLarge } from '../../domain/cas/cas.js';
import { casQuotaError, casQuotaOf, releaseCasQuota, reserveCasQuota, type CasQuota } from '../../domain/cas/quota.js';
import { Closed, Hex64 } from '../schemas.js';
import { Media } from '../../http-kit/media.js';
import { originOf } from '../../http-kit/urls.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';

const Stored = Closed(
  { sha256: Hex64, bytes: Type.Integer(), deduplicated: Type.Boolean(), fetchUrl: Type.String(), note: Type.String() },
  'Stored (or already there), durable before this answer (PROTOCOL 5.1).',
);
const Head = Closed({ exists: Type.Boolean(), bytes: Type.Integer(), fetchUrl: Type.String() }, 'Whether the blob is stored (?head=1; PROTOCOL 5.2).');
const Bytes = { type: 'string', format: 'binary' };

const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * After an upload is refused, the rest of its body is read and dropped (never buffered) so
 * the client gets the answer and the connection stays usable; a client that keeps sending
 * past this much more is cut off.
 */
const DISCARD_LIMIT = 16 * 1024 * 1024;

const Params = Type.Object({ hex: Type.String({ maxLength: 200, description: 'The sha256 of the bytes, 64 hex characters (either case).' }) });
const Query = Type.Object({
  head: Type.Optional(Type.String({ maxLength: 10, description: '1 or true: answer {exists, bytes, fetchUrl} instead of the bytes.' })),
});

const fetchUrlOf = (request: FastifyRequest, sha256: string) => `${originOf(request)}/api/cas/${sha256}`;

function declaredLength(request: FastifyRequest): number | undefined {
  const h = request.headers['content-length'];
  if (h === undefined || !/^\d+$/.test(h)) return undefined;
  return Number(h);
}

/** Reads and drops what is left of a refused upload, up to DISCARD_LIMIT. */
function discardRest(payload: Readable) {
  if (payload.readableEnded || payload.destroyed) return;
  let dropped = 0;
  payload.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_LIMIT) payload.destroy();
  });
  payload.on('error', () => undefined);
  payload.resume();
}

/** True when If-None-Match names this blob's ETag (or is *). */
function matchesEtag(header: string | undefined, sha256: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t
      .trim()
      .replace(/^W\//, '')
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    return tag === '*' || tag === sha256;
  });
}

type RangeAnswer = { start: number; end: number } | 'unsatisfiable' | undefined;

/**
 * One byte range of RFC 9110 (bytes=a-b, bytes=a-, bytes=-n). Anything else (several ranges,
 * other units, bad syntax) is ignored and the whole blob is served, as the RFC allows.
 */
function parseRange(header: string | undefined, size: number): RangeAnswer {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  if (end < start) return undefined;
  return { start, end };
}

function blobHeaders(reply: FastifyReply, sha256: string) {
  reply.header('etag', `"${sha256}"`);
  reply.header('x-cas-sha256', sha256);
  reply.header('cache-control', IMMUTABLE);
  reply.header('accept-ranges', 'bytes');
}

const PutRoute = {
  schema: {
    operationId: 'casPut',
    summary: 'Store bytes under their sha256',
    tags: ['content-store'],
    body: {
      content: { 'application/octet-stream': { schema: { ...Bytes, description: 'Raw bytes of any type, 1 byte to 10 MiB; hashed, never parsed.' } } },
    },
    response: { 200: Stored },
  },
  // Optional Bearer: a calibrated agent uploads against its own, larger daily quota.
  config: { auth: 'optional', errors: ['empty_body', 'blob_too_large'] },
  bodyLimit: CAS_MAX_BYTES + 1,
  // A malformed Content-Type would be refused (415) before any parser runs; since the
  // type is never used, every upload is treated as application/octet-stream.
  onRequest: async (request: FastifyRequest) => {
    request.raw.headers['content-type'] = 'application/octet-stream';
  },
} satisfies RouteOptions;

const GetRoute = {
  schema: {
    operationId: 'casGet',
    summary: 'Fetch bytes by their sha256 (or ?head=1: whether they are stored)',
    tags: ['content-store'],
    params: Params,
    querystring: Query,
    response: {
      200: {
        description: 'The bytes (application/octet-stream, X-CAS-SHA256, immutable caching), or with ?head=1 the JSON of Head.',
        content: { 'application/octet-stream': { schema: Bytes }, 'application/json': { schema: Head } },
      },
      206: Media('application/octet-stream', Bytes, 'One byte range of the blob (Range: bytes=a-b).'),
      304: { description: 'Not modified (If-None-Match names this blob).', type: 'null' },
    },
  },
  config: { errors: ['invalid_sha256', 'not_found', 'integrity_violation', 'range_not_satisfiable'] },
} satisfies RouteOptions;

export async function casRoutes(app: App) {
  // At start, not at the first upload: temp files a crash left behind are removed now.
  await openCas(app.akas);

  // In this plugin's scope only (fastify encapsulation), every body is handed through as
  // the raw byte stream, whatever its content type: the bytes are hashed, never parsed.
  // fastify's bodyLimit does not apply to a stream handed through; the domain counts bytes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  app.post('/api/cas', PutRoute, upload);
  app.get('/api/cas/:hex', GetRoute, download);
}

/**
 * PROTOCOL 5.1: bytes stored under their sha256, within the caller's daily byte quota, which is
 * reserved before a byte is read; what an upload does not use (all of it, when refused) is
 * handed back.
 */
async function upload(request: Req<typeof PutRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  // The raw byte stream (the parser above), read by 'data' events (putBlob); a refusal leaves
  // it undestroyed, so the answer can still go out on this connection.
  const payload = request.body instanceof Readable ? request.body : undefined;
  const declared = declaredLength(request);
  const quota = casQuotaOf(ctx, request.caller.ip, request.caller.agent);
  const { reserved, usedBefore, at } = await reserveUpload(request, quota, declared, payload);
  let result;
  try {
    result = await putBlob(ctx, payload ?? (async function* () {})(), {
      declaredBytes: declared,
      quota: { bytes: reserved, error: () => casQuotaError(quota, usedBefore, reserved + 1, at) },
    });
  } catch (e) {
    await releaseCasQuota(ctx, quota, reserved, at).catch(() => undefined);
    if (request.raw.destroyed && !request.raw.complete) {
      // The client hung up mid-upload (its temp file is already gone): nobody to answer,
      // and nothing went wrong on this side, so no error is logged.
      request.log.info({ path: '/api/cas' }, 'upload abandoned by the client');
      reply.hijack();
      return;
    }
    if (payload) discardRest(payload);
    throw e;
  }
  if (reserved > result.bytes) await releaseCasQuota(ctx, quota, reserved - result.bytes, at);
  return storedView(result, fetchUrlOf(request, result.sha256));
}

/** The upload's bytes reserved against the quota (the declared length, else what is left); a refusal drops the rest of the body. */
async function reserveUpload(request: FastifyRequest, quota: CasQuota, declared: number | undefined, payload: Readable | undefined) {
  try {
    if (declared !== undefined && declared > CAS_MAX_BYTES) throw tooLarge();
    return await reserveCasQuota(request.server.akas, quota, declared, CAS_MAX_BYTES);
  } catch (e) {
    if (payload) discardRest(payload);
    throw e;
  }
}

/** The answer of an upload: where to fetch it, and whether it was new, already there, or a repair. */
function storedView({ sha256, bytes, deduplicated, repaired }: { sha256: string; bytes: number; deduplicated: boolean; repaired: boolean }, fetchUrl: string) {
  const note = deduplicated
    ? 'These bytes were already stored; nothing was written. The blob is immutable: GET fetchUrl serves it, re-checked against sha256 on every read.'
    : repaired
      ? 'The stored copy of these bytes had failed its hash check; it was replaced by this upload. GET fetchUrl serves it, re-checked ' +
        'against sha256 on every read.'
      : 'Stored. The blob is immutable: GET fetchUrl serves it with immutable caching, re-checked against sha256 on every read.';
  return { sha256, bytes, deduplicated, fetchUrl, note };
}

/** PROTOCOL 5.2: the bytes, checked against their name on every read; ?head=1, whether they are stored; ETag and one Range. */
async function download(request: Req<typeof GetRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  const { head } = request.query;
  const sha256 = parseSha256(request.params.hex);

  if (head === '1' || head === 'true') {
    // Existence can change (a first upload), so this answer is not cached.
    const info = await blobInfo(ctx, sha256);
    reply.header('cache-control', 'no-cache');
    return { exists: info.exists, bytes: info.bytes, fetchUrl: fetchUrlOf(request, sha256) };
  }

  // The ETag is the content's own hash: a cached copy under it is right forever.
  if (matchesEtag(request.headers['if-none-match'], sha256) && (await blobInfo(ctx, sha256)).exists) {
    blobHeaders(reply, sha256);
    return reply.code(304).send();
  }

  const blob = await openVerifiedBlob(ctx, sha256);
  const ifRange = request.headers['if-range'];
  const range = ifRange === undefined || matchesEtag(String(ifRange), sha256) ? parseRange(request.headers.range, blob.bytes) : undefined;
  if (range === 'unsatisfiable') {
    await blob.close();
    reply.header('content-range', `bytes */${blob.bytes}`);
    throw new ServiceError('range_not_satisfiable', `The blob has ${blob.bytes} bytes; the requested range lies outside it.`, {
      hint: 'Ask for bytes=START-END with START below the blob size (GET ?head=1 tells the size).',
    });
  }
  blobHeaders(reply, sha256);
  reply.type('application/octet-stream');
  // Never rendered by a browser as anything but bytes.
  reply.header('x-content-type-options', 'nosniff');
  if (range) {
    reply.code(206);
    reply.header('content-range', `bytes ${range.start}-${range.end}/${blob.bytes}`);
    reply.header('content-length', String(range.end - range.start + 1));
    return reply.send(blob.body(range.start, range.end));
  }
  reply.header('content-length', String(blob.bytes));
  return reply.send(blob.body());
}
