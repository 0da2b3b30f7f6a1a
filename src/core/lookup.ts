// The verifiable index over the log (docs/INDEX.md): a map from lookup keys to the ordered log
// indices that mention them, committed as a prefix (Patricia) Merkle tree over SHA-256 of the
// keys, each key's value a Merkle tree of its own indices. Pure: no I/O, the same code on the
// node, in the monitor's rebuild and in the three verifiers.
//
// Every hash here starts with a byte of its own (INDEX.md 3), none of them RFC 9162's 0x00 or
// 0x01: a map node can never be taken for a log leaf or node, nor the other way round.
import { sha256 as hash } from './crypto.js';

/** The kind of the log entry that commits a map root (INDEX.md 6). */
export const LOOKUP_ROOT_KIND = 'index.root.v1';

const MAP_LEAF = 0x10;
const MAP_NODE = 0x11;
const LIST_LEAF = 0x13;
const LIST_NODE = 0x14;

const sha256 = (data: Uint8Array): Buffer => {
  const h = hash(data);
  return Buffer.isBuffer(h) ? h : Buffer.from(h.buffer, h.byteOffset, h.byteLength);
};

/**
 * The root of the map that holds no key: SHA-256 of the one byte 0x12 (INDEX.md), written out rather than
 * hashed as the module loads, which would load node:crypto with it (scripts/lazy-builtins.mjs).
 */
export const EMPTY_MAP_ROOT: Buffer = Buffer.from('f299791cddd3d6664f6670842812ef6053eb6501bd6282a476bbbf3ee91e750c', 'hex');

// Keys met again and again (an agent's, a path's) are hashed once while they are among the recent.
const recentKeys = new Map<string, Buffer>();

/** K, where a key sits in the map: SHA-256 of the key's UTF-8 bytes. */
export function lookupKeyHash(key: string): Buffer {
  let k = recentKeys.get(key);
  if (k) return k;
  if (recentKeys.size >= 65_536) recentKeys.clear();
  k = sha256(Buffer.from(key, 'utf8'));
  recentKeys.set(key, k);
  return k;
}

/** Writes n as a big-endian uint64 at `at` (n a safe integer). */
export const u64 = (buf: Buffer, at: number, n: number) => {
  buf.writeUInt32BE(Math.floor(n / 2 ** 32), at);
  buf.writeUInt32BE(n >>> 0, at + 4);
};

/** Indices per leaf of a key's list (INDEX.md 3.2): the last leaf may hold fewer. */
export const LIST_CHUNK = 64;

/** A leaf of a key's list: SHA-256(0x13 || uint64(index) for each of its at most 64 indices). */
export function listLeafHash(indices: ArrayLike<number>, from = 0, to = indices.length): Buffer {
  const buf = Buffer.allocUnsafe(1 + 8 * (to - from));
  buf[0] = LIST_LEAF;
  for (let i = from; i < to; i++) u64(buf, 1 + 8 * (i - from), indices[i]);
  return sha256(buf);
}

/** A node of a key's list: SHA-256(0x14 || left || right). */
export function listNodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(65);
  buf[0] = LIST_NODE;
  buf.set(left, 1);
  buf.set(right, 33);
  return sha256(buf);
}

/** A map leaf: SHA-256(0x10 || K || uint64(count) || V). */
export function mapLeafHash(k: Uint8Array, count: number, v: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(73);
  buf[0] = MAP_LEAF;
  buf.set(k, 1);
  u64(buf, 33, count);
  buf.set(v, 41);
  return sha256(buf);
}

/** A map node splitting at `bit`: SHA-256(0x11 || uint8(bit) || left || right). */
export function mapNodeHash(bit: number, left: Uint8Array, right: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(66);
  buf[0] = MAP_NODE;
  buf[1] = bit;
  buf.set(left, 2);
  buf.set(right, 34);
  return sha256(buf);
}

/** Bit i of a 256-bit key hash, the first bit the high bit of its first byte. */
export const bitAt = (k: Uint8Array, i: number): 0 | 1 => ((k[i >> 3] >> (7 - (i & 7))) & 1) as 0 | 1;

