// Idempotency-Key of PROTOCOL 1.5 and 1.6: the same key from the same caller on the same surface
// within 24 hours gets the first response back verbatim, with no state change.
//
// Concurrent requests with one key run once: a second request waits for the first and then
// replays its answer. Within a process an in-memory slot orders them; on a store that several
// processes share (Strategies.idempotency `claims`, chosen where the node is assembled), the
// first also puts a claim in the store (under the entry's lock), which the others wait on until
// the answer replaces it, or until the claim is dropped (a refusal, an aborted request) or goes
// stale (its process died: claims are refreshed while the request runs).
//
// An answer is kept whatever its storage does. The answer's own write is on disk before it is
// sent (a 2xx is durable); its record here is written after, in a transaction of its own. When
// that write fails (storage_unavailable: a database restarting, a disk full), the answer is held
// in this process and written again until it lands: a replay to this process is answered from
// memory meanwhile, and the claim stays this request's (refreshed), so a replay to another
// process waits for the record instead of running the request again (which made a second
// proposal in the chaos harness: seed 5 of test/chaos/regressions.json).
//
// Some cached responses hold secrets shown once (register and recover return an api key,
// a private key and a recovery token), and secrets never reach disk. So the cache stores
// every response encrypted (AES-256-GCM) under a key derived from the node's HMAC key and
// the caller's Idempotency-Key, which is itself never stored: only the caller who holds the
// Idempotency-Key can make the node decrypt its entry, and the bytes at rest reveal nothing.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DAY_MS, ServiceError, type Clock } from '../core/index.js';
import type { Strategies } from '../domain/context.js';
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

/** A request with this key is running in some process (with claims only). */
interface Claim {
  claim: string;
  /** When the claim was made or last refreshed. */
  storedAt: number;
}

type Entry = CachedResponse | Claim;
const isClaim = (e: Entry): e is Claim => 'claim' in e;

const IdempotencyCache = space<Entry>('idempotency');
const TTL_MS = DAY_MS;
/** A claim not refreshed for this long belongs to a process that died; another may take it. */
export const CLAIM_STALE_MS = 10_000;
const CLAIM_REFRESH_MS = 3_000;
/** How long a request waiting on another process's claim sleeps between looks (a notification wakes it sooner). */
const CLAIM_POLL_MS = 250;
/** How often an answer whose record could not be written is written again (its claim is refreshed meanwhile). */
export const UNSTORED_RETRY_MS = 100;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { id: string; key: Buffer; fingerprint: string; replay: boolean; stored?: boolean; held?: boolean; done: () => void };
  }
  interface FastifyContextConfig {
    /**
     * The answer holds secrets shown once (register, recover: PROTOCOL 1.5). A replay is then
     * bound to the request body as well as to the caller: another body under the same key is
     * another request. `bodyProof` names the body field that only the first client can hold
     * (register: `publicKey`, sent with its proof of possession); a replay to a body without it
     * (two clients behind one address sending the same body-less request) is refused, never
     * answered with the first one's secrets. Without bodyProof the body itself is the secret
     * (recover: the recovery token or the claim secret).
     */
    idempotentSecrets?: { bodyProof?: string };
  }
}

export interface IdempotencyOptions {
  store: Store;
  clock: Clock;
  /** Whether requests of other processes are held back too, by claims in the store (Strategies.idempotency). */
  holdBack: Strategies['idempotency'];
  /** The node's current HMAC key (read at each request: the keys may be reloaded while running). */
  hmacKey: () => Buffer;
}

