// The Store interface: what the domain sees. Nothing above src/store knows LevelDB or
// PostgreSQL: both implementations (level.ts, postgres/) pass one contract (test/store/contract.ts).
//
// Each method says what it promises, as Sunlight's backends do: what is atomic, in what order
// things happen, and what another process using the same store sees, and when. Every member is
// required and means one thing on both stores. What differs between a store one process holds
// alone (LevelDB) and one several share (PostgreSQL) is chosen once, where the node is
// assembled (src/node/strategies.ts), from the opener's answer (OpenedStore), never by the domain.
import type { Readable } from 'node:stream';
import type { StorageHealth } from './health.js';

/** A named keyspace holding JSON values of one type (a typed sublevel). */
export interface Space<T> {
  readonly name: string;
  /**
   * false: a store's read cache of committed values (LevelDB's, counted in entries) keeps
   * nothing of this space. For values too big to hold by the thousand (inline blobs of up to
   * 64 KiB), which their reader caches itself, bounded by bytes.
   */
  readonly cached?: false;
  /** Phantom field: carries T for the type checker only. */
  readonly __type?: T;
}

/** Declares a typed keyspace. Names are [a-z0-9-] so they can be sublevel prefixes or table names. */
export function space<T>(name: string, options: { cached?: boolean } = {}): Space<T> {
  if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`bad space name ${name}`);
  return options.cached === false ? { name, cached: false } : { name };
}

export interface Range {
  gt?: string;
  gte?: string;
  lt?: string;
  lte?: string;
  reverse?: boolean;
  limit?: number;
}

/**
 * The reads a transaction and the store share: a key, and entries in key order. A check that only
 * reads takes Reads, so that it runs inside a transaction (propose) and on the committed store
 * alike (the propose dry run, PROTOCOL 6.9), and can write in neither.
 */
export interface Reads {
  get<T>(space: Space<T>, key: string): Promise<T | undefined>;
  list<T>(space: Space<T>, range?: Range): Promise<Array<[string, T]>>;
}

/**
 * Reads and writes of one transaction. Writes are buffered and committed in one atomic batch
 * when the transaction's function returns (Store.transact). Reads are not a snapshot: each sees
 * what is committed when it runs. A key covered by a lock the transaction holds cannot change
 * under it (every writer of the key holds that lock); any other key may, between two reads.
 */
export interface Tx {
  /** Reads a key: this transaction's own write of it if there is one, else its committed value now. */
  get<T>(space: Space<T>, key: string): Promise<T | undefined>;
  /** Buffers a write of a copy of value (JSON): nobody, this transaction's list() included, sees it before the commit. */
  put<T>(space: Space<T>, key: string, value: T): void;
  /** Buffers a delete, like put. */
  del<T>(space: Space<T>, key: string): void;
  /** Committed entries in key order, read at one point in time (this transaction's own writes are not merged in). */
  list<T>(space: Space<T>, range?: Range): Promise<Array<[string, T]>>;
}

/**
 * A document of a store's text index: what a hit answers (kind, title), and the words it is
 * found by, per field, as the caller cut them (lowercase, stop words out: the store indexes
 * them as given, parsing nothing), each field at a weight from 1 to 4 (4 ranks highest).
 */
export interface TextDoc {
  kind: string;
  title: string;
  fields: Record<string, { words: string[]; weight: 1 | 2 | 3 | 4 }>;
}

/** One word of a text query: every word is required. */
export interface TextTerm {
  word: string;
  /** Also matches the words that start with it. */
  prefix: boolean;
  /** Also matches the index's words at most this many edits away (Levenshtein; 0: none). */
  edits: number;
}

export interface TextQuery {
  terms: TextTerm[];
  /** Only documents of this kind. */
  kind?: string | null;
  /** Only words in fields of this weight (suggest: the titles). */
  weight?: 1 | 2 | 3 | 4;
  /** false: the caller needs no total (suggest), and the index may skip estimating it. */
  total?: false;
  /** How much a match counts at each weight, 1 to 4 (for ranking). */
  boosts: [number, number, number, number];
  limit: number;
  offset: number;
}

export interface TextHit {
  id: string;
  kind: string;
  title: string;
  score: number;
  /** The document's words each field matched. */
  match: Record<string, string[]>;
}

export interface TextPage {
  items: TextHit[];
  /** How many documents match: exact, or an estimate when `estimated` (never below the matches the page proves). */
  total: number;
  estimated: boolean;
  /** Whether any match lies after this page. */
  more: boolean;
}

/**
 * A shared store's own text index (PostgreSQL: tsvector, GIN and pg_trgm). The node searches
 * it when it is assembled on such a store (src/node/strategies.ts); on a store one process holds,
 * the domain keeps its own index instead (MiniSearch, following Store.watch).
 */
