// What `akas mcp --stdio` keeps of the reads it verified (issue 50, 2): a verdict stands for a
// read as long as nothing it rests on moved. It is kept under the SHA-256 of the read's content
// (the node's plain answer to the tool call, less what changes from one read to the next without
// the content changing: a brief manifest's fetchedAt and the signatures over it, the publication's
// inclusion proof and checkpoint), beside the checkpoint it was verified at and the pin's file as
// it was. A later read of the same content is shown as it was verified, with that verdict, while
// the node's checkpoint is still that one (asked of the node at each read: GET
// /api/log/checkpoint) and the pin unchanged: every status change and every publication is
// logged, so the decision behind the read, its judges' status and its publication cannot have
// changed under the same checkpoint. Anything else (another checkpoint, other content, another
// pin) is read again with its evidence and verified again.
import { createHash } from 'node:crypto';
import { canonicalize } from '../../../src/core/jcs.js';
import type { ReadShape } from '../../../verifier/index.js';
import type { Json } from '../../kit/index.js';
import type { Verification } from './verify.js';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The parts of a read's evidence that are the decision behind it (PROTOCOL 10.7, ?evidence=full): checked here, left out of what a model is shown. */
const DECISION_PARTS = ['judgments', 'judges', 'credentials', 'status', 'issuerKeys'];

/** A read as a model is shown it: the read verified, less the decision's evidence (tens of KiB a read) it was checked with. */
export function viewOf(shape: ReadShape, full: Json): Json {
  if (shape === 'search')
    return { ...full, items: Array.isArray(full.items) ? full.items.map((i) => (isObject(i) ? (({ read: _read, ...item }) => item)(i) : i)) : full.items };
  if (shape === 'proposal' || shape === 'attestation') {
    const { evidence: _evidence, ...detail } = full;
    return detail;
  }
  if (!isObject(full.evidence)) return full;
  const evidence = Object.fromEntries(Object.entries(full.evidence).filter(([k]) => !DECISION_PARTS.includes(k)));
  return { ...full, evidence };
}

/**
 * What two reads of the same content at any checkpoint have in common: a node or brief read less
 * its manifest's time and signatures and its publication's proof (the event's id stays), a
 * search's hits less their reads, a proposal detail less its evidence.
 */
export function stableOf(shape: ReadShape, read: Json): Json {
  const { untrustedContent: _marked, ...doc } = read;
  if (shape === 'search' || shape === 'proposal' || shape === 'attestation') return viewOf(shape, doc);
  const m = doc.manifest;
  const ev = doc.evidence;
  return {
    ...doc,
    ...(isObject(m) ? { manifest: { ...m, fetchedAt: 0, signature: '', nodeSignature: null } } : {}),
    ...(isObject(ev)
      ? {
          evidence: {
            proposalId: ev.proposalId,
            kind: ev.kind,
            contentSha256: ev.contentSha256,
            contentBinding: ev.contentBinding,
            content: ev.content,
            log: isObject(ev.log) ? { verifierKey: ev.log.verifierKey, endorsement: ev.log.endorsement } : ev.log,
            publication: isObject(ev.publication) ? ev.publication.id : ev.publication,
          },
        }
      : {}),
  };
}

/** Whether a plain read and a read with full evidence serve the same content (JCS of their stable parts). */
export function sameContent(shape: ReadShape, plain: Json, full: Json): boolean {
  try {
    return canonicalize(stableOf(shape, plain)) === canonicalize(stableOf(shape, full));
  } catch {
    return false;
  }
}

/** The key a read's verdict is kept under: the tool and the SHA-256 of its stable parts. */
export function readKey(tool: string, shape: ReadShape, read: Json): string {
  return createHash('sha256')
    .update(`${tool}\n${JSON.stringify(stableOf(shape, read))}`)
    .digest('hex');
}

export interface Kept {
  /** The checkpoint (signed note) the read was verified at: the verdict stands while the node's is this one. */
  note: string;
  /** The pin's file when it was verified (ReadVerifier.pinStamp). */
  stamp: string;
  view: Json;
  verification: Verification;
}

/** Verdicts kept at most, and bytes of the reads kept with them (their JSON). */
export const KEPT_READS = 256;
export const KEPT_READ_BYTES = 16 * 1024 * 1024;

/** The most recently used verdicts, at most KEPT_READS of them and KEPT_READ_BYTES of reads. */
export class VerdictCache {
  private readonly kept = new Map<string, Kept & { bytes: number }>();
  private bytes = 0;

  constructor(
    readonly capacity = KEPT_READS,
    readonly maxBytes = KEPT_READ_BYTES,
  ) {}

  get(key: string): Kept | undefined {
    const e = this.kept.get(key);
    if (e) {
      this.kept.delete(key);
      this.kept.set(key, e);
    }
    return e;
  }

  set(key: string, kept: Kept): void {
    const bytes = JSON.stringify(kept.view).length;
    if (bytes > this.maxBytes) return;
    this.drop(key);
    this.kept.set(key, { ...kept, bytes });
    this.bytes += bytes;
    for (const k of this.kept.keys()) {
      if (this.kept.size <= this.capacity && this.bytes <= this.maxBytes) break;
      this.drop(k);
    }
  }

  private drop(key: string) {
    const e = this.kept.get(key);
    if (!e) return;
    this.kept.delete(key);
    this.bytes -= e.bytes;
  }

  get size(): number {
    return this.kept.size;
  }
}
