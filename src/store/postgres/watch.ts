// Store.watch across processes: every transaction that writes calls pg_notify inside itself
// with the keys it wrote, so PostgreSQL delivers them to every listening process if and only
// if it commits, in commit order. Each process keeps one LISTEN connection, this channel.
//
// The staleness bound (ARCHITECTURE 7). Notifications are not lost on a live connection, but
// a connection can die or stall. So the channel sends itself a heartbeat (a NOTIFY on its own
// connection) every HEARTBEAT_EVERY_MS. PostgreSQL keeps one notification queue in commit
// order for all sessions, so receiving a heartbeat proves that every notification committed
// before it was sent has been received. A heartbeat not back within HEARTBEAT_TIMEOUT_MS
// declares the channel lost: every watcher's `lost` runs (caches drop everything), the
// connection is replaced, `lost` runs again once the new one listens, and on every tick
// without a live channel. So a commit at time t reaches a process's caches, or those caches
// are dropped, by t + HEARTBEAT_EVERY_MS + HEARTBEAT_TIMEOUT_MS: WATCH_BOUND_MS.
import type pg from 'pg';
import type { PgPoolSource, PgTarget } from './connect.js';
import { poolConfig } from './connect.js';

export const HEARTBEAT_EVERY_MS = 500;
export const HEARTBEAT_TIMEOUT_MS = 1500;
/** A commit in one process is seen by every other process's watchers, or they are told `lost`, within this. */
export const WATCH_BOUND_MS = HEARTBEAT_EVERY_MS + HEARTBEAT_TIMEOUT_MS;

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. */
const MAX_PAYLOAD = 7900;

/** Batches of changed keys from other processes, as delivered. */
export interface ChannelEvents {
  keys(entries: Array<[space: string, key: string]>): void;
  /** Some keys may have been missed: of these spaces, or (undefined) of every space. */
  lost(spaces?: string[]): void;
}

/** The payloads that announce a batch's keys, each under the size PostgreSQL accepts. */
export function notifyPayloads(origin: string, entries: Array<[string, string]>): string[] {
  const out: string[] = [];
  const head = `{"o":${JSON.stringify(origin)},"k":[`;
  let body: string[] = [];
  let size = head.length + 2;
  const lostSpaces = new Set<string>();
  for (const entry of entries) {
    const item = JSON.stringify(entry);
    const bytes = Buffer.byteLength(item) + 1;
    if (head.length + 2 + bytes > MAX_PAYLOAD) {
      // A key too long to announce: the watchers of its space are told to drop everything.
      lostSpaces.add(entry[0]);
      continue;
    }
    if (size + bytes > MAX_PAYLOAD) {
      out.push(head + body.join(',') + ']}');
      body = [];
      size = head.length + 2;
    }
    body.push(item);
    size += bytes;
  }
  if (body.length) out.push(head + body.join(',') + ']}');
  if (lostSpaces.size) out.push(JSON.stringify({ o: origin, lost: [...lostSpaces] }));
  return out;
}

/** The listening connection, and the listeners the channel put on it (taken off before it goes back). */
interface Listening {
  client: pg.PoolClient;
  onError: () => void;
  onNotification: (n: pg.Notification) => void;
}

export class WatchChannel {
  /** A pool of one connection (its source may keep it for the next store of the schema). */
  private readonly pool: pg.Pool;
  private listening: Listening | null = null;
  private connecting: Promise<void> | null = null;
  private seq = 0;
  private readonly waiting = new Map<number, NodeJS.Timeout>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Heartbeats received (tests and the bench read it). */
  beats = 0;
  /** Times the channel was declared lost. */
  losses = 0;

  constructor(
    private readonly target: PgTarget,
    private readonly origin: string,
    private readonly pools: PgPoolSource,
    private readonly events: ChannelEvents,
  ) {
    this.pool = pools.pool(target, 'listen', poolConfig(target, 1, 'akas-watch'));
  }

  private get client(): pg.PoolClient | null {
    return this.listening?.client ?? null;
  }

  /** Connects and listens; the heartbeat starts. */
  async start(): Promise<void> {
    await this.connect();
    this.timer = setInterval(() => this.tick(), HEARTBEAT_EVERY_MS);
    this.timer.unref();
  }

