// One upload into the blob store (store.ts): hashed as it arrives, held in memory while small,
// then written to a temp file in the background (files.ts) and placed under its hash: inline
// in the store when it stayed small, else as a file.
import { createHash } from 'node:crypto';
import { link, rename, unlink } from 'node:fs/promises';
import type { StorageHealth } from '../health.js';
import type { BlobWriter } from '../types.js';
import { isExists, syncDir, TempFile } from './files.js';

/** An upload is kept in memory up to this size before it spills to a temp file. */
export const DEFAULT_SPILL_BYTES = 1024 * 1024;

/** What an upload needs of the blob store it is placed into (BlobStore, store.ts). */
export interface UploadTarget {
  readonly tmpDir: string;
  /** Where failed file writes are reported (the store's): absent, nothing is. */
  readonly health: StorageHealth | undefined;
  /** A failed file operation, as the store answers it (a storage failure closes it to writes). */
  failure(e: unknown): unknown;
  /** Whether a blob of this many bytes is stored inline. */
  inlines(bytes: number): boolean;
  placeInline(sha256: string, bytes: Buffer, overwrite: boolean): Promise<boolean>;
  dropInline(sha256: string): Promise<void>;
  shardDir(sha256: string): Promise<string>;
  pathOf(sha256: string): string;
  size(sha256: string): Promise<number | undefined>;
  indexFile(sha256: string, bytes: number): Promise<void>;
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
    private readonly blobs: UploadTarget,
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
        if ((await this.blobs.size(sha)) !== undefined) return false;
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