/** The first bit two key hashes differ at, or -1 when they are equal. */
export function firstDifference(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < 32; i++) {
    const x = a[i] ^ b[i];
    if (x !== 0) return i * 8 + Math.clz32(x) - 24;
  }
  return -1;
}

/**
 * A key's list of indices as it grows (INDEX.md 3.2): leaves of 64 indices, and the complete
 * subtrees of their right edge (RFC 9162's tree shape). An index costs no hash when added; a full
 * leaf is hashed once, and the root folded, when asked for, from the open leaf and at most
 * log2(count / 64) complete subtrees.
 */
export class ListEdge {
  count = 0;
  /** The indices of the leaf not yet full. */
  private open: number[] = [];
  /** Complete subtrees of full leaves, largest (leftmost) first, with their heights. */
  private peaks: Array<{ level: number; hash: Buffer }> = [];

  push(index: number) {
    this.open.push(index);
    this.count++;
    if (this.open.length < LIST_CHUNK) return;
    let h = listLeafHash(this.open);
    this.open = [];
    let level = 0;
    while (this.peaks.length && this.peaks[this.peaks.length - 1].level === level) {
      h = listNodeHash(this.peaks.pop()!.hash, h);
      level++;
    }
    this.peaks.push({ level, hash: h });
  }

  /** The list's root (undefined for an empty list, which no key has). */
  root(): Buffer | undefined {
    if (this.count === 0) return undefined;
    let i = this.peaks.length - 1;
    let r = this.open.length ? listLeafHash(this.open) : this.peaks[i--].hash;
    for (; i >= 0; i--) r = listNodeHash(this.peaks[i].hash, r);
    return r;
  }
}

/** V of a list of indices, computed from all of them (what a verifier does with a lookup's indices). */
export function listRoot(indices: readonly number[]): Buffer {
  const edge = new ListEdge();
  for (const i of indices) edge.push(i);
  const r = edge.root();
  if (!r) throw new RangeError('an empty list has no root: a key of the map has at least one index');
  return r;
}

/** One step of a proof, from the leaf up: the bit the node splits at and the other side's hash. */
export interface ProofStep {
  bit: number;
  sibling: Buffer;
}

/** What the map answers for a key: found with its count and V, or not found beside the leaf its lookup ends at. */
export interface MapProof {
  found: boolean;
  /** The leaf the lookup of K ends at: K's own when found, another key's (K') when not; none when the map is empty. */
  leaf?: { k: Buffer; count: number; v: Buffer };
  /** From the leaf up to the root. */
  steps: ProofStep[];
}

/** Keys whose id a map remembers by the key itself (past it the memory starts again). */
const IDS_BY_KEY = 1 << 20;
/** The slot sizes of a key's open list leaf, in indices: a slot is moved to the next size when full. */
const SLOT_SIZES = [4, 16, 64];
const slotBytes = (indices: number) => 1 + 8 * indices;
const NONE = -1;

/** A growable array's new copy, twice as long (or as long as `need`). */
function grown<T extends Int32Array | Int16Array | Uint8Array | Float64Array>(a: T, need: number): T {
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, 2 * a.length));
  b.set(a);
  return b;
}
function grownBuffer(a: Buffer, need: number): Buffer {
  const b = Buffer.alloc(Math.max(need, 2 * a.length));
  a.copy(b);
  return b;
}

/**
 * The map, in memory: a Patricia tree over the key hashes whose node hashes are computed only
 * when a root or a proof is asked for (INDEX.md 3.3), along the paths changed since.
 *
 * Held in typed arrays, not objects: a million entries make some 700,000 nodes, and as objects
 * (with their hashes as Buffers) the collector's passes over them cost more than the index
 * itself. Nodes and keys are numbers: a node's split bit (-1 for a leaf), children, parent and
 * hash (32 bytes of one slab, `fresh` while valid; a stale node's ancestors are stale too, so
 * staling a leaf climbs only to the first stale one); a key's K, count, leaf node, and its list
 * (INDEX.md 3.2) as the open leaf's bytes, 0x13 and the indices as uint64, ready to hash, in a
 * slot of a shared pool, beside the hashes of its complete subtrees of full leaves. A key met
 * before finds its id by the key itself: no hash, no walk.
 */
