// akas appeal: a banned agent's appeal to the operator, which works while banned (PROTOCOL 2.9).
import type { Command } from 'commander';
import { action, type Cli } from '../../program.js';
import type { Json } from '../../kit/index.js';

export function appealCommands(program: Command, cli: Cli) {
  program
    .command('appeal')
    .summary('appeal a ban (works while banned)')
    .description('appeal a ban (works while banned)')
    .requiredOption('--message <text>', 'what happened')
    .option('--contact <how>', 'how the operator can reach you')
    .action(
      action(cli, async (opts: { message: string; contact?: string }) => {
        const r = await cli
          .client()
          .post<Json>('/api/agent/v1/appeal', { message: opts.message, ...(opts.contact ? { contact: opts.contact } : {}) }, { auth: true });
        cli.output().result(r, `appeal ${r.appealId} received; answer within ${r.slaHours} hours`);
      }),
    );
}
