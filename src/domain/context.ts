import type { Clock, NodeKeys, RandomSource } from '../core/index.js';
import type { Store, TokenBucketStore } from '../store/index.js';
import type { CasQuotaCounting } from './cas/quota.js';
import type { SearchPlace } from './knowledge/search.js';

/** Deployment settings the domain reads (ARCHITECTURE 4 "limits not given" live here). */
export interface DomainConfig {
  /** Per-IP registrations per UTC day. */
  registrationCapPerIp: number;
  /** Token bucket: burst size and refill per second, per Bearer (else per IP). */
  rateLimit: { burst: number; refillPerSecond: number };
  requiredJudgments: number;
  /** Refuse a judgment when another agent on the same IP already judged the proposal. */
  sameIpCollusionCheck: boolean;
  allowAnonymousPropose: boolean;
  /** Share of challenges served as decoys. */
  decoyRate: number;
  /** Steps the JSON Logic conditions of one decision-graph traversal may take together (PROTOCOL 10.5). */
  traversalLogicBudget: number;
  /** How long a traversal is kept for GET /api/knowledge/dg/traversals/{id}, in ms (PROTOCOL 10.5). */
  traversalTtlMs: number;
  /** Content-store bytes a day per client IP for anonymous uploads; a calibrated agent gets a multiple by tier (PROTOCOL 5.1). */
  casQuotaBytes: number;
  /** The operator's private calibration set (calibration-set.ts); absent: the demo set shipped in data/. */
  calibrationDir?: string;
  /** The origin used in absolute URLs (--public-url); the status lists' URLs name it (PROTOCOL 8.7). */
  publicUrl?: string;
  /** The origin of the address the node listens on, set once it listens: the URLs' origin without --public-url. */
  listenOrigin?: string;
  /** Standing credentials name the node's did:web as issuer (--issuer-did-web; PROTOCOL 8.10), not its did:key. */
  issuerDidWeb?: boolean;
}

export const defaultDomainConfig: DomainConfig = {
  registrationCapPerIp: 20,
  rateLimit: { burst: 120, refillPerSecond: 2 },
  requiredJudgments: 3,
  sameIpCollusionCheck: true,
  allowAnonymousPropose: false,
  decoyRate: 0.1,
  traversalLogicBudget: 100_000,
  traversalTtlMs: 24 * 60 * 60 * 1000,
  casQuotaBytes: 100 * 1024 * 1024,
};

/**
 * What differs between a node that holds its store alone and one of several processes on a
 * shared store: chosen once, where the node is assembled (src/node/strategies.ts), and handed in
 * with the context. Nothing below asks the store how it is deployed.
 */
export interface Strategies {
  /** How the CAS quota counts a day's bytes (cas/quota.ts): held in memory and written behind, or one transaction per change. */
  casQuota: CasQuotaCounting;
  /** Where the published tree is searched (knowledge/search.ts): MiniSearch in this process, or the store's own text index. */
  search: SearchPlace;
  /** The token buckets of PROTOCOL 1.4, made once per app (src/http/rate-limit.ts draws them): held in memory, or the store's. */
  buckets: (store: Store, clock: Clock) => TokenBucketStore;
  /**
   * How concurrent requests with one Idempotency-Key are held back (src/http/idempotency.ts): by
   * this process's slot alone (`slot`: no other process uses the store), or by a claim in the
   * store as well (`claims`), which a request in another process waits on.
   */
  idempotency: 'slot' | 'claims';
}

/** What every domain function gets: where state lives, what time it is, randomness, the node's keys, its strategies. */
export interface Ctx {
  store: Store;
  clock: Clock;
  random: RandomSource;
  keys: NodeKeys;
  config: DomainConfig;
  strategies: Strategies;
}
