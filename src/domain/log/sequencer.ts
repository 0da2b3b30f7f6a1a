// The log's appender (its sequencer, PROTOCOL 9.5): the one place entries are given their
// index, chained and added to the tree.
//
// Writers never touch the log directly: they put an item in the outbox inside their own
// transaction (a judgment and its log event commit together or not at all), and one
// appender drains the outbox in batches under the `log` lock: many entries per durable
// write, each append O(log n), the tree's complete subtrees stored so nothing is ever
// recomputed from the leaves. The `log` lock is the only thing that orders the log; on a
// shared database it orders the appenders of every process.
import {
  currentHmac,
  entryLeaf,
  GENESIS_PREV_HASH,
  hmacSha256Hex,
  leafHash,
  MAX_ENTRY_BYTES,
  nodesToStoreOnAppend,
  sha256Hex,
  type GetNode,
  type LogEntry,
  type NodeKeys,
} from '../../core/index.js';
import type { Tx } from '../../store/index.js';
import type { Ctx } from '../context.js';
import {
  attestationId,
  indexKeys,
  LOG_LOCK,
  LogEntries,
  LogHead,
  LogIndex,
  LogNodes,
  LogOutbox,
  newTicket,
  nodeKey,
  ownTicket,
  readHead,
  seqKey,
  storeNodes,
  type LogHeadRecord,
  type OutboxItem,
} from './spaces.js';

/** How often the whole outbox is scanned for items no notification announced (crash leftovers). */
const SWEEP_EVERY_MS = 30_000;

/**
 * The bytes the leaf of an item will have, at most: its seq, prevHash and time are not known
 * before the append, so the largest they can be is counted. C2SP tlog-tiles: "Entry bundles
 * are sequences of big-endian uint16 length-prefixed log entries", so a leaf holds at most
 * 65,535 bytes.
 */
export function leafBytesAtMost(item: Omit<OutboxItem, 'at'>): number {
  return entryLeaf({
    seq: Number.MAX_SAFE_INTEGER,
    prevHash: GENESIS_PREV_HASH,
    kind: item.kind,
    tier: item.tier,
    body: item.body,
    agent: item.agent,
    attestedAt: Number.MAX_SAFE_INTEGER,
  }).length;
}

/** Refuses (as a programming error: the routes refuse first) an item whose leaf would not fit an entry bundle. */
function assertFits(item: Omit<OutboxItem, 'at'>) {
  const n = leafBytesAtMost(item);
  if (n > MAX_ENTRY_BYTES) throw new RangeError(`a log entry of up to ${n} bytes is over the ${MAX_ENTRY_BYTES} an entry bundle holds`);
}

/**
 * Puts an item for the log in the outbox, inside the caller's transaction: it is appended
 * if and only if that transaction commits. Answers its ticket, to wait for it with appended().
 */
export function enqueueLogEntry(tx: Tx, ctx: Pick<Ctx, 'clock' | 'random'>, item: Omit<OutboxItem, 'at'>): string {
  assertFits(item);
  const at = ctx.clock.now();
  const ticket = newTicket(at, ctx.random);
  tx.put(LogOutbox, ticket, { at, ...item });
  return ticket;
}

/** The complete subtree at each level an append merges with: level -> its index and hash. */
type Edge = Map<number, { index: number; hash: Buffer }>;
/** An item to append, with its outbox ticket (null for a direct submission). */
type Taken = [ticket: string | null, item: OutboxItem];
/** One append transaction: the head and right edge it moves, and what every entry of it is made with. */
interface Batch {
  tx: Tx;
  head: LogHeadRecord;
  nodes: Edge;
  getNode: GetNode;
  hmac: NodeKeys['hmac'][number];
}
/** What one append batch appended: the outbox's items and the direct ones, each in order. */
interface Appended {
  fromOutbox: LogEntry[];
  direct: LogEntry[];
}

export interface SequencerOptions {
  /** Largest number of items one append transaction takes. */
  batch: number;
  /** Whether the whole outbox is swept every 30 s for items no notification announced. */
  sweep: boolean;
  /** Told of a failed append (the outbox keeps the items: the next write retries). */
  onError: (e: unknown) => void;
}