  private async connect(): Promise<void> {
    const client = await this.pool.connect();
    const listening: Listening = {
      client,
      onError: () => this.lose(client),
      onNotification: (n) => this.receive(client, n.payload ?? ''),
    };
    client.on('error', listening.onError);
    client.on('notification', listening.onNotification);
    try {
      await client.query(`LISTEN "${this.target.channel}"`);
    } catch (e) {
      this.letGo(listening, e as Error);
      throw e;
    }
    if (this.closed) {
      await this.giveUp(listening, true);
      return;
    }
    this.listening = listening;
  }

  /** Takes the channel's listeners off a connection and gives it up: destroyed (after an error), or back to the pool. */
  private letGo(listening: Listening, error?: Error) {
    const { client } = listening;
    client.off('error', listening.onError);
    client.off('notification', listening.onNotification);
    // An error after this one, before the pool has the connection, must not crash the process.
    if (error) client.on('error', () => undefined);
    client.release(error);
  }

  /**
   * Gives up the listening connection of a closed channel. Only a connection that serves a later
   * store (a source that keeps it) is cleaned (UNLISTEN) and given back, and only when it is
   * answering (`answering`: no heartbeat outstanding, so an UNLISTEN would not wait behind a
   * stuck one); any other is closed at once, as is one that cannot even UNLISTEN.
   */
  private async giveUp(listening: Listening, answering: boolean) {
    if (!this.pools.keeps || !answering) return this.letGo(listening, new Error('the notification channel closed'));
    let error: Error | undefined;
    try {
      await listening.client.query('UNLISTEN *');
    } catch (e) {
      error = e as Error;
    }
    this.letGo(listening, error);
  }

  private receive(from: pg.PoolClient, payload: string) {
    if (from !== this.client) return;
    if (payload.startsWith('hb:')) {
      const [, origin, n] = payload.split(':');
      if (origin !== this.origin) return;
      this.beats++;
      // In commit order: this beat vouches for every earlier one too.
      const upTo = Number(n);
      for (const [seq, timer] of this.waiting) {
        if (seq > upTo) continue;
        clearTimeout(timer);
        this.waiting.delete(seq);
      }
      return;
    }
    let msg: { o?: string; k?: Array<[string, string]>; lost?: string[] };
    try {
      msg = JSON.parse(payload);
    } catch {
      return; // not ours
    }
    if (msg.o === this.origin) return; // our own commits were announced locally, at once
    if (msg.k) this.events.keys(msg.k);
    if (msg.lost) this.events.lost(msg.lost);
  }

  private tick() {
    if (this.closed) return;
    const client = this.client;
    if (!client) {
      // No live channel: whatever was cached since the last tick may be stale.
      this.events.lost();
      this.reconnect();
      return;
    }
    const seq = ++this.seq;
    this.waiting.set(
      seq,
      setTimeout(() => this.lose(client), HEARTBEAT_TIMEOUT_MS),
    );
    client.query(`NOTIFY "${this.target.channel}", 'hb:${this.origin}:${seq}'`).catch(() => this.lose(client));
  }

  /** Declares the channel lost (if `client` is still the live one): watchers drop everything, and a new connection is made. */
  private lose(client: pg.PoolClient) {
    if (this.closed || client !== this.client || !this.listening) return;
    const listening = this.listening;
    this.listening = null;
    this.losses++;
    for (const t of this.waiting.values()) clearTimeout(t);
    this.waiting.clear();
    this.letGo(listening, new Error('the notification channel was lost'));
    this.events.lost();
    this.reconnect();
  }

  private reconnect() {
    if (this.connecting || this.closed) return;
    this.connecting = this.connect()
      .then(() => {
        // Notifications committed while no connection listened were missed.
        if (this.client) this.events.lost();
      })
      .catch(() => undefined) // the next tick tries again
      .finally(() => (this.connecting = null));
  }

  /** The backend pid of the listening connection (tests terminate it to play a lost channel). */
  async backendPid(): Promise<number | null> {
    if (!this.client) return null;
    const r = await this.client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return r.rows[0].pid;
  }

  get live() {
    return this.client !== null;
  }

  async close() {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    // A heartbeat not back yet: the connection may be stuck, and an UNLISTEN would wait behind it.
    const stalled = this.waiting.size > 0;
    for (const t of this.waiting.values()) clearTimeout(t);
    this.waiting.clear();
    await this.connecting?.catch(() => undefined);
    const listening = this.listening;
    this.listening = null;
    if (listening) await this.giveUp(listening, !stalled);
    await this.pools.release(this.pool).catch(() => undefined);
  }
}
