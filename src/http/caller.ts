// Who is calling: the IP, the agent behind a Bearer key, and the token bucket they draw
// from. Runs at onRequest, before the body is parsed, so a 401 or 429 costs no parsing.
import { isIPv6 } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_KEY_RE, safeEqual, ServiceError, sha256Hex } from '../core/index.js';
import { authenticate } from '../domain/identity/identity.js';
import type { Ctx } from '../domain/context.js';
import { Agents, ApiKeys, type AgentRecord } from '../domain/records.js';
import { bannedError, isBanned } from '../domain/identity/reputation.js';
import { Generations } from './generations.js';
import { isInnerCall } from '../http-kit/inner-call.js';
import type { TokenBuckets } from './rate-limit.js';

export interface Caller {
  /** The client as per-IP limits count it (clientKey): an IPv4 address, or an IPv6 /64. */
  ip: string;
  agent?: AgentRecord;
}

// The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail included), or undefined.
function ipv6Groups(ip: string): number[] | undefined {
  if (!isIPv6(ip)) return undefined;
  let text = ip.split('%')[0];
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.length === 8 ? groups.map((g) => parseInt(g, 16)) : undefined;
}

/**
 * The client as per-IP limits count it (PROTOCOL 1.4): an IPv4 address as it is (an IPv4-mapped
 * IPv6 address as its IPv4 address), an IPv6 address by its /64, the block one subscriber
 * gets: a client holding a /64 has 2^64 addresses to rotate through.
 */
export function clientKey(ip: string): string {
  if (!ip.includes(':') || ip.endsWith('/64')) return ip;
  const groups = ipv6Groups(ip);
  if (!groups) return ip;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/**
 * fastify's trustProxy from the node's setting (PROTOCOL 1.4): false trusts no proxy; a number
 * of hops trusts that many addresses from the right of [socket, ...X-Forwarded-For] (fastify
 * itself now reads a bare number as "trust none"); a list trusts those proxies' addresses and
 * CIDRs. `true` (a bare --trust-proxy) is one hop, never fastify's "trust every hop", which
 * takes the left-most address a client wrote. The client is the first untrusted hop from the right.
 */
export function proxyTrust(setting: boolean | number | string[]): false | string[] | ((addr: string, hop: number) => boolean) {
  if (setting === false) return false;
  if (Array.isArray(setting)) return setting;
  const hops = setting === true ? 1 : setting;
  if (!Number.isInteger(hops) || hops < 1) return false;
  return (_addr: string, hop: number) => hop < hops;
}

export type AuthMode = 'required' | 'optional' | 'none';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
  interface FastifyContextConfig {
    /** 'required': Bearer needed (401 without); 'optional': used when sent; 'none' (default): ignored. */
    auth?: AuthMode;
    /** A banned agent may still use this route (PROTOCOL 1.2: /me, wakeup, quota and appeal). */
    banExempt?: boolean;
    /** Idempotency-Key surface name; absent means the header is ignored. */
    idempotency?: string;
    /**
     * A health probe (GET /healthz only): it draws no token, so it answers whatever the
     * caller's bucket holds (PROTOCOL 1.4, 11.1). It must stay as cheap as a 429 would be.
     */
    healthProbe?: boolean;
  }
}

/** The key of an Authorization: Bearer header: undefined without one, empty when it is malformed (bench/http.ts parses with it too). */
export function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : '';
}

/** The agent of a request that must be authenticated (routes with auth: 'required'). */
export function agentOf(request: FastifyRequest): AgentRecord {
  const agent = request.caller.agent;
  if (!agent) throw new ServiceError('unauthorized', 'This route needs Authorization: Bearer <apiKey>.');
  return agent;
}

// Read-only snapshots of authenticated agents by api-key hash, dropped as soon as a write to
// the agent or its key lands (so a rotated key is refused at once; on a shared store, by every
// process within the store's staleness bound: ARCHITECTURE 7). Frozen: request handlers
// read them; every change goes through a transaction that reads its own copy.
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Snapshots of agents that called in the last minute or two are kept (generations.ts), 10,000 at most. */
const SNAPSHOT_PERIOD_MS = 60_000;

