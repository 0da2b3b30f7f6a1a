// akas verify fork: the evidence `akas monitor` keeps of a log that signed two histories
// (cli/commands/monitor/evidence.ts), checked offline with the log key alone.
import type { Command } from 'commander';
import { readJsonFile } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { anchoredOnOf, finish } from './shared.js';

export function forkCommand(verify: Command, cli: Cli) {
  verify
    .command('fork')
    .summary('check the evidence of a fork that akas monitor saved')
    .description('check the evidence of a fork offline (a file akas monitor saved): exit 0 when it proves the log key signed two histories')
    .argument('<file>', 'the evidence file (- for stdin)')
    .requiredOption('--log-key <key>', "the node's log key (C2SP verifier key string: akas node-keys prints it)")
    .action(
      action(cli, async (file: string, opts: { logKey: string }) => {
        const { checkForkEvidence } = await import('../monitor/evidence.js');
        const r = checkForkEvidence(readJsonFile(file), opts.logKey);
        // Verified: the evidence proves, under the pinned log key, that the log signed two histories.
        const check = {
          id: 'fork.proven' as const,
          layer: 'L3' as const,
          what: 'the log key signed two histories (two roots for one size, or a newer tree that does not extend an older one)',
          valid: r.proven,
          why: r.why,
        };
        return finish(
          cli,
          { verified: r.proven, anchored: true, unanchored: [], checks: [check] },
          {
            anchoredOn: anchoredOnOf({ logKey: opts.logKey }),
            status: null,
            verbose: true,
            extra: { proven: r.proven, why: r.why },
            head: [r.proven ? 'FORK PROVEN' : 'not proven'],
          },
        );
      }),
    );
}
