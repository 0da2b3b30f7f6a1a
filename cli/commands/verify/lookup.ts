// akas verify lookup: a saved lookup in the verifiable index (`akas lookup KEY --json`, or GET
// /api/index/{key}) checked offline (PROTOCOL 9.10): the root entry under a checkpoint the
// pinned log key signs, the map proof, the entries shown.
import type { Command } from 'commander';
import { readSource } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { anchoredOnOf, checkable, finish, trustArg } from './shared.js';

/** The line that says what a verified lookup proves: the key's entries, complete as of a log size. */
export function lookupLine(r: { key?: string; found?: boolean; indices?: number[]; size?: number; rootEntry?: string }): string {
  const n = r.indices?.length ?? 0;
  const shown = n === 0 ? 'no entry' : `${n} ${n === 1 ? 'entry' : 'entries'} (${r.indices!.slice(0, 12).join(', ')}${n > 12 ? ', ...' : ''})`;
  return `${r.key}: ${shown}, complete as of log size ${r.size} (root ${r.rootEntry})`;
}

export function lookupCommand(verify: Command, cli: Cli) {
  verify
    .command('lookup')
    .summary('check a lookup in the verifiable index offline')
    .description('check a lookup in the verifiable index offline (`akas lookup KEY --json`): every entry about the key, proven complete (PROTOCOL 9.10)')
    .argument('<file>', 'the saved answer (- for stdin)')
    .option('--trust <file>', 'the log keys and witness quorum you pin, in one file (akas trust pin > trust.json; PROTOCOL 8.6)')
    .option('--log-key <key>', "the node's log key to pin (C2SP verifier key string: akas node-keys prints it); without it or --trust, exit 3")
    .option('--verbose', 'list every check, not only those that failed or could not run')
    .action(
      action(cli, async (file: string, opts: { trust?: string; logKey?: string; verbose?: boolean }) => {
        const pinned = await trustArg(opts.trust, { '--log-key': opts.logKey });
        const { verifyLookup } = await import('../../../verifier/lookup.js');
        const { readJsonInput } = await import('../../../verifier/report.js');
        const text = readSource(file);
        const r = await checkable(file, () =>
          verifyLookup(readJsonInput(text, 'a lookup answer in strict JSON'), pinned ? pinned.logKeys : opts.logKey, pinned?.witnesses, pinned?.issuers),
        );
        const { checks, ...rest } = r;
        return finish(cli, r, {
          anchoredOn: anchoredOnOf({ trust: opts.trust, logKey: opts.logKey }),
          status: null,
          verbose: opts.verbose,
          head: r.verified ? [lookupLine(r)] : [],
          extra: rest,
        });
      }),
    );
}
