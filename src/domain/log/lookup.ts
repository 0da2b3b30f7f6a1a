// The verifiable index over the log (docs/INDEX.md, PROTOCOL 9.10): the map of lookup keys to
// the indices of the entries that mention them, kept in this process's memory and in the store,
// its root appended to the log as an index.root.v1 entry.
//
// The map follows the log, never the other way round: an append does not wait for it (the log's
// appender is the node's bottleneck). It takes the entries appended since its last root in one
// step when a root is due. Their list items and its head (size and root) are written in one
// transaction, so the store holds a map of some size N whole or not at all. A node whose roots
// follow the log writes them every WRITE_EVERY_MS or MAX_UNWRITTEN indices (and at close), not at
// every step: the log is the map's journal, and a key's items written once for many steps keep
// the index's writes from crowding the appender's on the store. Lookups read a key's stored items,
// and those not yet written from memory.
// At start the map is read back from the store and its root computed again: a head whose root the
// lists do not give (a torn or edited store) is dropped and the map rebuilt from the log, so no
// root is served that the lists do not give; the entries past the stored size are then taken from
// the log (catching up), as after a crash that took the items not yet written.
import { entryLookupKeys, EMPTY_MAP_ROOT, encodeMapProof, LOOKUP_ROOT_KIND, LookupMap, lookupKeyHash, type LogEntry } from '../../core/index.js';
import { space, type Store } from '../../store/index.js';
import type { TransparencyLog } from './log.js';
import { LogIndex } from './spaces.js';

/**
 * `${K hex}:${position, 10 digits}` -> the log indices from that position of the key's list on, as
 * one step took them: one write per key a step mentions, however many of its entries mention it.
 * Not in the store's read cache: lookups read them by range, and a step's thousands of writes
 * would push out what the cache holds for others.
 */
export const LookupLists = space<number[]>('lookup-lists', { cached: false });
/** 'head' -> the map as stored: the log size it covers and its root. */
export const LookupHead = space<LookupHeadRecord>('lookup-head');
/** The lock the map's writes take (processes sharing a store write the same items; the head only moves forward). */
export const LOOKUP_LOCK = 'lookup';

export interface LookupHeadRecord {
  size: number;
  root: string;
  keys: number;
}

/** A root the log holds: the map over entries 0 to size-1, and the index.root.v1 entry that commits it. */
export interface PublishedRoot {
  size: number;
  root: string;
  keys: number;
  entry: LogEntry;
}

/** A lookup as the map answers it, before the route adds the root entry's inclusion proof. */
export interface MapAnswer {
  key: string;
  keyHash: string;
  found: boolean;
  indices: number[];
  proof: string;
  published: PublishedRoot;
}

export interface LookupOptions {
  /** A root is appended when the log grew by this many entries since the last one (checked every `everyMs`). */
  every?: number;
  /** How often the growth is checked (ms); 0: never (roots are then appended only by lookups and publish()). */
  everyMs?: number;
  /** A lookup appends a fresh root when the newest is older than this (ms, by the node's clock). */
  freshMs?: number;
  /**
   * How long list items are held unwritten at most (ms, by the node's clock; 0: written at every
   * step). By default 10 s for a node whose roots follow the log (everyMs), 0 for one driven by its
   * lookups alone.
   */
  writeEveryMs?: number;
  onError?: (e: unknown) => void;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const itemKey = (khex: string, position: number) => `${khex}:${pad(position, 10)}`;
const positionOf = (itemKey: string) => Number(itemKey.slice(65));

/**
 * A key's list from its stored items, in key (so position) order, each position taken once.
 * Processes sharing a store write a key's items cut where each one's steps fell, so items may
 * overlap (one from position 0 with ten indices, another's from position 4); a key's list is the
 * same in every process (its entries in log order), so what overlaps agrees and is skipped.
 * Stops at a gap: what follows is not the list from there on.
 */
function assembled(items: Iterable<[string, number[]]>, list: number[] = []): number[] {
  for (const [key, seqs] of items) {
    const position = positionOf(key);
    if (position > list.length) break;
    for (let i = list.length - position; i < seqs.length; i++) list.push(seqs[i]);
  }
  return list;
}
/** Items per transaction when a whole map is deleted (a rebuild). */
const CHUNK = 20_000;
/** Indices held unwritten at most (past it a step writes them): a catch-up of a million entries writes each key about once. */
const MAX_UNWRITTEN = 1_000_000;
/** How long a node whose roots follow the log holds list items unwritten (ms): the entries a crash leaves to catch up from the log. */
const WRITE_EVERY_MS = 10_000;
/** Entries a step takes between two turns of the event loop (the appender's callbacks run between). */
const SLICE = 2000;
/** Map hashes a step computes between two turns of the event loop. */
const HASH_SLICE = 2000;
/** Entries read from the log at once. */
const PAGE = 1000;
/** Entries handed over by the appender kept at most between two steps (past it, the step reads the store). */
const MAX_FED = 100_000;

/** The index of one node's log: one instance per running node, beside its TransparencyLog. */
export class LookupIndex {
  private map = new LookupMap();
  /** Entries of the log the map has taken. */
  private size = 0;
  /** The size of the map as last written to the store (or read from it). */
  private written = 0;
  private published: PublishedRoot | null = null;
  /** True from the moment a step takes entries until their root is appended: the map is then ahead of every root. */
  private advancing = false;
  private publishedAt = Number.NEGATIVE_INFINITY;
  private writtenAt: number;
  private readonly writeEveryMs: number;
  /** List items taken since the last write, by the key's id in the map: the position of the first and the indices. */
  private unwritten = new Unwritten();
  /** One step at a time (start, publish): lookups wait for the one running. */
  private step: Promise<unknown> = Promise.resolve();
  private readonly started: Promise<void>;
  private readonly timer?: NodeJS.Timeout;
  private readonly every: number;
  private readonly unfeed: () => void;
  /** Entries this process appended since the map's last step, in log order. */
  private fed: LogEntry[] = [];
  private readonly freshMs: number;