export interface TextIndex {
  /**
   * Puts a document under id, or takes it out (null), in the batch of tx, a transaction of this
   * index's store: it commits or fails with the rest, and every process finds it from the moment
   * the transaction's commit returned (no watch, no staleness bound).
   */
  write(tx: Tx, id: string, doc: TextDoc | null): void;
  /** Hits, best first, and how many documents match in all: the documents committed when it runs. */
  search(q: TextQuery): Promise<TextPage>;
  /** The kind of each id that is an indexed document (null for any other). */
  kinds(ids: string[]): Promise<Array<string | null>>;
}

export interface TransactOptions {
  /**
   * true (default): the promise resolves only once the batch is on disk (fsync), possibly
   * shared with concurrent transactions (group commit). false: written, not synced
   * (counters and caches that may be lost in a crash).
   */
  durable?: boolean;
}

export interface Store {
  /**
   * Runs fn holding a lock on each of lockKeys, then commits everything it wrote in one atomic
   * batch: all of it or none, to this process and every other. If fn throws, nothing is written.
   *
   * Locks: taken in sorted order (two transactions never deadlock), held until the batch is
   * committed or dropped, and exclusive across every process using the store (PostgreSQL:
   * advisory locks; LevelDB: its folder is this process's alone). Every key a transaction
   * writes must be covered by a lock key held by every writer of that key: two writers of a
   * key then run one after the other, and the second reads what the first committed (no lost
   * update). Transactions that share no lock are not ordered.
   *
   * When the promise resolves the batch is committed: a read begun afterwards, in any process,
   * sees it, and its keys are announced to watchers (watch). durable (default true): on disk
   * first (fsync, shared with concurrent commits); false: may be lost, whole, in a crash of the
   * machine or the database server (a batch is never torn). A commit that fails rejects with
   * 503 storage_unavailable (health); on PostgreSQL a COMMIT whose answer was lost may have landed.
   */
  transact<R>(lockKeys: string[], fn: (tx: Tx) => Promise<R>, options?: TransactOptions): Promise<R>;
  /** A committed read outside any transaction: it sees every batch whose transact resolved before it began, from any process. */
  get<T>(space: Space<T>, key: string): Promise<T | undefined>;
  /** Committed entries in key order (the keys' UTF-8 bytes), read at one point in time. */
  list<T>(space: Space<T>, range?: Range): Promise<Array<[string, T]>>;
  /**
   * Streams committed entries in key order without holding them all in memory. Not one point in
   * time: it reads page by page (PostgreSQL) or resumes past its last key after a reopen
   * (LevelDB). Each key is yielded at most once, in order; an entry there throughout is
   * yielded; one written or deleted meanwhile may or may not be.
   */
  iterate<T>(space: Space<T>, range?: Range): AsyncIterable<[string, T]>;
  /**
   * Calls listener with each key of `space` that a committed batch wrote or deleted, once the
   * batch is durable, in commit order (read caches above the store use it to drop stale
   * entries). The keys other processes commit arrive too, within the store's staleness bound
   * (WATCH_BOUND_MS; a store one process holds has no other writer); when some may have been
   * missed (a lost notification channel), `lost` is called instead and the watcher must drop
   * everything it derived from the space. Answers a function that stops the calls.
   */
  watch(space: Space<unknown>, listener: (key: string) => void, lost?: () => void): () => void;
  /**
   * Where the store lives: the data folder of an embedded store (blobs and node secrets
   * sit beside it), or the database URL of a shared one (without its password).
   */
  readonly location: string;
  /**
   * Whether other processes may use this store while this one does (PostgreSQL), or this
   * process holds it alone (LevelDB locks its folder): then what the process keeps in memory of
   * the store is the truth, else only a cache of it. Read where the node is assembled
   * (src/node/strategies.ts) to choose its strategies, and by reports; never by the domain.
   */
  readonly shared: boolean;
  /**
   * Whether the store accepts writes, and if not why (health.ts). A store whose write failed
   * refuses every write after it with 503 storage_unavailable until a probe write succeeds;
   * its blob files report their failures here too. Per process: each hears of its own failures.
   */
  readonly health: StorageHealth;
  /**
   * The blob store of this store, opened at the first call and the same one after: files
   * beside an embedded store (small blobs inline in it), or the shared database's tables. A
   * blob placed is found by every process from the moment place() resolved.
   */
  blobs(): Promise<Blobs>;
  /** Waits for the transactions running, then closes; nothing may be called after. */
  close(): Promise<void>;
}

/** A store this process holds alone (LevelDB: the lock on its folder). */
export interface ExclusiveStore extends Store {
  /** No other process uses it while this one has it open. */
  readonly shared: false;
}

/** A store several processes use at once (PostgreSQL), with what only such a store has. */
export interface SharedStore extends Store {
  /** Other processes may use it at once: what this one keeps in memory of it is only a cache. */
  readonly shared: true;
  /** Token buckets every process draws from, each draw one atomic step in the store. */
  readonly buckets: SharedBuckets;
  /** Its own text index, written in its transactions and read by every process. */
  readonly text: TextIndex;
}

