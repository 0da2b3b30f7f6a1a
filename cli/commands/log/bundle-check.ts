// An entry bundle checked against the signed tree, as the log follower (follower.ts: `akas
// monitor`, `akas log watch --tiles`) reads a million entries (issue 34, 4): a full level-0 tile
// is folded once into its subtree's root, compared with the hash the level-1 tile holds for it;
// each leaf is hashed once, in place in the bundle's bytes, and the hashes, laid end to end, must
// be the level-0 tile's bytes (one comparison). A tile above is bound
// to the signed root the same way (BoundTiles): a partial one is, since the root was folded from
// it, and a full one once its fold is the hash the tile above holds for it, checked once per
// tile (every 65,536 entries at level 1). A partial bundle (the right edge) is compared with the
// partial level-0 tile the root was folded from. No leaf is copied and no entry is parsed here:
// the caller finds the few it inspects in the bytes (entriesContaining) and slices those.
import { sha256 } from '../../../src/core/crypto.js';
import { bundlePath, TILE_WIDTH, type TileHashReader, tilePath, tileWidthAt } from '../../../src/core/index.js';

/** A bundle that holds the leaves its tree says: its bytes and where each entry starts (its uint16 length prefix). */
export interface CheckedBundle {
  bytes: Buffer;
  /** offsets[i]: the length prefix of entry i; offsets[width]: the end. */
  offsets: Int32Array;
  width: number;
}

/** Entry i of a checked bundle (a view of its bytes, not a copy). */
export const leafAt = (b: CheckedBundle, i: number) => b.bytes.subarray(b.offsets[i] + 2, b.offsets[i + 1]);

/** The entry holding byte `pos` of the bundle (binary search over the offsets). */
export function entryAt(b: CheckedBundle, pos: number): number {
  let lo = 0;
  let hi = b.width - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (b.offsets[mid] <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The entries of the bundle whose bytes contain `needle`, in order, each once (a cheap test before any parse). */
export function entriesContaining(b: CheckedBundle, needle: Buffer): number[] {
  const out: number[] = [];
  for (let pos = b.bytes.indexOf(needle); pos >= 0; ) {
    const i = entryAt(b, pos);
    out.push(i);
    pos = b.bytes.indexOf(needle, b.offsets[i + 1]);
  }
  return out;
}

// RFC 9162 leaf hash, SHA-256(0x00 || entry), with no copy: the byte before an entry is the low
// byte of its length prefix, so it is set to 0x00 for the hash and put back at once (the bytes
// are this reader's own, and nothing else runs in between).
function leafHashInPlace(bytes: Buffer, prefixAt: number, end: number): Uint8Array {
  const low = bytes[prefixAt + 1];
  bytes[prefixAt + 1] = 0x00;
  const h = sha256(bytes.subarray(prefixAt + 1, end));
  bytes[prefixAt + 1] = low;
  return h;
}

/** The root of 2^k hashes laid end to end in `hashes` (consumed: the levels are folded in place). */
function foldInPlace(hashes: Buffer, count: number): Buffer {
  const pair = Buffer.allocUnsafe(65);
  pair[0] = 0x01;
  for (let n = count; n > 1; n >>= 1)
    for (let k = 0; k < n / 2; k++) {
      hashes.copy(pair, 1, k * 64, k * 64 + 64);
      hashes.set(sha256(pair), k * 32);
    }
  return hashes.subarray(0, 32);
}

/** A tile whose hashes are not those of the signed tree. */
class TreeMismatch extends Error {}

/** The hashes of full tiles as the signed tree has them, for a TileHashReader whose root() was checked against the checkpoint. */
export class BoundTiles {
  private readonly bound = new Map<string, Promise<void>>();

  constructor(readonly tiles: TileHashReader) {}

  /** The hash of full tile (level, n)'s subtree: entry n of the tile above, that tile bound to the root. */
  async hashOfFullTile(level: number, n: number): Promise<Buffer> {
    const above = Math.floor(n / TILE_WIDTH);
    await this.bind(level + 1, above);
    return (await this.tiles.tile(level + 1, above))[n % TILE_WIDTH];
  }

  // A partial tile is bound already (the root was folded from all its hashes); a full one is
  // once its fold is the hash the tile above holds for it, itself bound (checked once per tile).
  private bind(level: number, n: number): Promise<void> {
    if (tileWidthAt(level, n, this.tiles.size) < TILE_WIDTH) return Promise.resolve();
    const key = `${level}/${n}`;
    let done = this.bound.get(key);
    if (!done) {
      done = (async () => {
        const folded = foldInPlace(Buffer.concat(await this.tiles.tile(level, n)), TILE_WIDTH);
        if (!folded.equals(await this.hashOfFullTile(level, n)))
          throw new TreeMismatch(`REWRITE: ${tilePath(level, n)} does not hash to what the tile above and the signed root say`);
      })();
      done.catch(() => this.bound.delete(key));
      this.bound.set(key, done);
    }
    return done;
  }
}

/**
 * Bundle n of the tree `tiles` reads, checked with its level-0 tile (`tile`: the bytes of a full
 * one as served; a partial one is read through `tiles`): every entry hashes to its place in the
 * tree; or, as `problem`, why the bytes served are not that tree's (a bundle that does not parse
 * or holds another number of entries, a leaf its tile does not name, a tile the level above does
 * not). A tile that cannot be read throws, as TileHashReader does.
 */
export async function checkBundle(bytes: Buffer, tile: Buffer | undefined, n: number, bound: BoundTiles): Promise<CheckedBundle | { problem: string }> {
  const tiles = bound.tiles;
  const width = tileWidthAt(0, n, tiles.size);
  const offsets = new Int32Array(width + 1);
  let count = 0;
  let at = 0;
  while (at < bytes.length && count < width) {
    if (at + 2 > bytes.length) break;
    const end = at + 2 + bytes.readUInt16BE(at);
    if (end > bytes.length) break;
    offsets[count++] = at;
    at = end;
  }
  if (count !== width || at !== bytes.length) return { problem: `the entry bundle ${bundlePath(n, width)} does not hold ${width} entries` };
  offsets[width] = at;
  const hashes = Buffer.allocUnsafe(width * 32);
  for (let i = 0; i < width; i++) hashes.set(leafHashInPlace(bytes, offsets[i], offsets[i + 1]), i * 32);
  const named = width === TILE_WIDTH ? tile : Buffer.concat(await tiles.tile(0, n));
  if (!named || named.length !== width * 32) return { problem: `the tile ${tilePath(0, n, width)} is ${named?.length ?? 0} bytes, not ${width} hashes` };
  // A full level-0 tile is checked against the checkpoint first: its hash is in the level-1 tile, bound to the root.
  if (width === TILE_WIDTH) {
    let expected: Buffer;
    try {
      expected = await bound.hashOfFullTile(0, n);
    } catch (e) {
      if (e instanceof TreeMismatch) return { problem: e.message };
      throw e;
    }
    if (!foldInPlace(Buffer.from(named), TILE_WIDTH).equals(expected))
      return { problem: `REWRITE: ${tilePath(0, n)} does not hash to what the level-1 tile and the signed root say` };
  }
  if (!named.equals(hashes)) {
    let i = 0;
    while (named.compare(hashes, i * 32, i * 32 + 32, i * 32, i * 32 + 32) === 0) i++;
    return { problem: `REWRITE: entry ${n * TILE_WIDTH + i} of the bundle is not the leaf its tile names` };
  }
  return { bytes, offsets, width };
}