/** The cache identity of a caller (PROTOCOL 1.6): the api key (optionally + tenant), else the IP (optionally + tenant + hint). */
export function idempotencyCaller(request: FastifyRequest): string {
  const tenant = header(request, 'x-proxy-tenant-id');
  // Either opt-in isolates the tenant (failing safe: tenants behind one proxy IP must never
  // replay each other's register or recover answers, which hold secrets). Only the opt-in
  // that fits the caller silences the Warning 299 (tenantMisconfigured), as PROTOCOL 1.6 says.
  const isolate =
    tenant !== undefined && (header(request, 'x-idempotency-tenant-suffix-apikey') === '1' || header(request, 'x-idempotency-inherit-tenant-id') === '1');
  const keyHash = request.caller?.agent?.apiKeyHash;
  if (keyHash) return isolate ? `key:${keyHash}|tenant:${tenant}` : `key:${keyHash}`;
  if (isolate) return `ip:${request.caller.ip}|tenant:${tenant}|hint:${header(request, 'x-idempotency-caller-hint') ?? ''}`;
  return `ip:${request.caller.ip}`;
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

/**
 * The first answer to this key, sent again: to the same request only (its fingerprint), and, when
 * it holds secrets bound to the agent's own key, only to a request that carries that key too.
 */
function replay(request: FastifyRequest, reply: FastifyReply, cached: CachedResponse, asked: { key: Buffer; fingerprint: string; proof?: string }) {
  const { key, fingerprint, proof } = asked;
  if (cached.fingerprint !== fingerprint) {
    throw new ServiceError('idempotency_conflict', 'This Idempotency-Key was already used, within 24 hours, for a different request.', {
      field: 'Idempotency-Key',
      hint: 'Use a fresh key for a new request; resend the same request to get the first answer back.',
    });
  }
  if (proof && !carries(request.body, proof)) {
    throw new ServiceError(
      'idempotency_conflict',
      'This Idempotency-Key was already used from this address for the same request; its answer holds secrets shown once, and a request ' +
        'that cannot show it sent the first one does not get them.',
      {
        field: 'Idempotency-Key',
        hint:
          `Use a fresh Idempotency-Key. A request carrying your own ${proof} (and its proof) is bound to you: its replay is ` +
          `answered in full (PROTOCOL 1.5, 2.10).`,
      },
    );
  }
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(cached.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(cached.tag, 'base64'));
  const body = Buffer.concat([decipher.update(Buffer.from(cached.body, 'base64')), decipher.final()]);
  reply.header('idempotent-replayed', 'true');
  if (cached.cacheControl) reply.header('cache-control', cached.cacheControl);
  reply.code(cached.status).type(cached.contentType);
  return reply.send(body);
}

/** Whether a body is an object with a member of this name. */
const carries = (body: unknown, member: string) => typeof body === 'object' && body !== null && Reflect.get(body, member) !== undefined;

export function registerIdempotency(app: FastifyInstance, opts: IdempotencyOptions) {
  const inFlight = new Map<string, Promise<void>>();
  const derive = (label: string, material: string) => createHmac('sha256', opts.hmacKey()).update(`${label}\u0000${material}`).digest();
  const claims = opts.holdBack === 'claims' ? storeClaims(opts) : slotOnly(opts);
  const held = new HeldAnswers(opts, claims);
  app.addHook('onClose', async () => {
    await held.close();
    claims.close();
  });

  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const surface = request.routeOptions.config?.idempotency;
    if (!surface) return;
    const idemKey = header(request, 'idempotency-key');
    if (idemKey === undefined) return;
    if (idemKey.length === 0 || idemKey.length > 255) {
      throw new ServiceError('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 characters.', { field: 'Idempotency-Key' });
    }
    const fingerprint = createHash('sha256')
      .update(`${request.method} ${request.url}\u0000`)
      .update(request.body === undefined ? '' : JSON.stringify(request.body))
      .digest('hex');
    const secrets = request.routeOptions.config?.idempotentSecrets;
    // An answer holding secrets is bound to the body too: another body is another entry (no
    // 409 telling a neighbour that the key is in use), and only this body decrypts it.
    const material = `${surface}\u0000${idempotencyCaller(request)}\u0000${idemKey}${secrets ? `\u0000${fingerprint}` : ''}`;
    const id = derive('idempotency-id', material).toString('hex');
    const key = derive('idempotency-enc', material);

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
    // An answer this process gave and could not yet record is the first answer: replayed from memory.
    const cached = held.get(id) ?? (await claims.claimOrAnswer(id));
    if (cached && !isClaim(cached) && cached.storedAt + TTL_MS > opts.clock.now()) {
      request.idempotency.replay = true;
      return replay(request, reply, cached, { key, fingerprint, proof: secrets?.bodyProof });
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
    try {
      await opts.store.transact([`idempotency:${idem.id}`], async (tx) => tx.put(IdempotencyCache, idem.id, entry));
      idem.stored = true;
    } catch (e) {
      // The answer's own write is on disk already, so the answer is sent; its record is held and
      // written again until it lands (HeldAnswers), and the claim stays this request's meanwhile.
      if ((e as { code?: string }).code !== 'storage_unavailable') throw e;
      idem.held = true;
      held.hold(idem.id, entry);
      request.log.warn({ code: 'storage_unavailable' }, 'idempotency: the answer is held until its record can be written (storage unavailable)');
    }
    return payload;
  };

  const release = async (request: FastifyRequest) => {
    const idem = request.idempotency;
    if (!idem) return;
    // A claim that got no answer (a refusal, an abort) is dropped: a waiter runs the request itself.
    // One whose answer is held stays, refreshed, until the held answer replaces it.
    if (!idem.replay && !idem.held) await claims.finish(idem.id, idem.stored === true).catch(() => undefined);
    idem.done();
  };

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
    for await (const [id, e] of opts.store.iterate(IdempotencyCache)) if (expiredAt(e, now)) expired.push(id);
    for (let i = 0; i < expired.length; i += 500) {
      const chunk = expired.slice(i, i + 500);
      await opts.store.transact(
        chunk.map((id) => `idempotency:${id}`),
        async (tx) => {
          // Re-read under the lock: an entry rewritten since the scan stays.
          for (const id of chunk) {
            const e = await tx.get(IdempotencyCache, id);
            if (e && expiredAt(e, opts.clock.now())) tx.del(IdempotencyCache, id);
          }
        },
        { durable: false },
      );
    }
  };
}

