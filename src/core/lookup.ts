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
const MAP_EMPTY = 0x12;
const LIST_LEAF = 0x13;
const LIST_NODE = 0x14;

const sha256 = (data: Uint8Array): Buffer => {
  const h = hash(data);
  return Buffer.isBuffer(h) ? h : Buffer.from(h.buffer, h.byteOffset, h.byteLength);
};

/** The root of the map that holds no key: SHA-256(0x12). */
export const EMPTY_MAP_ROOT: Buffer = sha256(Uint8Array.of(MAP_EMPTY));

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

const u64 = (buf: Buffer, at: number, n: number) => {
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

// Leaves and inner nodes have the same fields in the same order (one hidden class: the walks of a
// lookup read them at monomorphic sites); a leaf's bit is -1.
interface Leaf {
  bit: -1;
  left: null;
  right: null;
  k: Buffer;
  list: ListEdge;
  hash: Buffer | null;
}
interface Inner {
  bit: number;
  left: MapNode;
  right: MapNode;
  k: null;
  list: null;
  hash: Buffer | null;
}
type MapNode = Leaf | Inner;
const isLeaf = (n: MapNode): n is Leaf => n.bit < 0;
const inner = (bit: number, left: MapNode, right: MapNode): Inner => ({ bit, left, right, k: null, list: null, hash: null });

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

/**
 * The map, in memory: a Patricia tree over the key hashes whose node hashes are computed only
 * when a root or a proof is asked for (INDEX.md 3.3). Adding an index to a key walks its path
 * once (about log2 of the keys), marking what it passes stale.
 */
export class LookupMap {
  private top: MapNode | null = null;
  /** Keys held. */
  keys = 0;

  /** Appends a log index to key hash k's list (a key met for the first time joins the map); answers the list's new length. */
  add(k: Buffer, index: number): number {
    let n = this.top;
    if (!n) {
      this.top = this.newLeaf(k, index);
      return 1;
    }
    while (!isLeaf(n)) {
      n.hash = null;
      n = bitAt(k, n.bit) ? n.right : n.left;
    }
    const d = firstDifference(k, n.k);
    if (d < 0) {
      n.list.push(index);
      n.hash = null;
      return n.list.count;
    }
    // A new key: a node splitting at d goes where the path first passes a node deeper than d.
    const leaf = this.newLeaf(k, index);
    let parent: Inner | null = null;
    let at = this.top as MapNode; // not null: the map held a leaf above
    while (!isLeaf(at) && at.bit < d) {
      parent = at;
      at = bitAt(k, at.bit) ? at.right : at.left;
    }
    const split = bitAt(k, d) ? inner(d, at, leaf) : inner(d, leaf, at);
    if (!parent) this.top = split;
    else if (bitAt(k, parent.bit)) parent.right = split;
    else parent.left = split;
    return 1;
  }

  private newLeaf(k: Buffer, index: number): Leaf {
    const list = new ListEdge();
    list.push(index);
    this.keys++;
    return { bit: -1, left: null, right: null, k, list, hash: null };
  }

  /** The map's root hash. */
  root(): Buffer {
    return this.top ? hashOf(this.top) : EMPTY_MAP_ROOT;
  }

  /** How many indices key hash k has (0: not in the map). */
  count(k: Buffer): number {
    const leaf = this.leafOf(k);
    return leaf && firstDifference(k, leaf.k) < 0 ? leaf.list.count : 0;
  }

  private leafOf(k: Buffer): Leaf | undefined {
    let n = this.top;
    if (!n) return undefined;
    while (!isLeaf(n)) n = bitAt(k, n.bit) ? n.right : n.left;
    return n;
  }

  /** The proof of key hash k, inclusion or not, against root(). */
  prove(k: Buffer): MapProof {
    if (!this.top) return { found: false, steps: [] };
    const path: Inner[] = [];
    let n: MapNode = this.top;
    while (!isLeaf(n)) {
      path.push(n);
      n = bitAt(k, n.bit) ? n.right : n.left;
    }
    const steps: ProofStep[] = [];
    for (let i = path.length - 1; i >= 0; i--) {
      const p = path[i];
      steps.push({ bit: p.bit, sibling: hashOf(bitAt(k, p.bit) ? p.left : p.right) });
    }
    const found = firstDifference(k, n.k) < 0;
    return { found, leaf: { k: n.k, count: n.list.count, v: n.list.root()! }, steps };
  }
}

// A node's hash, computing the stale ones beneath it (recursion depth at most 257: one per bit).
function hashOf(n: MapNode): Buffer {
  if (n.hash) return n.hash;
  n.hash = isLeaf(n) ? mapLeafHash(n.k, n.list.count, n.list.root()!) : mapNodeHash(n.bit, hashOf(n.left), hashOf(n.right));
  return n.hash;
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

const PROOF_FOUND = 0x00;
const PROOF_OTHER = 0x01;
const PROOF_EMPTY = 0x02;

/**
 * A proof's bytes (INDEX.md 5): a type byte (0 found, 1 another key's leaf, 2 the empty map);
 * for type 1 the other leaf's K', count and V; then the number of steps and each step's bit and
 * sibling, from the leaf up. A found key's count and V are not in the bytes: the verifier
 * computes them from the indices it was given.
 */
export function encodeMapProof(p: MapProof): Buffer {
  const type = !p.leaf ? PROOF_EMPTY : p.found ? PROOF_FOUND : PROOF_OTHER;
  const head = type === PROOF_OTHER ? 72 : 0;
  const buf = Buffer.alloc(2 + head + 33 * p.steps.length);
  buf[0] = type;
  let at = 1;
  if (type === PROOF_OTHER && p.leaf) {
    p.leaf.k.copy(buf, at);
    u64(buf, at + 32, p.leaf.count);
    p.leaf.v.copy(buf, at + 40);
    at += 72;
  }
  buf[at++] = p.steps.length;
  for (const s of p.steps) {
    buf[at] = s.bit;
    s.sibling.copy(buf, at + 1);
    at += 33;
  }
  return buf;
}

/** A proof as its bytes say (INDEX.md 5). */
export interface DecodedMapProof {
  type: 'found' | 'other' | 'empty';
  other?: { k: Buffer; count: number; v: Buffer };
  steps: ProofStep[];
}

/** A proof read back from its bytes, or the reason they are not one. */
export function decodeMapProof(bytes: Uint8Array): DecodedMapProof | string {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 2) return 'shorter than a proof';
  const type = b[0] === PROOF_FOUND ? 'found' : b[0] === PROOF_OTHER ? 'other' : b[0] === PROOF_EMPTY ? 'empty' : null;
  if (!type) return `unknown proof type ${b[0]}`;
  let at = 1;
  let other: { k: Buffer; count: number; v: Buffer } | undefined;
  if (type === 'other') {
    if (b.length < 74) return 'shorter than a proof of another leaf';
    other = { k: b.subarray(1, 33), count: b.readUInt32BE(33) * 2 ** 32 + b.readUInt32BE(37), v: b.subarray(41, 73) };
    at = 73;
  }
  const n = b[at++];
  if (b.length !== at + 33 * n) return `${b.length} bytes where ${n} steps take ${at + 33 * n}`;
  if (type === 'empty' && n !== 0) return 'a proof of the empty map has no steps';
  const steps: ProofStep[] = [];
  for (let i = 0; i < n; i++) steps.push({ bit: b[at + 33 * i], sibling: b.subarray(at + 33 * i + 1, at + 33 * i + 33) });
  return { type, other, steps };
}

/** What a proof proves of a key, or why it proves nothing (INDEX.md 5.1). */
export type MapVerdict = { ok: true; found: boolean } | { ok: false; reason: string };

/**
 * Checks a proof of key hash k against a map root. `indices` are the key's indices as answered:
 * a proof of type found must lead to the root with their count and V; a proof that the key is
 * absent must come with none.
 */
export function verifyMapProof(root: Uint8Array, k: Uint8Array, indices: readonly number[], proof: Uint8Array): MapVerdict {
  const p = decodeMapProof(proof);
  if (typeof p === 'string') return { ok: false, reason: p };
  if (p.type === 'empty') {
    if (indices.length) return { ok: false, reason: 'indices were answered for a key the empty map does not hold' };
    return Buffer.from(root).equals(EMPTY_MAP_ROOT) ? { ok: true, found: false } : { ok: false, reason: 'the root is not the empty map' };
  }
  let leafK: Uint8Array;
  let h: Buffer;
  if (p.type === 'found') {
    if (!indices.length) return { ok: false, reason: 'a proof that the key is held, with no indices' };
    if (!indices.every((i, n) => Number.isSafeInteger(i) && i >= 0 && (n === 0 || i > indices[n - 1]))) {
      return { ok: false, reason: 'the indices are not whole numbers in strictly rising order' };
    }
    leafK = k;
    h = mapLeafHash(k, indices.length, listRoot(indices));
  } else {
    const o = p.other!;
    if (indices.length) return { ok: false, reason: 'indices were answered for a key the proof says is absent' };
    if (firstDifference(o.k, k) < 0) return { ok: false, reason: "the other leaf is the key's own" };
    if (o.count < 1) return { ok: false, reason: 'the other leaf holds no index' };
    leafK = o.k;
    h = mapLeafHash(o.k, o.count, o.v);
  }
  let below = 256;
  for (const s of p.steps) {
    // Bits strictly rise from the root down, and the key's lookup takes the leaf's side at each.
    if (s.bit >= below) return { ok: false, reason: 'the steps do not split at rising bits' };
    if (bitAt(leafK, s.bit) !== bitAt(k, s.bit)) return { ok: false, reason: 'the lookup of the key does not lead to the leaf shown' };
    below = s.bit;
    h = bitAt(leafK, s.bit) ? mapNodeHash(s.bit, s.sibling, h) : mapNodeHash(s.bit, h, s.sibling);
  }
  if (!h.equals(Buffer.from(root))) return { ok: false, reason: 'the proof does not lead to the map root' };
  return { ok: true, found: p.type === 'found' };
}
