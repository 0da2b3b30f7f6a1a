// RFC 9162 section 2.1 Merkle tree over the log's entries: hashing, proofs and their checks.
//
// Storage model: the log keeps the hash of every *complete* subtree once, addressed by
// (level, index): level 0 index i is leaf i's leaf hash, level l index i covers the leaves
// [i·2^l, (i+1)·2^l). An append stores the new leaf and each parent it completes (O(log n)
// reads and writes); a root or a proof for any past or present size is then assembled from
// O(log n) of those nodes, and nothing is ever recomputed from all the leaves. Subtrees on the
// right edge of a tree whose size is not a power of two are never stored (they change with
// every append); their hash is folded from their complete parts when a proof needs it.
//
// The proof builders are generators that yield the (level, index) they need; a small driver
// feeds them from the caller's accessor. A synchronous accessor (MemoryTree, a cache) gets a
// synchronous answer with no Promise per read; an asynchronous one (the store) gets a Promise.
import { sha256 as hash } from './crypto.js';

/** Bytes in every hash of the tree (SHA-256). */
export const HASH_SIZE = 32;

// SHA-256 through the crypto adapter (crypto.ts: one call of crypto.hash on Node, which skips
// the Hash object; the tree hashes 65-byte inputs by the hundred thousand, where that is ~25% faster).
const sha256 = (data: Uint8Array): Buffer => {
  const h = hash(data);
  return Buffer.isBuffer(h) ? h : Buffer.from(h.buffer, h.byteOffset, h.byteLength);
};

/**
 * The root of the empty tree: SHA-256 of nothing (RFC 6962 2.1), written out rather than hashed
 * as the module loads, which would load node:crypto with it (scripts/lazy-builtins.mjs).
 */
export const EMPTY_ROOT: Buffer = Buffer.from('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex');

/** RFC 9162 leaf hash: SHA-256(0x00 || data). */
export function leafHash(data: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(1 + data.length);
  buf[0] = 0x00;
  buf.set(data, 1);
  return sha256(buf);
}

/** RFC 9162 interior node hash: SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(1 + left.length + right.length);
  buf[0] = 0x01;
  buf.set(left, 1);
  buf.set(right, 1 + left.length);
  return sha256(buf);
}

/** The address of a complete subtree: level l, index i covers leaves [i·2^l, (i+1)·2^l). */
export interface NodeRef {
  level: number;
  index: number;
}

/** A complete subtree hash to store under (level, index). */
export interface StoredNode extends NodeRef {
  hash: Buffer;
}

/** Reads the stored hash of the complete subtree (level, index); may answer a Promise. */
export type GetNode = (level: number, index: number) => Uint8Array | Promise<Uint8Array>;
/** A GetNode that always answers at once (memory, a cache): the functions then do too. */
export type GetNodeSync = (level: number, index: number) => Uint8Array;

type Reads<T> = Generator<NodeRef, T, Buffer>;

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const isHash = (h: unknown): h is Uint8Array => h instanceof Uint8Array && h.length === HASH_SIZE;
const half = (n: number) => Math.floor(n / 2); // not n >> 1: sizes may pass 2^31
const isThenable = <T>(v: unknown): v is PromiseLike<T> => typeof (v as PromiseLike<T> | null)?.then === 'function';

function checkedNode(got: unknown, { level, index }: NodeRef): Buffer {
  // A missing or short node means the store and the tree size disagree: never hash around it.
  if (!isHash(got)) throw new Error(`merkle: node (${level}, ${index}) is missing or not ${HASH_SIZE} bytes`);
  return Buffer.isBuffer(got) ? got : Buffer.from(got.buffer, got.byteOffset, got.byteLength);
}

/** Runs a proof builder against the accessor: synchronously while the reads are synchronous. */
function drive<T>(reads: Reads<T>, getNode: GetNode): T | Promise<T> {
  let step = reads.next();
  while (!step.done) {
    const ref = step.value;
    const got = getNode(ref.level, ref.index);
    if (isThenable<Uint8Array>(got)) return driveAsync(reads, ref, got, getNode);
    step = reads.next(checkedNode(got, ref));
  }
  return step.value;
}

