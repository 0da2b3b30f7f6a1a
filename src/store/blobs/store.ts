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
// Files are written as git writes objects, so a crash leaves no blob or a whole one
// (files.ts); an upload is hashed as it arrives and placed by upload.ts; stored blobs are read
// through readers.ts. An inline blob is one atomic batch: all or nothing. These modules only
// move bytes: limits, deduplication and integrity decisions are the domain's
// (src/domain/cas/cas.ts).
//
// The store indexes every blob file (FileIndex: sha256 -> size), durably, before an upload is
// acknowledged, and every file found at open that is not yet indexed (a crash between the
// link and the index, or a folder from before the index): a file that later disappears or
// shrinks underneath is then known to be lost, answered as damaged (500 integrity_violation)
// rather than as never stored, and reported by the audit (audit(), `akas log check`). A
// failed file write (a full disk, a read-only folder) closes the store to writes like a
// failed store write does (health.ts).
import { createHash } from 'node:crypto';
import { mkdir, open, rm, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { storageCause, type StorageHealth } from '../health.js';
import { space, type BlobAudit, type BlobReader, type Blobs, type Store } from '../types.js';
import { blobFileNames, blobFileSize, blobPath, hasBlobFiles, isMissing, shardDir } from './files.js';
import { InlineBlob, StoredBlob } from './readers.js';
import { BlobUpload, DEFAULT_SPILL_BYTES } from './upload.js';

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
    for await (const sha of blobFileNames(this.root)) {
      if ((await store.get(FileIndex, sha)) !== undefined) continue;
      const size = await this.fileSize(sha);
      if (size !== undefined) unindexed.push([sha, size]);
    }
    for (let i = 0; i < unindexed.length; i += 500) {
      const part = unindexed.slice(i, i + 500);
      await store.transact(
        part.map(([sha]) => blobLock(sha)),
        async (tx) => {
          for (const [sha, bytes] of part) tx.put(FileIndex, sha, { bytes });
        },
      );
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
    const allAbove = Math.min(known ? known.allAbove : (await hasBlobFiles(this.root)) ? 0 : this.inlineBytes, this.inlineBytes);
    if (known?.allAbove !== allAbove)
      await store.transact([`${BlobFiles.name}:${BLOB_FILES_KEY}`], async (tx) => tx.put(BlobFiles, BLOB_FILES_KEY, { allAbove }));
    this.filesAbove = allAbove;
  }

  /** Where the blob of this (lowercase hex) sha256 lives. */
  pathOf(sha256: string): string {
    return blobPath(this.root, sha256);
  }

  /** The fan-out folder of a hash, created (and made durable) on first use. */
  shardDir(sha256: string): Promise<string> {
    return shardDir(this.root, sha256);
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

  private fileSize(sha256: string): Promise<number | undefined> {
    return blobFileSize(this.root, sha256);
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
    for await (const sha of blobFileNames(this.root)) {
      files++;
      if (!(await this.indexed(sha))) unindexed++;
    }
    return { acknowledged: inline + indexed, stored: inline + files, unindexed, problems };
  }

  /** Hashes of every stored blob (for audits, copies and tests), in no particular order; each once. */
  async *list(): AsyncIterable<string> {
    if (this.store) for await (const [sha] of this.store.iterate(InlineBlobs)) yield sha;
    for await (const sha of blobFileNames(this.root)) {
      // A file with an inline copy beside it (a crash between a repair's commit and its
      // unlink) was listed already.
      if (this.store && (await this.inlineValue(sha)) !== undefined) continue;
      yield sha;
    }
  }
}

/** The blob store of a Store (Store.blobs: opened once per store, the same one after). */
export function blobsOf(store: Store): Promise<Blobs> {
  return store.blobs();
}
