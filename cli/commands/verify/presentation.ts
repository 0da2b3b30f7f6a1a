// akas verify presentation: a W3C VC 2.0 verifiable presentation checked offline, its holder's
// proof and every credential it carries.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CliError, reasonOf, usageError } from '../../errors.js';
import { readIssuerKeysFile } from '../../input.js';
import { action, type Cli } from '../../program.js';
import { anchorLine, failing, issuerArg, mark, readStdin, timeArg, trustArg, verdictExit, verdictFields } from './shared.js';

export function presentationCommand(verify: Command, cli: Cli) {
  verify
    .command('presentation')
    .description("check a W3C VC 2.0 verifiable presentation offline: its holder's proof (authentication, eddsa-jcs-2022) and every credential it carries")
    .argument('<file>', 'the presentation (- for stdin)')
    .option('--challenge <text>', 'the challenge you gave the holder: the proof must carry it')
    .option('--domain <domain...>', 'the domain(s) you gave the holder: the proof must carry exactly these')
    .option('--require-proof', 'refuse a presentation without a proof (otherwise reported as not checked)')
    .option('--at <time>', 'check the validity windows at this instant (ISO 8601 or epoch ms; default now)')
    .option('--trust <file>', 'the issuers you pin, each in its window, in one file (akas node-keys --trust > trust.json; PROTOCOL 8.6)')
    .option('--issuer <did>', 'the issuer the credentials must have (with --issuer-keys: the pinned issuer DID)')
    .option(
      '--issuer-keys <file>',
      "the node's key list (akas node-keys --json > keys.json; GET /api/node/keys): accept the issuer's prior keys, each in its window",
    )
    .option('--judge-signature', "also check the judge's own signature (L2) each judgment credential carries")
    .action(
      action(
        cli,
        async (
          file: string,
          opts: {
            trust?: string;
            challenge?: string;
            domain?: string[];
            requireProof?: boolean;
            at?: string;
            issuer?: string;
            issuerKeys?: string;
            judgeSignature?: boolean;
          },
        ) => {
          const pinned = await trustArg(opts.trust, { '--issuer': opts.issuer, '--issuer-keys': opts.issuerKeys });
          const at = timeArg(opts.at);
          const issuer = issuerArg(opts.issuer);
          if (opts.issuerKeys && !issuer) throw usageError('--issuer-keys needs --issuer DID: the key you trust, from which the signed rotations are followed');
          const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
          const { verifyPresentation, trustIssuerKeys } = await import('../../../verifier/index.js');
          let bytes: Buffer;
          try {
            bytes = file === '-' ? readStdin() : readFileSync(file);
          } catch (e) {
            throw new CliError(2, `Cannot read ${file}: ${reasonOf(e)}`, { code: 'unreadable', path: file });
          }
          const trust = pinned ? pinned.issuers : list && issuer ? trustIssuerKeys(issuer, list as never) : undefined;
          const domain = opts.domain === undefined ? undefined : opts.domain.length === 1 ? opts.domain[0] : opts.domain;
          const r = verifyPresentation(bytes, {
            at,
            issuer,
            trust,
            challenge: opts.challenge,
            domain,
            requireProof: opts.requireProof,
            checkJudgeSignature: opts.judgeSignature,
          });
          const first = r.checks[0];
          if (first.id === 'json' && first.valid === false && first.why?.startsWith('not JSON'))
            throw new CliError(2, `${file} is not JSON: ${first.why}`, { code: 'invalid_json', path: file });
          cli
            .output()
            .result({ ...r, ...verdictFields(r) }, () =>
              [
                `presentation${r.holder ? ` of ${r.holder}` : ''}: ${r.credentials.length} credential(s)`,
                ...r.checks
                  .filter((c) => c.valid !== true)
                  .map((c) => `  ${mark(c.valid)}  ${c.id.padEnd(28)} ${c.subject ? `${c.subject}  ` : ''}${c.why ?? c.what}`),
                `${r.verified ? 'holds' : 'does NOT hold'}: ${r.checks.filter((c) => c.valid === true).length} checks held, ` +
                  `${failing(r.checks).length} failed, ${r.checks.filter((c) => c.valid === null).length} not checked`,
                ...(r.verified && !r.anchored ? [anchorLine(r)] : []),
              ].join('\n'),
            );
          return verdictExit(r);
        },
      ),
    );
}