/** What an opener answers: the node's assembly tells the two apart by `shared`, once. */
export type OpenedStore = ExclusiveStore | SharedStore;

/** The outcome of a draw from a token bucket: the tokens left, and whether the draw took what it asked. */
export interface Drawn {
  tokens: number;
  taken: boolean;
}

/**
 * Token buckets (PROTOCOL 1.4 limits one caller, not one process): those a shared store keeps
 * for every process (SharedStore.buckets), or those one process keeps over a store it holds
 * alone (HeldBuckets, buckets.ts). Which a node draws from is chosen where it is assembled.
 */
export interface TokenBucketStore {
  /**
   * Refills bucket `key` (capacity `burst`, `refillPerSecond`) up to `now`, then takes `take`
   * tokens (true: one; false: none) when that many whole ones are there, in one atomic step:
   * all of them or none, and no other draw from the bucket, in any process, between the refill
   * and the take. Answers at once, with no promise, when the bucket is in this process's memory.
   */
  draw(key: string, burst: number, refillPerSecond: number, now: number, take: boolean | number): Drawn | Promise<Drawn>;
  /** Deletes every bucket full again at `now` (it carries no information); answers how many. */
  sweep(burst: number, refillPerSecond: number, now: number): Promise<number>;
  /** Writes to the store, not synced, what only this process's memory holds of the buckets (a shared store's: nothing). */
  flush(): Promise<void>;
  /** Flushes, and stops (before the store closes). */
  close(): Promise<void>;
}

/**
 * A shared store's token buckets: each draw is one statement in the database, seen by every
 * process at once. Kept out of the write-ahead log: a crash of the database server may forget
 * them (as the write-behind of held buckets may), which hands a caller at most a fresh burst.
 */
export interface SharedBuckets extends TokenBucketStore {
  draw(key: string, burst: number, refillPerSecond: number, now: number, take: boolean | number): Promise<Drawn>;
}

/**
 * One upload in progress: bytes are hashed as they arrive and kept with bounded memory.
 * Call write() for each chunk, then sha256(), then place() and/or discard() (always discard()).
 */
export interface BlobWriter {
  /** Bytes written so far. */
  readonly bytes: number;
  /** True while the upload is held in memory only (nothing written anywhere yet). */
  readonly inMemory: boolean;
  /**
   * True when place(false) is one atomic create-unless-stored that writes nothing, and costs
   * about one lookup, when the blob is already there (a small blob in a store transaction or
   * one database statement): a caller may then place first and check only on a refusal.
   * Read it once every chunk is written. False when placing means writing and syncing a file
   * first (the caller checks for a stored copy before).
   */
  readonly cheapPlace: boolean;
  /** Hashes and keeps one chunk; answers a promise only when the caller must wait for it. */
  write(chunk: Uint8Array): Promise<void> | undefined;
  /** The lowercase hex sha256 of everything written (ends the upload). */
  sha256(): string;
  /**
   * Makes the bytes durable under their hash. overwrite false: creates the blob unless one
   * exists (answers false then). overwrite true: replaces whatever is there (a repair).
   */
  place(overwrite?: boolean): Promise<boolean>;
  /** Drops whatever the upload still holds. Safe to call more than once. */
  discard(): Promise<void>;
}

/** An open stored blob: its hash check and the bytes served read the same stored copy. */
export interface BlobReader {
  readonly size: number;
  /** sha256 of the stored bytes, read in chunks (bounded memory). */
  sha256(): Promise<string>;
  /** The whole blob in one buffer (for small blobs). */
  readAll(): Promise<Buffer>;
  /** Streams bytes start..end (inclusive); the stream releases the blob when it ends or is destroyed. */
  stream(start?: number, end?: number): Readable;
  close(): Promise<void>;
}

/** Where the content store's bytes live (files beside an embedded store, or the shared database). */
export interface Blobs {
  /** Starts an upload; expectedBytes is the announced size, when there is one. */
  begin(spillBytes?: number, expectedBytes?: number): BlobWriter;
  /** Opens a stored blob, or undefined when there is none. Close it (or consume its stream). */
  open(sha256: string): Promise<BlobReader | undefined>;
  /** Size in bytes of a stored blob, or undefined. Does not check the bytes. */
  size(sha256: string): Promise<number | undefined>;
  /** Hashes of every stored blob, in no particular order. */
  list(): AsyncIterable<string>;
  /** The audit of every blob the store acknowledged (`akas log check`, `akas serve --check`). */
  audit(): Promise<BlobAudit>;
}

/** What the audit of a blob store found. */
export interface BlobAudit {
  /** Blobs the store's own index says were stored (and acknowledged). */
  acknowledged: number;
  /** Blobs present. */
  stored: number;
  /** Blobs present that the index does not know (a crash between writing one and indexing it). */
  unindexed: number;
  /** Each acknowledged blob missing, shorter or longer than acknowledged, or no longer hashing to its name. */
  problems: string[];
}