async function driveAsync<T>(reads: Reads<T>, ref: NodeRef, pending: PromiseLike<Uint8Array>, getNode: GetNode): Promise<T> {
  let step = reads.next(checkedNode(await pending, ref));
  while (!step.done) {
    const next = step.value;
    step = reads.next(checkedNode(await getNode(next.level, next.index), next));
  }
  return step.value;
}

/** The largest power of two strictly below n (n > 1): RFC 9162's split point k. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * MTH of the leaves [start, end), folded from the complete subtrees that tile it. Valid for
 * the subtrees RFC 9162 ever asks for: start is a multiple of the largest power of two not
 * above end - start, so each tile, largest first, lands on a stored (level, index).
 */
function* rangeHash(start: number, end: number): Reads<Buffer> {
  let width = 1;
  let level = 0;
  while (width * 2 <= end - start) {
    width *= 2;
    level++;
  }
  const tiles: Buffer[] = [];
  for (let at = start; at < end; width /= 2, level--) {
    if (end - at >= width) {
      tiles.push(yield { level, index: at / width });
      at += width;
    }
  }
  // RFC 9162 splits at the largest power of two, so the tiles nest to the right: fold from the end.
  let hash = tiles[tiles.length - 1];
  for (let i = tiles.length - 2; i >= 0; i--) hash = nodeHash(tiles[i], hash);
  return hash;
}

function* appendReads(size: number, leaf: Uint8Array): Reads<StoredNode[]> {
  let level = 0;
  let index = size;
  let hash: Buffer = Buffer.from(leaf);
  const nodes: StoredNode[] = [{ level, index, hash }];
  // A right child completes its parent; the left sibling is already stored.
  while (index % 2 === 1) {
    hash = nodeHash(yield { level, index: index - 1 }, hash);
    level++;
    index = (index - 1) / 2;
    nodes.push({ level, index, hash });
  }
  return nodes;
}

function* rootReads(size: number): Reads<Buffer> {
  if (!isCount(size)) throw new RangeError(`merkle: tree size ${size} is not a non-negative safe integer`);
  return size === 0 ? EMPTY_ROOT : yield* rangeHash(0, size);
}

function* inclusionReads(index: number, size: number): Reads<Buffer[]> {
  if (!isCount(index) || !isCount(size) || index >= size) {
    throw new RangeError(`merkle: no inclusion proof for index ${index} in a tree of size ${size}`);
  }
  // RFC 9162 2.1.3.1 PATH(m, D[lo:hi]), unrolled top-down; the proof lists it bottom-up.
  const path: Buffer[] = [];
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      path.push(yield* rangeHash(lo + k, hi));
      hi = lo + k;
    } else {
      path.push(yield* rangeHash(lo, lo + k));
      lo += k;
    }
  }
  return path.reverse();
}

function* consistencyReads(oldSize: number, newSize: number): Reads<Buffer[]> {
  if (!isCount(oldSize) || !isCount(newSize) || oldSize < 1 || oldSize > newSize) {
    throw new RangeError(`merkle: no consistency proof from size ${oldSize} to size ${newSize} (needs 0 < old <= new)`);
  }
  // RFC 9162 2.1.4.1 SUBPROOF(m - lo, D[lo:hi], b), unrolled top-down: `above` collects the
  // hashes each level appends, which the proof lists after the deeper ones.
  const above: Buffer[] = [];
  const proof: Buffer[] = [];
  let lo = 0;
  let hi = newSize;
  let whole = true; // b: the subtree is still the whole old tree, whose root the verifier holds
  while (oldSize !== hi) {
    const k = splitPoint(hi - lo);
    if (oldSize <= lo + k) {
      above.push(yield* rangeHash(lo + k, hi));
      hi = lo + k;
    } else {
      above.push(yield* rangeHash(lo, lo + k));
      lo += k;
      whole = false;
    }
  }
  if (!whole) proof.push(yield* rangeHash(lo, hi));
  return proof.concat(above.reverse());
}

/**
 * The nodes to store when the leaf of index `size` is appended to a tree of `size` leaves:
 * the leaf itself at (0, size), then each parent the append completes (O(log n) reads of
 * left siblings through getNode). Synchronous when getNode is.
 */
