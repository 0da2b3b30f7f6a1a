// Evidence of a fork that a third party can check with nothing but the log key (`akas verify
// fork FILE --log-key KEY`): two checkpoints signed by the log, and, when their sizes differ, the
// consistency proof computed from the newer tree's tiles. The proof leads to the newer signed
// root and implies the root of the older size inside the newer tree; when that root is not the
// one the older checkpoint signs, the log signed two histories. (A proof that is merely wrong
// leads to no root at all, so it proves nothing either way: the check says so.)
import { consistencyOldRoot, consistencyProof, type TileHashReader, verifyConsistency } from '../../../src/core/index.js';
import { openCheckpoint } from '../../../verifier/index.js';

export const FORK_EVIDENCE_TYPE = 'akas.fork-evidence.v1';

export interface ForkEvidence {
  type: typeof FORK_EVIDENCE_TYPE;
  /** The log key both checkpoints are signed with. */
  logKey: string;
  /** The checkpoint of the smaller (or equal) size, and where it came from. */
  older: { note: string; from: string };
  newer: { note: string; from: string };
  /** Base64 hashes: the consistency proof from the older size to the newer (empty for equal sizes). */
  proof: string[];
  /** Hex: the root of the older size inside the newer tree, as the tiles give it. */
  olderRootInNewer: string | null;
}

const isPow2 = (n: number) => n > 0 && Number.isInteger(Math.log2(n));

/** The root of the first `size` leaves inside the tree `tiles` reads: what the consistency proof implies, or a complete subtree. */
function olderRootInside(size: number, newSize: number, proof: Buffer[], newRoot: Buffer, tiles?: TileHashReader): Promise<Buffer | null> | Buffer | null {
  if (isPow2(size)) return tiles ? tiles.hash(Math.log2(size), 0) : null;
  return consistencyOldRoot(size, newSize, proof, newRoot);
}

/**
 * The evidence of two signed checkpoints (each already verified by the caller), the newer read
 * through `newerTiles` (a reader of its tree, checked to give its root). `forked` says whether
 * they disagree.
 */
export async function forkEvidence(
  logKey: string,
  a: { note: string; from: string; size: number; root: Buffer },
  b: { note: string; from: string; size: number; root: Buffer },
  newerTiles: TileHashReader | undefined,
): Promise<{ forked: boolean; evidence: ForkEvidence }> {
  const [older, newer] = a.size <= b.size ? [a, b] : [b, a];
  let proof: Buffer[] = [];
  let inner: Buffer | null = newer.size === older.size ? newer.root : null;
  if (older.size > 0 && older.size < newer.size && newerTiles) {
    proof = await consistencyProof(older.size, newer.size, (l, i) => newerTiles.hash(l, i));
    inner = await olderRootInside(older.size, newer.size, proof, newer.root, newerTiles);
  }
  const forked = older.size > 0 && inner !== null && !inner.equals(older.root);
  return {
    forked,
    evidence: {
      type: FORK_EVIDENCE_TYPE,
      logKey,
      older: { note: older.note, from: older.from },
      newer: { note: newer.note, from: newer.from },
      proof: proof.map((h) => h.toString('base64')),
      olderRootInNewer: inner ? inner.toString('hex') : null,
    },
  };
}

/** Whether a fork-evidence document proves a fork under `logKey`: `proven`, and why in one sentence. */
export function checkForkEvidence(doc: unknown, logKey: string): { proven: boolean; why: string } {
  const d = doc as Partial<ForkEvidence> | null;
  if (!d || typeof d !== 'object' || d.type !== FORK_EVIDENCE_TYPE) return { proven: false, why: `not an ${FORK_EVIDENCE_TYPE} document` };
  const a = openCheckpoint(d.older?.note, [logKey]);
  const b = openCheckpoint(d.newer?.note, [logKey]);
  if (!a.ok) return { proven: false, why: `the older checkpoint is not signed by the log key: ${a.reason}` };
  if (!b.ok) return { proven: false, why: `the newer checkpoint is not signed by the log key: ${b.reason}` };
  const [o, n] = [a.checkpoint, b.checkpoint];
  const oRoot = Buffer.from(o.rootHash);
  const nRoot = Buffer.from(n.rootHash);
  if (o.size === n.size)
    return oRoot.equals(nRoot)
      ? { proven: false, why: `both checkpoints sign the same root for ${o.size} entries` }
      : { proven: true, why: `the log key signed two roots for the same ${o.size} entries` };
  if (o.size > n.size) return { proven: false, why: 'the older checkpoint is the larger one' };
  if (o.size === 0) return { proven: false, why: 'every tree extends the empty one' };
  const proof = (Array.isArray(d.proof) ? d.proof : []).map((h) => Buffer.from(String(h), 'base64'));
  let inner: Buffer | null;
  if (isPow2(o.size)) {
    inner = typeof d.olderRootInNewer === 'string' && /^[0-9a-f]{64}$/.test(d.olderRootInNewer) ? Buffer.from(d.olderRootInNewer, 'hex') : null;
    if (inner && !verifyConsistency(o.size, n.size, proof, inner, nRoot)) inner = null;
  } else inner = consistencyOldRoot(o.size, n.size, proof, nRoot);
  if (!inner) return { proven: false, why: 'the consistency proof does not lead to the newer signed root: it proves nothing' };
  if (inner.equals(oRoot)) return { proven: false, why: `the tree of ${n.size} entries extends the tree of ${o.size}: no fork` };
  return {
    proven: true,
    why:
      `the signed tree of ${n.size} entries holds, at ${o.size} entries, root ${inner.toString('hex').slice(0, 16)}…, not the root ` +
      `${oRoot.toString('hex').slice(0, 16)}… the log key signed for ${o.size}`,
  };
}
