// Blob files of the content-addressable store. Blobs live beside the LevelDB folder, one file
// per blob named by its sha256 in git's fan-out layout (<dataDir>/blobs/ab/cdef...), not in
// LevelDB values: a value cannot be streamed (the whole blob, plus its JSON/base64 copy, sits
// in memory) and compaction rewrites big values again and again. bench/cas.ts measures both.
//
// Crash safety, as git does it: bytes go to a temp file in blobs/tmp/, are fsynced, then
// linked under their final name (link() fails if the name exists, so two writers of the same
// bytes cannot both claim to have created it), and the folder is fsynced. A crash at any
// point leaves either no blob or a whole one under a valid name, plus at most a temp file,
// which the next start removes. This module only moves bytes: limits, deduplication and
// integrity decisions are the domain's (src/domain/cas.ts).
import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { link, mkdir, open, readdir, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobReader, Blobs, BlobWriter, Store } from './types.js';

const MiB = 1024 * 1024;
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
      this.opening = TempFile.create(this.blobs.tmpDir);
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
    if (this.temp) return this.temp.write(buf);
    this.chunks.push(buf);
    if (this.bytes > this.spillBytes || this.opening) return this.spill().then(() => undefined);
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
    const temp = this.temp ?? (await this.spill());
    if (!this.written) {
      await temp.finish();
      this.written = true;
    }
    const dir = await this.blobs.shardDir(sha);
    const final = this.blobs.pathOf(sha);
    if (overwrite) {
      await rename(temp.path, final);
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

/** The blob folder of one data folder. */
export class BlobStore implements Blobs {
  readonly tmpDir: string;

  private constructor(readonly root: string) {
    this.tmpDir = join(root, 'tmp');
  }

  /** Opens (creating) <dataDir>/blobs and removes temp files a crash may have left. */
  static async open(dataDir: string): Promise<BlobStore> {
    const blobs = new BlobStore(join(dataDir, 'blobs'));
    await mkdir(blobs.root, { recursive: true, mode: 0o700 });
    await rm(blobs.tmpDir, { recursive: true, force: true });
    await mkdir(blobs.tmpDir, { mode: 0o700 });
    return blobs;
  }

  /** Where the blob of this (lowercase hex) sha256 lives. */
  pathOf(sha256: string): string {
    return join(this.root, sha256.slice(0, 2), sha256.slice(2));
  }

  /** The fan-out folder of a hash, created (and made durable) on first use. */
  async shardDir(sha256: string): Promise<string> {
    const dir = join(this.root, sha256.slice(0, 2));
    const created = await mkdir(dir, { recursive: true, mode: 0o700 });
    if (created) await syncDir(this.root);
    return dir;
  }

  /** Size in bytes of a stored blob, or undefined. Does not check the bytes. */
  async size(sha256: string): Promise<number | undefined> {
    try {
      return (await stat(this.pathOf(sha256))).size;
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  }

  /** Opens a stored blob, or undefined when there is none. Close it (or consume its stream). */
  async open(sha256: string): Promise<StoredBlob | undefined> {
    let fh: FileHandle;
    try {
      fh = await open(this.pathOf(sha256), 'r');
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
    try {
      return new StoredBlob(fh, (await fh.stat()).size);
    } catch (e) {
      await fh.close().catch(() => undefined);
      throw e;
    }
  }

  /** Starts an upload; expectedBytes is the announced size, when there is one. */
  begin(spillBytes = DEFAULT_SPILL_BYTES, expectedBytes?: number): BlobUpload {
    return new BlobUpload(this, spillBytes, expectedBytes);
  }

  /** Hashes of every stored blob (for audits and tests), in no particular order. */
  async *list(): AsyncIterable<string> {
    for (const shard of await readdir(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const rest of await readdir(join(this.root, shard))) {
        if (/^[0-9a-f]{62}$/.test(rest)) yield shard + rest;
      }
    }
  }
}

const opened = new WeakMap<Store, Promise<Blobs>>();

/**
 * The blob store of a Store, opened once per Store: the store's own (a shared database
 * keeps the bytes itself), else the folder beside it (its temp folder is then cleaned once,
 * at the first use after start, and never under a running upload).
 */
export function blobsOf(store: Store): Promise<Blobs> {
  let blobs = opened.get(store);
  if (!blobs) {
    blobs = store.blobs ? store.blobs() : BlobStore.open(store.location);
    opened.set(store, blobs);
    blobs.catch(() => opened.delete(store));
  }
  return blobs;
}
