// akas verify dsse and akas verify sigstore: a DSSE envelope, or a keyed Sigstore bundle v0.3
// holding one, checked offline under a public key the auditor gives (PROTOCOL 16.4). Made by
// akas (`akas export ID --format dsse|sigstore`) or by anyone else: Ed25519 or ECDSA P-256.
import type { Command } from 'commander';
import { CliError, usageError } from '../../errors.js';
import { readJsonFile, readSource } from '../../input.js';
import { action, type Cli } from '../../program.js';
import { mark } from './shared.js';

type Json = Record<string, unknown>;

async function keyArg(path: string | undefined) {
  if (!path) throw usageError("--key PEM is needed: the public key to check the signature with (akas node-keys --pem > issuer.pem writes the node's)");
  const pem = readSource(path);
  const { dsseKey } = await import('../../../verifier/index.js');
  try {
    return dsseKey(pem);
  } catch (e) {
    throw new CliError(2, `--key ${path}: ${(e as Error).message}`, { code: 'invalid_key', path });
  }
}

function printReport(cli: Cli, r: { verified: boolean; checks: Array<{ id: string; valid: boolean | null; what: string; why?: string }>; statement?: Json }) {
  cli.output().result(r, () =>
    [
      ...r.checks.map((c) => `${mark(c.valid)}  ${c.id.padEnd(18)} ${c.valid === true ? c.what : (c.why ?? c.what)}`),
      ...(r.statement
        ? (r.statement.subject as Json[]).map(
            (s) =>
              `subject  ${String(s.name ?? '_')}  ${Object.entries(s.digest as Json)
                .map(([a, d]) => `${a}:${String(d)}`)
                .join(' ')}`,
          )
        : []),
      r.verified
        ? `verified: ${String(r.statement?.predicateType ?? '')}`
        : `NOT verified: ${r.checks
            .filter((c) => c.valid === false)
            .map((c) => c.id)
            .join(', ')}`,
    ].join('\n'),
  );
  return r.verified ? 0 : 1;
}

export function dsseCommand(verify: Command, cli: Cli) {
  verify
    .command('dsse')
    .description('check a DSSE envelope of an in-toto Statement offline under a public key (Ed25519 or ECDSA P-256 PEM)')
    .argument('<file>', 'the envelope (- for stdin)')
    .option('--key <pem>', "the signer's public key, SPKI PEM (akas node-keys --pem prints the node's issuer key)")
    .action(
      action(cli, async (file: string, opts: { key?: string }) => {
        const key = await keyArg(opts.key);
        const { verifyDsse } = await import('../../../verifier/index.js');
        return printReport(cli, verifyDsse(readJsonFile(file), key));
      }),
    );
}

export function sigstoreCommand(verify: Command, cli: Cli) {
  verify
    .command('sigstore')
    .description('check a keyed Sigstore bundle v0.3 (a DSSE envelope, no Rekor entry) offline under a public key (Ed25519 or ECDSA P-256 PEM)')
    .argument('<file>', 'the bundle (- for stdin)')
    .option('--key <pem>', "the signer's public key, SPKI PEM (akas node-keys --pem prints the node's issuer key)")
    .action(
      action(cli, async (file: string, opts: { key?: string }) => {
        const key = await keyArg(opts.key);
        const { verifySigstore } = await import('../../../verifier/index.js');
        return printReport(cli, verifySigstore(readJsonFile(file), key));
      }),
    );
}
