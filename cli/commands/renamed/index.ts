// The spellings that changed in issue 48 (docs/CLI.md "Spellings that changed"), kept for one
// release: each works as before, hidden from --help and `akas completion`, and says once on
// stderr what replaced it (cli/kit/renamed.ts). Registered after every other group, onto the
// commands they built; removing a row here (and its line in docs/CLI.md) ends an old spelling.
import type { Command } from 'commander';
import { noticeBefore, noticesOnce, oldOption, renamedOption, type Say } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { showTraversal } from '../knowledge/index.js';
import { eventsCommand, showAttestation } from '../log/index.js';
import { showVerified } from '../show/index.js';

/** Options renamed on their own command: [command path, old flags, new flags as declared]. */
const RENAMED_OPTIONS: Array<[path: string, old: string, now: string]> = [
  ['register', '--from <source>', '--attribution <source>'],
  ['store copy', '--from <dir>', '--data <dir>'],
  ['store copy', '--to <url>', '--store <url>'],
  ['witness', '--key <file>', '--witness-key <file>'],
  ['serve', '--witness <NAME+KEYID+KEY@URL>', '--cosigner <NAME+KEYID+KEY@URL>'],
  ['serve', '--witnesses <file>', '--cosigners <file>'],
  ['verify judgments', '--agent <file...>', '--agent-file <file...>'],
  ['journal', '--node <url>', '--node-url <url>'],
  ['tool', '--challenge <id>', '--challenge-id <id>'],
  ['schemas', '--proposal <kind>', '--kind <kind>'],
];

/** The command at a path of names below the program, if the program has it (the single-file verifier keeps `verify` only). */
function commandAt(program: Command, path: string): Command | undefined {
  let at: Command | undefined = program;
  for (const name of path.split(' ')) at = at?.commands.find((c) => c.name() === name);
  return at;
}

export function renamedSpellings(program: Command, cli: Cli) {
  const say = noticesOnce(cli.io);
  oldCommands(program, cli, say);
  for (const [path, old, now] of RENAMED_OPTIONS) {
    const cmd = commandAt(program, path);
    if (cmd) renamedOption(cmd, say, { old, now, path: `akas ${path}` });
  }
  // `akas node-keys --trust [--agent TAG] [--judges-of ID]` is `akas trust pin`: node-keys runs it (cli/commands/discovery/index.ts).
  const nodeKeys = commandAt(program, 'node-keys');
  if (nodeKeys) {
    oldOption(nodeKeys, say, '--trust', ['akas node-keys --trust', 'akas trust pin']);
    oldOption(nodeKeys, say, '--agent <tag>', ['akas node-keys --agent', 'akas trust pin --agent'], true);
    oldOption(nodeKeys, say, '--judges-of <proposalId>', ['akas node-keys --judges-of', 'akas trust pin --judges-of']);
  }
}

/** Commands whose verb sat beside their noun, or that moved under one: each runs what replaced it. */
function oldCommands(program: Command, cli: Cli, say: Say) {
  const proposal = program
    .command('proposal', { hidden: true })
    .argument('<id>')
    .option('--no-verify')
    .action(action(cli, (id: string, opts: { verify: boolean }) => showVerified(cli, id, 'proposal', opts.verify)));
  noticeBefore(proposal, say, () => ['akas proposal <id>', 'akas show <id>']);
  const traversal = program
    .command('traversal', { hidden: true })
    .argument('<id>')
    .action(action(cli, (id: string) => showTraversal(cli, id)));
  noticeBefore(traversal, say, () => ['akas traversal <id>', 'akas show <id>']);
  const attestation = program
    .command('attestation', { hidden: true })
    .argument('<id>')
    .option('--format <format>')
    .option('-o, --output <file>')
    .option('--no-verify')
    .action(
      action(cli, (id: string, opts: { format?: string; output?: string; verify: boolean }) =>
        opts.format === undefined ? showVerified(cli, id, 'attestation', opts.verify) : showAttestation(cli, id, opts),
      ),
    );
  noticeBefore(attestation, say, (cmd) =>
    cmd.opts().format === undefined
      ? ['akas attestation <id>', 'akas show <id>']
      : ['akas attestation <id> --format tlog-proof', 'akas export <id> --format tlog-proof'],
  );
  noticeBefore(eventsCommand(program, cli, true), say, () => ['akas events', 'akas log events']);
}
