// PROTOCOL 5: the rules of the content-addressable store. A blob is named by the
// sha256 of its bytes, holds 1 byte to 10 MiB, and is immutable. Identical bytes are stored
// once. Stored bytes are hashed again on every read and never served when they no longer
// match their name; a later upload of the right bytes repairs such a blob.
import { finished, type Readable } from 'node:stream';
import { ServiceError, sha256Hex } from '../../core/index.js';
import { blobsOf, INLINE_BLOB_BYTES, type Blobs, type Store } from '../../store/index.js';
import type { Ctx } from '../context.js';

/** PROTOCOL 14: content-store blobs are at most 10 MiB. */
export const CAS_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Blobs up to this size are read into memory once, checked, and served from that very
 * buffer; larger ones are checked by a streamed pass over the open file and then streamed,
 * so a burst of large downloads does not hold whole blobs in memory.
 */
const READ_IN_ONE = 1024 * 1024;

const SHA256_ANY_CASE = /^[0-9a-fA-F]{64}$/;

/** Blobs up to this size enter the cache of verified blobs: the small ones (stored inline on LevelDB). */
const CACHE_BLOB_MAX = INLINE_BLOB_BYTES;
/** What the cache of verified blobs holds at most, per store. */
const CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Verified small blobs, by sha256: bytes that hashed to their name when they were read from
 * the store, served again without a store read or a hash (bench/cas.ts: a 1 KiB download
 * costed an open, read and close of its file, or a store read, plus a hash, per request).
 * Content-addressed bytes never go stale: whatever later happens to the stored copy, these
 * are the right bytes for the name. Nothing else is kept (a missing or damaged blob is asked
 * again every time), so a repair or a first upload shows at once. Bounded by bytes in two
 * generations, as the store's read cache: hits and new entries go to the young map; when it
 * holds half the budget it becomes the old one and the previous old one is dropped (O(1) per
 * step, no per-entry eviction).
 */
class VerifiedBlobs {
  private young = new Map<string, Buffer>();
  private old = new Map<string, Buffer>();
  private youngBytes = 0;

  constructor(private readonly budget: number) {}

  get(sha256: string): Buffer | undefined {
    const hit = this.young.get(sha256);
    if (hit) return hit;
    const old = this.old.get(sha256);
    if (old) {
      this.old.delete(sha256);
      this.add(sha256, old);
    }
    return old;
  }

  set(sha256: string, bytes: Buffer) {
    if (this.young.has(sha256) || bytes.length > CACHE_BLOB_MAX) return;
    this.old.delete(sha256);
    // Its own memory: a small Buffer may be a slice of a shared 8 KiB pool slab, which the
    // cache would otherwise keep alive (and miscount) for as long as the entry lives.
    let own = bytes;
    if (bytes.byteLength !== bytes.buffer.byteLength) {
      own = Buffer.allocUnsafeSlow(bytes.length);
      bytes.copy(own);
    }
    this.add(sha256, own);
  }

  private add(sha256: string, bytes: Buffer) {
    this.young.set(sha256, bytes);
    this.youngBytes += bytes.length;
    if (this.youngBytes >= this.budget / 2) {
      this.old = this.young;
      this.young = new Map();
      this.youngBytes = 0;
    }
  }
}

const verified = new WeakMap<Store, VerifiedBlobs>();

/** The cache of verified blobs of a store (one per store: another store may not hold the same blobs). */
function verifiedOf(store: Store): VerifiedBlobs {
  let cache = verified.get(store);
  if (!cache) verified.set(store, (cache = new VerifiedBlobs(CACHE_BYTES)));
  return cache;
}

/** The hash from a fetch path: 64 hex chars (either case), answered in lowercase. */
export function parseSha256(hex: unknown): string {
  if (typeof hex !== 'string' || !SHA256_ANY_CASE.test(hex)) {
    throw new ServiceError('invalid_sha256', 'A blob is named by the sha256 of its bytes: 64 hex characters.', {
      field: 'hex',
      hint: 'POST the bytes to /api/cas; its answer carries sha256 and fetchUrl.',
    });
  }
  return hex.toLowerCase();
}

/** Opens the blob store of this node at start, which also clears what a crash left in its temp folder. */
export async function openCas(ctx: Pick<Ctx, 'store'>): Promise<void> {
  await blobsOf(ctx.store);
}

