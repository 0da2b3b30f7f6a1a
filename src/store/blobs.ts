// Blobs of the content-addressable store, on an embedded (LevelDB) store. Two places, chosen
// by size (bench/cas.ts measured where the line falls):
//
// - Small blobs (up to INLINE_BLOB_BYTES) are store values: one durable store transaction
//   puts the bytes (base64, as values are JSON text) under their sha256, so a small upload
//   rides the store's group commit, sharing one fsync with every transaction committing
//   beside it, instead of paying a temp file, an fsync, a link and a folder fsync of its own.
//   The store's read cache keeps nothing of them (the space is uncached); the domain keeps
//   verified small blobs itself, bounded by bytes (src/domain/cas/cas.ts).
// - Larger blobs are files beside the LevelDB folder, one per blob named by its sha256 in
//   git's fan-out layout (<dataDir>/blobs/ab/cdef...): a value cannot be streamed (the whole
//   blob, plus its base64 copy, sits in memory) and compaction rewrites big values again
//   and again.
//
// A blob is looked up inline first, then as a file, so files written before blobs went
// inline (or above a threshold since raised) are still found, listed and repaired.
//
// Crash safety of files, as git does it: bytes go to a temp file in blobs/tmp/, are fsynced,
// then linked under their final name (link() fails if the name exists, so two writers of the
// same bytes cannot both claim to have created it), and the folder is fsynced. A crash at any
// point leaves either no blob or a whole one under a valid name, plus at most a temp file,
// which the next start removes. An inline blob is one atomic batch: all or nothing. This
// module only moves bytes: limits, deduplication and integrity decisions are the domain's
// (src/domain/cas/cas.ts).
//
// The store indexes every blob file (FileIndex: sha256 -> size), durably, before an upload is
// acknowledged, and every file found at open that is not yet indexed (a crash between the
// link and the index, or a folder from before the index): a file that later disappears or
// shrinks underneath is then known to be lost, answered as damaged (500 integrity_violation)
// rather than as never stored, and reported by the audit (audit(), `akas log check`). A
// failed file write (a full disk, a read-only folder) closes the store to writes like a
// failed store write does (health.ts).
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { link, mkdir, open, readdir, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { storageCause, type StorageHealth } from './health.js';
import { space, type BlobAudit, type BlobReader, type Blobs, type BlobWriter, type Store } from './types.js';

const MiB = 1024 * 1024;
/**
 * Blobs of at most this many bytes are stored inline, as store values; larger ones are files.
 * bench/cas.ts (threshold, 32 in flight, a fresh folder per size): inline writes ran at 9 to
 * 16 times the files' rate at 1 and 4 KiB, 3 to 4 times at 16 KiB, 2.0 to 2.6 times at 32
 * and 64 KiB, then fell behind (0.64 to 0.88 at 256 KiB, about 0.35 at 1 MiB: LevelDB writes
 * every byte again as it compacts, in base64). Uncached reads of inline blobs ran at 1.7 to
 * 4.8 times the files' up to 16 KiB, about even at 32 and 64 KiB (0.71 to 1.42), and 0.3
 * above; reads of small blobs mostly come from the domain's cache of verified blobs anyway.
 */
export const INLINE_BLOB_BYTES = 64 * 1024;
/** Small blobs kept inline: sha256 -> the bytes in base64 (store values are JSON text). */
export const InlineBlobs = space<string>('cas-inline', { cached: false });
/** The lock every writer of an inline blob holds. */
export const blobLock = (sha256: string) => `cas:${sha256}`;
/**
 * What is known of the blob files of a data folder: every one holds more than `allAbove`
 * bytes. A folder that had no blob file when blobs first went inline gets the threshold (no
 * file can hold a smaller blob, so a small upload need not look for one); a folder that had
 * files gets 0 (files written before may be of any size, and are looked for).
 */
export const BlobFiles = space<{ allAbove: number }>('cas-files');
const BLOB_FILES_KEY = 'sizes';
/** Every blob file the store acknowledged (or found at open), with its size: sha256 -> bytes. */
export const FileIndex = space<{ bytes: number }>('cas-file-index');
/** The spaces of this blob store: a copy into a store that keeps blobs itself moves blobs, not these. */
export const EMBEDDED_BLOB_SPACES: readonly string[] = [InlineBlobs.name, BlobFiles.name, FileIndex.name];
/** An upload is kept in memory up to this size before it spills to a temp file. */
export const DEFAULT_SPILL_BYTES = MiB;
/** Bytes queued for the temp file before write() waits for the disk (backpressure). */
const WRITE_HIGH_WATER = MiB;
/**
 * While an upload is still arriving, its temp file is fdatasync'ed in the background each
 * time this much more has been written, so the disk works during the transfer and the fsync
 * that must precede the rename only has the tail left to flush (bench/cas.ts).
 */
const EARLY_SYNC_BYTES = 2 * MiB;
/** Chunk size of the reads of a hash check and of served bytes (few syscalls, bounded memory). */
const READ_CHUNK = MiB;

const isMissing = (e: unknown) => (e as NodeJS.ErrnoException)?.code === 'ENOENT';
const isExists = (e: unknown) => (e as NodeJS.ErrnoException)?.code === 'EEXIST';

/** fsync a folder so a name just created in it survives a crash (no-op where unsupported). */
async function syncDir(dir: string) {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // Some platforms (Windows) cannot open or fsync a folder; the rename is still atomic there.
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/** Writes every byte of bufs at the file's current position (writev may write less than asked). */
async function writeAll(fh: FileHandle, bufs: Buffer[]) {
  let rest = bufs;
  while (rest.length > 0) {
    const total = rest.reduce((n, b) => n + b.length, 0);
    const { bytesWritten } = await fh.writev(rest);
    if (bytesWritten >= total) return;
    let skip = bytesWritten;
    const next: Buffer[] = [];
    for (const b of rest) {
      if (skip >= b.length) {
        skip -= b.length;
        continue;
      }
      next.push(skip > 0 ? b.subarray(skip) : b);
      skip = 0;
    }
    rest = next;
  }
}

/**
 * A temp file written in the background: write() queues and returns at once, unless a full
 * high-water mark is already queued behind the write in flight; then it waits only until
 * that write finishes (not until the disk has caught up), so receiving and writing overlap.
 */
class TempFile {
  private queue: Buffer[] = [];
  private queued = 0;
  private inflight: Promise<void> | null = null;
  private waiting: Array<() => void> = [];
  private syncing: Promise<void> | null = null;
  private written = 0;
  private synced = 0;
  private error: unknown;

  private constructor(
    readonly path: string,
    private readonly fh: FileHandle,
  ) {}

  static async create(dir: string): Promise<TempFile> {
    const path = join(dir, `${randomBytes(12).toString('hex')}.tmp`);
    // 0444 like git's objects: a stored blob is never written in place.
    return new TempFile(path, await open(path, 'wx', 0o444));
  }

  /**
   * Queues buf. Answers a promise only when the caller has to wait (a full high-water mark
   * queued): a stream consumer keeps reading otherwise, with no promise per chunk.
   */
  write(buf: Buffer): Promise<void> | undefined {
    if (this.error) throw this.error;
    this.queue.push(buf);
    this.queued += buf.length;
    this.inflight ??= this.pump();
    if (this.queued < WRITE_HIGH_WATER) return undefined;
    return new Promise<void>((r) => this.waiting.push(r)).then(() => {
      if (this.error) throw this.error;
    });
  }

  private wake() {
    const waiting = this.waiting;
    this.waiting = [];
    for (const r of waiting) r();
  }

  // Writes whatever has queued up, as one writev per round, until the queue is empty.
  private async pump() {
    try {
      while (this.queue.length > 0 && !this.error) {
        const bufs = this.queue;
        this.queue = [];
        this.queued = 0;
        this.wake();
        await writeAll(this.fh, bufs);
        for (const b of bufs) this.written += b.length;
        if (!this.syncing && this.written - this.synced >= EARLY_SYNC_BYTES) this.syncEarly();
      }
    } catch (e) {
      this.error = e;
    } finally {
      this.inflight = null;
      this.wake();
    }
  }

  private syncEarly() {
    const upTo = this.written;
    this.syncing = this.fh
      .datasync()
      .then(
        () => void (this.synced = upTo),
        (e) => void (this.error ??= e),
      )
      .finally(() => (this.syncing = null));
  }

  /** Waits for the writes and the background sync in flight (the fd must not close under them). */
  private async settle() {
    while (this.inflight || this.syncing) await (this.inflight ?? this.syncing);
  }

  /**
   * All bytes on disk (fsync), file closed. The fsync starts as soon as the last write is
   * done, alongside a background sync still running rather than after it: it covers every
   * byte written before it, and its own flush overlaps the one in flight.
   */
  async finish() {
    while (this.inflight) await this.inflight;
    if (this.error) throw this.error;
    await Promise.all([this.fh.sync(), this.syncing]);
    await this.settle();
    if (this.error) throw this.error;
    await this.fh.close();
  }

  /** Closes and removes the file; never throws. */
  async discard() {
    await this.settle();
    await this.fh.close().catch(() => undefined);
    await unlink(this.path).catch(() => undefined);
  }
}

/**
 * One upload in progress: bytes are hashed as they arrive, held in memory up to spillBytes
 * and then streamed to a temp file, so memory stays bounded whatever the blob size. Call
 * write() for each chunk, then sha256(), then place() and/or discard() (always discard()).
 */
export class BlobUpload implements BlobWriter {
  private readonly hash = createHash('sha256');
  private chunks: Buffer[] = [];
  private temp?: TempFile;
  /** The temp file being created (started up front when the upload is known to be large). */
  private opening?: Promise<TempFile>;
  private digest?: string;
  private written = false;
  bytes = 0;

  constructor(
    private readonly blobs: BlobStore,
    private readonly spillBytes: number,
    expectedBytes?: number,
  ) {
    // On disk the writes are the slow leg (bench/cas.ts), so an upload announced as larger
    // than the spill size starts its temp file now and writes from the first chunk on,
    // instead of holding the first spillBytes in memory with the disk idle.
    if (expectedBytes !== undefined && expectedBytes > spillBytes) this.startTemp();
  }

  private startTemp(): Promise<TempFile> {
    if (!this.opening) {
      this.opening = TempFile.create(this.blobs.tmpDir).catch((e) => Promise.reject(this.blobs.failure(e)));
      this.opening.catch(() => undefined); // awaited later; an early failure is not unhandled
    }
    return this.opening;
  }

  /** Moves what is held in memory to the temp file; later chunks go straight there. */
  private async spill(): Promise<TempFile> {
    const temp = (this.temp = await this.startTemp());
    const held = this.chunks;
    this.chunks = [];
    for (const b of held) await temp.write(b);
    return temp;
  }

  /** True while the upload lives in memory only: no temp file was started (announced large, or spilled). */
  get inMemory() {
    return this.opening === undefined;
  }

  /** Goes inline: still in memory, and small enough (a store transaction creates it or finds it there). */
  get cheapPlace() {
    return this.inMemory && this.blobs.inlines(this.bytes);
  }

  /**
   * Hashes and keeps one chunk. Answers a promise only when the caller must wait for it
   * (the disk is behind, or the temp file is being created); undefined means go on.
   */
  write(chunk: Uint8Array): Promise<void> | undefined {
    if (this.digest) throw new Error('upload already finished');
    if (chunk.length === 0) return undefined;
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    this.hash.update(buf);
    this.bytes += buf.length;
    // A failed write of the temp file is the storage's: the store closes to writes (health.ts).
    const failed = (e: unknown) => Promise.reject(this.blobs.failure(e));
    if (this.temp) {
      let wait;
      try {
        wait = this.temp.write(buf);
      } catch (e) {
        throw this.blobs.failure(e);
      }
      return wait?.catch(failed);
    }
    this.chunks.push(buf);
    if (this.bytes > this.spillBytes || this.opening) return this.spill().then(() => undefined, failed);
    return undefined;
  }

  /** The lowercase hex sha256 of everything written (ends the upload). */
  sha256(): string {
    this.digest ??= this.hash.digest('hex');
    return this.digest;
  }

  /**
   * Makes the bytes durable under their hash. overwrite false: creates the blob unless one
   * exists (answers false then, keeping the temp file so a later overwrite can still use it).
   * overwrite true: replaces whatever is there (repairing a blob that failed its check).
   */
  async place(overwrite = false): Promise<boolean> {
    const sha = this.sha256();
    if (this.cheapPlace) {
      const bytes = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.bytes);
      return this.blobs.placeInline(sha, bytes, overwrite);
    }
    this.blobs.health?.check();
    let created;
    try {
      created = await this.placeFile(sha, overwrite);
    } catch (e) {
      throw this.blobs.failure(e);
    }
    // Indexed once on disk, before the upload is acknowledged: a file that later disappears is
    // known to be lost (a blob already stored was indexed when it was, or at the last open).
    if (created) await this.blobs.indexFile(sha, this.bytes);
    return created;
  }

  private async placeFile(sha: string, overwrite: boolean): Promise<boolean> {
    const temp = this.temp ?? (await this.spill());
    if (!this.written) {
      await temp.finish();
      this.written = true;
    }
    const dir = await this.blobs.shardDir(sha);
    const final = this.blobs.pathOf(sha);
    if (overwrite) {
      await rename(temp.path, final);
      // An inline copy would be found first: the repaired file must be the only one.
      await this.blobs.dropInline(sha);
    } else {
      try {
        await link(temp.path, final);
      } catch (e) {
        if (isExists(e)) return false;
        // Filesystems without hard links: rename, which replaces atomically (same bytes by name).
        if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
        if (await this.blobs.size(sha) !== undefined) return false;
        await rename(temp.path, final);
      }
      await unlink(temp.path).catch(() => undefined);
    }
    await syncDir(dir);
    return true;
  }

  /** Drops whatever this upload still holds (memory, temp file). Safe to call more than once. */
  async discard() {
    this.chunks = [];
    const temp = this.temp ?? (await this.opening?.catch(() => undefined));
    if (temp && !this.written) await temp.discard();
    else if (temp) await unlink(temp.path).catch(() => undefined);
  }
}

/**
 * An open stored blob: the hash check and the bytes served read the same open file, so a
 * blob replaced by a concurrent repair cannot slip unverified bytes in between.
 */
export class StoredBlob implements BlobReader {
  private closed = false;
  constructor(
    private readonly fh: FileHandle,
    readonly size: number,
  ) {}

  /** sha256 of the file's bytes, read in chunks (bounded memory). */
  async sha256(): Promise<string> {
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, Math.max(1, this.size)));
    let pos = 0;
    for (;;) {
      const { bytesRead } = await this.fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
    return hash.digest('hex');
  }

  /** The whole file in one buffer (for small blobs). */
  async readAll(): Promise<Buffer> {
    const buf = Buffer.allocUnsafe(this.size);
    let pos = 0;
    while (pos < this.size) {
      const { bytesRead } = await this.fh.read(buf, pos, this.size - pos, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
    }
    return pos === this.size ? buf : buf.subarray(0, pos);
  }

  /** Streams bytes start..end (inclusive); the stream closes the file when it ends or is destroyed. */
  stream(start = 0, end = this.size - 1): Readable {
    this.closed = true;
    return this.fh.createReadStream({ start, end, highWaterMark: READ_CHUNK, autoClose: true });
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close().catch(() => undefined);
  }
}

/** An inline blob, read whole from its store value: everything is served from that one copy. */
export class InlineBlob implements BlobReader {
  constructor(private readonly bytes: Buffer) {}

  get size() {
    return this.bytes.length;
  }

  async sha256(): Promise<string> {
    return createHash('sha256').update(this.bytes).digest('hex');
  }

  async readAll(): Promise<Buffer> {
    return this.bytes;
  }

  stream(start = 0, end = this.bytes.length - 1): Readable {
    return Readable.from([this.bytes.subarray(start, end + 1)], { objectMode: false });
  }

  async close() {
    // Nothing is held open.
  }
}

export interface BlobStoreOptions {
  /** The store small blobs go into, as values (absent: every blob is a file). */
  store?: Store;
  /** Blobs of at most this many bytes go inline (default INLINE_BLOB_BYTES). */
  inlineBytes?: number;
}

/** The blobs of one data folder: small ones inline in its store, the others in blobs/. */
export class BlobStore implements Blobs {
  readonly tmpDir: string;
  readonly inlineBytes: number;
  private readonly store?: Store;
  /** Every blob file holds more than this many bytes (BlobFiles): a smaller new blob is not looked for as a file. */
  private filesAbove = 0;

  private constructor(
    readonly root: string,
    options: BlobStoreOptions,
  ) {
    this.tmpDir = join(root, 'tmp');
    this.store = options.store;
    this.inlineBytes = options.store ? (options.inlineBytes ?? INLINE_BLOB_BYTES) : 0;
  }

  /** Where failed file writes are reported (the store's): absent, nothing is. */
  get health(): StorageHealth | undefined {
    return this.store?.health;
  }

  /**
   * A failed file operation: a storage failure (a full disk, a read-only folder, an I/O error)
   * closes the store to writes and becomes its 503; anything else is answered as it is.
   */
  failure(e: unknown): unknown {
    if (!this.health || (e as { code?: string })?.code === 'ENOENT' || !storageCause(e) || (e as { name?: string }).name === 'ServiceError') return e;
    return this.health.fail(e, 'blobs');
  }

  /** Opens (creating) <dataDir>/blobs and removes temp files a crash may have left. */
  static async open(dataDir: string, options: BlobStoreOptions = {}): Promise<BlobStore> {
    const blobs = new BlobStore(join(dataDir, 'blobs'), options);
    await mkdir(blobs.root, { recursive: true, mode: 0o700 });
    await rm(blobs.tmpDir, { recursive: true, force: true });
    await mkdir(blobs.tmpDir, { mode: 0o700 });
    if (options.store) {
      await blobs.learnFileSizes(options.store);
      await blobs.indexFiles(options.store);
    }
    return blobs;
  }

  /**
   * Indexes the blob files not yet in FileIndex (a crash between a file's link and its index
   * entry, or files from before the index), so every file present is known from now on.
   */
  private async indexFiles(store: Store) {
    const unindexed: Array<[string, number]> = [];
    for (const shard of await readdir(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const rest of await readdir(join(this.root, shard))) {
        if (!/^[0-9a-f]{62}$/.test(rest)) continue;
        const sha = shard + rest;
        if ((await store.get(FileIndex, sha)) !== undefined) continue;
        const size = await this.fileSize(sha);
        if (size !== undefined) unindexed.push([sha, size]);
      }
    }
    for (let i = 0; i < unindexed.length; i += 500) {
      const part = unindexed.slice(i, i + 500);
      await store.transact(part.map(([sha]) => blobLock(sha)), async (tx) => {
        for (const [sha, bytes] of part) tx.put(FileIndex, sha, { bytes });
      });
    }
  }

  /** Records a blob file in FileIndex, durably (before its upload is acknowledged). */
  async indexFile(sha256: string, bytes: number): Promise<void> {
    if (!this.store) return;
    await this.store.transact([blobLock(sha256)], async (tx) => tx.put(FileIndex, sha256, { bytes }));
  }

  /** Whether the store acknowledged a blob file under this hash. */
  private async indexed(sha256: string): Promise<boolean> {
    return this.store !== undefined && (await this.store.get(FileIndex, sha256)) !== undefined;
  }

  /**
   * Sets filesAbove from the store's record (BlobFiles), creating it on the first open with
   * inline blobs. Lowered when this code's threshold is below the record's (files are then
   * written from a smaller size on), never raised: files written under a lower one remain.
   */
  private async learnFileSizes(store: Store) {
    const known = await store.get(BlobFiles, BLOB_FILES_KEY);
    const allAbove = Math.min(known ? known.allAbove : (await this.hasFiles()) ? 0 : this.inlineBytes, this.inlineBytes);
    if (known?.allAbove !== allAbove) await store.transact([`${BlobFiles.name}:${BLOB_FILES_KEY}`], async (tx) => tx.put(BlobFiles, BLOB_FILES_KEY, { allAbove }));
    this.filesAbove = allAbove;
  }

  /** Whether any blob file may exist: a fan-out folder is created with the first file in it. */
  private async hasFiles(): Promise<boolean> {
    return (await readdir(this.root)).some((name) => /^[0-9a-f]{2}$/.test(name));
  }

  /** Where the blob of this (lowercase hex) sha256 lives. */
  pathOf(sha256: string): string {
    return join(this.root, sha256.slice(0, 2), sha256.slice(2));
  }

  /** The fan-out folder of a hash, created (and made durable) on first use. */
  async shardDir(sha256: string): Promise<string> {
    const dir = join(this.root, sha256.slice(0, 2));
    // Not `recursive: true`: Node's recursive mkdir answers a read-only file system (and any
    // other refusal of a directory that does not exist yet) as ENOENT, which reads as a bug
    // rather than as the storage failing (it stats the missing directory and reports that).
    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return dir;
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      // blobs/ itself was removed underneath: made again, then the shard.
      for (const d of [this.root, dir]) {
        await mkdir(d, { mode: 0o700 }).catch((e2: NodeJS.ErrnoException) => {
          if (e2.code !== 'EEXIST') throw e2;
        });
      }
    }
    await syncDir(this.root);
    return dir;
  }

  /** Whether a blob of this many bytes is stored inline. */
  inlines(bytes: number): boolean {
    return bytes > 0 && bytes <= this.inlineBytes;
  }

  /**
   * The stored value of an inline blob, or undefined. A value that no longer parses as the
   * JSON string it was written as (damage beneath the store) reads as 'damaged': the blob
   * exists, and no bytes of it can match its name.
   */
  private async inlineValue(sha256: string): Promise<string | 'damaged' | undefined> {
    if (!this.store) return undefined;
    try {
      const v = await this.store.get(InlineBlobs, sha256);
      return v === undefined || typeof v === 'string' ? v : 'damaged';
    } catch (e) {
      if (e instanceof SyntaxError) return 'damaged';
      throw e;
    }
  }

  /**
   * Creates (overwrite false: unless the blob is stored, inline or as a file; answers false
   * then) or replaces (overwrite true) an inline blob, in one durable store transaction
   * under the blob's lock: it commits in the store's next group commit.
   */
  async placeInline(sha256: string, bytes: Buffer, overwrite: boolean): Promise<boolean> {
    const store = this.store!;
    const created = await store.transact([blobLock(sha256)], async (tx) => {
      if (!overwrite) {
        // A file this small exists only in a folder that had files before blobs went inline;
        // there both places are looked up at once (the two lookups overlap on the thread pool).
        const fileToo = bytes.length > this.filesAbove;
        // A value that no longer parses is a damaged blob: stored, for the caller to check and repair.
        const present = tx.get(InlineBlobs, sha256).then(
          (v) => v !== undefined,
          (e) => (e instanceof SyntaxError ? true : Promise.reject(e)),
        );
        const [inline, file] = await Promise.all([present, fileToo ? this.fileSize(sha256) : undefined]);
        if (inline || file !== undefined) return false;
      }
      tx.put(InlineBlobs, sha256, bytes.toString('base64'));
      return true;
    });
    // A repair replaces a damaged file copy too (left from before blobs went inline): it
    // would be found again if the inline copy went, and nothing should keep bad bytes.
    if (created && overwrite) {
      try {
        await unlink(this.pathOf(sha256));
      } catch (e) {
        if (!isMissing(e)) throw e;
      }
    }
    return created;
  }

  /** Removes an inline copy of a blob whose file was just repaired (it would be found first). */
  async dropInline(sha256: string): Promise<void> {
    // Almost always absent: looked up first, so a repair pays no transaction for nothing.
    if ((await this.inlineValue(sha256)) === undefined) return;
    await this.store!.transact([blobLock(sha256)], async (tx) => {
      if ((await tx.get(InlineBlobs, sha256)) !== undefined) tx.del(InlineBlobs, sha256);
    });
  }

  private async fileSize(sha256: string): Promise<number | undefined> {
    try {
      return (await stat(this.pathOf(sha256))).size;
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  }

  /** Size in bytes of a stored blob, or undefined. Does not check the bytes. */
  async size(sha256: string): Promise<number | undefined> {
    const inline = await this.inlineValue(sha256);
    if (inline === 'damaged') return 0;
    if (inline !== undefined) return Buffer.byteLength(inline, 'base64');
    const size = await this.fileSize(sha256);
    // A file acknowledged and gone since: stored, and damaged (as a value that no longer parses).
    if (size === undefined && (await this.indexed(sha256))) return 0;
    return size;
  }

  /** Opens a stored blob, or undefined when there is none. Close it (or consume its stream). */
  async open(sha256: string): Promise<BlobReader | undefined> {
    const inline = await this.inlineValue(sha256);
    if (inline !== undefined) return new InlineBlob(inline === 'damaged' ? Buffer.alloc(0) : Buffer.from(inline, 'base64'));
    let fh: FileHandle;
    try {
      fh = await open(this.pathOf(sha256), 'r');
    } catch (e) {
      if (!isMissing(e)) throw e;
      // Acknowledged and gone since (removed underneath): no bytes of it can match its name.
      return (await this.indexed(sha256)) ? new InlineBlob(Buffer.alloc(0)) : undefined;
    }
    try {
      return new StoredBlob(fh, (await fh.stat()).size);
    } catch (e) {
      await fh.close().catch(() => undefined);
      throw e;
    }
  }

  /** Starts an upload (refused at once while the store is closed to writes); expectedBytes is the announced size, when there is one. */
  begin(spillBytes = DEFAULT_SPILL_BYTES, expectedBytes?: number): BlobUpload {
    this.health?.check();
    return new BlobUpload(this, spillBytes, expectedBytes);
  }

  /**
   * The audit (`akas log check`): every inline blob hashes to its name; every blob file the
   * store indexed is there, whole (its indexed size) and hashes to its name. Files present and
   * not indexed are counted (none after an open: open() indexes them).
   */
  async audit(): Promise<BlobAudit> {
    const problems: string[] = [];
    let inline = 0;
    let files = 0;
    let indexed = 0;
    const say = (p: string) => problems.length < 50 && problems.push(p);
    if (this.store) {
      for await (const [sha, value] of this.store.iterate(InlineBlobs)) {
        inline++;
        const ok = typeof value === 'string' && createHash('sha256').update(Buffer.from(value, 'base64')).digest('hex') === sha;
        if (!ok) say(`blob ${sha} (stored inline): its bytes no longer hash to its name`);
      }
      for await (const [sha, { bytes }] of this.store.iterate(FileIndex)) {
        indexed++;
        const size = await this.fileSize(sha);
        if (size === undefined) {
          if ((await this.inlineValue(sha)) === undefined) say(`blob ${sha}: acknowledged (${bytes} bytes), its file is gone`);
          continue;
        }
        if (size !== bytes) {
          say(`blob ${sha}: its file holds ${size} bytes, ${bytes} were acknowledged`);
          continue;
        }
        const blob = await this.open(sha);
        try {
          if (blob && (await blob.sha256()) !== sha) say(`blob ${sha}: its file no longer hashes to its name`);
        } finally {
          await blob?.close();
        }
      }
    }
    let unindexed = 0;
    for (const shard of await readdir(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const rest of await readdir(join(this.root, shard))) {
        if (!/^[0-9a-f]{62}$/.test(rest)) continue;
        files++;
        if (!(await this.indexed(shard + rest))) unindexed++;
      }
    }
    return { acknowledged: inline + indexed, stored: inline + files, unindexed, problems };
  }

  /** Hashes of every stored blob (for audits, copies and tests), in no particular order; each once. */
  async *list(): AsyncIterable<string> {
    if (this.store) for await (const [sha] of this.store.iterate(InlineBlobs)) yield sha;
    for (const shard of await readdir(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const rest of await readdir(join(this.root, shard))) {
        if (!/^[0-9a-f]{62}$/.test(rest)) continue;
        // A file with an inline copy beside it (a crash between a repair's commit and its
        // unlink) was listed already.
        if (this.store && (await this.inlineValue(shard + rest)) !== undefined) continue;
        yield shard + rest;
      }
    }
  }
}

const opened = new WeakMap<Store, Promise<Blobs>>();

/**
 * The blob store of a Store, opened once per Store: the store's own (a shared database
 * keeps the bytes itself), else small blobs inline in the store and the others in the folder
 * beside it (its temp folder is then cleaned once, at the first use after start, and never
 * under a running upload).
 */
export function blobsOf(store: Store): Promise<Blobs> {
  let blobs = opened.get(store);
  if (!blobs) {
    blobs = store.blobs ? store.blobs() : BlobStore.open(store.location, { store });
    opened.set(store, blobs);
    blobs.catch(() => opened.delete(store));
  }
  return blobs;
}