export function nodesToStoreOnAppend(size: number, leafHash: Uint8Array, getNode: GetNodeSync): StoredNode[];
export function nodesToStoreOnAppend(size: number, leafHash: Uint8Array, getNode: GetNode): StoredNode[] | Promise<StoredNode[]>;
export function nodesToStoreOnAppend(size: number, leafHash: Uint8Array, getNode: GetNode): StoredNode[] | Promise<StoredNode[]> {
  if (!isCount(size)) throw new RangeError(`merkle: tree size ${size} is not a non-negative safe integer`);
  if (!isHash(leafHash)) throw new TypeError(`merkle: a leaf hash is ${HASH_SIZE} bytes`);
  return drive(appendReads(size, leafHash), getNode);
}

/**
 * The RFC 9162 root (MTH) of the tree of the first `size` leaves, from at most log2(size) + 1
 * stored complete subtrees; EMPTY_ROOT for size 0. Synchronous when getNode is.
 */
export function rootAt(size: number, getNode: GetNodeSync): Buffer;
export function rootAt(size: number, getNode: GetNode): Buffer | Promise<Buffer>;
export function rootAt(size: number, getNode: GetNode): Buffer | Promise<Buffer> {
  return drive(rootReads(size), getNode);
}

/**
 * RFC 9162 2.1.3.1 inclusion proof of leaf `index` in the tree of `size` leaves (bottom-up).
 * Throws a RangeError unless 0 <= index < size. Synchronous when getNode is.
 */
export function inclusionProof(index: number, size: number, getNode: GetNodeSync): Buffer[];
export function inclusionProof(index: number, size: number, getNode: GetNode): Buffer[] | Promise<Buffer[]>;
export function inclusionProof(index: number, size: number, getNode: GetNode): Buffer[] | Promise<Buffer[]> {
  return drive(inclusionReads(index, size), getNode);
}

/**
 * RFC 9162 2.1.4.1 consistency proof from the tree of `oldSize` leaves to the tree of
 * `newSize` leaves; empty when they are equal. Throws a RangeError unless
 * 0 < oldSize <= newSize (the RFC defines no proof from the empty tree). Synchronous when
 * getNode is.
 */
export function consistencyProof(oldSize: number, newSize: number, getNode: GetNodeSync): Buffer[];
export function consistencyProof(oldSize: number, newSize: number, getNode: GetNode): Buffer[] | Promise<Buffer[]>;
export function consistencyProof(oldSize: number, newSize: number, getNode: GetNode): Buffer[] | Promise<Buffer[]> {
  return drive(consistencyReads(oldSize, newSize), getNode);
}

const isHashList = (list: unknown): list is Uint8Array[] => Array.isArray(list) && list.every(isHash);
const sameHash = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);

/**
 * RFC 9162 2.1.3.2: does `proof` show the leaf hash at `leafIndex` in the tree of `treeSize`
 * leaves whose root is `root`? False (never a throw) for anything malformed: an index not
 * below the size, a proof too long or too short, any hash not exactly 32 bytes.
 */