function agentCache(ctx: Ctx) {
  const keyHashOfTag = new Map<string, string>();
  // Kept by time: the agents calling now, not every agent seen up to a count. The index by tag
  // (what a write to an agent is announced by) follows the snapshots that leave.
  const byKeyHash = new Generations<string, AgentRecord>(SNAPSHOT_PERIOD_MS, 10_000, ctx.clock.now(), (gone) => {
    for (const [keyHash, agent] of gone) if (safeEqual(keyHashOfTag.get(agent.tag) ?? '', keyHash)) keyHashOfTag.delete(agent.tag);
  });
  // Bumped by every write to an agent or key: a snapshot read while one landed is not kept.
  let writes = 0;
  const drop = (keyHash: string | undefined) => {
    writes++;
    if (!keyHash) return;
    const agent = byKeyHash.peek(keyHash);
    byKeyHash.delete(keyHash);
    if (agent) keyHashOfTag.delete(agent.tag);
  };
  // A shared store that may have missed some writes says so: everything goes.
  const dropAll = () => {
    writes++;
    byKeyHash.clear();
    keyHashOfTag.clear();
  };
  const unwatch = [ctx.store.watch(Agents, (tag) => drop(keyHashOfTag.get(tag)), dropAll), ctx.store.watch(ApiKeys, (keyHash) => drop(keyHash), dropAll)];
  return {
    /** The snapshot of a key's agent when one is held (no promise: the hot path of every authenticated request). */
    lookup(apiKey: string): AgentRecord | undefined {
      return API_KEY_RE.test(apiKey) ? byKeyHash.get(sha256Hex(apiKey), ctx.clock.now()) : undefined;
    },
    async authenticate(apiKey: string): Promise<AgentRecord> {
      const before = writes;
      const agent = deepFreeze(await authenticate(ctx, apiKey));
      if (writes !== before) return agent;
      byKeyHash.set(agent.apiKeyHash, agent, ctx.clock.now());
      keyHashOfTag.set(agent.tag, agent.apiKeyHash);
      return agent;
    },
    close: () => {
      for (const stop of unwatch) stop();
    },
  };
}

/**
 * The token bucket a caller draws from (PROTOCOL 1.4): a calibrated agent's own, else its IP's,
 * as an anonymous caller's: registering is free, and twenty fresh keys on one address held
 * twenty buckets (issue 30).
 */
export function bucketOf(caller: Caller): { key: string; scope: 'per-bearer' | 'per-ip' } {
  const agent = caller.agent;
  return agent !== undefined && agent.calibration.score !== null
    ? { key: `agent:${agent.tag}`, scope: 'per-bearer' }
    : { key: `ip:${caller.ip}`, scope: 'per-ip' };
}

const UNCALIBRATED_NOTE = "An agent draws from its IP address's bucket until it calibrates (GET /api/agent/v1/calibrate), then from its own.";

export function registerCaller(app: FastifyInstance, ctx: Ctx, buckets: TokenBuckets) {
  app.decorateRequest('caller', null as unknown as Caller);
  const agents = agentCache(ctx);
  app.addHook('onClose', async () => agents.close());
  // A callback hook, synchronous when the agent's snapshot and the bucket are in memory (the
  // usual case): no promise per request. A miss reads the store and goes on when it answers.
  app.addHook('onRequest', (request, _reply, done) => {
    const config = request.routeOptions.config ?? {};
    const mode: AuthMode = config.auth ?? 'none';
    request.caller = { ip: clientKey(request.ip) };
    // After auth: the token bucket (PROTOCOL 1.4), then the auth refusal, then a ban.
    const next = (authError?: ServiceError) => {
      // Every route draws a token, preview and the dry run included: no answer is free of the
      // bucket (PROTOCOL 1.4), but health: a load balancer or an orchestrator probing through
      // a busy proxy shares its address with the proxy's clients, and a 429 would take a
      // healthy node out; a health answer costs the node what a 429 does. An MCP tool call
      // drew its token as the POST to /api/mcp (PROTOCOL 12.3).
      if (!isInnerCall(request) && !config.healthProbe) {
        const { key, scope } = bucketOf(request.caller);
        let wait;
        try {
          wait = buckets.take(key, scope, scope === 'per-ip' && request.caller.agent ? UNCALIBRATED_NOTE : undefined);
        } catch (e) {
          return done(e as Error);
        }
        if (wait) return void wait.then(() => settle(authError), done);
      }
      settle(authError);
    };
    const settle = (authError?: ServiceError) => {
      if (authError) return done(authError);
      const agent = request.caller.agent;
      if (agent && !config.banExempt && isBanned(agent, ctx.clock.now())) return done(bannedError(agent));
      done();
    };
    const key = mode === 'none' ? undefined : bearer(request);
    if (key === undefined) return next(mode === 'required' ? new ServiceError('unauthorized', 'This route needs Authorization: Bearer <apiKey>.') : undefined);
    const held = agents.lookup(key);
    if (held) {
      request.caller.agent = held;
      return next();
    }
    agents.authenticate(key).then(
      (agent) => {
        request.caller.agent = agent;
        next();
      },
      (e: ServiceError) => next(e),
    );
  });
}
