// Idempotency-Key of PROTOCOL 1.5 and 1.6: the same key from the same caller on the same surface
// within 24 hours gets the first response back verbatim, with no state change.
//
// Some cached responses hold secrets shown once (register and recover return an api key,
// a private key and a recovery token), and secrets never reach disk. So the cache stores
// every response encrypted (AES-256-GCM) under a key derived from the node's HMAC key and
// the caller's Idempotency-Key, which is itself never stored: only the caller who holds the
// Idempotency-Key can make the node decrypt its entry, and the bytes at rest reveal nothing.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DAY_MS, ServiceError, type Clock } from '../core/index.js';
import { space, type Store } from '../store/index.js';

interface CachedResponse {
  status: number;
  contentType: string;
  /** Replayed too: register and recover answers say no-store. */
  cacheControl?: string;
  /** sha256 of method, URL and body: the same key on a different request is a 409, not a replay. */
  fingerprint: string;
  iv: string;
  tag: string;
  body: string;
  storedAt: number;
}

const IdempotencyCache = space<CachedResponse>('idempotency');
const TTL_MS = DAY_MS;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { id: string; key: Buffer; fingerprint: string; replay: boolean; done: () => void };
  }
}

export interface IdempotencyOptions {
  store: Store;
  clock: Clock;
  hmacKey: Buffer;
}

/** The cache identity of a caller (PROTOCOL 1.6): the api key (optionally + tenant), else the IP (optionally + tenant + hint). */
export function idempotencyCaller(request: FastifyRequest): string {
  const tenant = header(request, 'x-proxy-tenant-id');
  // Either opt-in isolates the tenant (failing safe: tenants behind one proxy IP must never
  // replay each other's register or recover answers, which hold secrets). Only the opt-in
  // that fits the caller silences the Warning 299 (tenantMisconfigured), as PROTOCOL 1.6 says.
  const isolate = tenant !== undefined && (header(request, 'x-idempotency-tenant-suffix-apikey') === '1' || header(request, 'x-idempotency-inherit-tenant-id') === '1');
  const keyHash = request.caller?.agent?.apiKeyHash;
  if (keyHash) return isolate ? `key:${keyHash}|tenant:${tenant}` : `key:${keyHash}`;
  if (isolate) return `ip:${request.ip}|tenant:${tenant}|hint:${header(request, 'x-idempotency-caller-hint') ?? ''}`;
  return `ip:${request.ip}`;
}

/**
 * True when X-Proxy-Tenant-Id came without the opt-in that fits the caller (PROTOCOL 1.6):
 * X-Idempotency-Tenant-Suffix-Apikey for a Bearer caller, X-Idempotency-Inherit-Tenant-Id
 * for an anonymous one. The answer then carries the Warning 299 configuration alarm.
 */
