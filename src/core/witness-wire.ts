// The C2SP tlog-witness wire format of `add-checkpoint`: the request body a log sends and
// the witness parses, and the 409 body. Pure; the witness (src/witness) and the node's
// witness client (src/domain/log/witnesses.ts) both use it.
import { decodeBase64 } from './note.js';

/** tlog-witness: "The client MUST NOT send more than 63 consistency proof lines." */
export const MAX_PROOF_LINES = 63;
/** The Content-Type of a 409 answer: "The response MUST have a `Content-Type` of `text/x.tlog.size`". */
export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size';

const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/**
 * The request body: "a sequence of an old size line, zero or more consistency proof lines,
 * and an empty line, followed by a checkpoint. Each line MUST terminate in a newline
 * character (U+000A)." The old size line "MUST consist of the string `old`, a single space
 * (0x20), and the tree size of the previous checkpoint encoded as an ASCII decimal with no
 * leading zeroes"; "Each consistency proof line MUST encode a single hash in base64."
 */
export function formatAddCheckpoint(oldSize: number, proof: readonly Uint8Array[], signedCheckpoint: string): string {
  if (!Number.isSafeInteger(oldSize) || oldSize < 0) throw new TypeError('witness: the old size is a non-negative safe integer');
  if (proof.length > MAX_PROOF_LINES) throw new TypeError(`witness: at most ${MAX_PROOF_LINES} proof lines`);
  const lines = [`old ${oldSize}`, ...proof.map((h) => Buffer.from(h.buffer, h.byteOffset, h.byteLength).toString('base64'))];
  return `${lines.join('\n')}\n\n${signedCheckpoint}`;
}

export type AddCheckpointRequest = { ok: true; oldSize: number; proof: Buffer[]; checkpoint: string } | { ok: false; error: string };

/**
 * Parses an add-checkpoint body. Refuses (the witness answers 400) anything the format does
 * not allow: no empty line, an old size line that is not "old <decimal>" without leading
 * zeroes, a proof line that is not the canonical base64 of 32 bytes, more than 63 of them.
 */
export function parseAddCheckpoint(body: string): AddCheckpointRequest {
  if (typeof body !== 'string') return { ok: false, error: 'the body is not text' };
  const split = body.indexOf('\n\n');
  if (split < 0) return { ok: false, error: 'no empty line between the old size and proof lines and the checkpoint' };
  const [oldLine, ...proofLines] = body.slice(0, split).split('\n');
  const checkpoint = body.slice(split + 2);
  const m = /^old ([0-9]+)$/.exec(oldLine);
  if (!m || !DECIMAL.test(m[1]) || !Number.isSafeInteger(Number(m[1])))
    return { ok: false, error: 'the first line is not "old <size>" (a decimal with no leading zeroes)' };
  if (proofLines.length > MAX_PROOF_LINES) return { ok: false, error: `more than ${MAX_PROOF_LINES} consistency proof lines` };
  const proof: Buffer[] = [];
  for (const line of proofLines) {
    const h = decodeBase64(line);
    if (h?.length !== 32) return { ok: false, error: 'a consistency proof line is not the base64 of a 32-byte hash' };
    proof.push(h);
  }
  if (checkpoint === '') return { ok: false, error: 'no checkpoint after the empty line' };
  return { ok: true, oldSize: Number(m[1]), proof, checkpoint };
}

/** The 409 body: "the tree size of the latest cosigned checkpoint in decimal, followed by a newline". */
export const formatTlogSize = (size: number) => `${size}\n`;

/** Parses a 409 body; null unless it is a decimal size and a newline. */
export function parseTlogSize(body: string): number | null {
  const m = /^(0|[1-9][0-9]*)\n$/.exec(body);
  return m && Number.isSafeInteger(Number(m[1])) ? Number(m[1]) : null;
}
