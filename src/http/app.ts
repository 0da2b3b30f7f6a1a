// The composition root: createApp wires the store, clock, randomness, node keys and config
// into one fastify instance. Only `akas serve` calls listen(); tests use app.inject().
import Fastify, {
  LogController,
  type FastifyContextConfig,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import { cryptoRandom, ServiceError, VERSION, systemClock, type Clock, type NodeKeys, type RandomSource } from '../core/index.js';
import { defaultDomainConfig, type Ctx, type DomainConfig, type Strategies } from '../domain/context.js';
import { LogTileReader, LookupIndex, TransparencyLog, WitnessClient, type WitnessConfig } from '../domain/log/index.js';
import { runMigrations } from '../domain/migrations.js';
import { sweepExpired } from '../domain/retention.js';
import { calibrationSetOf } from '../domain/calibration/set.js';
import type { Store } from '../store/index.js';
import { registerBodies } from '../http-kit/bodies.js';
import { proxyTrust, registerCaller } from './caller.js';
import { clientError, errorHandler, expectationFailed, notFoundHandler, sendError } from '../http-kit/errors.js';
import { registerIdempotency, tenantMisconfigured } from './idempotency.js';
import { registerClosing } from './closing.js';
import { TokenBuckets } from './rate-limit.js';
import { calibrationRoutes } from './routes/calibration.js';
import { casRoutes } from './routes/cas.js';
import { credentialRoutes } from './routes/credentials.js';
import { statusListRoutes } from './routes/status-lists.js';
import { logRoutes } from './routes/log.js';
import { attestationRoutes } from './routes/attestations.js';
import { lookupRoutes } from './routes/lookup.js';
import { supplyChainRoutes } from './routes/supply-chain.js';
import { knowledgeRoutes } from './routes/knowledge.js';
import { healthRoutes } from './routes/health.js';
import { identityRoutes, type MeExtension } from './routes/identity.js';
import { proposalRoutes } from './routes/proposals.js';
import { quotaRoutes } from './routes/quota.js';
import { toolRoutes } from './routes/tools.js';
import { validatorCompiler } from './validation.js';
import { openApiRoutes, registerOpenApi, serializeAsIs } from './openapi.js';
import { mcpRoutes } from './mcp/route.js';
import { discoveryRoutes } from './routes/discovery.js';
import { registerResponseCheck } from './response-check.js';
import { registerRequestLog, requestLoggerOnFirstUse } from './request-log.js';
import { nodeHelmetOptions, registerSecurityHeaders } from '../http-kit/security-headers.js';
import { explorerRoutes } from '../explorer/index.js';

export interface AppConfig extends DomainConfig {
  /** The origin used in absolute URLs; by default the one the request came to. */
  publicUrl?: string;
  /**
   * Read the client IP from X-Forwarded-For behind reverse proxies (PROTOCOL 1.4): false, a
   * number of proxy hops (true: one), or the proxies' addresses and CIDRs. The client is the
   * first untrusted hop from the right.
   */
  trustProxy: boolean | number | string[];
  /** Why the same-IP rule (sameIpCollusionCheck) is on or off here, as /healthz says it (server.ts sameIpPolicy). */
  sameIpReason?: string;
  /** Largest JSON body of any route, in bytes; each route's own limit is derived from its schema (bodies.ts). */
  bodyLimit: number;
  /**
   * How long a client may take to send a whole request, headers and body (ms); past it the
   * node answers 408 and closes the connection. Without it a body sent a byte at a time held
   * its connection for good.
   */
  requestTimeoutMs: number;
  /** Event streams (GET /api/events) open at once, per client (an IP, an IPv6 /64) and in all (PROTOCOL 9.7). */
  eventStreams: { perClient: number; total: number };
  version: string;
  /**
   * Validate every answer against the schema its route documents and answer 500 on a mismatch
   * (response-check.ts). For tests; a running node leaves it off.
   */
  checkResponses: boolean;
  /** Witnesses asked to cosign every checkpoint (C2SP tlog-witness; PROTOCOL 9.9). */
  witnesses: WitnessConfig[];
  /** How long a read that hands out a checkpoint waits for the witnesses' round (ms). */
  witnessWaitMs: number;
  /** How long one witness may take to answer add-checkpoint (ms); tests hold a silent one for good. */
  witnessTimeoutMs: number;
  /**
   * How often the verifiable index checks whether the log grew by 256 entries, to append a root
   * (ms; PROTOCOL 9.10). 0: roots only when a lookup finds the newest a second old (an embedded
   * app, the tests, whose logs keep the sizes they append); a running node checks every second.
   */
  indexRootEveryMs: number;
  /** This node is a witness too, for the logs of these Ed25519 verifier keys, with this key (PROTOCOL 9.9). */
  witnessFor?: { logs: string[]; key: { name: string; seed: string } };
}

export const defaultAppConfig: AppConfig = {
  ...defaultDomainConfig,
  trustProxy: false,
  bodyLimit: 1024 * 1024,
  requestTimeoutMs: 120_000,
  eventStreams: { perClient: 8, total: 500 },
  version: VERSION,
  checkResponses: false,
  witnesses: [],
  witnessWaitMs: 3000,
  witnessTimeoutMs: 10_000,
  indexRootEveryMs: 0,
};

export interface AppOptions {
  store: Store;
  keys: NodeKeys;
  /**
   * What differs between a node holding its store alone and one of several processes on a shared
   * store (the CAS quota, search, token buckets, idempotency claims): chosen where the node is
   * assembled (src/node/strategies.ts), never here.
   */
  strategies: Strategies;
  clock?: Clock;
  random?: RandomSource;
  config?: Partial<AppConfig>;
  logger?: FastifyServerOptions['logger'];
  /** A logger made already (the node's own: request-log.ts); wins over `logger`. */
  loggerInstance?: FastifyServerOptions['loggerInstance'];
}

/** One route as declared (method, URL pattern, its config): what the discovery documents and the route-walking tests read. */
export interface RouteSummary {
  method: string;
  url: string;
  config: FastifyContextConfig;
  hasSchema: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    akas: Ctx & {
      appConfig: AppConfig;
      buckets: TokenBuckets;
      log: TransparencyLog;
      tiles: LogTileReader;
      /** The verifiable index over the log (PROTOCOL 9.10). */
      lookup: LookupIndex;
      witnesses?: WitnessClient;
      routes: RouteSummary[];
      /** Set while `akas serve --demo` seeds its tree: /healthz answers 503 `seeding` until it is in (PROTOCOL 11.1). */
      seeding?: { what: string; since: number };
    };
  }
}

