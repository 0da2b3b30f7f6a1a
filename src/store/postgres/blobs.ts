// Content-store bytes in PostgreSQL, so every process serves every blob with nothing shared
// but the database (bench/postgres.ts measured this against large objects and a shared folder).
//
// An upload gets a random id; its bytes are hashed as they arrive and written as chunks of
// 1 MiB (akas_blob_chunks, keyed by upload and byte offset), one at a time: memory holds at
// most one chunk being sent and the next one filling, whatever the blob size. The chunks are
// written with synchronous_commit off; the row that names the blob (akas_blobs: sha256 ->
// upload, size) is then committed with it on. PostgreSQL flushes its WAL in order, so that
// commit makes every chunk before it durable too: a crash leaves no blob or a whole one, plus
// chunks of an unnamed upload, which a sweep removes after an hour (never an upload in progress).
//
// A blob of one chunk (up to 1 MiB) that is still all in memory when it is placed costs one
// statement: its row and its chunk are inserted together (the chunk only if the row was), in
// one round trip and one synchronous commit, which PostgreSQL's group commit shares with the
// commits flushing beside it.
//
// A reader resolves the hash to its upload once and reads that upload's chunks, which never
// change: the hash check and the bytes served read the same copy. A blob of one chunk comes
// with the row, in the same query and snapshot. A repair points the hash at a new upload and
// removes the old chunks in one transaction.
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { storageCause, type StorageHealth } from '../health.js';
import type { BlobAudit, BlobReader, Blobs, BlobWriter } from '../types.js';
import type { PgTarget } from './connect.js';

export const CHUNK_BYTES = 1024 * 1024;

const SWEEP_EVERY_MS = 60 * 60 * 1000;

interface Chunk {
  off: string;
  bytes: Buffer;
}

interface ChunkRow {
  off: string;
  b64: string;
}

export class PgBlobs implements Blobs {
  private timer?: NodeJS.Timeout;
  readonly s: string;

  private constructor(
    target: PgTarget,
    readonly writers: pg.Pool,
    /** synchronous_commit off: chunk writes (a later synchronous commit flushes them). */
    readonly readers: pg.Pool,
    readonly health?: StorageHealth,
  ) {
    this.s = target.qschema;
  }

  /** A failed statement: a database gone or full closes the store to writes and is its 503 (health.ts). */
  failure(e: unknown): unknown {
    if (!this.health || !storageCause(e) || (e as { name?: string }).name === 'ServiceError') return e;
    return this.health.fail(e, 'database');
  }

  static async open(target: PgTarget, writers: pg.Pool, readers: pg.Pool, health?: StorageHealth): Promise<PgBlobs> {
    const blobs = new PgBlobs(target, writers, readers, health);
    await blobs.sweep();
    blobs.timer = setInterval(() => void blobs.sweep().catch(() => undefined), SWEEP_EVERY_MS);
    blobs.timer.unref();
    return blobs;
  }

  /** Removes chunks of uploads that no blob names and that stopped over an hour ago (crashes, refusals). */
  async sweep(olderThan = '1 hour'): Promise<number> {
    const r = await this.writers.query(
      `DELETE FROM ${this.s}.akas_blob_chunks c WHERE c.written_at < now() - $1::interval
         AND NOT EXISTS (SELECT 1 FROM ${this.s}.akas_blobs b WHERE b.upload = c.upload)`,
      [olderThan],
    );
    return r.rowCount ?? 0;
  }

  begin(spillBytes = CHUNK_BYTES, expectedBytes?: number): BlobWriter {
    return new PgBlobWriter(this, spillBytes, expectedBytes);
  }

  async open(sha256: string): Promise<BlobReader | undefined> {
    // A blob of one chunk comes whole with its row: one round trip for a small blob's read.
    const r = await this.readers.query<{ upload: string; size: string; b64: string | null }>({
      name: 'akas-blob-open',
      text: `SELECT b.upload, b.size, CASE WHEN b.size <= ${CHUNK_BYTES} THEN
               (SELECT encode(c.bytes, 'base64') FROM ${this.s}.akas_blob_chunks c WHERE c.upload = b.upload AND c.off = 0) END AS b64
             FROM ${this.s}.akas_blobs b WHERE b.sha256 = $1`,
      values: [sha256],
    });
    if (!r.rows.length) return undefined;
    const row = r.rows[0];
    return new PgBlobReader(this, row.upload, Number(row.size), row.b64 === null ? undefined : Buffer.from(row.b64, 'base64'));
  }