  constructor(
    private readonly log: TransparencyLog,
    private readonly now: () => number,
    options: LookupOptions = {},
  ) {
    const onError = options.onError ?? (() => undefined);
    this.every = options.every ?? 256;
    this.freshMs = options.freshMs ?? 1000;
    this.writtenAt = now();
    this.writeEveryMs = options.writeEveryMs ?? ((options.everyMs ?? 0) > 0 ? WRITE_EVERY_MS : 0);
    // The entries this process appends are handed over as they commit, so a step reads back from
    // the store only those another process appended (a shared store) or that came before it.
    this.unfeed = log.onAppend((entries) => {
      if (this.fed.length < MAX_FED) for (const e of entries) this.fed.push(e);
    });
    this.started = this.serial(() => this.load());
    this.started.catch(onError);
    if ((options.everyMs ?? 0) > 0) {
      this.timer = setInterval(() => void this.publishIfGrown().catch(onError), options.everyMs);
      this.timer.unref();
    }
  }

  private get store(): Store {
    return this.log.store;
  }

  /** Resolves once the map has read the store back and caught up with the log (rejects if it could not). */
  ready(): Promise<void> {
    return this.started;
  }

  /** The newest root this process appended or found in the log, if any. */
  newest(): PublishedRoot | null {
    return this.published;
  }

  /**
   * Takes every entry appended since the map's last step and appends the root of the map as it
   * then stands (unless the log only grew by root entries, which mention no key). Answers the
   * newest root.
   */
  publish(): Promise<PublishedRoot> {
    return this.serial(async () => {
      await this.started;
      this.advancing = true;
      try {
        const grew = await this.catchUp();
        if (grew || !this.published) await this.append();
      } catch (e) {
        // The map may hold entries no root commits: the next lookup appends one first.
        this.published = null;
        throw e;
      } finally {
        this.advancing = false;
      }
      return this.published!;
    });
  }

  /** The map's answer for a key: its indices and proof against the newest root, appended first when it is older than freshMs and the log grew. */
  async lookup(key: string): Promise<MapAnswer> {
    await this.started;
    const head = await this.log.head();
    const stale = !this.published || (head.size > this.size && this.now() - this.publishedAt >= this.freshMs);
    if (stale) await this.publish();
    while (this.advancing) await this.step;
    // No await from here to the proof: the map is the published root's until the next step.
    const published = this.published!;
    const k = lookupKeyHash(key);
    const khex = k.toString('hex');
    const proof = encodeMapProof(this.map.prove(k)).toString('base64');
    const count = this.map.count(k);
    // The indices not yet written, as they stand now; those before them are stored, below position `first`
    // (a write that began since moves these to the store at positions from `first` on, which the read leaves out).
    const unwritten = count ? this.unwritten.of(this.map.idOf(k)) : undefined;
    const first = unwritten ? unwritten.first : count;
    const held = unwritten ? unwritten.seqs : [];
    const chunks = first ? await this.store.list(LookupLists, { gte: `${khex}:`, lt: itemKey(khex, first), limit: first }) : [];
    const indices = assembled(chunks).slice(0, first).concat(held).slice(0, count);
    return { key, keyHash: khex, found: count > 0, indices, proof, published };
  }

