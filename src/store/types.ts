// The Store interface: what the domain sees. Nothing above src/store knows LevelDB, so a
// PostgreSQL implementation can come later behind the same contract (test/store/contract.ts).

/** A named keyspace holding JSON values of one type (a typed sublevel). */
export interface Space<T> {
  readonly name: string;
  /** Phantom field: carries T for the type checker only. */
  readonly __type?: T;
}

/** Declares a typed keyspace. Names are [a-z0-9-] so they can be sublevel prefixes or table names. */
export function space<T>(name: string): Space<T> {
  if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`bad space name ${name}`);
  return { name };
}

export interface Range {
  gt?: string;
  gte?: string;
  lt?: string;
  lte?: string;
  reverse?: boolean;
  limit?: number;
}

/** Reads and writes of one transaction. Writes are buffered and committed in one atomic batch. */
export interface Tx {
  /** Reads a key; sees this transaction's own writes first. */
  get<T>(space: Space<T>, key: string): Promise<T | undefined>;
  put<T>(space: Space<T>, key: string, value: T): void;
  del<T>(space: Space<T>, key: string): void;
  /** Committed entries in key order (this transaction's own writes are not merged in). */
  list<T>(space: Space<T>, range?: Range): Promise<Array<[string, T]>>;
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
   * the batch is durable (read caches above the store use it to drop stale entries).
   * Answers a function that stops the calls.
   */
  watch(space: Space<unknown>, listener: (key: string) => void): () => void;
  /** The folder the store lives in (blobs and node secrets sit beside it). */
  readonly location: string;
  close(): Promise<void>;
}