  async size(sha256: string): Promise<number | undefined> {
    const r = await this.readers.query<{ size: string }>({
      name: 'akas-blob-size',
      text: `SELECT size FROM ${this.s}.akas_blobs WHERE sha256 = $1`,
      values: [sha256],
    });
    return r.rows.length ? Number(r.rows[0].size) : undefined;
  }

  async *list(): AsyncIterable<string> {
    let after = '';
    for (;;) {
      const r = await this.readers.query<{ sha256: string }>(`SELECT sha256 FROM ${this.s}.akas_blobs WHERE sha256 > $1 ORDER BY sha256 LIMIT 1000`, [after]);
      for (const row of r.rows) yield row.sha256;
      if (r.rows.length < 1000) return;
      after = r.rows[r.rows.length - 1].sha256;
    }
  }

  /** The chunk holding byte `at` (first: true), or the one after offset `at`. */
  async chunk(upload: string, at: number, first: boolean): Promise<Chunk | undefined> {
    // As base64 text: bytea comes as hex text otherwise (twice the bytes; base64 read 10 MiB
    // about 40% faster here), and pg's binary results decode every value as UTF-8 first.
    const r = await this.readers.query<ChunkRow>({
      name: first ? 'akas-chunk-at' : 'akas-chunk-next',
      // The offset is found first (the index alone), then only that row is read: with
      // ORDER BY ... LIMIT 1 a plan that sorts would encode every chunk of the blob first.
      text: `SELECT off::text AS off, encode(bytes, 'base64') AS b64 FROM ${this.s}.akas_blob_chunks WHERE upload = $1 AND off = (SELECT ${
        first
          ? `max(off) FROM ${this.s}.akas_blob_chunks WHERE upload = $1 AND off <= $2`
          : `min(off) FROM ${this.s}.akas_blob_chunks WHERE upload = $1 AND off > $2`
      })`,
      values: [upload, at],
    });
    const row = r.rows[0];
    // Node's base64 decoder skips the line breaks PostgreSQL puts every 76 characters.
    return row ? { off: row.off, bytes: Buffer.from(row.b64, 'base64') } : undefined;
  }

  /**
   * The audit: every blob row (what the store acknowledged) has chunks that add up to its size
   * and hash to its name, checked in the database (a page of blobs per query).
   */
  async audit(): Promise<BlobAudit> {
    const problems: string[] = [];
    let acknowledged = 0;
    let after = '';
    for (;;) {
      const r = await this.readers.query<{ sha256: string; size: string; stored: string | null; hash: string | null }>(
        `SELECT b.sha256, b.size::text AS size, sum(length(c.bytes))::text AS stored,
                encode(sha256(string_agg(c.bytes, ''::bytea ORDER BY c.off)), 'hex') AS hash
           FROM (SELECT * FROM ${this.s}.akas_blobs WHERE sha256 > $1 ORDER BY sha256 LIMIT 100) b
           LEFT JOIN ${this.s}.akas_blob_chunks c ON c.upload = b.upload
          GROUP BY b.sha256, b.size ORDER BY b.sha256`,
        [after],
      );
      for (const row of r.rows) {
        acknowledged++;
        const stored = Number(row.stored ?? 0);
        if (problems.length >= 50) continue;
        if (stored !== Number(row.size)) problems.push(`blob ${row.sha256}: ${stored} bytes stored, ${row.size} were acknowledged`);
        else if (row.hash !== row.sha256) problems.push(`blob ${row.sha256}: its bytes no longer hash to its name`);
      }
      if (r.rows.length < 100) break;
      after = r.rows[r.rows.length - 1].sha256;
    }
    return { acknowledged, stored: acknowledged, unindexed: 0, problems };
  }

  async close() {
    if (this.timer) clearInterval(this.timer);
  }
}

