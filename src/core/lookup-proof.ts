// A lookup's map proof (docs/INDEX.md 5): its bytes, read back, and checked against a map root.
// Pure, like the map it proves (src/core/lookup.ts): the node encodes, the three verifiers check.
import { bitAt, EMPTY_MAP_ROOT, firstDifference, listRoot, mapLeafHash, mapNodeHash, type MapProof, type ProofStep, u64 } from './lookup.js';

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
