// Reading a log through its C2SP tiles (PROTOCOL 9.8), as `akas log watch --tiles` and
// `akas monitor` both do: a fetcher of the log's resources, and an entry bundle checked leaf by
// leaf against its level-0 tile (and a full tile against the level-1 hash above it, hence
// against the signed root the TileHashReader was checked to give).
import { bundlePath, decodeBundle, leafHash, perfectRoot, TILE_HEIGHT, TILE_WIDTH, type TileHashReader, tilePath, tileWidthAt } from '../src/core/index.js';

/** Reads one resource of a tiled log: its bytes (gzip is undone by fetch), or throws saying which. */
export type FetchBytes = (path: string) => Promise<Buffer>;

/**
 * GET <prefix>/<path> with the runtime's fetch, taking gzip (tlog-tiles: clients SHOULD include
 * gzip and identity). A node draws a token for every tile like for every route (PROTOCOL 1.4),
 * and a first audit of a long log reads more tiles than a burst holds: a 429 is waited out as
 * its Retry-After says (at most a minute each, `maxWaits` times), not taken for a failure.
 */
export function tileFetcher(prefix: string, opts: { maxWaits?: number; sleep?: (ms: number) => Promise<void> } = {}): FetchBytes {
  const base = prefix.replace(/\/+$/, '');
  const maxWaits = opts.maxWaits ?? 600;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let waits = 0;
  return async (path) => {
    for (;;) {
      const r = await fetch(`${base}/${path}`, { headers: { 'accept-encoding': 'gzip, identity' } });
      if (r.status === 429 && waits < maxWaits) {
        waits++;
        await r.arrayBuffer().catch(() => undefined);
        const seconds = Number(r.headers.get('retry-after'));
        await sleep(Math.min(60, Number.isFinite(seconds) && seconds > 0 ? seconds : 1) * 1000);
        continue;
      }
      if (r.status !== 200) throw new Error(`GET ${base}/${path} answered ${r.status}${r.status === 429 ? ` (still rate limited after ${waits} waits)` : ''}`);
      return Buffer.from(await r.arrayBuffer());
    }
  };
}

/**
 * Entry bundle n of the tree the reader was made for, every leaf hashing to its place in the
 * level-0 tile; or, as `problem`, why the log served is not that tree (a bundle that does not
 * parse or is too short, a leaf that is not the one its tile names, a tile that does not hash
 * to what the level above says). A resource that cannot be read at all throws.
 */
export async function checkedBundle(
  fetchBytes: FetchBytes,
  tiles: TileHashReader,
  n: number,
  bundle?: Promise<Buffer>,
): Promise<{ leaves: Buffer[]; width: number } | { problem: string }> {
  const width = tileWidthAt(0, n, tiles.size);
  const leaves = decodeBundle(await (bundle ?? fetchBytes(bundlePath(n, width))));
  const hashes = (await tiles.tile(0, n)).slice(0, width);
  if (!leaves || leaves.length !== width) return { problem: `the entry bundle ${bundlePath(n, width)} does not hold ${width} entries` };
  // A full level-0 tile is checked against the checkpoint too: its hash is in the level-1 tile.
  if (width === TILE_WIDTH && !perfectRoot(hashes).equals(await tiles.hash(TILE_HEIGHT, n)))
    return { problem: `REWRITE: ${tilePath(0, n)} does not hash to what the level-1 tile and the signed root say` };
  for (let i = 0; i < width; i++)
    if (!leafHash(leaves[i]).equals(hashes[i])) return { problem: `REWRITE: entry ${n * TILE_WIDTH + i} of the bundle is not the leaf its tile names` };
  return { leaves, width };
}
