// akas journal: what this profile signed (cli/commands/journal/journal.ts), as `akas monitor` reads it: one row per
// sending, in its last state (pending until the node answered, then accepted or refused).
import type { Command } from 'commander';
import { action, type Cli } from '../../program.js';

export function journalCommands(program: Command, cli: Cli) {
  program
    .command('journal')
    .summary('what this profile signed and attested, and what the node answered')
    .description(
      'what this profile signed (judgments, proofs of possession) and attested, and what the node answered, ' +
        'from the journal akas monitor checks the log against',
    )
    .option('--node-url <url>', 'only what went to the node at this base URL (default: every node)')
    .action(
      action(cli, async (opts: { nodeUrl?: string }) => {
        const { journalSendings, readJournal } = await import('./journal.js');
        const { entries, unreadable, path } = readJournal(cli.globals().profile);
        const node = opts.nodeUrl?.replace(/\/+$/, '');
        const shown = journalSendings(node ? entries.filter((e) => e.node === node) : entries);
        // A proof of possession is never settled: its row says nothing of the node's answer.
        const state = (e: (typeof shown)[number]) =>
          e.kind === 'possession' ? '-' : e.state === 'refused' ? `refused (${e.code ?? e.status})` : (e.state ?? 'pending');
        cli
          .output()
          .result({ path, entries: shown, unreadable }, () =>
            [
              shown.length === 0
                ? `nothing signed yet (${path})`
                : shown
                    .map((e) =>
                      [
                        new Date(e.at).toISOString(),
                        e.kind.padEnd(11),
                        e.subject,
                        e.agent ?? '-',
                        `${e.payloadSha256.slice(0, 16)}…`,
                        state(e),
                        ...(e.judgmentId ? [e.judgmentId] : []),
                        e.node,
                      ].join('  '),
                    )
                    .join('\n'),
              ...(unreadable ? [`${unreadable} line(s) of ${path} are not journal entries (a torn last line after a crash, or an edit)`] : []),
            ].join('\n'),
          );
      }),
    );
}