export const tooLarge = (max = CAS_MAX_BYTES) =>
  new ServiceError('blob_too_large', `A content-store blob holds at most ${max} bytes (10 MiB).`, {
    limit: max,
    hint: 'Split the content, or store it elsewhere and propose it as an artifact with its sha256.',
  });

const integrityViolation = (sha256: string) =>
  new ServiceError('integrity_violation', 'The stored bytes of this blob no longer match its sha256; they are not served.', {
    sha256,
    hint: 'POST the original bytes to /api/cas again: the node replaces the damaged copy.',
  });

export interface PutResult {
  sha256: string;
  bytes: number;
  /** The same bytes were already stored; nothing was written. */
  deduplicated: boolean;
  /** A stored copy that failed its hash check was replaced by these bytes. */
  repaired: boolean;
}

export interface PutOptions {
  /** The Content-Length the client announced: refused before reading when over the limit. */
  declaredBytes?: number;
  maxBytes?: number;
  /** Bytes the caller's quota leaves for this upload, and the refusal when the upload passes them. */
  quota?: { bytes: number; error: () => ServiceError };
}

type Health = 'ok' | 'missing' | 'corrupt';

/** Whether a stored blob exists and still hashes to its name. */
async function health(blobs: Blobs, sha256: string): Promise<Health> {
  const blob = await blobs.open(sha256);
  if (!blob) return 'missing';
  try {
    return (await blob.sha256()) === sha256 ? 'ok' : 'corrupt';
  } finally {
    await blob.close();
  }
}

/**
 * Stores the bytes of source, hashing them as they arrive. Refuses (413) as soon as the
 * running count crosses the limit, before the chunk that crosses it is kept, so an oversized
 * upload never stores anything. Memory stays bounded: the store spills to a temp file.
 * Whether the blob is stored is always asked of the store, never of the cache of verified
 * blobs: a re-upload must find (and repair) a stored copy that went bad after it was cached.
 */
export async function putBlob(ctx: Pick<Ctx, 'store'>, source: AsyncIterable<Uint8Array> | Readable, opts: PutOptions = {}): Promise<PutResult> {
  const max = opts.maxBytes ?? CAS_MAX_BYTES;
  if (opts.declaredBytes !== undefined && opts.declaredBytes > max) throw tooLarge(max);
  const quota = opts.quota;
  if (quota && opts.declaredBytes !== undefined && opts.declaredBytes > quota.bytes) throw quota.error();
  const blobs = await blobsOf(ctx.store);
  const upload = blobs.begin(undefined, opts.declaredBytes);
  try {
    const take = (chunk: Uint8Array) => {
      if (upload.bytes + chunk.length > max) throw tooLarge(max);
      if (quota && upload.bytes + chunk.length > quota.bytes) throw quota.error();
      return upload.write(chunk);
    };
    if (isReadable(source)) await consume(source, take);
    else for await (const chunk of source) await take(chunk);
    if (upload.bytes === 0) {
      throw new ServiceError('empty_body', 'The content store keeps 1 byte to 10 MiB; the body was empty.', {
        hint: 'Send the raw bytes as the request body (any content type).',
      });
    }
    const sha256 = upload.sha256();
    const bytes = upload.bytes;
    if (upload.cheapPlace) {
      // A small blob: creating it unless stored is one step that writes nothing when it is
      // there, so the usual case (new bytes) costs no lookup before it.
      if (await upload.place(false)) return { sha256, bytes, deduplicated: false, repaired: false };
      const state = await health(blobs, sha256);
      if (state === 'ok') return { sha256, bytes, deduplicated: true, repaired: false };
      await upload.place(true);
      return { sha256, bytes, deduplicated: false, repaired: state === 'corrupt' };
    }
    if (upload.inMemory) {
      // Small uploads are still only in memory: when the blob is already stored and sound,
      // nothing at all is written.
      const state = await health(blobs, sha256);
      if (state === 'ok') return { sha256, bytes, deduplicated: true, repaired: false };
      if (state === 'corrupt') {
        await upload.place(true);
        return { sha256, bytes, deduplicated: false, repaired: true };
      }
    }
    if (await upload.place(false)) return { sha256, bytes, deduplicated: false, repaired: false };
    // Stored before (or by a concurrent upload of the same bytes): keep that copy if sound.
    const state = await health(blobs, sha256);
    if (state === 'ok') return { sha256, bytes, deduplicated: true, repaired: false };
    await upload.place(true);
    return { sha256, bytes, deduplicated: false, repaired: state === 'corrupt' };
  } finally {
    await upload.discard();
  }
}

