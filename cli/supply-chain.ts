// What `akas export --format dsse|sigstore --with-proof DIR` and `akas attestation --format
// tlog-proof` write (PROTOCOL 16): the node's signed envelope framed as a Sigstore bundle, and
// akas's log evidence as C2SP tlog-proof files beside it (never as Rekor entries).
import { createPublicKey } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { entryLeaf, formatTlogProof, type LogEntry, publicKeyFromMultibase } from '../src/core/index.js';
import { CliError, reasonOf } from './errors.js';

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
    throw new CliError(2, `Cannot write ${path}: ${reasonOf(e)}`, { code: 'unwritable', path });
  }
}

/** Writes one tlog-proof per answer into `dir` as <attestation id>.tlog-proof; answers the paths written. */
export function writeTlogProofs(dir: string, answers: ProvenEntry[]): string[] {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new CliError(2, `Cannot write into ${dir}: ${reasonOf(e)}`, { code: 'unwritable', path: dir });
  }
  return answers.map((a) => {
    const path = join(dir, `${String(a.entry.id)}.tlog-proof`);
    writeOut(path, tlogProofOf(a));
    return path;
  });
}

/** The SPKI PEM of an Ed25519 did:key (the issuer key, for tools that take a PEM: cosign, sigstore-js, openssl). */
export function issuerPem(did: string): string {
  const hex = publicKeyFromMultibase(did);
  if (!hex) throw new CliError(1, `the node's issuer ${did} is not an Ed25519 did:key`, { code: 'bad_issuer' });
  const x = Buffer.from(hex, 'hex').toString('base64url');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
}