export function verifyInclusion(leafIndex: number, treeSize: number, leafHash: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!isCount(leafIndex) || !isCount(treeSize) || leafIndex >= treeSize) return false;
  if (!isHash(leafHash) || !isHash(root) || !isHashList(proof)) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r: Uint8Array = leafHash;
  for (const p of proof) {
    if (sn === 0) return false; // more hashes than the path has levels
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      // On the right edge, levels where the node has no right sibling take no proof hash.
      while (fn % 2 === 0 && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && sameHash(r, root);
}

/**
 * RFC 9162 2.1.4.2: does `proof` show that the tree of `size2` leaves with root `root2`
 * extends the tree of `size1` leaves with root `root1`? Equal sizes need an empty proof and
 * equal roots (for size 0, the empty root); size1 = 0 < size2 is refused, as the RFC defines
 * no such proof (every tree extends the empty one: a caller holding a size-0 checkpoint has
 * nothing to check). False (never a throw) for anything malformed, including a proof with a
 * hash too many or too few and any hash not exactly 32 bytes.
 */
export function verifyConsistency(size1: number, size2: number, proof: readonly Uint8Array[], root1: Uint8Array, root2: Uint8Array): boolean {
  if (!isCount(size1) || !isCount(size2) || size1 > size2) return false;
  if (!isHash(root1) || !isHash(root2) || !isHashList(proof)) return false;
  if (size1 === size2) return proof.length === 0 && sameHash(root1, root2) && (size1 > 0 || sameHash(root1, EMPTY_ROOT));
  if (size1 === 0 || proof.length === 0) return false;
  // When the old tree is a complete subtree of the new one, its root starts the path.
  const roots = consistencyRoots(size1, size2, isPowerOfTwo(size1) ? [root1, ...proof] : proof);
  return roots !== null && sameHash(roots.fr, root1) && sameHash(roots.sr, root2);
}

/**
 * The root of the first `size1` leaves that a consistency proof implies for the tree of `size2`
 * leaves with root `root2`, when the proof leads to `root2`; else null (a malformed proof, one
 * that does not lead to root2, equal sizes, size1 = 0). Also null when size1 is a power of two:
 * the old tree is then a complete subtree whose root the proof leaves out, so no proof can name
 * another one. A witness uses it to tell a fork (the log's signed root2 shows another root at
 * the size it cosigned) from a proof that is merely wrong.
 */
export function consistencyOldRoot(size1: number, size2: number, proof: readonly Uint8Array[], root2: Uint8Array): Buffer | null {
  if (!isCount(size1) || !isCount(size2) || size1 === 0 || size1 >= size2 || isPowerOfTwo(size1)) return null;
  if (!isHash(root2) || !isHashList(proof) || proof.length === 0) return null;
  const roots = consistencyRoots(size1, size2, proof);
  return roots !== null && sameHash(roots.sr, root2) ? Buffer.from(roots.fr) : null;
}

/** RFC 9162 2.1.4.2's walk: the old and new roots a path leads to, or null when it has a hash too many or too few. */
function consistencyRoots(size1: number, size2: number, path: readonly Uint8Array[]): { fr: Uint8Array; sr: Uint8Array } | null {
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (fn % 2 === 1) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr: Uint8Array = path[0];
  let sr: Uint8Array = path[0];
  for (let i = 1; i < path.length; i++) {
    const c = path[i];
    if (sn === 0) return null; // more hashes than the paths have levels
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? { fr, sr } : null;
}

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && n % 2 === 0) n /= 2;
  return n === 1;
}

/**
 * The whole tree in memory, for tests and the offline verifier: the same storage model and
 * functions as the log, with a synchronous accessor so every answer is immediate.
 */
export class MemoryTree {
  private readonly levels: Buffer[][] = [];

  /** Number of leaves appended. */
  get size(): number {
    return this.levels.length ? this.levels[0].length : 0;
  }

  /** Appends one leaf's data (its leaf hash is stored); answers the leaf's index. */
  append(data: Uint8Array): number {
    return this.appendLeafHash(leafHash(data));
  }

  /** Appends a leaf by its leaf hash; answers the leaf's index. */
  appendLeafHash(hash: Uint8Array): number {
    const index = this.size;
    for (const node of nodesToStoreOnAppend(index, hash, this.getNode)) {
      (this.levels[node.level] ??= [])[node.index] = node.hash;
    }
    return index;
  }

  /** The stored complete subtree (level, index); throws when it is not (yet) complete. */
  readonly getNode = (level: number, index: number): Buffer => {
    const hash = this.levels[level]?.[index];
    if (!hash) throw new RangeError(`merkle: no complete subtree (${level}, ${index}) in a tree of ${this.size} leaves`);
    return hash;
  };

  /** The root of the first `size` leaves (default: all). */
  root(size = this.size): Buffer {
    return rootAt(this.within(size), this.getNode);
  }

  /** Inclusion proof of leaf `index` in the tree of the first `size` leaves (default: all). */
  inclusionProof(index: number, size = this.size): Buffer[] {
    return inclusionProof(index, this.within(size), this.getNode);
  }

  /** Consistency proof from `oldSize` to `newSize` leaves (default: all). */
  consistencyProof(oldSize: number, newSize = this.size): Buffer[] {
    return consistencyProof(oldSize, this.within(newSize), this.getNode);
  }

  private within(size: number): number {
    if (size > this.size) throw new RangeError(`merkle: size ${size} is past the ${this.size} leaves appended`);
    return size;
  }
}