class PgBlobWriter implements BlobWriter {
  private readonly hash = createHash('sha256');
  private readonly upload = randomBytes(12).toString('hex');
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Bytes already sent as chunks. */
  private sent = 0;
  private spilled: boolean;
  private digest?: string;
  private placed = false;
  /** The chunk being sent (a refused upload must not leave it landing after its discard). */
  private sending: Promise<void> = Promise.resolve();
  bytes = 0;

  constructor(
    private readonly blobs: PgBlobs,
    private readonly spillBytes: number,
    expectedBytes?: number,
  ) {
    this.spilled = expectedBytes !== undefined && expectedBytes > spillBytes;
  }

  get inMemory() {
    return !this.spilled;
  }

  /** Nothing sent yet (at most one chunk, all in memory): placing it is one statement. */
  get cheapPlace() {
    return !this.spilled && this.sent === 0;
  }

  write(chunk: Uint8Array): Promise<void> | undefined {
    const wait = this.take(chunk);
    return wait?.catch((e) => Promise.reject(this.blobs.failure(e)));
  }

  async place(overwrite = false): Promise<boolean> {
    try {
      return await this.placeIt(overwrite);
    } catch (e) {
      throw this.blobs.failure(e);
    }
  }

  private take(chunk: Uint8Array): Promise<void> | undefined {
    if (this.digest) throw new Error('upload already finished');
    if (chunk.length === 0) return undefined;
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    this.hash.update(buf);
    this.bytes += buf.length;
    this.held.push(buf);
    this.heldBytes += buf.length;
    if (this.bytes > this.spillBytes) this.spilled = true;
    if (!this.spilled || this.heldBytes < CHUNK_BYTES) return undefined;
    // One chunk in flight at a time: the caller waits for it before sending more.
    const sent = this.sendFull();
    this.sending = sent.catch(() => undefined);
    return sent;
  }

  private async sendFull() {
    while (this.heldBytes >= CHUNK_BYTES) {
      const all = this.held.length === 1 ? this.held[0] : Buffer.concat(this.held, this.heldBytes);
      this.held = all.length > CHUNK_BYTES ? [all.subarray(CHUNK_BYTES)] : [];
      this.heldBytes = all.length - CHUNK_BYTES;
      await this.send(all.subarray(0, CHUNK_BYTES));
    }
  }

  private async send(bytes: Buffer) {
    const off = this.sent;
    this.sent += bytes.length;
    await this.blobs.readers.query({
      name: 'akas-chunk-put',
      text: `INSERT INTO ${this.blobs.s}.akas_blob_chunks (upload, off, bytes) VALUES ($1, $2, $3)`,
      values: [this.upload, off, bytes],
    });
  }

  sha256(): string {
    this.digest ??= this.hash.digest('hex');
    return this.digest;
  }

  private async placeIt(overwrite: boolean): Promise<boolean> {
    const sha = this.sha256();
    const s = this.blobs.s;
    if (!overwrite && this.cheapPlace) {
      // The row, and the chunk only if the row went in: one round trip, one synchronous commit.
      // Refused (stored already), nothing is written and the bytes stay held for a repair.
      const bytes = this.held.length === 1 ? this.held[0] : Buffer.concat(this.held, this.heldBytes);
      const r = await this.blobs.writers.query({
        name: 'akas-blob-put-one',
        text: `WITH b AS (INSERT INTO ${s}.akas_blobs (sha256, upload, size) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING RETURNING upload)
               INSERT INTO ${s}.akas_blob_chunks (upload, off, bytes) SELECT upload, 0, $4::bytea FROM b`,
        values: [sha, this.upload, this.bytes, bytes],
      });
      if (r.rowCount !== 1) return false;
      this.held = [];
      this.heldBytes = 0;
      this.sent = bytes.length;
      this.placed = true;
      return true;
    }
    if (this.heldBytes > 0) {
      const rest = this.held.length === 1 ? this.held[0] : Buffer.concat(this.held, this.heldBytes);
      this.held = [];
      this.heldBytes = 0;
      await this.send(rest);
    }
    if (!overwrite) {
      // Synchronous commit (the writers' pool): durable, with every chunk written before it.
      const r = await this.blobs.writers.query(`INSERT INTO ${s}.akas_blobs (sha256, upload, size) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING`, [
        sha,
        this.upload,
        this.bytes,
      ]);
      this.placed = r.rowCount === 1;
      return this.placed;
    }
    const client = await this.blobs.writers.connect();
    // Heard while held (the pool listens on idle connections only): a dropped connection must not end the process.
    let broken: Error | undefined;
    const onError = (e: Error) => void (broken ??= e);
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const old = await client.query<{ upload: string }>(`SELECT upload FROM ${s}.akas_blobs WHERE sha256 = $1 FOR UPDATE`, [sha]);
      await client.query(
        `INSERT INTO ${s}.akas_blobs (sha256, upload, size) VALUES ($1, $2, $3)
         ON CONFLICT (sha256) DO UPDATE SET upload = excluded.upload, size = excluded.size, stored_at = now()`,
        [sha, this.upload, this.bytes],
      );
      const previous = old.rows[0]?.upload;
      if (previous && previous !== this.upload) await client.query(`DELETE FROM ${s}.akas_blob_chunks WHERE upload = $1`, [previous]);
      await client.query('COMMIT');
      this.placed = true;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
    return true;
  }

