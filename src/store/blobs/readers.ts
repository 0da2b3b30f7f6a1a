// Reading a stored blob (store.ts): a file, opened once so its hash check and the bytes it
// serves are the same bytes, or an inline blob read whole from its store value.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FileHandle } from 'node:fs/promises';
import type { BlobReader } from '../types.js';

/** Chunk size of the reads of a hash check and of served bytes (few syscalls, bounded memory). */
const READ_CHUNK = 1024 * 1024;

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
