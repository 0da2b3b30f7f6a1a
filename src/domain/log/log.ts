// The attestation chain and its transparency log (PROTOCOL 9): every attestation, and the
// node's own audit events (judgments recorded, proposals decided), appended to one HMAC
// chain whose entries are the leaves of an RFC 9162 Merkle tree with signed checkpoints.
//
// Writers never touch the log directly: they put an item in the outbox inside their own
// transaction (a judgment and its log event commit together or not at all), and one
// appender drains the outbox in batches under the `log` lock: many entries per durable
// write, each append O(log n), the tree's complete subtrees stored so nothing is ever
// recomputed from the leaves. The `log` lock is the only thing that orders the log; on a
// shared database it orders the appenders of every process.
import {
  addSignatureLines,
  consistencyProof,
  currentHmac,
  entryHash,
  sha256Hex,
  entryLeaf,
  formatCheckpoint,
  GENESIS_PREV_HASH,
  hmacSha256Hex,
  inclusionProof,
  leafHash,
  MAX_ENTRY_BYTES,
  nodesToStoreOnAppend,
  openNote,
  rootAt,
  safeEqual,
  ServiceError,
  signNote,
  type AttestationTier,
  type GetNode,
  type LogEntry,
  type NodeKeys,
} from '../../core/index.js';
import { randomBytes } from 'node:crypto';
import { space, type Store, type Tx } from '../../store/index.js';
import type { Ctx } from '../context.js';

/** An item waiting to be appended (keyed in the outbox by its ticket). */
export interface OutboxItem {
  kind: string;
  tier: AttestationTier;
  body: Record<string, unknown>;
  agent: string | null;
  at: number;
}

export interface StoredCheckpoint {
  size: number;
  /** Root hash, hex. */
  root: string;
  /** The signed note (C2SP tlog-checkpoint), with the log's signature only. */
  note: string;
  at: number;
  /** Witnesses' cosignature lines (C2SP tlog-cosignature), each verified before it was kept. */
  cosignatures?: string[];
  /** When every configured witness had answered for this checkpoint (cosigned or not), ms. */
  witnessed?: number;
}

/** The checkpoint as served: the log's signed note followed by the witnesses' cosignatures. */
export const cosignedNote = (cp: StoredCheckpoint) => addSignatureLines(cp.note, cp.cosignatures ?? []);

const pad = (n: number, width = 16) => String(n).padStart(width, '0');

/** seq -> entry. */
export const LogEntries = space<LogEntry>('log-entries');
/** `${level}:${index}` -> hex hash of that complete subtree of two leaves or more (leaves are hashed from their entries). */
export const LogNodes = space<string>('log-nodes');
export const LogHead = space<{ size: number; lastHash: string }>('log-head');
/** size -> checkpoint. */
export const LogCheckpoints = space<StoredCheckpoint>('log-checkpoints');
export const LogOutbox = space<OutboxItem>('log-outbox');
/** Secondary keys -> seq: `kind:K:seq`, `subject:SHA:seq`, `agent:TAG:seq`, `proposal:ID:seq`. */
export const LogIndex = space<{ seq: number }>('log-index');

export const LOG_LOCK = 'log';
const checkpointLock = (size: number) => `log-checkpoint:${size}`;
/** "name+keyID" of a note signature line, from its text. */
const cosignatureId = (line: string) => {
  const m = /^\u2014 (\S+) (\S+)$/.exec(line.replace(/\n$/, ''));
  return m ? `${m[1]}+${Buffer.from(m[2], 'base64').subarray(0, 4).toString('hex')}` : line;
};
/** How often the whole outbox is scanned for items no notification announced (crash leftovers). */
const SWEEP_EVERY_MS = 30_000;
const nodeKey = (level: number, index: number) => `${pad(level, 2)}:${pad(index)}`;
export const seqKey = (seq: number) => pad(seq);

/**
 * An attestation's id: att_ + its log index as 16 hex digits. Ids are given at append time,
 * in log order; the log is public, so an id that tells the order gives nothing away, and it
 * saves an id index on every append.
 */
