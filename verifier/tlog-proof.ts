// A C2SP tlog-proof@v1 file of an akas attestation checked offline (PROTOCOL 16.5): its `extra`
// line holds the entry's leaf bytes, so the file alone says what is proven. They are read back
// into the entry and checked as `akas verify log-proof` checks a saved answer: the leaf's
// inclusion under the checkpoint the log key signs, and the witnesses' cosignatures.
import { sha256Hex } from '../src/core/hash.js';
import type { LogEntry } from '../src/core/log-entry.js';
import { parseTlogProof } from '../src/core/tlog-proof.js';
import { runNow } from '../src/core/checking.js';
import { logProofChecking, type WitnessPolicy } from './log.js';
import { NotCheckableError, type Report } from './report.js';

/** The saved-answer shape ({entry, inclusion, checkpoint}) of a tlog-proof, or why it is none. */
export function tlogProofDocument(text: string): { doc: Record<string, unknown> } | { problem: string } {
  let p: ReturnType<typeof parseTlogProof>;
  try {
    p = parseTlogProof(text);
  } catch (e) {
    return { problem: (e as Error).message };
  }
  if (!p.extra) return { problem: 'no extra line: an akas tlog-proof carries the entry it proves there' };
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(p.extra.toString('utf8'));
  } catch {
    return { problem: 'the extra line is not the JSON of a log entry' };
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return { problem: 'the extra line is not the JSON of a log entry' };
  const seq = typeof fields.seq === 'number' ? fields.seq : -1;
  const entry = { ...fields, id: `att_${seq.toString(16).padStart(16, '0')}`, hash: sha256Hex(p.extra) } as unknown as LogEntry;
  // The size is the checkpoint's: the proof is against the tree the checkpoint signs.
  const size = Number(p.checkpoint.split('\n')[1]);
  return { doc: { entry, inclusion: { index: p.index, size, proof: p.hashes.map((h) => h.toString('base64')) }, checkpoint: p.checkpoint } };
}

/** `akas verify log-proof FILE.tlog-proof --log-key KEY`; throws NotCheckableError for text that is not a tlog-proof of an akas entry. */
export function verifyTlogProof(text: string, logKey: string | string[] | undefined, witnesses?: WitnessPolicy): Report {
  const r = tlogProofDocument(text);
  // Text that does not parse as a tlog-proof is no proof to judge (PROTOCOL 8.8).
  if ('problem' in r) throw new NotCheckableError(`not a C2SP tlog-proof@v1 of an akas log entry: ${r.problem}`);
  return runNow(logProofChecking(r.doc, logKey, witnesses));
}
