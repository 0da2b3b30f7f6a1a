// The serialized bodies of GET /api/agent/v1/me (PROTOCOL 2.3), what agents poll. A body is kept
// per agent (and origin) until a write to anything it reads lands (the agent's record, and what
// each area's block reads: MeExtension.reads, watched through the store), or for at most
// ME_CACHE_MS (its only time-dependent fields, the ban countdown and the quota reset, move by the
// second and the day). Kept by time, not by count (generations.ts): the bodies of agents that
// polled in the last second or two, not one stale body for each of the last 10,000 agents.
import { nextUtcMidnight, sha256Hex, type Clock } from '../core/index.js';
import { Agents, type AgentRecord } from '../domain/records.js';
import type { Space, Store } from '../store/index.js';
import { Generations } from './generations.js';

/** How long a served /me body may be reused when nothing it reads was written meanwhile. */
const ME_CACHE_MS = 1000;

/**
 * A block another area adds to GET /me, with the keyspaces it reads: a write to one of them
 * drops the agent's cached /me body (tagOf maps a written key to the agent it concerns).
 */
export interface MeExtension {
  block: (agent: AgentRecord, now: number) => Promise<Record<string, unknown>>;
  reads: Array<{ space: Space<unknown>; tagOf: (key: string) => string | null }>;
}

export interface MeBody {
  body: string;
  etag: string;
  until: number;
}

export class MeBodies {
  private readonly bodies: Generations<string, Map<string, MeBody>>;
  /** Writes seen so far: a body built while a write landed is served but not kept. */
  private writes = 0;
  private unwatch: Array<() => void> = [];

  constructor(
    private readonly store: Store,
    clock: Clock,
  ) {
    this.bodies = new Generations(ME_CACHE_MS, 10_000, clock.now());
  }

  /** Watches the agents and what the extensions read (called once every plugin has added its extension). */
  watch(extensions: MeExtension[]) {
    const forget = (tag: string | null) => {
      this.writes++;
      if (tag) this.bodies.delete(tag);
    };
    // Writes a shared store may have missed: every body goes.
    const forgetAll = () => {
      this.writes++;
      this.bodies.clear();
    };
    this.unwatch = [
      this.store.watch(Agents, forget, forgetAll),
      ...extensions.flatMap((e) => e.reads.map((r) => this.store.watch(r.space, (k) => forget(r.tagOf(k)), forgetAll))),
    ];
  }

  /** The kept body of this agent at this origin, if one is kept and still fresh. */
  kept(tag: string, origin: string, now: number): MeBody | undefined {
    const kept = this.bodies.get(tag, now)?.get(origin);
    return kept && kept.until > now ? kept : undefined;
  }

  /** The kept body of this agent at this origin, or a fresh one from build (kept when no write landed meanwhile). */
  async get(tag: string, origin: string, now: number, build: () => Promise<Record<string, unknown>>): Promise<MeBody> {
    const kept = this.kept(tag, origin, now);
    if (kept) return kept;
    const before = this.writes;
    const body = JSON.stringify(await build());
    const fresh = { body, etag: `"${sha256Hex(body).slice(0, 32)}"`, until: Math.min(now + ME_CACHE_MS, nextUtcMidnight(now)) };
    if (this.writes === before) {
      let byOrigin = this.bodies.get(tag, now);
      if (!byOrigin) this.bodies.set(tag, (byOrigin = new Map()), now);
      byOrigin.set(origin, fresh);
    }
    return fresh;
  }

  close() {
    for (const stop of this.unwatch) stop();
  }
}