export const attestationId = (seq: number) => `att_${seq.toString(16).padStart(16, '0')}`;
/** The log index an attestation id names, or undefined. */
export const seqOfId = (id: string) => (/^att_[0-9a-f]{16}$/.test(id) ? Number.parseInt(id.slice(4), 16) : undefined);

// Outbox keys (tickets) sort by enqueue time, then a process-wide counter, then the process
// that enqueued and randomness (several processes may enqueue in the same millisecond).
let counter = 0;
const PROCESS = randomBytes(4).toString('hex');
/** Whether this process enqueued the ticket (on a shared store, each appends its own at once). */
const ownTicket = (ticket: string) => ticket.split(':')[2] === PROCESS;

/**
 * The bytes the leaf of an item will have, at most: its seq, prevHash and time are not known
 * before the append, so the largest they can be is counted. C2SP tlog-tiles entry bundles
 * prefix each leaf with a uint16 length, so a leaf holds at most 65,535 bytes.
 */
export function leafBytesAtMost(item: Omit<OutboxItem, 'at'>): number {
  return entryLeaf({ seq: Number.MAX_SAFE_INTEGER, prevHash: GENESIS_PREV_HASH, kind: item.kind, tier: item.tier, body: item.body, agent: item.agent, attestedAt: Number.MAX_SAFE_INTEGER }).length;
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
  const ticket = `${pad(at, 15)}:${pad(counter++ % 1e9, 9)}:${PROCESS}:${ctx.random(4).toString('hex')}`;
  tx.put(LogOutbox, ticket, { at, ...item });
  return ticket;
}

/** The secondary index keys of an entry. */
function indexKeys(e: LogEntry): string[] {
  const keys = [`kind:${e.kind}:${pad(e.seq)}`];
  if (e.agent) keys.push(`agent:${e.agent}:${pad(e.seq)}`);
  const subject = e.body.subjectSha256;
  if (typeof subject === 'string') keys.push(`subject:${subject}:${pad(e.seq)}`);
  const proposalId = e.body.proposalId;
  if (typeof proposalId === 'string') keys.push(`proposal:${proposalId}:${pad(e.seq)}`);
  return keys;
}

/** The leaf hash of an entry (RFC 9162: SHA-256 of 0x00 and the leaf bytes). */
export const entryLeafHash = (e: LogEntry) => leafHash(entryLeaf(e));

/**
 * A node accessor over a store or a transaction: subtrees of two leaves or more are stored;
 * a leaf's hash is computed from its entry (one write less per append).
 */
export function storeNodes(reader: Pick<Tx, 'get'>): GetNode {
  return async (level, index) => {
    if (level === 0) {
      const e = await reader.get(LogEntries, seqKey(index));
      if (!e) throw new Error(`log entry ${index} is missing`);
      return entryLeafHash(e);
    }
    const hex = await reader.get(LogNodes, nodeKey(level, index));
    if (hex === undefined) throw new Error(`log node ${level}:${index} is missing`);
    return Buffer.from(hex, 'hex');
  };
}

export interface LogOptions {
  /** Largest number of items one append transaction takes. */
  batch?: number;
  /** How often a new checkpoint is made when the log grew (ms); 0 turns the timer off. */
  checkpointEveryMs?: number;
  /** Told of a failed append or checkpoint (the outbox keeps the items: the next write retries). */
  onError?: (e: unknown) => void;
}

/**
 * The appender and the reader of one node's log. One instance per running node (and per
 * store): it drains the outbox whenever a write lands there, and makes a checkpoint at
 * most every second while the log grows.
 */
