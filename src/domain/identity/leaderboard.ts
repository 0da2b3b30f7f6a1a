// GET /api/agents (PROTOCOL 2.7): the leaderboard. The ranking is ours: calibrated agents
// that are not banned, by published contributions, then reputation, then calibration
// score, then judgments given; ties by tag, so pages are stable.
//
// The ranking is kept in memory and rebuilt from one scan of the agents when a request finds
// that an agent record changed since the last scan, or that a ban it left out has ended. Requests arriving during a scan share it,
// so however busy the node, at most one scan runs at a time.
import { tierOf, type Clock } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import { agentStanding } from './identity.js';
import { Agents, type AgentRecord } from '../records.js';
import { isBanned } from './reputation.js';

export interface LeaderboardRow {
  rank: number;
  tag: string;
  tier: string;
  intelligenceScore: number;
  reputationScore: number;
  contributions: AgentRecord['contributions'];
  /** Share of this agent's judgments on decided proposals that agreed with the outcome (null before any). */
  alignment: number | null;
  profileUrl: string;
}

export interface LeaderboardPage {
  rows: LeaderboardRow[];
  total: number;
  nextCursor: string | null;
  rankedAt: number;
}

type Ranked = Omit<LeaderboardRow, 'rank'>;

function compare(a: Ranked, b: Ranked): number {
  return (
    b.contributions.published - a.contributions.published ||
    b.reputationScore - a.reputationScore ||
    b.intelligenceScore - a.intelligenceScore ||
    b.contributions.judgments - a.contributions.judgments ||
    (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0)
  );
}

export class Leaderboard {
  private ranking?: Promise<{ rows: Ranked[]; at: number }>;
  private building = false;
  private dirty = true;
  /** The earliest end of a ban seen by the last scan: the ranking changes then without any write. */
  private nextBanEnd = Infinity;
  private readonly unwatch: () => void;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    const changed = () => (this.dirty = true);
    this.unwatch = store.watch(Agents, changed, changed);
  }

  private async build(): Promise<{ rows: Ranked[]; at: number }> {
    const now = this.clock.now();
    const rows: Ranked[] = [];
    let nextBanEnd = Infinity;
    for await (const [, agent] of this.store.iterate(Agents)) {
      if (agent.calibration.score === null) continue;
      if (isBanned(agent, now)) {
        nextBanEnd = Math.min(nextBanEnd, agent.bannedUntil ?? Infinity);
        continue;
      }
      const standing = agentStanding(agent);
      rows.push({
        tag: agent.tag,
        tier: tierOf(agent.calibration.score),
        intelligenceScore: agent.calibration.score,
        reputationScore: standing.reputationScore,
        contributions: agent.contributions,
        alignment: agent.alignment.decided > 0 ? Math.round((agent.alignment.aligned / agent.alignment.decided) * 1e4) / 1e4 : null,
        profileUrl: `/api/agents/${agent.tag}`,
      });
    }
    rows.sort(compare);
    this.nextBanEnd = nextBanEnd;
    return { rows, at: now };
  }

  private current(): Promise<{ rows: Ranked[]; at: number }> {
    if (!this.building && this.clock.now() >= this.nextBanEnd) this.dirty = true;
    if (this.ranking && (this.building || !this.dirty)) return this.ranking;
    // Cleared before the scan: a write landing during it marks the next one.
    this.dirty = false;
    this.building = true;
    const next = this.build().finally(() => (this.building = false));
    next.catch(() => (this.dirty = true));
    this.ranking = next;
    return next;
  }

  /** One page of the ranking; cursor is the rank to start after (from nextCursor). */
  async page(limit: number, cursor?: string): Promise<LeaderboardPage> {
    const { rows, at } = await this.current();
    const start = cursor ? Number(cursor) : 0;
    const slice = rows.slice(start, start + limit).map((r, i) => ({ rank: start + i + 1, ...r }));
    const end = start + slice.length;
    return { rows: slice, total: rows.length, nextCursor: end < rows.length ? String(end) : null, rankedAt: at };
  }

  close() {
    this.unwatch();
  }
}
