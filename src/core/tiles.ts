// C2SP tlog-tiles: the paths of tiles and entry bundles, the bundle encoding, which tiles a
// tree of a given size has, and the Merkle hashes (roots, proofs' nodes) read from tiles.
// Pure: the node serves tiles from its stored tree (src/domain/log/tiles.ts); a monitor follows a
// log through them (`akas log watch --tiles`, cli/commands/log/watch.ts).
//
// The n-th tile at level l holds, for i in 0..255, MTH(D[(n·256 + i)·256^l : (n·256 + i + 1)·256^l]):
// the hashes of the complete subtrees of height 8·l. A partial tile is the first W of them.
import { nodeHash } from './merkle.js';

/** Hashes in a full tile (tlog-tiles: "Full tiles MUST be exactly 256 hashes wide"). */
export const TILE_WIDTH = 256;
/** Tree levels one tile spans: 2^8 = 256. */
export const TILE_HEIGHT = 8;
/** Bytes of a full tile: 256 SHA-256 hashes (8,192). */
export const FULL_TILE_BYTES = TILE_WIDTH * 32;
/** tlog-tiles entry bundles are "big-endian uint16 length-prefixed": an entry is at most 65,535 bytes. */
export const MAX_ENTRY_BYTES = 0xffff;

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const pow256 = (l: number) => 256 ** l;

/**
 * The path element of a tile index. tlog-tiles: "`<N>` ... MUST be a non-negative integer
 * encoded into zero-padded 3-digit path elements. All but the last path element MUST begin
 * with an `x`" (1234067 is `x001/x234/067`).
 */
export function encodeTileIndex(index: number): string {
  if (!isCount(index)) throw new RangeError(`tiles: index ${index} is not a non-negative safe integer`);
  const groups: string[] = [];
  let n = index;
  do {
    groups.unshift(String(n % 1000).padStart(3, '0'));
    n = Math.floor(n / 1000);
  } while (n > 0);
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

/** "tile/<L>/<N>[.p/<W>]" (no prefix, no leading slash). */
export function tilePath(level: number, index: number, width?: number): string {
  if (!Number.isInteger(level) || level < 0 || level > 63) throw new RangeError(`tiles: level ${level} is not 0..63`);
  return `tile/${level}/${encodeTileIndex(index)}${partialSuffix(width)}`;
}

/** "tile/entries/<N>[.p/<W>]". */
export function bundlePath(index: number, width?: number): string {
  return `tile/entries/${encodeTileIndex(index)}${partialSuffix(width)}`;
}

function partialSuffix(width?: number): string {
  if (width === undefined || width === TILE_WIDTH) return '';
  // "`<W>` is the width of the tile, a decimal ASCII integer between 1 and 255".
  if (!Number.isInteger(width) || width < 1 || width > 255) throw new RangeError(`tiles: a partial width ${width} is not 1..255`);
  return `.p/${width}`;
}

/** A tile or an entry bundle a path names. `width` is 256 for a full one. */
export type TileRef = { kind: 'hashes'; level: number; index: number; width: number } | { kind: 'entries'; index: number; width: number };

const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/**
 * Parses what follows "<prefix>/tile/": "<L>/<N>[.p/<W>]" or "entries/<N>[.p/<W>]"; null for
 * anything the specification does not allow: a level outside 0..63 or with leading zeroes, an
 * index element that is not 3 digits or lacks its `x`, a width outside 1..255 or with leading
 * zeroes, an index past 2^53.
 */
export function parseTilePath(rest: string): TileRef | null {
  if (typeof rest !== 'string') return null;
  const parts = rest.split('/');
  let width = TILE_WIDTH;
  // ".p/<W>": the last element is the width, the one before ends in ".p".
  if (parts.length >= 3 && parts[parts.length - 2].endsWith('.p')) {
    const w = parts.pop()!;
    if (!DECIMAL.test(w) || Number(w) < 1 || Number(w) > 255) return null;
    width = Number(w);
    parts[parts.length - 1] = parts[parts.length - 1].slice(0, -2);
  }
  const [head, ...indexParts] = parts;
  if (indexParts.length === 0) return null;
  let index = 0;
  for (const [i, p] of indexParts.entries()) {
    const last = i === indexParts.length - 1;
    const digits = last ? p : p.startsWith('x') ? p.slice(1) : null;
    if (digits === null || !/^[0-9]{3}$/.test(digits)) return null;
    index = index * 1000 + Number(digits);
  }
  if (!Number.isSafeInteger(index)) return null;
  // The encoding is canonical: no leading all-zero group ("x000/001" is not 1).
  if (encodeTileIndex(index) !== indexParts.join('/')) return null;
  if (head === 'entries') return { kind: 'entries', index, width };
  // "`<L>` ... MUST be a decimal ASCII integer between 0 and 63, with no additional leading zeroes".
  if (!DECIMAL.test(head) || Number(head) > 63) return null;
  return { kind: 'hashes', level: Number(head), index, width };
}

/**
 * How many hashes tile (level, index) holds in the tree of `size` leaves: 256 when full, the
 * partial width otherwise ("floor(s / 256**l) mod 256"), 0 when the tree has none of it.
 */
export function tileWidthAt(level: number, index: number, size: number): number {
  if (!isCount(size) || !isCount(index)) return 0;
  const hashes = Math.floor(size / pow256(level)); // complete subtrees of height 8·level
  const start = index * TILE_WIDTH;
  if (hashes <= start) return 0;
  return Math.min(TILE_WIDTH, hashes - start);
}

/** Whether the tree of `size` leaves holds tile (level, index) at `width` hashes (full or partial, as wide or wider). */
export const tileExists = (level: number, index: number, width: number, size: number) => tileWidthAt(level, index, size) >= width;

/**
 * An entry bundle: tlog-tiles "Entry bundles are sequences of big-endian uint16
 * length-prefixed log entries". Throws a RangeError for an entry over 65,535 bytes.
 */
export function encodeBundle(entries: readonly Uint8Array[]): Buffer {
  const total = entries.reduce((n, e) => n + 2 + e.length, 0);
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (const e of entries) {
    if (e.length > MAX_ENTRY_BYTES) throw new RangeError(`tiles: an entry of ${e.length} bytes does not fit a uint16 length prefix`);
    out.writeUInt16BE(e.length, at);
    out.set(e, at + 2);
    at += 2 + e.length;
  }
  return out;
}

/** The entries of a bundle, or null when its length prefixes do not add up to its bytes. */
export function decodeBundle(bundle: Uint8Array): Buffer[] | null {
  const buf = Buffer.from(bundle.buffer, bundle.byteOffset, bundle.byteLength);
  const out: Buffer[] = [];
  let at = 0;
  while (at < buf.length) {
    if (at + 2 > buf.length) return null;
    const n = buf.readUInt16BE(at);
    if (at + 2 + n > buf.length) return null;
    out.push(buf.subarray(at + 2, at + 2 + n));
    at += 2 + n;
  }
  return out;
}

/** The 32-byte hashes of a tile's bytes, or null when it is not a whole number of hashes. */
export function tileHashes(tile: Uint8Array): Buffer[] | null {
  if (tile.length === 0 || tile.length % 32 !== 0 || tile.length > FULL_TILE_BYTES) return null;
  const buf = Buffer.from(tile.buffer, tile.byteOffset, tile.byteLength);
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += 32) out.push(buf.subarray(i, i + 32));
  return out;
}