export class LookupMap {
  /** Keys held. */
  keys = 0;
  /** The id of the key add() or addKey() last added to: a key's id (from 0, in the order keys joined) never changes. */
  lastId = NONE;
  private top = NONE;
  private nodes = 0;
  private bit = new Int16Array(1024);
  private left = new Int32Array(1024);
  private right = new Int32Array(1024);
  private parent = new Int32Array(1024);
  /** A leaf's key id. */
  private keyOf = new Int32Array(1024);
  private fresh = new Uint8Array(1024);
  private hashes: Buffer = Buffer.alloc(32 * 1024);
  /** By key id: K, the count of indices, the leaf, the open leaf's slot (offset and size class). */
  private ks: Buffer = Buffer.alloc(32 * 512);
  private counts = new Float64Array(512);
  private leafOf = new Int32Array(512);
  private slotAt = new Int32Array(512);
  private slotClass = new Uint8Array(512);
  /** By key id, for keys of 64 indices or more: the complete subtrees of full leaves, largest first. */
  private peaks: Array<Buffer[] | undefined> = [];
  private pool: Buffer = Buffer.alloc(1 << 16);
  private poolUsed = 0;
  /** Slots given back, by size class. */
  private free: number[][] = SLOT_SIZES.map(() => []);
  private byKey = new Map<string, number>();
  private readonly scratch = Buffer.alloc(73);

  /** Appends a log index to key hash k's list (a key met for the first time joins the map); answers the list's new length. */
  add(k: Buffer, index: number): number {
    return this.push(this.idFor(k), index);
  }

  /** add() by the key itself (INDEX.md 2.1), hashed only when the map meets it for the first time. */
  addKey(key: string, index: number): number {
    let id = this.byKey.get(key);
    if (id === undefined) {
      if (this.byKey.size >= IDS_BY_KEY) this.byKey.clear();
      id = this.idFor(sha256(Buffer.from(key, 'utf8')));
      this.byKey.set(key, id);
    }
    return this.push(id, index);
  }

  /** K of a key: computed, or copied from the map's own when it remembers the key. */
  keyHash(key: string): Buffer {
    const id = this.byKey.get(key);
    return id === undefined ? sha256(Buffer.from(key, 'utf8')) : this.keyHashOf(id);
  }

  /** The map's root hash. */
  root(): Buffer {
    if (this.top === NONE) return EMPTY_MAP_ROOT;
    this.hash(this.top);
    return this.hashCopy(this.top);
  }

  /** How many indices key hash k has (0: not in the map). */
  count(k: Buffer): number {
    if (this.top === NONE) return 0;
    const id = this.keyOf[this.descend(k)];
    return this.differs(k, id) < 0 ? this.counts[id] : 0;
  }

  /** The proof of key hash k, inclusion or not, against root(). */
  prove(k: Buffer): MapProof {
    if (this.top === NONE) return { found: false, steps: [] };
    const leaf = this.descend(k);
    const steps: ProofStep[] = [];
    for (let n = leaf, p = this.parent[n]; p !== NONE; n = p, p = this.parent[p]) {
      const sibling = this.left[p] === n ? this.right[p] : this.left[p];
      this.hash(sibling);
      steps.push({ bit: this.bit[p], sibling: this.hashCopy(sibling) });
    }
    const id = this.keyOf[leaf];
    return { found: this.differs(k, id) < 0, leaf: { k: this.keyHashOf(id), count: this.counts[id], v: this.listRoot(id) }, steps };
  }

  private descend(k: Uint8Array): number {
    let n = this.top;
    for (let b = this.bit[n]; b >= 0; b = this.bit[n]) n = bitAt(k, b) ? this.right[n] : this.left[n];
    return n;
  }

  // The first bit at which k and key id's K differ, or -1.
  private differs(k: Uint8Array, id: number): number {
    const ks = this.ks;
    for (let i = 0, at = 32 * id; i < 32; i++) {
      const x = k[i] ^ ks[at + i];
      if (x !== 0) return i * 8 + Math.clz32(x) - 24;
    }
    return -1;
  }

  private hashCopy(n: number): Buffer {
    return Buffer.from(this.hashes.subarray(32 * n, 32 * n + 32));
  }

