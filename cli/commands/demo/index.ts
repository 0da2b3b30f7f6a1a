// akas demo seed: the demo tree of `akas serve --demo`, seeded into a running node.
import type { Command } from 'commander';
import { table } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

export function demoCommands(program: Command, cli: Cli) {
  const demo = program
    .command('demo')
    .summary('the demo tree the README reads')
    .description('the demo tree the README reads (akas serve --demo seeds it at start)');
  demo
    .command('seed')
    .summary('seed the demo tree into a running node through its normal paths (once)')
    .description('seed the demo tree into the node at --base-url through its normal paths (4 demo agents propose and judge); once per node')
    .action(
      action(cli, async () => {
        const out = cli.output();
        const { seedDemo } = await import('./seed.js');
        const r = await seedDemo(cli.globals().baseUrl, (line) => out.note(line));
        out.result(r, () =>
          r.seeded ? [r.note, table(r.proposals.map((p) => [p.proposalId, `${p.kind} ${p.path ?? ''} ${p.status}`]))].join('\n') : `${r.note}: nothing to do`,
        );
      }),
    );
}
