// akas verify credential: W3C VC 2.0 credentials checked offline and strictly, many at once on
// every core (cli/verify-pool.ts), with a progress bar on a terminal.
import type { Command } from 'commander';
import { usageError } from '../../errors.js';
import { readIssuerKeysFile } from '../../input.js';
import type { Output } from '../../output.js';
import { action, type Cli } from '../../program.js';
import type { CredentialReport } from '../../../verifier/index.js';
import { anchorLine, failing, issuerArg, mark, readStdin, timeArg, trustArg } from './shared.js';

async function progressBar(out: Output, total: number) {
  if (!out.interactive || total < 50) return undefined;
  let view: typeof import('../../views/progress.js');
  try {
    view = await import('../../views/progress.js');
  } catch {
    return undefined; // the single-file verifier (dist/akas-verify.mjs) has no terminal views: no bar
  }
  return view.startProgress(out.io.stdout as NodeJS.WriteStream, 'verifying', total, view.items);
}

export function credentialCommand(verify: Command, cli: Cli) {
  verify
    .command('credential')
    .description('check W3C VC 2.0 credentials (eddsa-jcs-2022) offline, strictly: files, folders, - for stdin, or JSON lines')
    .argument('<inputs...>', 'credential files, folders of .json/.jsonl files, or - (stdin)')
    .option('--at <time>', 'check the validity window at this instant (ISO 8601 or epoch ms; default now)')
    .option('--trust <file>', 'the issuers you pin, each in its window, in one file (akas node-keys --trust > trust.json; PROTOCOL 8.6)')
    .option('--issuer <did>', 'the issuer the credentials must have (with --issuer-keys: the pinned issuer DID)')
    .option(
      '--issuer-keys <file>',
      "the node's key list (akas node-keys --json > keys.json; GET /api/node/keys): accept the issuer's prior keys, each in its window",
    )
    .option('--judge-signature', "also check the judge's own signature (L2) a judgment credential carries")
    .action(
      action(cli, async (paths: string[], opts: { trust?: string; at?: string; issuer?: string; issuerKeys?: string; judgeSignature?: boolean }) => {
        const pinned = await trustArg(opts.trust, { '--issuer': opts.issuer, '--issuer-keys': opts.issuerKeys });
        const at = timeArg(opts.at);
        const issuer = issuerArg(opts.issuer);
        if (opts.issuerKeys && !issuer) throw usageError('--issuer-keys needs --issuer DID: the key you trust, from which the signed rotations are followed');
        const { verifyMany } = await import('../../verify-pool.js');
        const { readCredentialInputs } = await import('../../credential-inputs.js');
        const out = cli.output();
        // The key list as GET /api/node/keys answers it ({issuer: {keys, rotations}}), or its issuer part alone.
        const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
        const { inputs, unreadable } = readCredentialInputs(paths, readStdin);
        const bar = await progressBar(out, inputs.length);
        const results: Array<CredentialReport & { source: string }> = [];
        // Many credentials are checked on every core (cli/verify-pool.ts), in input order.
        const reports = await verifyMany(
          inputs.map((i) => i.bytes),
          { at, issuer, issuerKeys: list as never, trustIssuers: pinned?.file.issuers, checkJudgeSignature: opts.judgeSignature },
          (done) => bar?.update(done),
        );
        for (const [i, input] of inputs.entries()) {
          const r = reports[i];
          // Text that is not JSON at all is not a credential that failed: the check could not run on it.
          const first = r.checks[0];
          if (first.id === 'json' && first.valid === false && first.why?.startsWith('not JSON')) unreadable.push({ source: input.source, reason: first.why });
          else results.push({ source: input.source, ...r });
        }
        bar?.finish();
        const failed = results.filter((r) => !r.verified).length;
        // Unanchored: held, but with no issuer pinned (a trust file that pins none included).
        const unanchored = [...new Set(results.filter((r) => r.verified && !r.anchored).flatMap((r) => r.unanchored))];
        const anchored = unanchored.length === 0;
        const verdict = failed > 0 ? 'failed' : unreadable.length > 0 || results.length === 0 ? 'unreadable' : anchored ? 'verified' : 'unanchored';
        const summary = {
          verdict,
          verified: verdict === 'verified',
          anchored,
          unanchored,
          total: results.length,
          held: results.length - failed,
          failed,
          unreadable,
          issuerPinned: anchored,
          results,
        };
        out.result(summary, () => {
          const many = results.length > 20;
          const lines = results
            .filter((r) => !many || !r.verified)
            .flatMap((r) => [
              `${mark(r.verified)}  ${r.source}  ${r.subject ?? ''}  ${r.issuer ? `issuer ${r.issuer}` : ''}`.trimEnd(),
              ...failing(r.checks).map((c) => `      ${c.layer} ${c.id}: ${c.why ?? c.what}`),
            ]);
          for (const u of unreadable) lines.push(`--    ${u.source}: could not be read (${u.reason})`);
          lines.push(
            `${summary.held}/${results.length} credential(s) hold${failed ? `, ${failed} do(es) not` : ''}${unreadable.length ? `; ${unreadable.length} input(s) unreadable` : ''}`,
          );
          if (verdict === 'unanchored') lines.push(anchorLine({ unanchored: ['issuer.pinned'] }));
          return lines.join('\n');
        });
        return { failed: 1, unreadable: 2, unanchored: 3, verified: 0 }[verdict];
      }),
    );
}
