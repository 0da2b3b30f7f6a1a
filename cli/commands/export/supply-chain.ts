// What `akas export --format dsse|sigstore --with-proof DIR` and `akas export ID --format
// tlog-proof` write (PROTOCOL 16): the node's signed envelope framed as a Sigstore bundle, and
// akas's log evidence as C2SP tlog-proof files beside it (never as Rekor entries). A file named
// from what the node sent is named by a value of its id's grammar alone (nameFromNode).
import { createPublicKey } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { entryLeaf, formatTlogProof, type LogEntry, publicKeyFromMultibase } from '../../../src/core/index.js';
import { CliError, reasonOf, terminalSafe, writeFileSafely } from '../../kit/index.js';

/** An attestation with its proof as the node answers it (GET /api/attestations/{id}), or one event of a bundle's log. */
export interface ProvenEntry {
  entry: Record<string, unknown>;
  inclusion: { index: number; proof: string[] };
  checkpoint: string;
}

/** The tlog-proof of a saved `{entry, inclusion, checkpoint}` (GET /api/attestations/{id}, or an event of a bundle's log). */
export function tlogProofOf(answer: ProvenEntry): string {
  return formatTlogProof({
    extra: entryLeaf(answer.entry as unknown as LogEntry),
    index: answer.inclusion.index,
    hashes: answer.inclusion.proof.map((h) => Buffer.from(h, 'base64')),
    checkpoint: answer.checkpoint,
  });
}

/** Writes `text` to `path`, or exit 2 saying why it cannot. */
export function writeOut(path: string, text: string) {
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new CliError('unwritable', `Cannot write ${path}: ${reasonOf(e)}`, { path });
  }
}

/** The grammar of a log entry's id: what names a tlog-proof file (PROTOCOL 10). */
const ENTRY_ID = /^att_[0-9a-f]{16}$/;

/**
 * A file name made of what a node sent (a log entry's id, a judgment id, a blob's hash): only a
 * value of its id's own grammar names a file, never a path or a name of its choosing (issue 54:
 * an id of ../../x wrote outside the folder). Else exit 1 saying so, before anything is written.
 */
export function nameFromNode(value: unknown, grammar: RegExp, what: string, dir: string): string {
  if (typeof value === 'string' && grammar.test(value)) return value;
  const shown = terminalSafe(String(JSON.stringify(value) ?? value)).slice(0, 80);
  throw new CliError('unsafe_name', `The node's answer names a file in ${dir} with ${shown}, which is not ${what}: refused, nothing more was written there.`, {
    path: dir,
    value: typeof value === 'string' ? value.slice(0, 200) : null,
  });
}

/**
 * Writes `files` (name → text; names already checked) into `dir`, each through a fresh
 * temporary file opened with O_EXCL | O_NOFOLLOW and renamed in place (cli/kit/safe-file.ts): a link
 * planted in the folder is replaced, never written through. Mode 0644: these are public proofs.
 */
export function writeFilesInto(dir: string, files: Array<[name: string, text: string]>): string[] {
  return files.map(([name, text]) => {
    const path = join(dir, name);
    try {
      writeFileSafely(path, text, 0o644);
    } catch (e) {
      throw new CliError('unwritable', `Cannot write ${path}: ${reasonOf(e)}`, { path });
    }
    return path;
  });
}

/** Writes one tlog-proof per answer into `dir` as <attestation id>.tlog-proof (every id checked first); answers the paths written. */
export function writeTlogProofs(dir: string, answers: ProvenEntry[]): string[] {
  const files = answers.map((a): [string, string] => [
    `${nameFromNode(a.entry?.id, ENTRY_ID, 'a log entry id (att_ and 16 hex)', dir)}.tlog-proof`,
    tlogProofOf(a),
  ]);
  return writeFilesInto(dir, files);
}

/** The SPKI PEM of an Ed25519 did:key (the issuer key, for tools that take a PEM: cosign, sigstore-js, openssl). */
export function issuerPem(did: string): string {
  const hex = publicKeyFromMultibase(did);
  if (!hex) throw new CliError('bad_issuer', `the node's issuer ${did} is not an Ed25519 did:key`);
  const x = Buffer.from(hex, 'hex').toString('base64url');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
}