/** MTH of 2^k hashes (a perfect subtree), k = log2(hashes.length): a full tile's hash at the level above. */
export function perfectRoot(hashes: Buffer[]): Buffer {
  if (hashes.length === 0 || (hashes.length & (hashes.length - 1)) !== 0) throw new RangeError('tiles: a perfect subtree has a power of two of hashes');
  let level = hashes;
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(nodeHash(level[i], level[i + 1]));
    level = next;
  }
  return level[0];
}

/** Reads tile (level, index) as wide as the tree of the caller's size has it: answers its bytes. */
export type GetTile = (level: number, index: number, width: number) => Promise<Uint8Array>;

/**
 * Reads Merkle hashes of a tree of `size` leaves from its tiles: the hash of any complete
 * subtree (tree level h, index i) is a tile hash when h is a multiple of 8, and otherwise the
 * MTH of the 2^(h mod 8) hashes under it in the tile at level floor(h / 8). Every tile is read
 * at the width the tree of `size` gives it, once, and checked to be exactly that wide.
 */
export class TileHashReader {
  private readonly tiles = new Map<string, Promise<Buffer[]>>();

  constructor(
    readonly size: number,
    private readonly getTile: GetTile,
  ) {
    if (!isCount(size)) throw new RangeError(`tiles: size ${size} is not a non-negative safe integer`);
  }

  /** The hashes of tile (level, index) at the tree's width for it. */
  tile(level: number, index: number): Promise<Buffer[]> {
    const key = `${level}/${index}`;
    let t = this.tiles.get(key);
    if (!t) {
      const width = tileWidthAt(level, index, this.size);
      t =
        width === 0
          ? Promise.reject(new RangeError(`tiles: the tree of ${this.size} has no tile ${level}/${index}`))
          : this.getTile(level, index, width).then((bytes) => {
              const hashes = tileHashes(bytes);
              if (!hashes || hashes.length !== width) throw new Error(`tile ${tilePath(level, index, width)} is ${bytes.length} bytes, not ${width} hashes`);
              return hashes;
            });
      t.catch(() => this.tiles.delete(key));
      this.tiles.set(key, t);
    }
    return t;
  }

  /** The hash of the complete subtree at tree level `level`, index `index` (it must be complete in the tree of `size`). */
  async hash(level: number, index: number): Promise<Buffer> {
    if (!isCount(level) || !isCount(index) || (index + 1) * 2 ** level > this.size)
      throw new RangeError(`tiles: no complete subtree ${level}:${index} in a tree of ${this.size}`);
    const tileLevel = Math.floor(level / TILE_HEIGHT);
    const k = level % TILE_HEIGHT;
    const first = index * 2 ** k; // the first hash under it, at tree level 8·tileLevel
    const count = 2 ** k;
    const hashes = await this.tile(tileLevel, Math.floor(first / TILE_WIDTH));
    const at = first % TILE_WIDTH;
    return perfectRoot(hashes.slice(at, at + count));
  }

  /** The root of the tree of `size` leaves (RFC 9162 MTH), folded from the complete subtrees that tile it. */
  async root(): Promise<Buffer> {
    const parts: Buffer[] = [];
    let at = 0;
    for (let level = 63; level >= 0; level--) {
      const width = 2 ** level;
      if (this.size - at >= width) {
        parts.push(await this.hash(level, at / width));
        at += width;
      }
    }
    if (parts.length === 0) throw new RangeError('tiles: the empty tree has no tiles');
    let h = parts[parts.length - 1];
    for (let i = parts.length - 2; i >= 0; i--) h = nodeHash(parts[i], h);
    return h;
  }
}
