// C2SP tlog-proof@v1 (c2sp.org/tlog-proof): an inclusion proof and the checkpoint it leads to,
// in one text file. The header line, an optional `extra <base64>` line, `index <n>`, one
// base64 SHA-256 hash per line (from the leaf's sibling up), a blank line, then the checkpoint
// verbatim with its signatures and cosignatures. akas puts the log entry's leaf bytes (the JCS
// of its fields, PROTOCOL 9.4) in `extra`: unauthenticated as the spec says, and trusted only
// because its leaf hash is what the inclusion proof proves.

export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';

export interface TlogProof {
  extra?: Buffer;
  index: number;
  /** The inclusion proof, leaf sibling first (RFC 6962 2.1.1). */
  hashes: Buffer[];
  /** The checkpoint as a signed note, verbatim (ends with a newline). */
  checkpoint: string;
}

export function formatTlogProof(p: TlogProof): string {
  const lines = [TLOG_PROOF_HEADER];
  if (p.extra !== undefined) lines.push(`extra ${p.extra.toString('base64')}`);
  lines.push(`index ${p.index}`, ...p.hashes.map((h) => h.toString('base64')), '');
  return `${lines.join('\n')}\n${p.checkpoint.endsWith('\n') ? p.checkpoint : `${p.checkpoint}\n`}`;
}

const B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Reads a tlog-proof strictly (LF only, canonical index, padded standard base64, 32-byte hashes); throws saying what is wrong. */
export function parseTlogProof(text: string): TlogProof {
  if (text.includes('\r')) throw new Error('a tlog-proof separates lines with LF alone (it holds a CR)');
  const lines = text.split('\n');
  if (lines[0] !== TLOG_PROOF_HEADER) throw new Error(`the first line is not ${TLOG_PROOF_HEADER}`);
  let i = 1;
  let extra: Buffer | undefined;
  if (lines[i]?.startsWith('extra ')) {
    const b = lines[i].slice(6);
    if (!B64.test(b)) throw new Error('the extra line is not padded standard base64');
    extra = Buffer.from(b, 'base64');
    i++;
  }
  const m = /^index (0|[1-9][0-9]*)$/.exec(lines[i] ?? '');
  if (!m || !Number.isSafeInteger(Number(m[1]))) throw new Error('no `index N` line (a decimal with no leading zeroes) after the header');
  i++;
  const hashes: Buffer[] = [];
  for (; i < lines.length && lines[i] !== ''; i++) {
    const h = B64.test(lines[i]) ? Buffer.from(lines[i], 'base64') : null;
    if (h?.length !== 32) throw new Error(`line ${i + 1} is not a base64 SHA-256 hash of the inclusion proof`);
    hashes.push(h);
  }
  if (i >= lines.length) throw new Error('no blank line before the checkpoint');
  const checkpoint = lines.slice(i + 1).join('\n');
  if (!checkpoint.trim()) throw new Error('no checkpoint after the blank line');
  return { ...(extra !== undefined ? { extra } : {}), index: Number(m[1]), hashes, checkpoint };
}