export async function createApp(options: AppOptions): Promise<FastifyInstance> {
  const config: AppConfig = { ...defaultAppConfig, ...options.config };
  // Read (and checked) now: a calibration set that cannot be used refuses the start.
  calibrationSetOf(config);
  const ctx: Ctx = {
    store: options.store,
    clock: options.clock ?? systemClock,
    random: options.random ?? cryptoRandom,
    keys: options.keys,
    config,
    strategies: options.strategies,
  };
  // Data stored before this version is brought up to it first (recorded, idempotent).
  await runMigrations(ctx);
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    bodyLimit: config.bodyLimit,
    // A request arrives whole within requestTimeoutMs, its headers within 60 s (or that, when
    // shorter); Node checks both every connectionsCheckingInterval.
    requestTimeout: config.requestTimeoutMs,
    // requireHostHeader false: an HTTP/1.1 request without Host reaches the hook below and gets
    // the error envelope, where Node's own check answers an empty 400.
    http: {
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(config.requestTimeoutMs / 4))),
      requireHostHeader: false,
    },
    trustProxy: proxyTrust(config.trustProxy),
    requestIdHeader: false,
    // A request arriving while the node closes is refused in the envelope (closing.ts), not with fastify's own 503 body.
    return503OnClosing: false,
    // The node's own compilers from the start (set again below for every route): fastify then
    // never loads its default ones (ajv's and fast-json-stringify's), which the build leaves out
    // of the server's chunk (scripts/bundle.mjs) so that no start compiles their code.
    schemaController: { compilersFactory: { buildValidator: () => validatorCompiler, buildSerializer: () => serializeAsIs } as never },
    // fastify's own two lines per request are replaced by one line of ours (onResponse below),
    // which carries no headers, no bodies and no query values: secrets never reach the log.
    logController: new LogController({ disableRequestLogging: true }),
    // Each request's logger is made when something logs through it, not for every request (request-log.ts).
    childLoggerFactory: requestLoggerOnFirstUse,
    // Path parameters are bounded by each route's schema (a 400 with the field); the router's
    // own limit only stops the absurd, and answers in the envelope too (frameworkErrors).
    routerOptions: { maxParamLength: 512 },
    // (a malformed percent-escape is the validation_failed of errors.ts).
    frameworkErrors: (error, request, reply) =>
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? sendError(request, reply, new ServiceError('uri_too_long', 'A path segment is longer than this node routes (512 characters).'))
        : errorHandler(error, request, reply),
    clientErrorHandler: clientError,
  });
  // Before every other hook: an HTTP/1.1 request names its Host (RFC 9112 3.2), and the URLs
  // the node hands out are made from it.
  app.addHook('onRequest', requireHost);
  registerClosing(app);
  // Expect other than 100-continue: the 417 in the envelope (Node answers an empty one itself).
  app.server.on('checkExpectation', (_req, res) => expectationFailed(res));
  app.setValidatorCompiler(validatorCompiler);
  // Before any route: the document collects routes as they are registered (PROTOCOL 11.2).
  await registerOpenApi(app);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);

  // Every body is strict JSON, within its route's bounds in bytes and members (bodies.ts);
  // routes declared from here on get theirs.
  registerBodies(app, config.bodyLimit);

  const buckets = new TokenBuckets(ctx.strategies.buckets(ctx.store, ctx.clock), ctx.clock, config.rateLimit.burst, config.rateLimit.refillPerSecond);
  const log = new TransparencyLog(ctx, {
    // A storage failure is logged once by the node (server.ts); the outbox keeps what waits.
    onError: (e) => (e as { code?: string }).code === 'storage_unavailable' || app.log.error({ err: e }, 'transparency log: append or checkpoint failed'),
  });
  const tiles = new LogTileReader(ctx.store, log);
  // The index follows the log, a root appended each 256 entries of growth and when a lookup finds the newest older than a second.
  const lookup = new LookupIndex(log, () => ctx.clock.now(), {
    everyMs: config.indexRootEveryMs,
    onError: (e) => (e as { code?: string }).code === 'storage_unavailable' || app.log.error({ err: e }, 'verifiable index: a step failed'),
  });
  // Witness rounds run beside the log, never in an append's path (PROTOCOL 9.9).
  const witnesses = config.witnesses.length
    ? new WitnessClient(log, config.witnesses, ctx.clock, {
        timeoutMs: config.witnessTimeoutMs,
        onError: (e) => app.log.error({ err: e }, 'witness round failed'),
      })
    : undefined;
  // Security headers on every answer, JSON and HTML alike, errors included (registered before
  // the caller hook, whose 401 and 429 answers carry them too): security-headers.ts.
  registerSecurityHeaders(app, nodeHelmetOptions(config.publicUrl));
  const routes: RouteSummary[] = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat())
      if (method !== 'HEAD') routes.push({ method, url: r.url, config: (r.config ?? {}) as FastifyContextConfig, hasSchema: Boolean(r.schema) });
  });
  app.decorate('akas', { ...ctx, appConfig: config, buckets, log, tiles, lookup, witnesses, routes });
  app.decorate('akasMeExtensions', [] as MeExtension[]);
  registerCaller(app, ctx, buckets);
  const sweepIdempotency = registerIdempotency(app, {
    store: ctx.store,
    clock: ctx.clock,
    holdBack: ctx.strategies.idempotency,
    hmacKey: () => ctx.keys.hmac[0].key,
  });

  // Callback-style hooks: no promise per request on the hot path.
  registerRequestLog(app);

  app.addHook('onSend', (request, reply, payload, done) => {
    if (tenantMisconfigured(request)) {
      reply.header(
        'warning',
        '299 akas "X-Proxy-Tenant-Id without X-Idempotency-Inherit-Tenant-Id or X-Idempotency-Tenant-Suffix-Apikey: idempotency caches are ' +
          'not isolated per tenant"',
      );
    }
    done(null, payload);
  });

  if (config.checkResponses) registerResponseCheck(app);

  await registerRoutes(app, ctx, config);

  scheduleUpkeep(app, ctx, { sweepIdempotency, log, lookup, witnesses, buckets });
  return app;
}

