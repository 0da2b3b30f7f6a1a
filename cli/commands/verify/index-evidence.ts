// akas verify index: the evidence `akas monitor --index` saves of a wrong index root (PROTOCOL
// 9.10), checked offline under the log key alone: exit 0 when it proves the node's index left an
// entry out of a key or filed one under another.
import type { Command } from 'commander';
import { readSource } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { anchoredOnOf, checkable, finish, trustArg } from './shared.js';

export function indexEvidenceCommand(verify: Command, cli: Cli) {
  verify
    .command('index')
    .summary('check the evidence of a wrong index root that akas monitor --index saved')
    .description(
      'check the evidence of a wrong index root offline (a file akas monitor --index saved): exit 0 when it proves a root the log holds ' +
        'is not the one its entries give',
    )
    .argument('<file>', 'the evidence file (- for stdin)')
    .option('--trust <file>', 'the log keys you pin, in one file (akas trust pin > trust.json; PROTOCOL 8.6)')
    .option('--log-key <key>', "the node's log key to pin (C2SP verifier key string: akas node-keys prints it); without it or --trust, exit 3")
    .action(
      action(cli, async (file: string, opts: { trust?: string; logKey?: string }) => {
        const pinned = await trustArg(opts.trust, { '--log-key': opts.logKey });
        const { verifyIndexEvidence } = await import('../../../verifier/index-evidence.js');
        const { readJsonInput } = await import('../../../verifier/report.js');
        const text = readSource(file);
        const keys = pinned?.logKeys ?? (opts.logKey ? [opts.logKey] : []);
        const r = await checkable(file, () => verifyIndexEvidence(readJsonInput(text, 'index evidence in strict JSON'), keys));
        const { checks, ...rest } = r;
        return finish(cli, r, {
          anchoredOn: anchoredOnOf({ trust: opts.trust, logKey: opts.logKey }),
          status: null,
          verbose: true,
          head: [r.verified ? `WRONG INDEX PROVEN: logged ${r.logged}, the entries give ${r.rebuilt}` : 'not proven'],
          extra: rest,
        });
      }),
    );
}