export class TransparencyLog {
  private draining: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly waiters = new Map<string, Array<(e: LogEntry) => void>>();
  private readonly unwatch: () => void;
  private readonly unwatchEntries: () => void;
  private readonly timer?: NodeJS.Timeout;
  private readonly batch: number;
  private checkpointing: Promise<StoredCheckpoint> | null = null;
  /** Tickets of committed outbox items, in the order their commits were announced. */
  private readonly pending = new Set<string>();
  /**
   * The right edge of the tree after this process's last committed append: the complete
   * subtree at each level an append merges with. Valid only while the log holds `size`
   * entries (another process on a shared store may have appended since: then it is read
   * from the store again), it saves an append's O(log n) reads, and rehashing the entry a
   * leaf's hash comes from.
   */
  private frontier: { size: number; nodes: Map<number, { index: number; hash: Buffer }> } | null = null;
  /** Items submitted directly (submit()), waiting for the next append batch. */
  private direct: Array<{ item: OutboxItem; resolve: (e: LogEntry) => void; reject: (e: unknown) => void }> = [];
  private sweepDue = true;
  private readonly sweeper?: NodeJS.Timeout;
  private readonly checkpointListeners = new Set<(cp: StoredCheckpoint) => void>();

  constructor(
    private readonly ctx: Pick<Ctx, 'store' | 'clock' | 'keys'>,
    options: LogOptions = {},
  ) {
    this.batch = options.batch ?? 500;
    const onError = options.onError ?? (() => undefined);
    // The store announces each committed outbox key: the appender takes them in that order
    // with point reads, never scanning the outbox, whose front fills with tombstones of
    // drained items that LevelDB must step over until it compacts them. On a shared store
    // each process takes the items it enqueued (the others' appenders would only find them
    // gone, under the same lock); the sweep picks up those of a process that died.
    this.unwatch = ctx.store.watch(
      LogOutbox,
      (ticket) => {
        if (ctx.store.shared && !ownTicket(ticket)) return;
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
    const every = options.checkpointEveryMs ?? 1000;
    if (every > 0) {
      this.timer = setInterval(() => void this.checkpoint().catch(onError), every);
      this.timer.unref();
      this.sweeper = setInterval(() => {
        this.sweepDue = true;
        void this.drain().catch(onError);
      }, SWEEP_EVERY_MS);
      this.sweeper.unref();
    }
  }

  get store() {
    return this.ctx.store;
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

  private async appendBatch(): Promise<LogEntry[]> {
    const { store } = this.ctx;
    // The tickets announced, or (at start, and now and then) whatever the outbox holds; and
    // the items submitted directly, in the same batch.
    let tickets = [...this.pending].slice(0, this.batch);
    if (tickets.length === 0 && this.sweepDue) {
      this.sweepDue = false;
      tickets = (await store.list(LogOutbox, { limit: this.batch })).map(([t]) => t);
      if (tickets.length === this.batch) this.sweepDue = true;
    }
    const direct = this.direct.splice(0, Math.max(0, this.batch - tickets.length));
    if (tickets.length === 0 && direct.length === 0) return [];
    for (const t of tickets) this.pending.delete(t);
    let result: { fromOutbox: LogEntry[]; direct: LogEntry[] };
    try {
      result = await this.appendTickets(tickets, direct.map((d) => d.item));
    } catch (e) {
      for (const t of tickets) this.pending.add(t); // they are still in the outbox: next time
      for (const d of direct) d.reject(e); // never written: their requests fail, nothing was acknowledged
      throw e;
    }
    // Our own deletions of these items were announced like puts: nothing to take there.
    for (const t of tickets) this.pending.delete(t);
    direct.forEach((d, i) => d.resolve(result.direct[i]));
    return result.fromOutbox;
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

  private appendTickets(tickets: string[], direct: OutboxItem[]): Promise<{ fromOutbox: LogEntry[]; direct: LogEntry[] }> {
    const { store, keys } = this.ctx;
    let edge = this.frontier; // kept as it is when nothing is appended
    return store.transact([LOG_LOCK], async (tx) => {
      // Read under the lock: another appender (another process on a shared store) may have
      // taken some of them meanwhile, and a deletion is announced like a put.
      const items: Array<[string | null, OutboxItem]> = [];
      for (const t of tickets) {
        const item = await tx.get(LogOutbox, t);
        if (item) items.push([t, item]);
      }
      for (const item of direct) items.push([null, item]);
      if (items.length === 0) return { fromOutbox: [], direct: [] };
      const head = (await tx.get(LogHead, 'head')) ?? { size: 0, lastHash: GENESIS_PREV_HASH };
      const hmac = currentHmac(keys);
      // A copy: the cached edge changes only once this batch has committed.
      const nodes = this.frontier?.size === head.size ? new Map(this.frontier.nodes) : new Map<number, { index: number; hash: Buffer }>();
      const fromStore = storeNodes(tx);
      const getNode: GetNode = (level, index) => {
        const known = nodes.get(level);
        return known?.index === index ? known.hash : fromStore(level, index);
      };
      const appended: LogEntry[] = [];
      for (const [ticket, item] of items) {
        if (ticket) tx.del(LogOutbox, ticket);
        const fields = { seq: head.size, prevHash: head.lastHash, kind: item.kind, tier: item.tier, body: item.body, agent: item.agent, attestedAt: item.at };
        const leaf = entryLeaf(fields);
        const hash = sha256Hex(leaf);
        const entry: LogEntry = { id: attestationId(head.size), ...fields, hash, mac: hmacSha256Hex(hmac.key, hash), signingKeyId: hmac.signingKeyId, ...(ticket ? { ticket } : {}) };
        tx.put(LogEntries, seqKey(entry.seq), entry);
        for (const n of await nodesToStoreOnAppend(head.size, leafHash(leaf), getNode)) {
          nodes.set(n.level, { index: n.index, hash: n.hash });
          if (n.level > 0) tx.put(LogNodes, nodeKey(n.level, n.index), n.hash.toString('hex'));
        }
        for (const k of indexKeys(entry)) tx.put(LogIndex, k, { seq: entry.seq });
        head.size += 1;
        head.lastHash = hash;
        appended.push(entry);
      }
      tx.put(LogHead, 'head', head);
      const fromOutbox = appended.slice(0, appended.length - direct.length);
      edge = { size: head.size, nodes };
      return { fromOutbox, direct: appended.slice(fromOutbox.length) };
    }).then(
      (r) => {
        this.frontier = edge;
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
    const head = await this.head();
    const recent = await this.ctx.store.list(LogEntries, { lt: seqKey(head.size), gte: seqKey(Math.max(0, head.size - 10_000)), reverse: true });
    for (const [, e] of recent) if (e.ticket && this.waiters.has(e.ticket)) this.settle(e);
  }

  /** Resolves with the entry once the item enqueued under this ticket is in the log. */
  async appended(ticket: string): Promise<LogEntry> {
    const done = new Promise<LogEntry>((resolve) => this.waiters.set(ticket, [...(this.waiters.get(ticket) ?? []), resolve]));
    if (!(await this.ctx.store.get(LogOutbox, ticket))) {
      // Already appended (or never enqueued): look for it among the newest entries.
      const head = await this.head();
      const recent = await this.ctx.store.list(LogEntries, { lt: seqKey(head.size), gte: seqKey(Math.max(0, head.size - 10_000)), reverse: true });
      const found = recent.find(([, e]) => e.ticket === ticket);
      if (found) this.settle(found[1]);
      else if (this.waiters.has(ticket)) {
        this.waiters.delete(ticket);
        throw new Error(`no log item ${ticket} in the outbox or among the newest entries`);
      }
    }
    else this.pending.add(ticket); // announced or not, it is in the outbox: take it
    void this.drain().catch(() => undefined); // the next write retries; the caller waits for it
    return done;
  }

  async head(): Promise<{ size: number; lastHash: string }> {
    return (await this.ctx.store.get(LogHead, 'head')) ?? { size: 0, lastHash: GENESIS_PREV_HASH };
  }

  async entry(seq: number): Promise<LogEntry | undefined> {
    return this.ctx.store.get(LogEntries, seqKey(seq));
  }

  async entryById(id: string): Promise<LogEntry | undefined> {
    const seq = seqOfId(id);
    return seq === undefined ? undefined : this.entry(seq);
  }

  /** Entries start (inclusive) to end (exclusive), in order. */
  async entries(start: number, end: number): Promise<LogEntry[]> {
    if (end <= start) return [];
    return (await this.ctx.store.list(LogEntries, { gte: seqKey(start), lt: seqKey(end) })).map(([, e]) => e);
  }

  /** The newest checkpoint stored, if any. */
  async latestCheckpoint(): Promise<StoredCheckpoint | undefined> {
    const [last] = await this.ctx.store.list(LogCheckpoints, { reverse: true, limit: 1 });
    return last?.[1];
  }

  /**
   * The newest checkpoint, first making one when the log grew past the last: every
   * checkpoint handed out commits to everything appended before the request.
   */
  async checkpoint(): Promise<StoredCheckpoint> {
    // A checkpoint already being made may predate entries appended before this call.
    const want = (await this.head()).size;
    let cp = await this.checkpointOnce();
    while (cp.size < want) cp = await this.checkpointOnce();
    return cp;
  }

  private checkpointOnce(): Promise<StoredCheckpoint> {
    if (this.checkpointing) return this.checkpointing;
    this.checkpointing = Promise.resolve().then(async () => {
      try {
        const [head, last] = await Promise.all([this.head(), this.latestCheckpoint()]);
        // An empty log has a checkpoint too (size 0, the empty root): a monitor starts there.
        if (last && last.size >= head.size) return last;
        return await this.makeCheckpoint(head.size);
      } finally {
        this.checkpointing = null;
      }
    });
    return this.checkpointing;
  }

  private async makeCheckpoint(size: number): Promise<StoredCheckpoint> {
    const { store, keys, clock } = this.ctx;
    const root = await rootAt(size, storeNodes(store));
    const note = signNote(formatCheckpoint({ origin: keys.log.origin, size, rootHash: root }), keys.log.origin, keys.log.privateKey);
    const made: StoredCheckpoint = { size, root: root.toString('hex'), note, at: clock.now() };
    const cp = await store.transact([checkpointLock(size)], async (tx) => {
      const had = await tx.get(LogCheckpoints, seqKey(size));
      if (!had) tx.put(LogCheckpoints, seqKey(size), made);
      return had ?? made;
    });
    // Told after the commit, off the caller's path (the witnesses are asked from here).
    for (const listen of this.checkpointListeners) queueMicrotask(() => listen(cp));
    return cp;
  }

  /** Calls `listen` with each checkpoint this process makes; answers a function that stops it. */
  onCheckpoint(listen: (cp: StoredCheckpoint) => void): () => void {
    this.checkpointListeners.add(listen);
    return () => this.checkpointListeners.delete(listen);
  }

  /**
   * Keeps witnesses' cosignature lines with a stored checkpoint (a line of the same witness
   * name and key ID replaces the older one), and marks the checkpoint witnessed when `witnessed`
   * is given. The caller verified each line.
   */
  async addCosignatures(size: number, lines: Array<{ id: string; line: string }>, witnessed?: number): Promise<StoredCheckpoint | undefined> {
    return this.ctx.store.transact([checkpointLock(size)], async (tx) => {
      const cp = await tx.get(LogCheckpoints, seqKey(size));
      if (!cp) return undefined;
      const kept = new Map((cp.cosignatures ?? []).map((l) => [cosignatureId(l), l]));
      for (const { id, line } of lines) kept.set(id, line.replace(/\n$/, ''));
      const next: StoredCheckpoint = { ...cp, cosignatures: [...kept.values()], ...(witnessed !== undefined && !cp.witnessed ? { witnessed } : {}) };
      tx.put(LogCheckpoints, seqKey(size), next);
      return next;
    });
  }

  /** The newest stored checkpoint every configured witness has answered for, if any among the newest `scan`. */
  async latestWitnessed(scan = 256): Promise<StoredCheckpoint | undefined> {
    // Newest first, stopping at the first witnessed one (usually the newest or the one before).
    for await (const [, cp] of this.ctx.store.iterate(LogCheckpoints, { reverse: true, limit: scan })) if (cp.witnessed) return cp;
    return undefined;
  }

  /** A stored checkpoint of exactly this size. */
  checkpointAt(size: number): Promise<StoredCheckpoint | undefined> {
    return this.ctx.store.get(LogCheckpoints, seqKey(size));
  }

  /** The inclusion proof of entry `index` in the tree of `size` entries (size defaults to the latest checkpoint). */
  async inclusion(index: number, size: number): Promise<Buffer[]> {
    const head = await this.head();
    if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size || size > head.size) {
      throw new ServiceError('validation_failed', `No inclusion proof of entry ${index} in a tree of ${size} (the log holds ${head.size}).`, {
        errors: [{ field: 'index', reason: `must be below size, and size at most ${head.size}` }],
      });
    }
    return inclusionProof(index, size, storeNodes(this.ctx.store));
  }

  /** The consistency proof between two sizes (0 < old <= new <= the log's size). */
  async consistency(oldSize: number, newSize: number): Promise<Buffer[]> {
    const head = await this.head();
    if (!Number.isSafeInteger(oldSize) || !Number.isSafeInteger(newSize) || oldSize < 1 || oldSize > newSize || newSize > head.size) {
      throw new ServiceError('validation_failed', `No consistency proof from ${oldSize} to ${newSize} (the log holds ${head.size}).`, {
        errors: [{ field: 'old', reason: `1 <= old <= new <= ${head.size}` }],
      });
    }
    return consistencyProof(oldSize, newSize, storeNodes(this.ctx.store));
  }

  /** Entries whose secondary index starts with prefix (kind:K:, agent:T:, subject:S:, proposal:P:), after the cursor seq. */
  async byIndex(prefix: string, limit: number, after?: number): Promise<LogEntry[]> {
    const refs = await this.ctx.store.list(LogIndex, { gt: after === undefined ? prefix : `${prefix}${pad(after)}`, lt: `${prefix}\uffff`, limit });
    const out: LogEntry[] = [];
    for (const [, ref] of refs) {
      const e = await this.entry(ref.seq);
      if (e) out.push(e);
    }
    return out;
  }

  /** The judgment.recorded event of a judgment of a proposal, once appended. */
  async judgmentEntry(proposalId: string, judgmentId: string): Promise<LogEntry | undefined> {
    const entries = await this.byIndex(`proposal:${proposalId}:`, 1000);
    return entries.find((e) => e.body.event === 'judgment.recorded' && e.body.judgmentId === judgmentId);
  }

  async close() {
    this.closed = true;
    this.checkpointListeners.clear();
    for (const d of this.direct.splice(0)) d.reject(new Error('the log is closing'));
    this.unwatch();
    this.unwatchEntries();
    if (this.timer) clearInterval(this.timer);
    if (this.sweeper) clearInterval(this.sweeper);
    await this.draining?.catch(() => undefined);
    await this.checkpointing?.catch(() => undefined);
  }
}

export interface LogCheck {
  ok: boolean;
  entries: number;
  checkpoints: number;
  problems: string[];
}

/**
 * The node's own audit of its log (`akas log check`): every entry in sequence, its hash and
 * chain link, its MAC under the node key named, its leaf against the stored tree, and every
 * stored checkpoint's signature and root against the tree rebuilt from the entries. A removed,
 * reordered or edited entry, or a rewritten tree, is a problem.
 */
export async function checkLog(store: Store, keys: NodeKeys, onProgress?: (n: number) => void): Promise<LogCheck> {
  const problems: string[] = [];
  const hmacs = new Map(keys.hmac.map((h) => [h.signingKeyId, h.key]));
  const checkpoints = (await store.list(LogCheckpoints)).map(([, c]) => c);
  let nextCheckpoint = 0;
  // The complete subtrees on the right edge of the tree so far: all an append needs.
  const frontier = new Map<number, { index: number; hash: Buffer }>();
  const fromFrontier = (level: number, index: number) => {
    const f = frontier.get(level);
    if (!f || f.index !== index) throw new Error(`no node ${level}:${index} on the frontier`);
    return f.hash;
  };
  let prev = GENESIS_PREV_HASH;
  let seq = 0;
  // A badly damaged log would list a problem per entry: the first fifty say enough.
  const enough = () => problems.length >= 50;
  // The checkpoint of the empty log (a node idle for its first second signs one).
  while (nextCheckpoint < checkpoints.length && checkpoints[nextCheckpoint].size === 0) {
    checkCheckpoint(checkpoints[nextCheckpoint++], rootAt(0, fromFrontier), keys, problems);
  }
  for await (const [key, e] of store.iterate(LogEntries)) {
    if (key !== seqKey(seq) || e.seq !== seq) {
      problems.push(`entry at ${key} carries seq ${e.seq}, expected ${seq}: an entry was removed or moved`);
    }
    if (e.prevHash !== prev) problems.push(`entry ${seq} does not link to the previous entry's hash`);
    if (e.id !== attestationId(e.seq)) problems.push(`entry ${seq} carries the id ${e.id}`);
    const hash = entryHash(e);
    if (hash !== e.hash) problems.push(`entry ${seq} (${e.id}) was edited: its fields hash to ${hash.slice(0, 16)}..., not ${e.hash.slice(0, 16)}...`);
    const key2 = hmacs.get(e.signingKeyId);
    if (!key2) problems.push(`entry ${seq}: MAC key ${e.signingKeyId} is not one of this node's`);
    else if (!safeEqual(hmacSha256Hex(key2, e.hash), e.mac)) problems.push(`entry ${seq}: its MAC does not verify`);
    for (const n of nodesToStoreOnAppend(seq, leafHash(entryLeaf(e)), fromFrontier)) {
      frontier.set(n.level, { index: n.index, hash: n.hash });
      if (n.level === 0) continue; // leaves are not stored: they are the entries
      const stored = await store.get(LogNodes, nodeKey(n.level, n.index));
      if (stored !== n.hash.toString('hex')) problems.push(`tree node ${n.level}:${n.index} differs from the entries (entry ${seq})`);
    }
    prev = e.hash;
    seq += 1;
    while (nextCheckpoint < checkpoints.length && checkpoints[nextCheckpoint].size === seq) {
      checkCheckpoint(checkpoints[nextCheckpoint++], rootAt(seq, fromFrontier), keys, problems);
    }
    if (enough()) {
      problems.push(`stopped after ${seq} entries`);
      return { ok: false, entries: seq, checkpoints: checkpoints.length, problems };
    }
    if (onProgress && seq % 10_000 === 0) onProgress(seq);
  }
  for (const c of checkpoints.slice(nextCheckpoint)) problems.push(`checkpoint of size ${c.size} is beyond the ${seq} entries stored: entries were removed`);
  const head = await store.get(LogHead, 'head');
  if ((head?.size ?? 0) !== seq) problems.push(`the head says ${head?.size ?? 0} entries; ${seq} are stored`);
  if (seq > 0 && head && head.lastHash !== prev) problems.push('the head does not name the last entry');
  return { ok: problems.length === 0, entries: seq, checkpoints: checkpoints.length, problems };
}

function checkCheckpoint(c: StoredCheckpoint, root: Buffer, keys: NodeKeys, problems: string[]) {
  const opened = openNote(c.note, [keys.log.verifierKey]);
  if (!opened.ok) problems.push(`checkpoint of size ${c.size}: its signature does not verify (${opened.errors.join('; ')})`);
  const expected = formatCheckpoint({ origin: keys.log.origin, size: c.size, rootHash: root });
  if (opened.text !== expected || c.root !== root.toString('hex')) problems.push(`checkpoint of size ${c.size} signs a root the entries do not give: the log was rewritten`);
}