  /** Stops following the log, first writing the items not yet written (a clean stop leaves nothing to catch up). */
  async close() {
    if (this.timer) clearInterval(this.timer);
    this.unfeed();
    await this.serial(async () => {
      await this.started;
      await this.write();
    }).catch(() => undefined);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.step.then(fn, fn);
    this.step = run.catch(() => undefined);
    return run;
  }

  private async publishIfGrown() {
    const head = await this.log.head();
    if (head.size - (this.published?.size ?? 0) >= this.every) await this.publish();
  }

  // Reads the map back from the store; a head its lists do not give is dropped for a rebuild.
  private async load() {
    const head = await this.store.get(LookupHead, 'head');
    if (head) {
      // Each key's items in position order, overlaps taken once (assembled).
      let khex = '';
      let list: number[] = [];
      const add = () => {
        const k = Buffer.from(khex, 'hex');
        for (const seq of list) if (seq < head.size) this.map.add(k, seq);
      };
      for await (const [key, seqs] of this.store.iterate(LookupLists)) {
        if (key.slice(0, 64) !== khex) {
          if (khex) add();
          khex = key.slice(0, 64);
          list = [];
        }
        assembled([[key, seqs]], list);
      }
      if (khex) add();
      if (this.map.root().toString('hex') === head.root && this.map.keys === head.keys) this.size = this.written = head.size;
      else await this.clear();
    }
    await this.catchUp(true);
    // The newest root entry in the log, when it is this map's: served as it is, with no new entry.
    const [last] = await this.store.list(LogIndex, { gte: `kind:${LOOKUP_ROOT_KIND}:`, lt: `kind:${LOOKUP_ROOT_KIND}:\uffff`, reverse: true, limit: 1 });
    const entry = last ? await this.log.entry(last[1].seq) : undefined;
    if (entry && (await this.holds(entry))) {
      this.published = { size: entry.body.size as number, root: entry.body.root as string, keys: this.map.keys, entry };
    }
  }

  // Whether a root entry commits this map: its root is the map's, and only roots came after its size.
  private async holds(entry: LogEntry): Promise<boolean> {
    const size = entry.body.size;
    if (entry.body.root !== this.map.root().toString('hex') || typeof size !== 'number' || size > this.size || this.size - size > PAGE) return false;
    return (await this.log.entries(size, this.size)).every((e) => e.kind === LOOKUP_ROOT_KIND);
  }

  // A map that does not match its head: every item and the head go, and the map starts empty.
  private async clear() {
    this.map = new LookupMap();
    this.size = 0;
    let batch: string[] = [];
    const drop = async () => {
      const keys = batch;
      batch = [];
      await this.store.transact([LOOKUP_LOCK], async (tx) => {
        for (const k of keys) tx.del(LookupLists, k);
      });
    };
    await this.store.transact([LOOKUP_LOCK], async (tx) => tx.del(LookupHead, 'head'));
    for await (const [key] of this.store.iterate(LookupLists)) {
      batch.push(key);
      if (batch.length >= CHUNK) await drop();
    }
    if (batch.length) await drop();
  }

