// The one log follower of `akas log watch` and `akas monitor` (issue 48): what both do to follow
// a node's transparency log, written once. A checkpoint is opened under the pinned log key
// (openView); the tree it signs is read through its C2SP tiles and checked to give its root
// (signedTree); a checkpoint verified before is compared with it (relation: the same, extended,
// rolled back or forked, the consistency proof computed from the tiles or asked of the node);
// and the entry bundles are read a few ahead, each checked leaf by leaf against the tree
// (bundleReader, over bundle-check.ts). What each command makes of it stays with the command:
// log watch's one line and kept state (watch.ts), the monitor's alerts, evidence and journal
// (cli/commands/monitor/follow.ts).
import { bundlePath, consistencyProof, TILE_WIDTH, TileHashReader, tilePath, tileWidthAt, verifyConsistency } from '../../../src/core/index.js';
import { openCheckpoint } from '../../../verifier/index.js';
import { BoundTiles, type CheckedBundle, checkBundle } from './bundle-check.js';
import type { FetchBytes } from './tile-reader.js';

/** A checkpoint signed by the log key: its note, origin, size and root. */
export interface SignedView {
  note: string;
  origin: string;
  size: number;
  root: Buffer;
}

/** A checkpoint note opened under the log key, or why it is refused. */
export function openView(note: string, logKey: string): SignedView | { refused: string } {
  const opened = openCheckpoint(note, [logKey]);
  if (!opened.ok) return { refused: opened.reason };
  const cp = opened.checkpoint;
  return { note, origin: cp.origin, size: cp.size, root: Buffer.from(cp.rootHash) };
}

/**
 * The tree a checkpoint signs, read through the log's tiles: a reader whose root was checked to
 * be the signed one, or why the tiles are another tree. A resource that cannot be read throws
 * what `fetchBytes` throws.
 */
export async function signedTree(fetchBytes: FetchBytes, view: SignedView): Promise<TileHashReader | { problem: string }> {
  const tiles = new TileHashReader(view.size, (level, index, width) => fetchBytes(tilePath(level, index, width)));
  if (view.size > 0 && !(await tiles.root()).equals(view.root))
    return { problem: `the tiles of ${view.size} entries give another root than the signed checkpoint` };
  return tiles;
}

/** How a checkpoint stands to one verified before. */
export type Relation = 'same' | 'extends' | 'rollback' | 'fork';

/** Whether the tree of `now` extends the tree of `before` (both signed; before.size > 0, now.size > before.size). */
export type ConsistencyCheck = (before: { size: number; root: Buffer }, now: { size: number; root: Buffer }) => Promise<boolean>;

/** The consistency of two trees proved from the newer one's tiles (checked to give its root). */
export const provenByTiles =
  (tiles: TileHashReader): ConsistencyCheck =>
  async (before, now) =>
    verifyConsistency(before.size, now.size, await consistencyProof(before.size, now.size, (l, i) => tiles.hash(l, i)), before.root, now.root);

/**
 * A signed checkpoint against the one verified before: smaller is a rollback, another root for
 * the same size a fork, a larger one that the consistency proof does not lead back to a fork.
 */
export async function relation(before: { size: number; root: Buffer }, now: { size: number; root: Buffer }, consistent: ConsistencyCheck): Promise<Relation> {
  if (now.size < before.size) return 'rollback';
  if (now.size === before.size) return now.root.equals(before.root) ? 'same' : 'fork';
  if (before.size === 0) return 'extends';
  return (await consistent(before, now)) ? 'extends' : 'fork';
}

/** Entry bundles read ahead while the current one is checked. */
export const READ_AHEAD = 4;

/**
 * Bundle n of the tree (n below `last`), checked against it: its bytes and entry offsets, or as
 * `problem` why the log served is not the tree signed. Each bundle and its full level-0 tile (a
 * partial one the root was folded from is read through `tiles`) are read READ_AHEAD bundles ahead,
 * so the reads overlap the checks; ask for the bundles in order. A resource that cannot be read
 * throws what `fetchBytes` throws.
 */
export function bundleReader(fetchBytes: FetchBytes, tiles: TileHashReader, last: number): (n: number) => Promise<CheckedBundle | { problem: string }> {
  const ahead = new Map<number, Promise<[Buffer, Buffer | undefined]>>();
  const bound = new BoundTiles(tiles);
  const read = (n: number) => {
    for (let m = n; m < Math.min(last, n + READ_AHEAD); m++)
      if (!ahead.has(m)) {
        const width = tileWidthAt(0, m, tiles.size);
        const p = Promise.all([fetchBytes(bundlePath(m, width)), width === TILE_WIDTH ? fetchBytes(tilePath(0, m)) : undefined]);
        p.catch(() => undefined);
        ahead.set(m, p);
      }
    const p = ahead.get(n)!;
    ahead.delete(n);
    return p;
  };
  return async (n) => {
    const [bytes, tile] = await read(n);
    return checkBundle(bytes, tile, n, bound);
  };
}