const isReadable = (s: AsyncIterable<Uint8Array> | Readable): s is Readable =>
  typeof (s as Readable).pause === 'function' && typeof (s as Readable).on === 'function';

/**
 * Feeds every chunk of a stream to take(), pausing the stream only while a promise take()
 * answered is pending (the disk is behind). 'data' events rather than an async iterator: no
 * promise per chunk, which measured about 15% of a 10 MiB upload (bench/cas.ts). Settles
 * once the stream ended and the last chunk was taken; rejects on the first error of take()
 * or of the stream (a client that hangs up), leaving the stream paused and unlistened for
 * the caller to drain or drop.
 */
function consume(source: Readable, take: (chunk: Uint8Array) => Promise<void> | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let pending: Promise<void> | undefined;
    let done = false;
    const finish = (error?: unknown) => {
      if (done) return;
      done = true;
      source.off('data', onData);
      stop();
      if (error) {
        source.pause();
        reject(error);
      } else resolve();
    };
    const onData = (chunk: Uint8Array) => {
      let wait;
      try {
        wait = take(chunk);
      } catch (e) {
        return finish(e);
      }
      if (!wait) return;
      source.pause();
      pending = wait.then(
        () => {
          pending = undefined;
          if (!done) source.resume();
        },
        (e) => finish(e),
      );
    };
    const stop = finished(source, { writable: false }, (error) => {
      if (error) return finish(error);
      // Ended: the last chunk may still be waiting for the disk.
      if (pending) pending.then(() => finish(), finish);
      else finish();
    });
    source.on('data', onData);
  });
}

/** Whether a blob is stored, and its size; the bytes are not checked (head=1). */
export async function blobInfo(ctx: Pick<Ctx, 'store'>, sha256: string): Promise<{ exists: boolean; bytes: number }> {
  const hit = verifiedOf(ctx.store).get(sha256);
  if (hit) return { exists: true, bytes: hit.length };
  const size = await (await blobsOf(ctx.store)).size(sha256);
  return size === undefined ? { exists: false, bytes: 0 } : { exists: true, bytes: size };
}

/** A blob whose bytes were just checked against its name, ready to be served. */
export interface VerifiedBlob {
  sha256: string;
  bytes: number;
  /** Bytes start..end (inclusive) of the checked content; call once. */
  body(start?: number, end?: number): Buffer | Readable;
  /** Releases the blob when body() is not going to be called. */
  close(): Promise<void>;
}

/** Serves start..end of checked bytes held in memory. */
function inMemory(sha256: string, buf: Buffer): VerifiedBlob {
  return {
    sha256,
    bytes: buf.length,
    body: (start = 0, end = buf.length - 1) => buf.subarray(start, end + 1),
    close: async () => undefined,
  };
}

/**
 * Opens a blob for reading after checking its bytes: 404 not_found, 500 integrity_violation.
 * A small blob checked before is served from the cache of verified blobs (its bytes hashed
 * to their name when they entered it); every other read hashes the stored copy again.
 * `atRest`: check the stored copy even when the cache holds the bytes (an audit of what is on
 * disk, such as the periodic re-hash behind platform-verified, must see bit rot).
 */
export async function openVerifiedBlob(ctx: Pick<Ctx, 'store'>, sha256: string, opts: { atRest?: boolean } = {}): Promise<VerifiedBlob> {
  const cache = verifiedOf(ctx.store);
  const hit = opts.atRest ? undefined : cache.get(sha256);
  if (hit) return inMemory(sha256, hit);
  const blobs = await blobsOf(ctx.store);
  const blob = await blobs.open(sha256);
  if (!blob) {
    throw new ServiceError('not_found', `No blob ${sha256} in this content store.`, {
      hint: 'GET /api/cas/{sha256}?head=1 tells whether a blob exists; POST /api/cas stores one.',
    });
  }
  try {
    if (blob.size <= READ_IN_ONE) {
      const buf = await blob.readAll();
      await blob.close();
      if (sha256Hex(buf) !== sha256) throw integrityViolation(sha256);
      cache.set(sha256, buf);
      return inMemory(sha256, buf);
    }
    if ((await blob.sha256()) !== sha256) throw integrityViolation(sha256);
    return {
      sha256,
      bytes: blob.size,
      body: (start = 0, end = blob.size - 1) => blob.stream(start, end),
      close: () => blob.close(),
    };
  } catch (e) {
    await blob.close();
    throw e;
  }
}