  // Takes the log's entries past the map's size, and writes them when due (`write`: now); answers
  // whether any mentioned a key or was not a root. A lookup never sees the map between two entries:
  // lookups wait for the step (advancing) or for the start.
  private async catchUp(write = false): Promise<boolean> {
    const head = await this.log.head();
    let grew = false;
    while (this.size < head.size) {
      const entries = this.fromFed() ?? (await this.log.entries(this.size, Math.min(head.size, this.size + PAGE)));
      if (!entries.length) throw new Error(`the log holds no entry ${this.size}, below its size ${head.size}`);
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i];
        if (e.seq !== this.size) continue;
        if (e.kind !== LOOKUP_ROOT_KIND) grew = true;
        this.take(e);
        // The appender's commits are answered between slices of a long step.
        if (i % SLICE === SLICE - 1) await new Promise(setImmediate);
      }
      if (this.unwritten.count >= MAX_UNWRITTEN) await this.write();
    }
    if (write || this.now() - this.writtenAt >= this.writeEveryMs) await this.write();
    return grew;
  }

  // The entries handed over that follow the map's size with no gap, or undefined when the next one is not among them.
  private fromFed(): LogEntry[] | undefined {
    const fed = this.fed;
    let from = 0;
    while (from < fed.length && fed[from].seq < this.size) from++;
    let to = from;
    while (to < fed.length && fed[to].seq === this.size + (to - from)) to++;
    this.fed = fed.slice(to);
    return to > from ? fed.slice(from, to) : undefined;
  }

  private take(e: LogEntry) {
    for (const key of entryLookupKeys(e)) {
      const position = this.map.addKey(key, e.seq) - 1;
      // By the key's id: its hash is written out in hex once a write, however often the entries meet it.
      this.unwritten.add(this.map.lastId, position, e.seq);
    }
    this.size = e.seq + 1;
  }

  // The items taken and the head, in one transaction: the store holds the map of `size` whole or not at all.
  private async write() {
    if (!this.unwritten.count && this.size === this.written) return;
    await this.hashed();
    const items = this.unwritten.items();
    this.unwritten.clear();
    this.written = this.size;
    this.writtenAt = this.now();
    const head: LookupHeadRecord = { size: this.size, root: this.map.root().toString('hex'), keys: this.map.keys };
    const map = this.map;
    // Not durable on its own (it shares the next durable write's sync): a map a crash took back is
    // caught up from the log at start, and the roots it appended hold for it again.
    await this.store.transact(
      [LOOKUP_LOCK],
      async (tx) => {
        for (const u of items) tx.put(LookupLists, itemKey(map.keyHashOf(u.id).toString('hex'), u.first), u.seqs);
        const stored = await tx.get(LookupHead, 'head');
        // Another process sharing the store may be ahead: its items are these, its head stays.
        if (!stored || stored.size <= head.size) tx.put(LookupHead, 'head', head);
      },
      { durable: false },
    );
  }

  // The map's stale hashes computed in slices, the appender's callbacks answered between them.
  private async hashed() {
    while (!this.map.settle(HASH_SLICE)) await new Promise(setImmediate);
  }

  private async append() {
    await this.hashed();
    const root = this.map.root().toString('hex');
    const body = { schemaVersion: '1.0.0', size: this.size, root, keys: this.map.keys };
    const entry = await this.log.submit({ kind: LOOKUP_ROOT_KIND, tier: 'event', agent: null, body });
    this.published = { size: body.size, root, keys: body.keys, entry };
    this.publishedAt = this.now();
  }
}

/**
 * The indices taken and not yet written, by the map's key id: each key's in a chain through typed
 * arrays (no object per key or per index for the collector to walk while they wait), beside the
 * position in the key's list of its first.
 */
class Unwritten {
  /** Indices held. */
  count = 0;
  private seqs = new Float64Array(4096);
  private next = new Int32Array(4096);
  /** By key id: its first and last index held (-1: none), and the position of the first. */
  private head = new Int32Array(1024).fill(-1);
  private tail = new Int32Array(1024);
  private first = new Float64Array(1024);
  /** The ids with indices held, in the order they were first met. */
  private ids: number[] = [];

  add(id: number, position: number, seq: number) {
    const m = this.count++;
    if (m >= this.seqs.length) {
      this.seqs = grow(this.seqs, m + 1);
      this.next = grow(this.next, m + 1);
    }
    if (id >= this.head.length) {
      const head = new Int32Array(Math.max(id + 1, 2 * this.head.length)).fill(-1);
      head.set(this.head);
      this.head = head;
      this.tail = grow(this.tail, head.length);
      this.first = grow(this.first, head.length);
    }
    this.seqs[m] = seq;
    this.next[m] = -1;
    if (this.head[id] < 0) {
      this.head[id] = m;
      this.first[id] = position;
      this.ids.push(id);
    } else this.next[this.tail[id]] = m;
    this.tail[id] = m;
  }

  /** Key id's indices held, and the position of the first, if any. */
  of(id: number): { id: number; first: number; seqs: number[] } | undefined {
    if (id < 0 || id >= this.head.length || this.head[id] < 0) return undefined;
    const seqs: number[] = [];
    for (let m = this.head[id]; m >= 0; m = this.next[m]) seqs.push(this.seqs[m]);
    return { id, first: this.first[id], seqs };
  }

  /** Every key's indices held, as the store's items take them. */
  items(): Array<{ id: number; first: number; seqs: number[] }> {
    return this.ids.map((id) => this.of(id)!);
  }

  clear() {
    for (const id of this.ids) this.head[id] = -1;
    this.ids = [];
    this.count = 0;
  }
}

function grow<T extends Int32Array | Float64Array>(a: T, need: number): T {
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, 2 * a.length));
  b.set(a);
  return b;
}

/** The root of a map that holds nothing, hex (a log with no entry mentioning a key). */
export const EMPTY_LOOKUP_ROOT = EMPTY_MAP_ROOT.toString('hex');
