// The evidence `akas monitor --index` saves of a wrong index (docs/INDEX.md 7), checked offline
// by `akas verify index`: the log's first entries, shown by their leaves to be those of a tree the
// pinned log key signs, indexed again, give another root than an index.root.v1 entry among them
// logs. Verified: the node's index left an entry out of a key, or filed one under the wrong one.
import { runNow, type Checking } from '../src/core/checking.js';
import { MemoryTree } from '../src/core/merkle.js';
import { parseVerifierKey } from '../src/core/note.js';
import { IndexRebuild } from './index-rebuild.js';
import { openCheckpointChecking } from './log.js';
import { Checks, type Report } from './report.js';

/** The evidence file's type. */
export const INDEX_EVIDENCE_TYPE = 'akas.index-evidence.v1';

/** What the monitor saves: the checkpoint, the wrong root's entry index, and every leaf up to the checkpoint's size. */
export interface IndexEvidence {
  type: typeof INDEX_EVIDENCE_TYPE;
  checkpoint: string;
  /** The log index of the index.root.v1 entry whose root the entries do not give. */
  root: number;
  /** base64 of each entry's leaf (the JCS of its hashed fields), 0 to the checkpoint's size - 1. */
  leaves: string[];
  /** What the monitor rebuilt, for the reader (the check computes it again). */
  logged?: string;
  rebuilt?: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks index evidence under the pinned log key(s). */
export function verifyIndexEvidence(doc: unknown, logKeys: string[]): Report & { logged?: string; rebuilt?: string } {
  return runNow(indexEvidenceChecking(doc, logKeys));
}

export function* indexEvidenceChecking(doc: unknown, logKeys: string[]): Checking<Report & { logged?: string; rebuilt?: string }> {
  const c = new Checks();
  if (!isObject(doc) || doc.type !== INDEX_EVIDENCE_TYPE || !Array.isArray(doc.leaves) || typeof doc.root !== 'number') {
    c.add({
      id: 'shape',
      what: `index evidence (${INDEX_EVIDENCE_TYPE}: checkpoint, root, leaves)`,
      valid: false,
      why: 'not the evidence akas monitor --index saves',
    });
    return c.report();
  }
  const keysOk = logKeys.length > 0 && logKeys.every((k) => parseVerifierKey(k));
  c.add({
    id: 'log.key',
    what: 'the pinned log key is a C2SP Ed25519 verifier key',
    valid: logKeys.length ? keysOk : null,
    why: logKeys.length ? undefined : 'not checked: pass --trust FILE or --log-key KEY: unanchored',
    anchor: true,
  });
  if (!keysOk) return c.report();
  const opened = yield* openCheckpointChecking(doc.checkpoint, logKeys);
  c.add({
    id: 'log.checkpoint',
    what: 'the checkpoint is signed by the log key',
    valid: opened.ok,
    why: opened.ok ? `size ${opened.checkpoint.size}` : opened.reason,
  });
  if (!opened.ok) return c.report();
  const tree = new MemoryTree();
  const leaves = (doc.leaves as unknown[]).map((l) => (typeof l === 'string' ? Buffer.from(l, 'base64') : Buffer.alloc(0)));
  for (const leaf of leaves) tree.append(leaf);
  const treeOk = leaves.length === opened.checkpoint.size && tree.root().equals(Buffer.from(opened.checkpoint.rootHash));
  c.add({
    id: 'index.log',
    what: `the ${leaves.length} entries given are the log's first ones: their leaves give the root the checkpoint signs`,
    valid: treeOk,
    why: treeOk ? undefined : `${leaves.length} leaves for a checkpoint of ${opened.checkpoint.size}, or another root`,
  });
  if (!treeOk) return c.report();
  const rebuild = new IndexRebuild();
  let parsed = true;
  for (const [seq, leaf] of leaves.entries()) {
    try {
      const e = JSON.parse(leaf.toString('utf8')) as Json;
      rebuild.add({ seq, kind: String(e.kind), agent: typeof e.agent === 'string' ? e.agent : null, body: isObject(e.body) ? e.body : {} });
    } catch {
      parsed = false;
      break;
    }
  }
  rebuild.root(); // every root read compared
  const compared = rebuild.roots.find((r) => r.seq === doc.root);
  const proven = parsed && compared?.held === false;
  c.add({
    id: 'index.rebuild',
    what: `the root logged by entry ${String(doc.root)} is not the one the entries below its size give, indexed again`,
    valid: proven,
    why: !parsed
      ? 'an entry is not the JSON of a log entry'
      : !compared
        ? `entry ${String(doc.root)} is no index.root.v1 entry among those given`
        : compared.held === null
          ? compared.why
          : compared.held
            ? 'the entries give the root logged: the index holds'
            : `logged ${compared.logged}, the entries give ${compared.rebuilt}`,
  });
  return { ...c.report(), logged: compared?.logged, rebuilt: compared?.rebuilt ?? undefined };
}