/**
 * Answers sent whose records could not be written: kept in memory (a replay to this process is
 * answered from here) and written again every UNSTORED_RETRY_MS until the store takes them, then
 * the claim is finished as answered. At close, each is tried once more; one still unwritten then
 * is lost with the process, as an answer is whose process dies before its record is written.
 */
class HeldAnswers {
  private readonly answers = new Map<string, CachedResponse>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly opts: IdempotencyOptions,
    private readonly claims: Claims,
  ) {}

  get(id: string): CachedResponse | undefined {
    return this.answers.get(id);
  }

  hold(id: string, entry: CachedResponse) {
    this.answers.set(id, entry);
    this.claims.keep(id);
    this.timer ??= setInterval(() => void this.writeAll(), UNSTORED_RETRY_MS);
    this.timer.unref();
  }

  /** Writes every held answer it can (one pass at a time); those written leave memory and finish their claims as answered. */
  writeAll(): Promise<void> {
    this.writing ??= (async () => {
      for (const [id, entry] of [...this.answers]) {
        try {
          await this.opts.store.transact([`idempotency:${id}`], async (tx) => tx.put(IdempotencyCache, id, entry));
        } catch {
          return; // the storage still fails: the next pass tries again
        }
        this.answers.delete(id);
        await this.claims.finish(id, true).catch(() => undefined);
      }
      if (this.answers.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    })().finally(() => (this.writing = undefined));
    return this.writing;
  }

  async close() {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.answers.size) await this.writeAll();
  }
}

const expiredAt = (e: Entry, now: number) => e.storedAt + (isClaim(e) ? CLAIM_STALE_MS : TTL_MS) <= now;

/** How a request with a key is held back beyond this process's slot (the slot is registerIdempotency's). */
interface Claims {
  /** The stored answer to replay, or undefined once this request may run (having claimed the key, when claims are kept). */
  claimOrAnswer(id: string): Promise<Entry | undefined>;
  /** The request that may have claimed the key ended; answered: its answer replaced the claim. */
  finish(id: string, answered: boolean): Promise<void>;
  /** The request ended with its answer held (not yet recorded): its claim is kept fresh until finish(id, true). */
  keep(id: string): void;
  close(): void;
}

