// akas verify dsse and akas verify sigstore: a DSSE envelope, or a keyed Sigstore bundle v0.3
// holding one, checked offline under a public key the auditor gives (PROTOCOL 16.4). Made by
// akas (`akas export ID --format dsse|sigstore`) or by anyone else: Ed25519 or ECDSA P-256.
import type { Command } from 'commander';
import { CliError, usageError } from '../../errors.js';
import { readJsonFile, readSource } from '../../input.js';
import { action, type Cli } from '../../program.js';
import { mark, trustArg } from './shared.js';

type Json = Record<string, unknown>;

/**
 * The keys an envelope is checked under: `--key PEM`, or with `--trust FILE` every issuer key the
 * trust file pins (PROTOCOL 8.6). A DSSE envelope carries no signing time, so an issuer's window
 * cannot be applied to it: any key the file pins counts, and the report names the one that held.
 */
async function keysArg(opts: { key?: string; trust?: string }) {
  const pinned = await trustArg(opts.trust, { '--key': opts.key });
  if (!pinned) return [await keyArg(opts.key)];
  const { createPublicKey } = await import('node:crypto');
  const { publicKeyFromMultibase } = await import('../../../src/core/didkey.js');
  const keys = pinned.file.issuers.flatMap((i) => {
    const hex = publicKeyFromMultibase(i.did.replace(/^did:key:/, '').split('#')[0]);
    return hex ? [createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(hex, 'hex').toString('base64url') }, format: 'jwk' })] : [];
  });
  if (!keys.length) throw new CliError(2, `--trust ${opts.trust}: the file pins no issuer key to check the signature with`, { code: 'not_a_trust_file' });
  return keys;
}

/** The report under the first key that holds, else under the first key (naming what failed). */
function underAny<R extends { verified: boolean }>(keys: import('node:crypto').KeyObject[], check: (key: import('node:crypto').KeyObject) => R): R {
  const reports = keys.map(check);
  return reports.find((r) => r.verified) ?? reports[0];
}

async function keyArg(path: string | undefined) {
  if (!path)
    throw usageError("--key PEM or --trust FILE is needed: the public key to check the signature with (akas node-keys --pem > issuer.pem writes the node's)");
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
    .option('--trust <file>', 'instead of --key: the issuer keys a trust file pins (akas node-keys --trust > trust.json; PROTOCOL 8.6)')
    .action(
      action(cli, async (file: string, opts: { key?: string; trust?: string }) => {
        const keys = await keysArg(opts);
        const { verifyDsse } = await import('../../../verifier/index.js');
        const doc = readJsonFile(file);
        return printReport(
          cli,
          underAny(keys, (key) => verifyDsse(doc, key)),
        );
      }),
    );
}

export function sigstoreCommand(verify: Command, cli: Cli) {
  verify
    .command('sigstore')
    .description('check a keyed Sigstore bundle v0.3 (a DSSE envelope, no Rekor entry) offline under a public key (Ed25519 or ECDSA P-256 PEM)')
    .argument('<file>', 'the bundle (- for stdin)')
    .option('--key <pem>', "the signer's public key, SPKI PEM (akas node-keys --pem prints the node's issuer key)")
    .option('--trust <file>', 'instead of --key: the issuer keys a trust file pins (akas node-keys --trust > trust.json; PROTOCOL 8.6)')
    .action(
      action(cli, async (file: string, opts: { key?: string; trust?: string }) => {
        const keys = await keysArg(opts);
        const { verifySigstore } = await import('../../../verifier/index.js');
        const doc = readJsonFile(file);
        return printReport(
          cli,
          underAny(keys, (key) => verifySigstore(doc, key)),
        );
      }),
    );
}