/** An HTTP/1.1 request without Host: 400 in the envelope, and the connection closed. */
function requireHost(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) {
  const raw = request.raw;
  if (raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1 && raw.headers.host === undefined) {
    reply.header('connection', 'close');
    return done(
      new ServiceError('bad_request', 'An HTTP/1.1 request carries a Host header (RFC 9112 section 3.2); this one has none.', {
        hint: "Send Host: with the node's host and port, as every HTTP/1.1 client does.",
      }),
    );
  }
  done();
}

/** Every area's routes, the witness's when this node is one, and the explorer's pages. */
async function registerRoutes(app: FastifyInstance, ctx: Ctx, config: AppConfig) {
  // Registered under their own names: fastify names an unnamed plugin by scanning every module
  // in require.cache for it, which cost each app (and each test node) tens of milliseconds.
  for (const routes of [
    healthRoutes,
    casRoutes,
    identityRoutes,
    calibrationRoutes,
    proposalRoutes,
    quotaRoutes,
    toolRoutes,
    credentialRoutes,
    statusListRoutes,
    logRoutes,
    attestationRoutes,
    lookupRoutes,
    supplyChainRoutes,
    knowledgeRoutes,
    openApiRoutes,
    mcpRoutes,
    discoveryRoutes,
  ])
    await app.register(named(routes));
  if (config.witnessFor?.logs.length) {
    const { Witness } = await import('../witness/index.js');
    const { witnessRoutes } = await import('./routes/witness.js');
    await app.register(named(witnessRoutes), {
      witness: new Witness({ store: ctx.store, clock: ctx.clock, key: config.witnessFor.key, logs: config.witnessFor.logs }),
    });
  }
  // The explorer's pages (issue 25) at / and /explore/...: their own policy, stricter in what it
  // lets run than a page needs and no looser than the API's anywhere else: scripts and styles
  // from the node only (no inline script or style, no eval), fetches and the event stream to the
  // node only, forms posting to the node only.
  await app.register(named(explorerRoutes), {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
  });
}

