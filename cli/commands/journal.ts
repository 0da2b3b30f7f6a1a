// akas journal: what this profile signed (cli/journal.ts), as `akas monitor` reads it.
import type { Command } from 'commander';
import { action, type Cli } from '../program.js';

export function journalCommands(program: Command, cli: Cli) {
  program
    .command('journal')
    .description('what this profile signed (judgments, proofs of possession) and attested, from the journal akas monitor checks the log against')
    .option('--node <url>', 'only what went to this node (default: every node)')
    .action(
      action(cli, async (opts: { node?: string }) => {
        const { readJournal } = await import('../journal.js');
        const { entries, unreadable, path } = readJournal(cli.globals().profile);
        const node = opts.node?.replace(/\/+$/, '');
        const shown = node ? entries.filter((e) => e.node === node) : entries;
        cli
          .output()
          .result({ path, entries: shown, unreadable }, () =>
            [
              shown.length === 0
                ? `nothing signed yet (${path})`
                : shown
                    .map((e) =>
                      [new Date(e.at).toISOString(), e.kind.padEnd(11), e.subject, e.agent ?? '-', `${e.payloadSha256.slice(0, 16)}…`, e.node].join('  '),
                    )
                    .join('\n'),
              ...(unreadable ? [`${unreadable} line(s) of ${path} are not journal entries (a torn last line after a crash, or an edit)`] : []),
            ].join('\n'),
          );
      }),
    );
}
