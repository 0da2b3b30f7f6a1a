// akas quota: the agent's token bucket, today's propose counters per kind and its
// content-store upload quota (PROTOCOL 2.8).
import type { Command } from 'commander';
import { action, type Cli } from '../../program.js';
import type { Json } from '../../kit/index.js';

const mib = (bytes: number) => `${Math.round((bytes / 1048576) * 10) / 10} MiB`;

export function quotaCommands(program: Command, cli: Cli) {
  program
    .command('quota')
    .summary('your token bucket, propose counters and upload quota')
    .description("your token bucket, today's propose counters per kind and your content-store upload quota")
    .action(
      action(cli, async () => {
        const q = await cli.client().get<Json>('/api/agent/v1/quota', true);
        cli
          .output()
          .result(q, () =>
            [
              `tier ${q.tier}: ${q.proposeQuota.capPerKind} proposals per kind per day; bucket ${q.rateLimit.remaining}/${q.rateLimit.bucketSize}`,
              ...Object.entries(q.proposeQuota.byKind as Json).map(([k, v]) => `  ${k.padEnd(16)} key ${v.usedByKey}  ip ${v.usedByIp}  left ${v.remaining}`),
              ...(q.casQuota
                ? [`content store: ${mib(q.casQuota.used)} of ${mib(q.casQuota.cap)} uploaded today (${q.casQuota.scope}), ${mib(q.casQuota.remaining)} left`]
                : []),
            ].join('\n'),
          );
      }),
    );
}