export function tenantMisconfigured(request: FastifyRequest): boolean {
  if (header(request, 'x-proxy-tenant-id') === undefined) return false;
  return request.caller?.agent ? header(request, 'x-idempotency-tenant-suffix-apikey') !== '1' : header(request, 'x-idempotency-inherit-tenant-id') !== '1';
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function registerIdempotency(app: FastifyInstance, opts: IdempotencyOptions) {
  const inFlight = new Map<string, Promise<void>>();
  const derive = (label: string, material: string) => createHmac('sha256', opts.hmacKey).update(`${label}\u0000${material}`).digest();

  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const surface = request.routeOptions.config?.idempotency;
    if (!surface) return;
    const idemKey = header(request, 'idempotency-key');
    if (idemKey === undefined) return;
    if (idemKey.length === 0 || idemKey.length > 255) {
      throw new ServiceError('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 characters.', { field: 'Idempotency-Key' });
    }
    const material = `${surface}\u0000${idempotencyCaller(request)}\u0000${idemKey}`;
    const id = derive('idempotency-id', material).toString('hex');
    const key = derive('idempotency-enc', material);

    const fingerprint = createHash('sha256')
      .update(`${request.method} ${request.url}\u0000`)
      .update(request.body === undefined ? '' : JSON.stringify(request.body))
      .digest('hex');

    // A concurrent request with the same key waits for the first and then replays it. The
    // slot is claimed with no await between the check and the claim.
    while (inFlight.has(id)) await inFlight.get(id);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    inFlight.set(id, mine);
    request.idempotency = {
      id,
      key,
      fingerprint,
      replay: false,
      done: () => {
        if (inFlight.get(id) === mine) inFlight.delete(id);
        done();
      },
    };
    const cached = await opts.store.get(IdempotencyCache, id);
    if (cached && cached.storedAt + TTL_MS > opts.clock.now()) {
      request.idempotency.replay = true;
      if (cached.fingerprint !== fingerprint) {
        throw new ServiceError('idempotency_conflict', 'This Idempotency-Key was already used, within 24 hours, for a different request.', {
          field: 'Idempotency-Key',
          hint: 'Use a fresh key for a new request; resend the same request to get the first answer back.',
        });
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(cached.iv, 'base64'));
      decipher.setAuthTag(Buffer.from(cached.tag, 'base64'));
      const body = Buffer.concat([decipher.update(Buffer.from(cached.body, 'base64')), decipher.final()]);
      reply.header('idempotent-replayed', 'true');
      if (cached.cacheControl) reply.header('cache-control', cached.cacheControl);
      reply.code(cached.status).type(cached.contentType);
      return reply.send(body);
    }
  };

  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const idem = request.idempotency;
    if (!idem || idem.replay) return payload;
    const status = reply.statusCode;
    // Only answers that did something are replayed; a refusal changed nothing, so the same
    // request is simply evaluated again (after a top-up, a calibration, a fixed signature).
    if (status < 200 || status >= 300) return payload;
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : null;
    if (!bytes) return payload;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', idem.key, iv);
    const body = Buffer.concat([cipher.update(bytes), cipher.final()]);
    const entry: CachedResponse = {
      status,
      contentType: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'),
      ...(reply.getHeader('cache-control') ? { cacheControl: String(reply.getHeader('cache-control')) } : {}),
      fingerprint: idem.fingerprint,
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      body: body.toString('base64'),
      storedAt: opts.clock.now(),
    };
    await opts.store.transact([`idempotency:${idem.id}`], async (tx) => tx.put(IdempotencyCache, idem.id, entry));
    return payload;
  };

  const release = async (request: FastifyRequest) => request.idempotency?.done();

  // Only the write surfaces that take the header pay for these hooks (not GET /me).
  const list = <T>(h: T | T[] | undefined): T[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotency) return;
    route.preHandler = [...list(route.preHandler), preHandler] as typeof route.preHandler;
    route.onSend = [...list(route.onSend), onSend] as typeof route.onSend;
    route.onResponse = [...list(route.onResponse), release] as typeof route.onResponse;
    route.onRequestAbort = [...list(route.onRequestAbort), release] as typeof route.onRequestAbort;
  });

  /** Drops entries older than 24 h (called at start and hourly). */
  return async function sweep() {
    const now = opts.clock.now();
    const expired: string[] = [];
    for await (const [id, e] of opts.store.iterate(IdempotencyCache)) if (e.storedAt + TTL_MS <= now) expired.push(id);
    for (let i = 0; i < expired.length; i += 500) {
      const chunk = expired.slice(i, i + 500);
      await opts.store.transact(
        chunk.map((id) => `idempotency:${id}`),
        async (tx) => {
          // Re-read under the lock: an entry rewritten since the scan stays.
          for (const id of chunk) {
            const e = await tx.get(IdempotencyCache, id);
            if (e && e.storedAt + TTL_MS <= opts.clock.now()) tx.del(IdempotencyCache, id);
          }
        },
        { durable: false },
      );
    }
  };
}
