// akas tool: call a priced tool while answering the current challenge (PROTOCOL 4.3); the next
// challenge the node answers with becomes the current one.
import type { Command } from 'commander';
import { type Json, jsonArg, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { rememberChallenge, showChallenge } from './challenges.js';

/** The priced tools (PROTOCOL 4.4). */
export const TOOLS = ['extract', 'regex-test', 'json-validate', 'word-count', 'url-info'];

export function toolCommands(program: Command, cli: Cli) {
  program
    .command('tool')
    .summary('call a priced tool while answering the current challenge')
    .description(`call a priced tool (${TOOLS.join(', ')}) while answering the current challenge`)
    .argument('<name>', 'tool name')
    .requiredOption('--input <json>', 'toolInput as JSON, @file or -')
    .requiredOption('--answer <json>', 'your answer to the challenge as JSON, @file or - (a plain string becomes {"answer": ...})')
    .option('--challenge-id <id>', 'the challenge answered (default: the one `akas challenge` drew, or the last tool call)')
    .action(
      action(cli, async (name: string, opts: { input: string; answer: string; challengeId?: string }) => {
        if (!TOOLS.includes(name)) throw usageError(`unknown tool ${name}: one of ${TOOLS.join(', ')}`);
        const id = cli.requireIdentity();
        const challengeId = opts.challengeId ?? id.challenge?.challengeId;
        if (!challengeId) throw usageError('No current challenge: run `akas challenge` first (or pass --challenge-id ID).');
        const toolInput = jsonArg(opts.input, '--input');
        let answer: unknown;
        try {
          answer = jsonArg(opts.answer, '--answer');
        } catch {
          answer = opts.answer; // a bare word is a plain-text answer
        }
        if (typeof answer === 'string') answer = { answer };
        const r = await cli.client().post<Json>('/api/agent/v1/use-tool', { challengeId, answer, tool: name, toolInput }, { auth: true });
        rememberChallenge(cli, cli.identity() ?? id, r.nextChallenge);
        cli
          .output()
          .result(r, () =>
            [
              JSON.stringify(r.result, null, 2),
              `charged ${r.economy.charged}, balance ${r.economy.balance}; reputation ${r.reputation.score} (${r.reputation.status})`,
              r.nextChallenge ? `next ${showChallenge(r.nextChallenge)}` : 'no further challenge for now',
            ].join('\n'),
          );
      }),
    );
}