/**
 * What a node does beside answering: the hourly sweep of idempotent answers past 24 h and of what
 * the node keeps about clients past its time (per-day counters of past days, traversals past
 * their retention: domain/retention.ts); at start, the log's outbox and the witnesses' rounds;
 * at close, all of it stopped.
 */
function scheduleUpkeep(
  app: FastifyInstance,
  ctx: Ctx,
  parts: { sweepIdempotency: () => Promise<unknown>; log: TransparencyLog; lookup: LookupIndex; witnesses?: WitnessClient; buckets: TokenBuckets },
) {
  const { sweepIdempotency, log, lookup, witnesses, buckets } = parts;
  const sweep = () => {
    void sweepIdempotency().catch(() => undefined);
    void sweepExpired(ctx).catch((e) => app.log.warn({ err: e }, 'retention sweep failed'));
  };
  const sweepTimer = setInterval(sweep, 60 * 60 * 1000);
  sweepTimer.unref();
  app.addHook('onReady', async () => {
    sweep();
    // What a crash left in the log's outbox is appended now.
    void log.drain().catch((e) => app.log.error({ err: e }, 'log append failed'));
    void witnesses?.start().catch((e) => app.log.error({ err: e }, 'witness round failed'));
  });
  app.addHook('onClose', async () => {
    clearInterval(sweepTimer);
    await witnesses?.close();
    await lookup.close();
    await log.close();
    await buckets.close();
  });
}

/** A plugin carrying its function's name as fastify's display name (see the routes above). */
function named<T extends (...args: never[]) => unknown>(plugin: T): T {
  (plugin as unknown as Record<symbol, string>)[Symbol.for('fastify.display-name')] ??= plugin.name;
  return plugin;
}
