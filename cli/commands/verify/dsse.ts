// akas verify dsse and akas verify sigstore: a DSSE envelope, or a keyed Sigstore bundle v0.3
// holding one, read as strict JSON and checked offline under a public key the auditor gives, or
// the issuer keys of a trust file in their windows (PROTOCOL 16.4). Made by akas (`akas export
// ID --format dsse|sigstore`) or by anyone else: Ed25519 or ECDSA P-256. Exit 0 verified, 1 a
// check failed, 2 the file or key could not be read, 3 (--trust) the key's window not checked.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CliError, readSource, reasonOf, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { anchoredOnOf, checkable, finish, trustArg } from './shared.js';

type Json = Record<string, unknown>;
type Signer = import('../../../verifier/dsse.js').DsseSigner;

/**
 * Who the envelope is checked under: `--key PEM`, or with `--trust FILE` every issuer key the
 * trust file pins, each in its window (PROTOCOL 8.6): the verifier names the key that held and
 * whether it was the issuer's when it signed (issuer.window; 16.4).
 */
async function signerArg(opts: { key?: string; trust?: string }): Promise<Signer> {
  const pinned = await trustArg(opts.trust, { '--key': opts.key });
  if (!pinned) return keyArg(opts.key);
  if (!pinned.issuers) throw new CliError('not_a_trust_file', `--trust ${opts.trust}: the file pins no issuer key to check the signature with`);
  return pinned.issuers;
}

async function keyArg(path: string | undefined) {
  if (!path)
    throw usageError("--key PEM or --trust FILE is needed: the public key to check the signature with (akas node-keys --pem > issuer.pem writes the node's)");
  const pem = readSource(path);
  const { dsseKey } = await import('../../../verifier/index.js');
  try {
    return dsseKey(pem);
  } catch (e) {
    throw new CliError('invalid_key', `--key ${path}: ${(e as Error).message}`, { path });
  }
}

/** The file's bytes (stdin for -): read as strict JSON by the verifier, so bytes that are not UTF-8 are refused, not replaced. */
function readBytes(path: string): Buffer {
  try {
    return readFileSync(path === '-' ? 0 : path);
  } catch (e) {
    throw new CliError('unreadable', `Cannot read ${path === '-' ? 'stdin' : path}: ${reasonOf(e)}`, { path });
  }
}

/** The report of one file, or exit 2 when it is not strict JSON (PROTOCOL 16.4). */
async function checked(file: string, check: (doc: Uint8Array) => Report) {
  const bytes = readBytes(file);
  return checkable(file, () => check(bytes));
}

type Report = import('../../../verifier/report.js').Report & { statement?: Json };

function printReport(cli: Cli, r: Report, opts: { key?: string; trust?: string; verbose?: boolean }) {
  const { checks, ...rest } = r;
  return finish(cli, r, {
    anchoredOn: anchoredOnOf({ trust: opts.trust, key: opts.key }),
    status: null,
    verbose: opts.verbose,
    extra: rest,
    tail: r.statement
      ? [
          `statement ${String(r.statement.predicateType ?? '')}`,
          ...(r.statement.subject as Json[]).map(
            (s) =>
              `subject  ${String(s.name ?? '_')}  ${Object.entries(s.digest as Json)
                .map(([a, d]) => `${a}:${String(d)}`)
                .join(' ')}`,
          ),
        ]
      : [],
    unanchoredHint: r.unanchored.includes('issuer.window')
      ? "the signature holds, but not whether its key was the issuer's when it signed (issuer.window)"
      : undefined,
  });
}

export function dsseCommand(verify: Command, cli: Cli) {
  verify
    .command('dsse')
    .summary('check a DSSE envelope of an in-toto Statement offline')
    .description('check a DSSE envelope of an in-toto Statement offline under a public key (Ed25519 or ECDSA P-256 PEM)')
    .argument('<file>', 'the envelope (- for stdin)')
    .option('--key <pem>', "the signer's public key, SPKI PEM (akas node-keys --pem prints the node's issuer key)")
    .option('--trust <file>', 'instead of --key: the issuer keys a trust file pins, each in its window (akas trust pin > trust.json; PROTOCOL 8.6)')
    .option('--verbose', 'list every check, not only those that failed or could not run')
    .action(
      action(cli, async (file: string, opts: { key?: string; trust?: string; verbose?: boolean }) => {
        const signer = await signerArg(opts);
        const { verifyDsse } = await import('../../../verifier/index.js');
        return printReport(cli, await checked(file, (doc) => verifyDsse(doc, signer)), opts);
      }),
    );
}

export function sigstoreCommand(verify: Command, cli: Cli) {
  verify
    .command('sigstore')
    .summary('check a keyed Sigstore bundle v0.3 offline')
    .description('check a keyed Sigstore bundle v0.3 (a DSSE envelope, no Rekor entry) offline under a public key (Ed25519 or ECDSA P-256 PEM)')
    .argument('<file>', 'the bundle (- for stdin)')
    .option('--key <pem>', "the signer's public key, SPKI PEM (akas node-keys --pem prints the node's issuer key)")
    .option('--trust <file>', 'instead of --key: the issuer keys a trust file pins, each in its window (akas trust pin > trust.json; PROTOCOL 8.6)')
    .option('--verbose', 'list every check, not only those that failed or could not run')
    .action(
      action(cli, async (file: string, opts: { key?: string; trust?: string; verbose?: boolean }) => {
        const signer = await signerArg(opts);
        const { verifySigstore } = await import('../../../verifier/index.js');
        return printReport(cli, await checked(file, (doc) => verifySigstore(doc, signer)), opts);
      }),
    );
}
