// The entry of the single-file verifier (`npm run build:verifier`: dist/akas-verify.mjs, and
// the Node single executable built from the same source). It is the akas program itself, cut
// down to its offline `verify` commands before it parses: the same flags, output, --json and
// exit codes as `akas verify`, and every verify command that exists is in it, since it is
// built from the same command table. Commands that need more than Node's built-ins (a module
// reaching fastify, ink, undici...) are replaced at build time by a stub that says so
// (scripts/build-verifier.mjs); those that ask a node are dropped here.
import type { Command } from 'commander';
import { commandGroups } from '../index.js';
import { quietOnEpipe } from '../../kit/index.js';
import { onlyCommand, run, type Cli } from '../../program.js';
import { WORKER_ARG } from './worker.js';

/** verify subcommands that ask a node: not offline, so not in the single file. */
const ASKS_A_NODE = new Set(['manifest']);

/** Keeps the `verify` commands of the program, and names it akas-verify. */
export function offlineOnly(program: Command) {
  program
    .name('akas-verify')
    .description(
      'The offline checks of akas in one file: credentials, presentations, judge signatures, bundles, log proofs and content hashes, with ' +
        'no install, no node and no network.',
    );
  const commands = program.commands as Command[];
  for (let i = commands.length - 1; i >= 0; i--) if (commands[i].name() !== 'verify') commands.splice(i, 1);
  // The node-facing global options mean nothing here; they stay accepted (scripts share flags) but unlisted.
  for (const o of program.options) if (['--base-url', '--profile', '--show-secrets'].includes(o.long ?? '')) o.hidden = true;
  const verify = commands.find((c) => c.name() === 'verify');
  if (verify) {
    verify.description('check credentials, presentations, judge signatures, bundles, log proofs and content hashes offline (no node, no network)');
    const subs = verify.commands as Command[];
    for (let i = subs.length - 1; i >= 0; i--) if (ASKS_A_NODE.has(subs[i].name())) subs.splice(i, 1);
  }
}

/**
 * The program as the command groups see it: `program.command(name)` builds `verify` only, so the
 * groups run as in akas but only `verify` and its subcommands become commander objects (building
 * the whole command table was most of the single file's start).
 */
export const verifyOnly = (program: Command): Command => onlyCommand(program, 'verify');

/** `akas-verify credential X` reads as `akas-verify verify credential X`. */
export function withVerify(argv: string[], subcommands: string[]): string[] {
  const first = argv.findIndex((a) => !a.startsWith('-'));
  return first >= 0 && subcommands.includes(argv[first]) ? [...argv.slice(0, first), 'verify', ...argv.slice(first)] : argv;
}

// A worker of `verify credential` (cli/commands/verify/pool.ts) loads this same file, with WORKER_ARG
// appended to its argv (cheaper to test for than loading node:worker_threads at every start).
if (!process.argv.includes(WORKER_ARG)) {
  quietOnEpipe();
  const subs: string[] = [];
  const argv = process.argv.slice(2);
  void run(
    argv,
    { stdout: process.stdout, stderr: process.stderr },
    commandGroups.map((group) => (program: Command, cli: Cli) => group(verifyOnly(program), cli)),
    process.env,
    (program) => {
      offlineOnly(program);
      const verify = program.commands.find((c) => c.name() === 'verify');
      subs.push(...(verify?.commands.map((c) => c.name()) ?? []));
      const rewritten = withVerify(argv, subs);
      argv.splice(0, argv.length, ...rewritten);
    },
  ).then((c) => (process.exitCode = c));
} else {
  void import('./pool.js');
}
