// akas verify node: a published node or brief checked offline against its evidence (the
// content judged, the manifest the node signed, the publication in the log).
import type { Command } from 'commander';
import { readIssuerKeysFile, readSource, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { anchoredOnOf, checkable, finish, issuerArg, trustArg } from './shared.js';

export function nodeCommand(verify: Command, cli: Cli) {
  verify
    .command('node')
    .summary('check a published node or brief against its evidence offline')
    .description(
      'check a published node or brief offline against its evidence: what is served is the content judged, the manifest signed by the node, ' +
        'the publication in the log (exit 0 holds, 1 does not, 2 unreadable)',
    )
    .argument('<file>', 'the node as `akas node PATH --json` prints it, or a brief as `akas brief ID --json` prints it (- for stdin)')
    .option('--trust <file>', 'the issuers and log keys you pin, in one file (akas trust pin > trust.json; PROTOCOL 8.6)')
    .option('--issuer <did>', "the node's issuer DID to pin (akas node-keys prints it; or the node's /healthz)")
    .option(
      '--issuer-keys <file>',
      "the node's key list (akas node-keys --json > keys.json; GET /api/node/keys), to follow the pinned issuer's signed rotations",
    )
    .option('--log-key <key>', "the node's log key to pin (C2SP verifier key); else the one the pinned --issuer endorses")
    .option('--verbose', 'list every check, not only those that failed or could not run')
    .action(
      action(cli, async (file: string, opts: { trust?: string; issuer?: string; issuerKeys?: string; logKey?: string; verbose?: boolean }) => {
        const pinned = await trustArg(opts.trust, { '--issuer': opts.issuer, '--issuer-keys': opts.issuerKeys, '--log-key': opts.logKey });
        const issuer = issuerArg(opts.issuer);
        if (opts.issuerKeys && !issuer) throw usageError('--issuer-keys needs --issuer DID: the key you trust, from which the signed rotations are followed');
        const { verifyNode } = await import('../../../verifier/index.js');
        // A read with full evidence (akas node|brief --json) staples its status lists: inflated here, bounded.
        const { inflateNode: inflate } = await import('./status-check.js');
        const text = readSource(file);
        const list = opts.issuerKeys ? readIssuerKeysFile(opts.issuerKeys) : undefined;
        const report = await checkable(file, () =>
          verifyNode(text, { issuer, issuerKeys: list as never, logKey: opts.logKey, trust: pinned?.issuers, logKeys: pinned?.logKeys, inflate }),
        );
        const { checks, ...rest } = report;
        return finish(cli, report, {
          anchoredOn: anchoredOnOf({ trust: opts.trust, issuer, issuerKeys: opts.issuerKeys, logKey: opts.logKey }),
          status: null,
          verbose: opts.verbose,
          extra: rest,
          head: [
            `${report.shape === 'brief' ? 'brief' : report.kind} ${report.path}` +
              (report.proposalId
                ? `, published by ${report.proposalId} (content ${report.contentSha256 ?? '?'}${
                    report.contentBinding === 'store' ? '; ' + "stored before content binding: bound by the node's store, not by the log" : ''
                  })`
                : ''),
          ],
        });
      }),
    );
}