  // The id of key hash k, a new key (with no index yet) when the map does not hold k.
  private idFor(k: Buffer): number {
    if (this.top === NONE) {
      this.top = this.newLeaf(k, NONE);
      return this.keyOf[this.top];
    }
    const end = this.descend(k);
    const d = this.differs(k, this.keyOf[end]);
    if (d < 0) return this.keyOf[end];
    // A new key: a node splitting at d goes where the path first passes a node deeper than d.
    let parent = NONE;
    let at = this.top;
    for (let b = this.bit[at]; b >= 0 && b < d; b = this.bit[at]) {
      parent = at;
      at = bitAt(k, b) ? this.right[at] : this.left[at];
    }
    const split = this.newNode(d, parent);
    const leaf = this.newLeaf(k, split);
    if (bitAt(k, d)) {
      this.left[split] = at;
      this.right[split] = leaf;
    } else {
      this.left[split] = leaf;
      this.right[split] = at;
    }
    this.parent[at] = split;
    if (parent === NONE) this.top = split;
    else if (bitAt(k, this.bit[parent])) this.right[parent] = split;
    else this.left[parent] = split;
    this.stale(parent);
    return this.keyOf[leaf];
  }

  private newNode(bit: number, parent: number): number {
    const n = this.nodes++;
    if (n >= this.bit.length) {
      this.bit = grown(this.bit, n + 1);
      this.left = grown(this.left, n + 1);
      this.right = grown(this.right, n + 1);
      this.parent = grown(this.parent, n + 1);
      this.keyOf = grown(this.keyOf, n + 1);
      this.fresh = grown(this.fresh, n + 1);
      this.hashes = grownBuffer(this.hashes, 32 * (n + 1));
    }
    this.bit[n] = bit;
    this.parent[n] = parent;
    this.fresh[n] = 0;
    return n;
  }

  private newLeaf(k: Buffer, parent: number): number {
    const n = this.newNode(-1, parent);
    const id = this.keys++;
    if (id >= this.counts.length) {
      this.ks = grownBuffer(this.ks, 32 * (id + 1));
      this.counts = grown(this.counts, id + 1);
      this.leafOf = grown(this.leafOf, id + 1);
      this.slotAt = grown(this.slotAt, id + 1);
      this.slotClass = grown(this.slotClass, id + 1);
    }
    k.copy(this.ks, 32 * id, 0, 32);
    this.counts[id] = 0;
    this.leafOf[id] = n;
    this.keyOf[n] = id;
    this.slotAt[id] = this.slot(0);
    this.slotClass[id] = 0;
    return n;
  }

  // A slot of size class c from the pool, its first byte 0x13 (a list leaf's prefix).
  private slot(c: number): number {
    let at = this.free[c].pop();
    if (at === undefined) {
      const size = slotBytes(SLOT_SIZES[c]);
      if (this.poolUsed + size > this.pool.length) this.pool = grownBuffer(this.pool, this.poolUsed + size);
      at = this.poolUsed;
      this.poolUsed += size;
    }
    this.pool[at] = LIST_LEAF;
    return at;
  }

  /** add() to the key of id `id` (as lastId named it). */
  addTo(id: number, index: number): number {
    return this.push(id, index);
  }

  /** The id of key hash k, or -1 when the map does not hold it. */
  idOf(k: Buffer): number {
    if (this.top === NONE) return NONE;
    const id = this.keyOf[this.descend(k)];
    return this.differs(k, id) < 0 ? id : NONE;
  }

  /** K of key id (as lastId names it). */
  keyHashOf(id: number): Buffer {
    return Buffer.from(this.ks.subarray(32 * id, 32 * id + 32));
  }

  private push(id: number, index: number): number {
    this.lastId = id;
    const open = this.counts[id] % LIST_CHUNK;
    let c = this.slotClass[id];
    if (open === SLOT_SIZES[c]) {
      // The open leaf outgrew its slot: moved to one of the next size.
      const from = this.slotAt[id];
      const to = this.slot(c + 1);
      this.pool.copy(this.pool, to + 1, from + 1, from + slotBytes(open));
      this.free[c].push(from);
      this.slotAt[id] = to;
      this.slotClass[id] = ++c;
    }
    u64(this.pool, this.slotAt[id] + 1 + 8 * open, index);
    const count = ++this.counts[id];
    if (open + 1 === LIST_CHUNK) this.fold(id, count / LIST_CHUNK);
    this.stale(this.leafOf[id]);
    return count;
  }