/**
 * The appender of one node's log. One instance per running node (and per store): it drains
 * the outbox whenever a write lands there.
 */
export class Sequencer {
  private draining: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly waiters = new Map<string, Array<(e: LogEntry) => void>>();
  private readonly unwatch: () => void;
  private readonly unwatchEntries: () => void;
  private readonly batch: number;
  /** Tickets of committed outbox items, in the order their commits were announced. */
  private readonly pending = new Set<string>();
  /**
   * The right edge of the tree after this process's last committed append: the complete
   * subtree at each level an append merges with. Valid only while the log holds `size`
   * entries (another process on a shared store may have appended since: then it is read
   * from the store again), it saves an append's O(log n) reads, and rehashing the entry a
   * leaf's hash comes from.
   */
  private frontier: { size: number; nodes: Edge } | null = null;
  /** Items submitted directly (submit()), waiting for the next append batch. */
  private direct: Array<{ item: OutboxItem; resolve: (e: LogEntry) => void; reject: (e: unknown) => void }> = [];
  private sweepDue = true;
  private readonly sweeper?: NodeJS.Timeout;
  /** Told of each batch this process appended, in log order, once it committed (the index follows the log so). */
  private readonly appendListeners = new Set<(entries: LogEntry[]) => void>();

  constructor(
    private readonly ctx: Pick<Ctx, 'store' | 'clock' | 'keys'>,
    options: SequencerOptions,
  ) {
    this.batch = options.batch;
    const { onError } = options;
    // The store announces each committed outbox key: the appender takes them in that order
    // with point reads, never scanning the outbox, whose front fills with tombstones of
    // drained items that LevelDB must step over until it compacts them. Each process takes the
    // items it enqueued: another's appender would only find them gone, under the same lock. On a
    // store one process holds, every item announced is its own (no one else writes there), so
    // this one rule holds on both stores and no strategy chooses it. The sweep picks up the
    // items of a process that died.
    this.unwatch = ctx.store.watch(
      LogOutbox,
      (ticket) => {
        if (!ownTicket(ticket)) return;
        this.pending.add(ticket);
        void this.drain().catch(onError);
      },
      // Announcements a shared store may have missed: the outbox is scanned instead.
      () => {
        this.sweepDue = true;
        void this.drain().catch(onError);
      },
    );
    // Entries appended by another process (a shared store) settle this process's waiters too.
    this.unwatchEntries = ctx.store.watch(
      LogEntries,
      (key) => {
        if (this.waiters.size) void this.ctx.store.get(LogEntries, key).then((e) => e && this.settle(e));
      },
      () => void this.recheckWaiters().catch(onError),
    );
    if (options.sweep) {
      this.sweeper = setInterval(() => {
        this.sweepDue = true;
        void this.drain().catch(onError);
      }, SWEEP_EVERY_MS);
      this.sweeper.unref();
    }
  }

