// akas export: the offline bundle of a proposal from a node (PROTOCOL 8.4), with its blobs and
// credentials when asked, for `akas verify bundle` and `akas verify credential` to check with
// no node (cli/commands/verify/); or an attestation or a decided proposal as an in-toto
// Statement in a DSSE envelope or a Sigstore bundle, with its log proofs beside it (PROTOCOL 16);
// or an attestation's inclusion proof as a C2SP tlog-proof file (PROTOCOL 16.5). A file in a
// format is written here; `akas show ID` prints a thing for reading.
import type { Command } from 'commander';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PROPOSAL_ID_RE, sigstoreBundle, type DsseEnvelope } from '../../../src/core/index.js';
import { nameFromNode, tlogProofOf, writeFilesInto, writeOut, writeTlogProofs } from './supply-chain.js';
import { CliError, type Json, reasonOf, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

const FORMATS = ['akas', 'dsse', 'sigstore', 'tlog-proof'];
const ATTESTATION_ID = /^att_[0-9a-f]{16}$/;

/** A GET whose 404 (unknown id) and 409 (no Statement) are the caller's input: exit 2 with the node's reason. */
async function getExportable<T>(cli: Cli, path: string): Promise<T> {
  try {
    return await cli.client().get<T>(path);
  } catch (e) {
    if (CliError.is(e) && (e.body.status === 404 || e.body.status === 409)) throw CliError.fromNode(2, e.message, e.body);
    throw e;
  }
}

export function exportCommands(program: Command, cli: Cli) {
  program
    .command('export')
    .summary("write a proposal's bundle, or an attestation as DSSE, Sigstore or tlog-proof")
    .description(
      'download the offline bundle of a proposal (its judgments, signatures, credentials, keys, content hashes); ' +
        "or an attestation or decided proposal as a DSSE envelope or Sigstore bundle, or an attestation's inclusion proof as a " +
        'C2SP tlog-proof file (--format)',
    )
    .argument('<id>', 'proposal id, or attestation id (att_...) with --format akas|dsse|sigstore|tlog-proof')
    .option(
      '--format <format>',
      'akas (the bundle; an attestation with its proof), dsse (an in-toto Statement signed by the issuer key), ' +
        "sigstore (that envelope in a Sigstore bundle v0.3), tlog-proof (an attestation's C2SP tlog-proof@v1 file: akas verify log-proof takes it)",
      'akas',
    )
    .option('--with-proof <dir>', "also write the akas log's inclusion proofs as C2SP tlog-proof files into DIR/<attestation id>.tlog-proof")
    .option('-o, --output <file>', 'write the bundle here instead of stdout')
    .option('--blobs <dir>', 'also fetch the blobs it references that this node stores, into DIR/<sha256> (each hash checked)')
    .option('--credentials <dir>', 'also write each judgment credential to DIR/<judgmentId>.json (for akas verify credential DIR)')
    .action(
      action(cli, async (id: string, opts: { format: string; withProof?: string; output?: string; blobs?: string; credentials?: string }) => {
        if (!FORMATS.includes(opts.format)) throw usageError(`--format is one of ${FORMATS.join(', ')}, got ${opts.format}`);
        const attestation = ATTESTATION_ID.test(id);
        if (!attestation && !PROPOSAL_ID_RE.test(id)) throw usageError(`not an attestation id (att_ + 16 hex) or a proposal id: ${id}`);
        if (attestation && (opts.blobs || opts.credentials)) throw usageError('--blobs and --credentials are for a proposal bundle, not an attestation');
        if (!attestation && opts.format === 'tlog-proof')
          throw usageError(`--format tlog-proof is an attestation's inclusion proof; a proposal's log proofs: akas export ${id} --with-proof DIR`);
        const out = cli.output();
        const enc = encodeURIComponent(id);
        let doc: Json;
        if (opts.format === 'akas' || opts.format === 'tlog-proof')
          doc = await getExportable<Json>(cli, attestation ? `/api/attestations/${enc}` : `/api/knowledge/proposals/${enc}/bundle`);
        else {
          const envelope = await getExportable<DsseEnvelope>(cli, attestation ? `/api/attestations/${enc}/dsse` : `/api/knowledge/proposals/${enc}/dsse`);
          doc = opts.format === 'sigstore' ? sigstoreBundle(envelope) : envelope;
        }
        const text = opts.format === 'tlog-proof' ? tlogProofOf(doc as never) : JSON.stringify(doc, null, 2) + '\n';
        const bundle = !attestation && opts.format === 'akas' ? doc : undefined;
        if (opts.credentials || opts.blobs) await extras(cli, bundle ?? (await getExportable<Json>(cli, `/api/knowledge/proposals/${enc}/bundle`)), opts);
        if (opts.withProof) {
          // An attestation's own proof; a proposal's every log event (submitted, judgments, decision).
          const answers = attestation
            ? [opts.format === 'akas' || opts.format === 'tlog-proof' ? doc : await getExportable<Json>(cli, `/api/attestations/${enc}`)]
            : ((b: Json) => (b.log.entries as Json[]).map((e) => ({ entry: e.entry, inclusion: e.inclusion, checkpoint: b.log.checkpoint })))(
                bundle ?? (await getExportable<Json>(cli, `/api/knowledge/proposals/${enc}/bundle`)),
              );
          const written = writeTlogProofs(opts.withProof, answers as never);
          out.note(`${written.length} tlog-proof file(s) written to ${opts.withProof}`);
        }
        if (opts.output) {
          writeOut(opts.output, text);
          out.note(`${opts.format === 'akas' ? 'bundle' : opts.format} of ${id} written to ${opts.output}`);
        } else cli.io.stdout.write(text);
      }),
    );
}

/** The grammars of what names a file of --credentials and --blobs (a node's answer chooses the values). */
const JUDGMENT_SUBJECT = /^urn:akas:judgment:jdg_[0-9a-f]{16}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * --credentials and --blobs of a proposal's bundle. Every name is the id's own grammar, checked
 * for all of them before the first file is written (nameFromNode); files go through a temporary
 * file opened with no-follow and renamed in place (writeFilesInto; getBlob's O_EXCL part file).
 */
async function extras(cli: Cli, bundle: Json, opts: { blobs?: string; credentials?: string }) {
  if (opts.credentials) {
    const dir = opts.credentials;
    const credentials = Array.isArray(bundle.credentials) ? (bundle.credentials as Json[]) : [];
    const files = credentials.map((c): [string, string] => {
      const subject = nameFromNode(c?.credentialSubject?.id, JUDGMENT_SUBJECT, 'a judgment subject id (urn:akas:judgment:jdg_ and 16 hex)', dir);
      return [`${subject.slice('urn:akas:judgment:'.length)}.json`, JSON.stringify(c, null, 2) + '\n'];
    });
    writeFilesInto(dir, files);
  }
  if (opts.blobs) {
    const dir = opts.blobs;
    const refs = (Array.isArray(bundle.cas) ? (bundle.cas as Json[]) : []).filter((ref) => ref?.platformVerified);
    const names = refs.map((ref) => nameFromNode(ref.sha256, SHA256_HEX, 'a sha256 (64 lowercase hex)', dir));
    try {
      mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw new CliError('unwritable', `Cannot write into ${dir}: ${reasonOf(e)}`, { path: dir });
    }
    const { getBlob } = await import('../cas/transfer.js');
    for (const sha256 of names) await getBlob(cli, cli.output(), sha256, join(dir, sha256));
  }
}