  async discard() {
    this.held = [];
    this.heldBytes = 0;
    await this.sending;
    if (this.placed || this.sent === 0) return;
    this.sent = 0;
    await this.blobs.readers.query(`DELETE FROM ${this.blobs.s}.akas_blob_chunks WHERE upload = $1`, [this.upload]).catch(() => undefined);
  }
}

class PgBlobReader implements BlobReader {
  constructor(
    private readonly blobs: PgBlobs,
    private readonly upload: string,
    readonly size: number,
    /** The blob's only chunk, read with its row (a blob of one chunk). */
    private readonly whole?: Buffer,
  ) {}

  // Chunks from byte `from` on, in order, one query each.
  private async *chunks(from = 0): AsyncGenerator<{ off: number; bytes: Buffer }> {
    let c = await this.blobs.chunk(this.upload, from, true);
    while (c) {
      const off = Number(c.off);
      yield { off, bytes: c.bytes };
      if (off + c.bytes.length >= this.size) return;
      c = await this.blobs.chunk(this.upload, off, false);
    }
  }

  private missing(): Error {
    return new Error(`blob chunks of upload ${this.upload} are missing (replaced while read)`);
  }

  async sha256(): Promise<string> {
    // A chunk of the wrong length cannot hash right: the check says so, as for any damage.
    if (this.whole) return createHash('sha256').update(this.whole).digest('hex');
    const hash = createHash('sha256');
    let seen = 0;
    for await (const c of this.chunks()) {
      hash.update(c.bytes);
      seen = c.off + c.bytes.length;
    }
    if (seen !== this.size) throw this.missing();
    return hash.digest('hex');
  }

  async readAll(): Promise<Buffer> {
    if (this.whole) return this.whole;
    const parts: Buffer[] = [];
    for await (const c of this.chunks()) parts.push(c.bytes);
    const all = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    if (all.length !== this.size) throw this.missing();
    return all;
  }

  stream(start = 0, end = this.size - 1): Readable {
    if (this.whole) return Readable.from([this.whole.subarray(start, end + 1)], { objectMode: false });
    const chunks = this.chunks(start);
    let pos = start;
    return new Readable({
      highWaterMark: CHUNK_BYTES,
      read() {
        chunks
          .next()
          .then(({ value, done }) => {
            if (done || pos > end) {
              if (pos <= end) throw new Error('blob ended early (replaced while read)');
              this.push(null);
              return;
            }
            const from = pos - value.off;
            const to = Math.min(value.bytes.length, end + 1 - value.off);
            if (from < 0 || from >= to) throw new Error('blob chunks out of order');
            pos = value.off + to;
            this.push(value.bytes.subarray(from, to));
            if (pos > end) this.push(null);
          })
          .catch((e: Error) => this.destroy(e));
      },
      destroy(err, cb) {
        void chunks.return(undefined).catch(() => undefined);
        cb(err);
      },
    });
  }

  async close() {
    // Nothing is held between reads.
  }
}
