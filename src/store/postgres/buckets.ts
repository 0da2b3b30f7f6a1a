// Token buckets on PostgreSQL (SharedStore.buckets): one row per bucket in an UNLOGGED table (no WAL,
// no fsync: a crash may forget them, like LevelDB's write-behind). Each draw is atomic in the
// database, so a burst split between processes is limited as one.
//
// A draw costs a round trip, and GET /me does one per request: the draws a process makes in
// one turn of its event loop go in one statement, one row per bucket key asking for as many
// tokens as requests came. The database grants what the refilled bucket holds, and the
// process hands the granted tokens to the first requests in the order they asked: the same
// answers as one draw at a time, for a fraction of the round trips. A draw of several tokens
// (a costly search: PROTOCOL 1.4) takes them all or none: tokens the database granted that no
// draw could use (a draw of 4 when 3 were there) go back to the bucket before anyone hears.
import type pg from 'pg';
import type { SharedBuckets } from '../types.js';

interface Draw {
  key: string;
  /** Tokens asked (0: a peek). */
  take: number;
  now: number;
  resolve: (r: { tokens: number; taken: boolean }) => void;
  reject: (e: unknown) => void;
}

export class PgBuckets implements SharedBuckets {
  private queues = new Map<string, Draw[]>();
  private scheduled = false;
  private readonly sql: string;
  /** Gives granted tokens no draw used back ($1 burst, $2 keys, $3 tokens per key). */
  private readonly refundSql: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    /** A draw that fails because the database is gone: the store's 503 (its health), not a 500. */
    private readonly failure: (e: unknown) => unknown = (e) => e,
  ) {
    // $1 burst, $2 refill per second, $3 now (ms), $4 keys, $5 tokens asked per key.
    const refill = 'least($1::float8, b.tokens + greatest(0, $3::bigint - b.at) / 1000.0 * $2::float8)';
    this.sql = `INSERT INTO ${schema}.akas_buckets AS b (key, tokens, at, taken, asked)
        SELECT k, $1::float8 - least(n, floor($1::float8)), $3::bigint, least(n, floor($1::float8)), n
        FROM unnest($4::text[], $5::int[]) AS t(k, n)
      ON CONFLICT (key) DO UPDATE SET
        taken = least(excluded.asked, floor(${refill})),
        tokens = ${refill} - least(excluded.asked, floor(${refill})),
        at = greatest(b.at, $3::bigint)
      RETURNING key, tokens, taken`;
    this.refundSql =
      `UPDATE ${schema}.akas_buckets AS b SET tokens = least($1::float8, b.tokens + r.n) ` +
      'FROM unnest($2::text[], $3::float8[]) AS r(k, n) WHERE b.key = r.k';
  }

  async sweep(burst: number, refillPerSecond: number, now: number): Promise<number> {
    try {
      const r = await this.pool.query(
        `DELETE FROM ${this.schema}.akas_buckets WHERE tokens + greatest(0, $3::bigint - at) / 1000.0 * $2::float8 >= $1::float8`,
        [burst, refillPerSecond, Math.round(now)],
      );
      return r.rowCount ?? 0;
    } catch (e) {
      throw this.failure(e);
    }
  }

  /** Nothing is held in memory between draws: nothing to write, and the store's close ends the connections. */
  async flush(): Promise<void> {}
  async close(): Promise<void> {}

  draw(key: string, burst: number, refillPerSecond: number, now: number, take: boolean | number): Promise<{ tokens: number; taken: boolean }> {
    return new Promise((resolve, reject) => {
      const group = `${burst}:${refillPerSecond}`;
      let queue = this.queues.get(group);
      if (!queue) this.queues.set(group, (queue = []));
      queue.push({ key, take: Number(take), now: Math.round(now), resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.sendQueued());
      }
    });
  }

  /** Sends the draws of this turn of the event loop, one statement per burst and rate. */
  private sendQueued() {
    this.scheduled = false;
    const queues = this.queues;
    this.queues = new Map();
    for (const [group, draws] of queues) void this.send(group, draws);
  }

  private async send(group: string, draws: Draw[]) {
    const [burst, rate] = group.split(':').map(Number);
    const byKey = new Map<string, Draw[]>();
    let now = 0;
    for (const d of draws) {
      let list = byKey.get(d.key);
      if (!list) byKey.set(d.key, (list = []));
      list.push(d);
      now = Math.max(now, d.now);
    }
    const keys = [...byKey.keys()];
    try {
      const r = await this.pool.query<{ key: string; tokens: number; taken: number }>({
        name: 'akas-buckets',
        text: this.sql,
        values: [burst, rate, now, keys, keys.map((k) => byKey.get(k)!.reduce((n, d) => n + d.take, 0))],
      });
      // Granted tokens go to the draws in the order they asked, each all it asked or nothing.
      const answers: Array<[Draw, boolean, string]> = [];
      const left = new Map<string, number>();
      const refunds: Array<[string, number]> = [];
      for (const row of r.rows) {
        let granted = Number(row.taken);
        for (const d of byKey.get(row.key)!) {
          const taken = d.take > 0 && granted >= d.take;
          if (taken) granted -= d.take;
          answers.push([d, taken, row.key]);
        }
        left.set(row.key, Number(row.tokens) + granted);
        if (granted > 0) refunds.push([row.key, granted]);
      }
      if (refunds.length) await this.pool.query(this.refundSql, [burst, refunds.map(([k]) => k), refunds.map(([, n]) => n)]);
      for (const [d, taken, key] of answers) d.resolve({ tokens: left.get(key)!, taken });
    } catch (e) {
      const refusal = this.failure(e);
      for (const d of draws) d.reject(refusal);
    }
  }
}