  // A full leaf joins the complete subtrees: as many merges as `full` (the full leaves now) has trailing zero bits.
  private fold(id: number, full: number) {
    const at = this.slotAt[id];
    let h = sha256(this.pool.subarray(at, at + slotBytes(LIST_CHUNK)));
    const peaks = (this.peaks[id] ??= []);
    for (let f = full; f % 2 === 0; f /= 2) h = listNodeHash(peaks.pop()!, h);
    peaks.push(h);
  }

  // V of key id (INDEX.md 3.2): the open leaf's hash folded with the complete subtrees, right to left.
  private listRoot(id: number): Buffer {
    const open = this.counts[id] % LIST_CHUNK;
    const peaks = this.peaks[id] ?? [];
    let i = peaks.length - 1;
    const at = this.slotAt[id];
    let r = open ? sha256(this.pool.subarray(at, at + slotBytes(open))) : peaks[i--];
    for (; i >= 0; i--) r = listNodeHash(peaks[i], r);
    return r;
  }

  private stale(n: number) {
    while (n !== NONE && this.fresh[n]) {
      this.fresh[n] = 0;
      n = this.parent[n];
    }
  }

  /**
   * Computes up to `budget` stale hashes (children before their parent); answers whether none is
   * left. A node that appends to the map while it serves hashes the map in slices, so that one
   * step's hashing never holds the event loop long (root() then finds it done).
   */
  settle(budget: number): boolean {
    return this.hash(this.top, budget);
  }

  // Computes the stale hashes under node n and n's, at most `budget` of them; answers whether n's is done.
  private hash(n: number, budget = Number.POSITIVE_INFINITY): boolean {
    if (n === NONE || this.fresh[n]) return true;
    const stack = [n];
    let done = 0;
    while (stack.length) {
      const at = stack[stack.length - 1];
      if (this.bit[at] >= 0) {
        if (!this.fresh[this.left[at]]) {
          stack.push(this.left[at]);
          continue;
        }
        if (!this.fresh[this.right[at]]) {
          stack.push(this.right[at]);
          continue;
        }
      }
      this.hashOne(at);
      stack.pop();
      if (++done >= budget && stack.length) return false;
    }
    return true;
  }

  // Computes node n's hash from its children's (fresh) or its key's list.
  private hashOne(n: number) {
    const s = this.scratch;
    const b = this.bit[n];
    if (b < 0) {
      const id = this.keyOf[n];
      s[0] = MAP_LEAF;
      this.ks.copy(s, 1, 32 * id, 32 * id + 32);
      u64(s, 33, this.counts[id]);
      this.listRoot(id).copy(s, 41);
      sha256(s).copy(this.hashes, 32 * n);
    } else {
      const l = this.left[n];
      const r = this.right[n];
      s[0] = MAP_NODE;
      s[1] = b;
      this.hashes.copy(s, 2, 32 * l, 32 * l + 32);
      this.hashes.copy(s, 34, 32 * r, 32 * r + 32);
      sha256(s.subarray(0, 66)).copy(this.hashes, 32 * n);
    }
    this.fresh[n] = 1;
  }
}

/**
 * The map's root computed from scratch, with no tree kept (INDEX.md 3.3's definition, read
 * literally): the second implementation the tests hold the incremental one to.
 */
export function naiveMapRoot(entries: ReadonlyArray<{ k: Buffer; indices: readonly number[] }>): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(a.k, b.k));
  const rec = (items: typeof sorted): Buffer => {
    if (items.length === 1) return mapLeafHash(items[0].k, items[0].indices.length, listRoot(items[0].indices));
    const bit = firstDifference(items[0].k, items[items.length - 1].k);
    const cut = items.findIndex((e) => bitAt(e.k, bit) === 1);
    return mapNodeHash(bit, rec(items.slice(0, cut)), rec(items.slice(cut)));
  };
  return sorted.length ? rec(sorted) : EMPTY_MAP_ROOT;
}