  /** Appends everything in the outbox (coalesces concurrent calls; answers when the outbox was empty once). */
  drain(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.draining) {
      this.again = true;
      return this.draining;
    }
    // Started in a later microtask: a body that finishes without awaiting would otherwise
    // clear `draining` before it is even assigned, and every later drain() would wait on it.
    this.draining = Promise.resolve().then(async () => {
      try {
        do {
          this.again = false;
          while (this.pending.size > 0 || this.sweepDue || this.direct.length > 0) {
            const appended = await this.appendBatch();
            for (const e of appended) this.settle(e);
          }
        } while (this.again && !this.closed);
      } finally {
        this.draining = null;
      }
    });
    return this.draining;
  }

  /**
   * Appends an item that needs no transaction of its own (an attestation: nothing else is
   * written with it). It goes straight into the next append batch, skipping the outbox, so
   * it costs one durable write shared by the whole batch instead of two in a row (the
   * outbox's, then the append's). Resolves with the entry once the batch is on disk.
   */
  submit(item: Omit<OutboxItem, 'at'>): Promise<LogEntry> {
    if (this.closed) return Promise.reject(new Error('the log is closed'));
    try {
      assertFits(item);
    } catch (e) {
      return Promise.reject(e);
    }
    const done = new Promise<LogEntry>((resolve, reject) => this.direct.push({ item: { at: this.ctx.clock.now(), ...item }, resolve, reject }));
    void this.drain().catch(() => undefined); // a failed batch rejects its direct items itself
    return done;
  }

  /** Resolves with the entry once the item enqueued under this ticket is in the log. */
  async appended(ticket: string): Promise<LogEntry> {
    const done = new Promise<LogEntry>((resolve) => this.waiters.set(ticket, [...(this.waiters.get(ticket) ?? []), resolve]));
    if (!(await this.ctx.store.get(LogOutbox, ticket))) {
      // Already appended (or never enqueued): look for it among the newest entries.
      const found = (await this.newestEntries()).find(([, e]) => e.ticket === ticket);
      if (found) this.settle(found[1]);
      else if (this.waiters.has(ticket)) {
        this.waiters.delete(ticket);
        throw new Error(`no log item ${ticket} in the outbox or among the newest entries`);
      }
    } else this.pending.add(ticket); // announced or not, it is in the outbox: take it
    void this.drain().catch(() => undefined); // the next write retries; the caller waits for it
    return done;
  }

  /** Calls `listen` with the entries of each batch this process appends, once committed; answers a function that stops it. */
  onAppend(listen: (entries: LogEntry[]) => void): () => void {
    this.appendListeners.add(listen);
    return () => this.appendListeners.delete(listen);
  }

  /** Stops taking items: direct submissions waiting are refused, and the batch being appended finishes. */
  async close() {
    this.closed = true;
    for (const d of this.direct.splice(0)) d.reject(new Error('the log is closing'));
    this.unwatch();
    this.unwatchEntries();
    if (this.sweeper) clearInterval(this.sweeper);
    await this.draining?.catch(() => undefined);
  }

  private async appendBatch(): Promise<LogEntry[]> {
    const { tickets, direct } = await this.nextBatch();
    if (tickets.length === 0 && direct.length === 0) return [];
    for (const t of tickets) this.pending.delete(t);
    let result: Appended;
    try {
      result = await this.appendTickets(
        tickets,
        direct.map((d) => d.item),
      );
    } catch (e) {
      for (const t of tickets) this.pending.add(t); // they are still in the outbox: next time
      for (const d of direct) d.reject(e); // never written: their requests fail, nothing was acknowledged
      throw e;
    }
    // Our own deletions of these items were announced like puts: nothing to take there.
    for (const t of tickets) this.pending.delete(t);
    for (const [i, d] of direct.entries()) d.resolve(result.direct[i]);
    return result.fromOutbox;
  }

  // The tickets announced, or (at start, and now and then) whatever the outbox holds; and the
  // items submitted directly, in the same batch.
  private async nextBatch() {
    let tickets = [...this.pending].slice(0, this.batch);
    if (tickets.length === 0 && this.sweepDue) {
      this.sweepDue = false;
      tickets = (await this.ctx.store.list(LogOutbox, { limit: this.batch })).map(([t]) => t);
      if (tickets.length === this.batch) this.sweepDue = true;
    }
    const direct = this.direct.splice(0, Math.max(0, this.batch - tickets.length));
    return { tickets, direct };
  }

  // One append transaction under the `log` lock. One appender at a time, in every process: the
  // tree only ever grows at its right edge, which is what keeps each checkpoint consistent with
  // every one signed before it (checkpoints.ts). The cached edge changes only once it committed.
  private appendTickets(tickets: string[], direct: OutboxItem[]): Promise<Appended> {
    let edge = this.frontier; // kept as it is when nothing is appended
    return this.ctx.store
      .transact([LOG_LOCK], async (tx) => {
        const items = await take(tx, tickets, direct);
        if (items.length === 0) return { fromOutbox: [], direct: [] };
        const head = await readHead(tx);
        // A copy: the cached edge changes only once this batch has committed.
        const nodes: Edge = this.frontier?.size === head.size ? new Map(this.frontier.nodes) : new Map();
        const batch: Batch = { tx, head, nodes, getNode: edgeOr(nodes, storeNodes(tx)), hmac: currentHmac(this.ctx.keys) };
        const appended: LogEntry[] = [];
        for (const [ticket, item] of items) appended.push(await appendOne(batch, ticket, item));
        tx.put(LogHead, 'head', head);
        edge = { size: head.size, nodes };
        const fromOutbox = appended.slice(0, appended.length - direct.length);
        return { fromOutbox, direct: appended.slice(fromOutbox.length) };
      })
      .then(
        (r) => {
          this.frontier = edge;
          if (this.appendListeners.size && (r.fromOutbox.length || r.direct.length)) {
            const all = [...r.fromOutbox, ...r.direct];
            for (const listen of this.appendListeners) listen(all);
          }
          return r;
        },
        (e) => {
          this.frontier = null;
          throw e;
        },
      );
  }

  private settle(e: LogEntry) {
    const waiting = e.ticket ? this.waiters.get(e.ticket) : undefined;
    if (!waiting) return;
    this.waiters.delete(e.ticket!);
    for (const w of waiting) w(e);
  }

  // A shared store may have missed announcing entries another process appended: the waiters
  // whose item left the outbox look for it among the newest entries.
  private async recheckWaiters() {
    if (this.waiters.size === 0) return;
    for (const [, e] of await this.newestEntries()) if (e.ticket && this.waiters.has(e.ticket)) this.settle(e);
  }

  // The newest 10,000 entries, newest first: where an item just appended is.
  private async newestEntries() {
    const head = await readHead(this.ctx.store);
    return this.ctx.store.list(LogEntries, { lt: seqKey(head.size), gte: seqKey(Math.max(0, head.size - 10_000)), reverse: true });
  }
}

