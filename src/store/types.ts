// The Store interface: what the domain sees. Nothing above src/store knows LevelDB or
// PostgreSQL: both implementations (level.ts, postgres/) pass one contract (test/store/contract.ts).
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

/** Reads and writes of one transaction. Writes are buffered and committed in one atomic batch. */
export interface Tx {
  /** Reads a key; sees this transaction's own writes first. */
  get<T>(space: Space<T>, key: string): Promise<T | undefined>;
  put<T>(space: Space<T>, key: string, value: T): void;
  del<T>(space: Space<T>, key: string): void;
  /** Committed entries in key order (this transaction's own writes are not merged in). */
  list<T>(space: Space<T>, range?: Range): Promise<Array<[string, T]>>;
  /**
   * Puts a document in the store's own text index under id, or takes it out (null), in this
   * transaction's batch: it commits or fails with the rest. Present only on a store that
   * indexes text itself (Store.text, PostgreSQL); LevelDB has none.
   */
  index?(id: string, doc: TextDoc | null): void;
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

/** A store's own text index (PostgreSQL: tsvector, GIN and pg_trgm), written by Tx.index. */
export interface TextIndex {
  /** Hits, best first, and how many documents match in all. */
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
   * Runs fn holding a lock on each of lockKeys (taken in sorted order, so two transactions
   * never deadlock), then commits everything it wrote in one atomic batch. Every key a
   * transaction writes must be covered by a lock key held by every writer of that key.
   * If fn throws, nothing is written.
   */
  transact<R>(lockKeys: string[], fn: (tx: Tx) => Promise<R>, options?: TransactOptions): Promise<R>;
  /** A committed read outside any transaction. */
  get<T>(space: Space<T>, key: string): Promise<T | undefined>;
  /** Committed entries in key order. */
  list<T>(space: Space<T>, range?: Range): Promise<Array<[string, T]>>;
  /** Streams committed entries in key order without holding them all in memory. */
  iterate<T>(space: Space<T>, range?: Range): AsyncIterable<[string, T]>;
  /**
   * Calls listener with each key of `space` that a committed batch wrote or deleted, once
   * the batch is durable (read caches above the store use it to drop stale entries). On a
   * store shared by several processes the keys other processes commit arrive too, within
   * the store's staleness bound; when some may have been missed (a lost notification
   * channel), `lost` is called instead and the watcher must drop everything it derived
   * from the space. Answers a function that stops the calls.
   */
  watch(space: Space<unknown>, listener: (key: string) => void, lost?: () => void): () => void;
  /**
   * Where the store lives: the data folder of an embedded store (blobs and node secrets
   * sit beside it), or the database URL of a shared one (without its password).
   */
  readonly location: string;
  /**
   * True when several processes may use the store at once (PostgreSQL): what a process keeps
   * in memory is then only a cache of the store, never the truth.
   */
  readonly shared?: boolean;
  /** Token buckets every process on a shared store draws from (absent: the caller keeps its own). */
  readonly buckets?: SharedBuckets;
  /** The blob store of this store (absent: files beside it, in location/blobs). */
  blobs?(): Promise<Blobs>;
  /**
   * The store's own text index, which transactions write (Tx.index) and every process reads
   * (absent: the caller indexes text itself, as the embedded node does with MiniSearch).
   */
  readonly text?: TextIndex;
  /**
   * Whether the store accepts writes, and if not why (health.ts). A store whose write failed
   * refuses every write after it with 503 storage_unavailable until a probe write succeeds;
   * its blob files report their failures here too.
   */
  readonly health?: StorageHealth;
  close(): Promise<void>;
}

/** Token buckets kept by a store that several processes share (PROTOCOL 1.4 limits one caller, not one process). */
export interface SharedBuckets {
  /**
   * Refills bucket `key` (capacity `burst`, `refillPerSecond`) up to `now`, then takes `take`
   * tokens (true: one; false: none) when that many whole ones are there, in one atomic step:
   * all of them or none. Answers the tokens left and whether they were taken.
   */
  draw(key: string, burst: number, refillPerSecond: number, now: number, take: boolean | number): Promise<{ tokens: number; taken: boolean }>;
  /** Deletes every bucket full again at `now` (it carries no information); answers how many. */
  sweep(burst: number, refillPerSecond: number, now: number): Promise<number>;
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
  audit?(): Promise<BlobAudit>;
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
