// Who is calling: the IP, the agent behind a Bearer key, and the token bucket they draw
// from. Runs at onRequest, before the body is parsed, so a 401 or 429 costs no parsing.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_KEY_RE, ServiceError, sha256Hex } from '../core/index.js';
import { authenticate } from '../domain/identity.js';
import type { Ctx } from '../domain/context.js';
import { Agents, ApiKeys, type AgentRecord } from '../domain/records.js';
import { bannedError, isBanned } from '../domain/reputation.js';
import { isInnerCall } from './inner-call.js';
import type { TokenBuckets } from './rate-limit.js';

export interface Caller {
  ip: string;
  agent?: AgentRecord;
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
  }
}

function bearer(request: FastifyRequest): string | undefined {
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

function agentCache(ctx: Ctx) {
  const byKeyHash = new Map<string, AgentRecord>();
  const keyHashOfTag = new Map<string, string>();
  // Bumped by every write to an agent or key: a snapshot read while one landed is not kept.
  let writes = 0;
  const drop = (keyHash: string | undefined) => {
    writes++;
    if (!keyHash) return;
    const agent = byKeyHash.get(keyHash);
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
    async authenticate(apiKey: string): Promise<AgentRecord> {
      const keyHash = API_KEY_RE.test(apiKey) ? sha256Hex(apiKey) : undefined;
      const hit = keyHash && byKeyHash.get(keyHash);
      if (hit) return hit;
      const before = writes;
      const agent = deepFreeze(await authenticate(ctx, apiKey));
      if (writes !== before) return agent;
      if (byKeyHash.size >= 10_000) (byKeyHash.clear(), keyHashOfTag.clear());
      byKeyHash.set(agent.apiKeyHash, agent);
      keyHashOfTag.set(agent.tag, agent.apiKeyHash);
      return agent;
    },
    close: () => unwatch.forEach((stop) => stop()),
  };
}

export function registerCaller(app: FastifyInstance, ctx: Ctx, buckets: TokenBuckets) {
  app.decorateRequest('caller', null as unknown as Caller);
  const agents = agentCache(ctx);
  app.addHook('onClose', async () => agents.close());
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config ?? {};
    const mode: AuthMode = config.auth ?? 'none';
    request.caller = { ip: request.ip };
    let authError: ServiceError | undefined;
    const key = mode === 'none' ? undefined : bearer(request);
    if (key !== undefined) {
      try {
        request.caller.agent = await agents.authenticate(key);
      } catch (e) {
        authError = e as ServiceError;
      }
    } else if (mode === 'required') {
      authError = new ServiceError('unauthorized', 'This route needs Authorization: Bearer <apiKey>.');
    }
    // Every route draws a token, health and preview included: no answer, however cheap, is
    // free of the bucket (PROTOCOL 1.4). An MCP tool call drew its token as the POST to
    // /api/mcp (PROTOCOL 12.3).
    if (!isInnerCall(request)) {
      const agent = request.caller.agent;
      await buckets.take(agent ? `agent:${agent.tag}` : `ip:${request.ip}`, agent ? 'per-bearer' : 'per-ip');
    }
    if (authError) throw authError;
    const agent = request.caller.agent;
    if (agent && !config.banExempt && isBanned(agent, ctx.clock.now())) throw bannedError(agent);
  });
}