/** No other process uses the store: the slot holds back a second request, and nothing is claimed. */
function slotOnly(opts: IdempotencyOptions): Claims {
  return {
    claimOrAnswer: (id) => opts.store.get(IdempotencyCache, id),
    finish: async () => undefined,
    keep: () => undefined,
    close: () => undefined,
  };
}

/**
 * Claims in a store other processes use: claimOrAnswer() answers the stored answer to replay, or
 * claims the key for this request (answering undefined) once no live claim of another request is there.
 */
function storeClaims(opts: IdempotencyOptions): Claims {
  const owner = randomBytes(12).toString('hex');
  const lock = (id: string) => `idempotency:${id}`;
  const wakers = new Map<string, Set<() => void>>();
  const wake = (id: string) => {
    for (const w of wakers.get(id) ?? []) w();
  };
  const wakeAll = () => {
    for (const set of wakers.values()) for (const w of set) w();
  };
  const unwatch = opts.store.watch(IdempotencyCache, wake, wakeAll);
  const refreshing = new Map<string, NodeJS.Timeout>();

  const sleep = (id: string) =>
    new Promise<void>((resolve) => {
      let set = wakers.get(id);
      if (!set) wakers.set(id, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) wakers.delete(id);
        resolve();
      };
      const timer = setTimeout(done, CLAIM_POLL_MS);
      set.add(done);
    });

  // Keeps a claim fresh while its request runs (until its answer replaced it).
  const refresh = (id: string) =>
    opts.store
      .transact(
        [lock(id)],
        async (tx) => {
          const e = await tx.get(IdempotencyCache, id);
          if (e && isClaim(e) && e.claim === owner + id) tx.put(IdempotencyCache, id, { claim: owner + id, storedAt: opts.clock.now() });
        },
        { durable: false },
      )
      .catch(() => undefined);

  return {
    async claimOrAnswer(id: string): Promise<Entry | undefined> {
      // The claim names this process and key: a second request with the same key in this
      // process never gets here while the first runs (the in-memory slot holds it back).
      const mine = owner + id;
      for (;;) {
        const found = await opts.store.transact(
          [lock(id)],
          async (tx) => {
            const now = opts.clock.now();
            const e = await tx.get(IdempotencyCache, id);
            if (e && !isClaim(e) && e.storedAt + TTL_MS > now) return e;
            if (e && isClaim(e) && e.claim !== mine && e.storedAt + CLAIM_STALE_MS > now) return e;
            tx.put(IdempotencyCache, id, { claim: mine, storedAt: now });
            return undefined;
          },
          { durable: false },
        );
        if (!found) {
          const timer = setInterval(() => void refresh(id), CLAIM_REFRESH_MS);
          timer.unref();
          refreshing.set(id, timer);
          return undefined;
        }
        if (!isClaim(found)) return found;
        await sleep(id);
      }
    },
    /** The request holding the claim ended; without an answer stored, its claim is dropped. */
    async finish(id: string, answered: boolean) {
      clearInterval(refreshing.get(id));
      refreshing.delete(id);
      if (answered) return;
      await opts.store.transact(
        [lock(id)],
        async (tx) => {
          const e = await tx.get(IdempotencyCache, id);
          if (e && isClaim(e) && e.claim === owner + id) tx.del(IdempotencyCache, id);
        },
        { durable: false },
      );
    },
    keep(id: string) {
      // The refresh timer set when the claim was made runs on; a failed refresh is tried at the next tick.
      if (!refreshing.has(id)) {
        const timer = setInterval(() => void refresh(id), CLAIM_REFRESH_MS);
        timer.unref();
        refreshing.set(id, timer);
      }
    },
    close() {
      unwatch();
      for (const t of refreshing.values()) clearInterval(t);
      wakeAll();
    },
  };
}
