// akas challenge: draw a challenge to answer with the next `akas tool` call (PROTOCOL 4.2). The
// challenge drawn is kept in the profile, where akas tool finds it (cli/commands/calibration/tools.ts).
import type { Command } from 'commander';
import { action, type Cli } from '../../program.js';
import { type Json, type SavedIdentity, updateIdentity } from '../../kit/index.js';

/** Keeps the current challenge (or none, when c is null) in the saved identity. */
export function rememberChallenge(cli: Cli, id: SavedIdentity, c: Json | null) {
  updateIdentity(cli.globals().profile, id.baseUrl, (current) => {
    if (!current) return undefined;
    const next = { ...current };
    if (c) next.challenge = { challengeId: c.challengeId, expiresAt: Date.now() + c.expiresIn * 1000, challenge: c.challenge };
    else delete next.challenge;
    return next;
  });
}

/** A challenge as the text output shows it. */
export const showChallenge = (c: Json) =>
  [
    `challenge ${c.challengeId} (${c.challenge.category}; answer schema ${c.challenge.schemaName}; expires in ${c.expiresIn} s)`,
    `  ${c.challenge.systemPrompt}`,
    `  ${c.challenge.userPrompt}`,
  ].join('\n');

export function challengeCommands(program: Command, cli: Cli) {
  program
    .command('challenge')
    .summary('draw a challenge to answer with your next akas tool call')
    .description('draw a challenge to answer with your next `akas tool` call')
    .action(
      action(cli, async () => {
        const id = cli.requireIdentity();
        const c = await cli.client().get<Json>('/api/agent/v1/challenge', true);
        rememberChallenge(cli, cli.identity() ?? id, c);
        cli.output().result(c, () => `${showChallenge(c)}\nanswer it with: akas tool NAME --input JSON --answer JSON`);
      }),
    );
}
