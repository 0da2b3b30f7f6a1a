// The blob files of a data folder (store.ts): one file per blob, named by its sha256 in git's
// fan-out layout (<dataDir>/blobs/ab/cdef...), written as git writes objects. Bytes go to a
// temp file in blobs/tmp/, are fsynced, then linked under their final name (link() fails if the
// name exists, so two writers of the same bytes cannot both claim to have created it), and the
// folder is fsynced. A crash at any point leaves either no blob or a whole one under a valid
// name, plus at most a temp file, which the next start removes.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

const MiB = 1024 * 1024;
/** Bytes queued for the temp file before write() waits for the disk (backpressure). */
const WRITE_HIGH_WATER = MiB;
/**
 * While an upload is still arriving, its temp file is fdatasync'ed in the background each
 * time this much more has been written, so the disk works during the transfer and the fsync
 * that must precede the rename only has the tail left to flush (bench/cas.ts).
 */
const EARLY_SYNC_BYTES = 2 * MiB;

export const isMissing = (e: unknown) => (e as NodeJS.ErrnoException)?.code === 'ENOENT';
export const isExists = (e: unknown) => (e as NodeJS.ErrnoException)?.code === 'EEXIST';

/** Where the blob of this (lowercase hex) sha256 lives under the blobs folder `root`. */
export function blobPath(root: string, sha256: string): string {
  return join(root, sha256.slice(0, 2), sha256.slice(2));
}

/** The size of a blob file, or undefined when there is none. */
export async function blobFileSize(root: string, sha256: string): Promise<number | undefined> {
  try {
    return (await stat(blobPath(root, sha256))).size;
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
}

/** Whether any blob file may exist: a fan-out folder is created with the first file in it. */
export async function hasBlobFiles(root: string): Promise<boolean> {
  return (await readdir(root)).some((name) => /^[0-9a-f]{2}$/.test(name));
}

/** The sha256 of every blob file under `root`, walking the fan-out folders (other names are skipped). */
export async function* blobFileNames(root: string): AsyncIterable<string> {
  for (const shard of await readdir(root)) {
    if (!/^[0-9a-f]{2}$/.test(shard)) continue;
    for (const rest of await readdir(join(root, shard))) {
      if (!/^[0-9a-f]{62}$/.test(rest)) continue;
      yield shard + rest;
    }
  }
}

/** The fan-out folder of a hash under `root`, created (and made durable) on first use. */
export async function shardDir(root: string, sha256: string): Promise<string> {
  const dir = join(root, sha256.slice(0, 2));
  // Not `recursive: true`: Node's recursive mkdir answers a read-only file system (and any
  // other refusal of a directory that does not exist yet) as ENOENT, which reads as a bug
  // rather than as the storage failing (it stats the missing directory and reports that).
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return dir;
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    // blobs/ itself was removed underneath: made again, then the shard.
    for (const d of [root, dir]) {
      await mkdir(d, { mode: 0o700 }).catch((e2: NodeJS.ErrnoException) => {
        if (e2.code !== 'EEXIST') throw e2;
      });
    }
  }
  await syncDir(root);
  return dir;
}

/** fsync a folder so a name just created in it survives a crash (no-op where unsupported). */
export async function syncDir(dir: string) {
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
export class TempFile {
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
