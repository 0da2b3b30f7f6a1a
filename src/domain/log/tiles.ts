// The log as C2SP tlog-tiles (PROTOCOL 9.8): hash tiles and entry bundles read from the
// stored tree. The log keeps every complete subtree of two leaves or more (log-nodes) and every
// entry (log-entries), so a tile is a range of what is stored: level 0 the leaf hashes of 256
// entries, level l > 0 the stored subtrees of height 8·l. Both are immutable once the tree
// holds them (a partial tile of width W too: its W hashes never change), so a tile is made
// once: a full one is then kept in the store (tiles are files, never recomputed per request),
// and every tile served is kept in memory, bounded by bytes.
import { gzipSync } from 'node:zlib';
import { encodeBundle, entryLeaf, TILE_HEIGHT, TILE_WIDTH, tileWidthAt, type TileRef } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import type { TransparencyLog } from './log.js';
import { entryLeafHash, LogEntries, LogNodes, LogTiles, nodeKey, seqKey, tileKey, tileLock } from './spaces.js';

/** A tile as served: its bytes and, made on first demand, their gzip. */
export interface ServedTile {
  bytes: Buffer;
  gzip(): Buffer;
}

/** Most bytes of tiles and bundles kept in memory (two generations of half as much). */
const MEMORY_BYTES = 32 * 1024 * 1024;

class TileCache {
  private young = new Map<string, ServedTile>();
  private old = new Map<string, ServedTile>();
  private youngBytes = 0;

  get(key: string): ServedTile | undefined {
    const hit = this.young.get(key);
    if (hit) return hit;
    const aged = this.old.get(key);
    if (aged) this.put(key, aged);
    return aged;
  }

  put(key: string, t: ServedTile) {
    if (this.young.has(key)) return;
    this.young.set(key, t);
    this.youngBytes += t.bytes.length;
    if (this.youngBytes > MEMORY_BYTES / 2) {
      this.old = this.young;
      this.young = new Map();
      this.youngBytes = 0;
    }
  }
}

function served(bytes: Buffer): ServedTile {
  let gz: Buffer | undefined;
  return { bytes, gzip: () => (gz ??= gzipSync(bytes, { level: 6 })) };
}

/** Serves the node's log as tiles and entry bundles. */
export class LogTileReader {
  private readonly cache = new TileCache();
  private readonly making = new Map<string, Promise<ServedTile | undefined>>();

  constructor(
    private readonly store: Store,
    private readonly log: Pick<TransparencyLog, 'head'>,
  ) {}

  /**
   * The tile or bundle `ref` names, or undefined when the log does not hold it (yet). A
   * partial one is served at any width the log already holds: its bytes are final. tlog-tiles:
   * "Logs MUST serve partial tiles corresponding to tree sizes for which a checkpoint was
   * produced": every checkpoint's size is a size the log held.
   */
  async read(ref: TileRef): Promise<ServedTile | undefined> {
    const key = `${tileKey(ref)}/${ref.width}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    let pending = this.making.get(key);
    if (!pending) {
      pending = this.make(ref).finally(() => this.making.delete(key));
      this.making.set(key, pending);
    }
    const t = await pending;
    if (t) this.cache.put(key, t);
    return t;
  }

  private async make(ref: TileRef): Promise<ServedTile | undefined> {
    const level = ref.kind === 'entries' ? 0 : ref.level;
    const { size } = await this.log.head();
    // tlog-tiles: "Empty tiles MUST NOT be served", nor one wider than the tree holds.
    if (tileWidthAt(level, ref.index, size) < ref.width) return undefined;
    const full = ref.width === TILE_WIDTH;
    if (full) {
      const kept = await this.store.get(LogTiles, tileKey(ref));
      if (kept !== undefined) return served(Buffer.from(kept, 'base64'));
    }
    const bytes = ref.kind === 'entries' ? await this.bundle(ref.index, ref.width) : await this.hashes(ref.level, ref.index, ref.width);
    // Kept without a sync: it can always be made again from the tree.
    if (full) await this.store.transact([tileLock(ref)], async (tx) => tx.put(LogTiles, tileKey(ref), bytes.toString('base64')), { durable: false });
    return served(bytes);
  }

  /** Level 0: the leaf hashes of the entries; level l: the stored subtrees of height 8·l. */
  private async hashes(level: number, index: number, width: number): Promise<Buffer> {
    const first = index * TILE_WIDTH;
    if (level === 0) {
      const entries = await this.store.list(LogEntries, { gte: seqKey(first), lt: seqKey(first + width) });
      if (entries.length !== width) throw new Error(`log entries ${first}..${first + width - 1} are not all stored`);
      return Buffer.concat(entries.map(([, e]) => entryLeafHash(e)));
    }
    const h = level * TILE_HEIGHT;
    const nodes = await this.store.list(LogNodes, { gte: nodeKey(h, first), lt: nodeKey(h, first + width) });
    if (nodes.length !== width) throw new Error(`log nodes ${h}:${first}..${first + width - 1} are not all stored`);
    return Buffer.concat(nodes.map(([, hex]) => Buffer.from(hex, 'hex')));
  }

  /**
   * The leaves themselves. tlog-tiles: "Entry bundles are sequences of big-endian uint16
   * length-prefixed log entries. Each entry in a bundle hashes to the corresponding entry in
   * the corresponding level 0 Merkle Tree tile": the same leaf bytes the level-0 tile hashes.
   */
  private async bundle(index: number, width: number): Promise<Buffer> {
    const first = index * TILE_WIDTH;
    const entries = await this.store.list(LogEntries, { gte: seqKey(first), lt: seqKey(first + width) });
    if (entries.length !== width) throw new Error(`log entries ${first}..${first + width - 1} are not all stored`);
    return encodeBundle(entries.map(([, e]) => entryLeaf(e)));
  }
}