// Read under the lock: another appender (another process on a shared store) may have taken
// some of the tickets meanwhile, and a deletion is announced like a put.
async function take(tx: Tx, tickets: string[], direct: OutboxItem[]): Promise<Taken[]> {
  const items: Taken[] = [];
  for (const t of tickets) {
    const item = await tx.get(LogOutbox, t);
    if (item) items.push([t, item]);
  }
  for (const item of direct) items.push([null, item]);
  return items;
}

/**
 * Appends one item at the head of a batch: the entry (chained to the last by its hash, MACed
 * under the current node key), the subtrees it completes, its index keys. Moves the head and edge.
 */
async function appendOne({ tx, head, nodes, getNode, hmac }: Batch, ticket: string | null, item: OutboxItem): Promise<LogEntry> {
  if (ticket) tx.del(LogOutbox, ticket);
  const fields = { seq: head.size, prevHash: head.lastHash, kind: item.kind, tier: item.tier, body: item.body, agent: item.agent, attestedAt: item.at };
  const leaf = entryLeaf(fields);
  const hash = sha256Hex(leaf);
  const entry: LogEntry = {
    id: attestationId(head.size),
    ...fields,
    hash,
    mac: hmacSha256Hex(hmac.key, hash),
    signingKeyId: hmac.signingKeyId,
    ...(ticket ? { ticket } : {}),
  };
  tx.put(LogEntries, seqKey(entry.seq), entry);
  // RFC 9162 2.1.1: "The hash of a list with one entry (also known as a leaf hash) is:
  // MTH({d[0]}) = SHA-256(0x00 || d[0])". Each subtree the leaf completes is stored once, so a
  // root or a proof of any size is read, never recomputed from the leaves.
  for (const n of await nodesToStoreOnAppend(head.size, leafHash(leaf), getNode)) {
    nodes.set(n.level, { index: n.index, hash: n.hash });
    if (n.level > 0) tx.put(LogNodes, nodeKey(n.level, n.index), n.hash.toString('hex'));
  }
  for (const k of indexKeys(entry)) tx.put(LogIndex, k, { seq: entry.seq });
  head.size += 1;
  head.lastHash = hash;
  return entry;
}

/** A node accessor that answers the right edge's subtrees from memory and the rest from the store. */
function edgeOr(nodes: Edge, fromStore: GetNode): GetNode {
  return (level, index) => {
    const known = nodes.get(level);
    return known?.index === index ? known.hash : fromStore(level, index);
  };
}
