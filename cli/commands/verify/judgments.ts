// akas verify judgments: every judge's Ed25519 signature (L2) of a proposal, and the content it
// signed, offline; with --agent, that each key was its judge's when it signed.
import type { Command } from 'commander';
import { CliError } from '../../errors.js';
import { readJsonFile } from '../../input.js';
import { action, type Cli } from '../../program.js';
import { anchorLine } from './shared.js';

export function judgmentsCommand(verify: Command, cli: Cli) {
  verify
    .command('judgments')
    .description(
      "check every judge's Ed25519 signature (L2) of a proposal, and the content it signed, offline (exit 0 all hold, 1 one does not, 2 " +
        "unreadable, 3 a judge's key not tied to it by --agent)",
    )
    .argument('<file>', 'the proposal as `akas proposal ID --json` prints it (- for stdin)')
    .option('--agent <file...>', "judges' public profiles (`akas agents TAG --json`): also check each key was that judge's when it signed")
    .action(
      action(cli, async (file: string, opts: { agent?: string[] }) => {
        const { NotCheckableError, parseAgentKeys, verifyProposalJudgments } = await import('../../../verifier/index.js');
        const out = cli.output();
        // Each input is read and recognised on its own, so a bad one is named in the error.
        const checkable = <T>(path: string, read: () => T): T => {
          try {
            return read();
          } catch (e) {
            if (e instanceof NotCheckableError) throw new CliError(2, e.message, { code: 'not_checkable', path });
            throw e;
          }
        };
        const profiles = (opts.agent ?? []).map((f) => checkable(f, () => parseAgentKeys(readJsonFile(f), f)));
        const report = checkable(file, () => verifyProposalJudgments(readJsonFile(file), profiles));
        const keyNote = { current: 'current key', prior: 'prior key, in its window', 'not-the-judges': 'NOT the judge key', unchecked: 'key owner unchecked' };
        // The content first: with no judgment yet, it is the one thing checked (and may be why exit is 1).
        const content = report.content;
        const contentLines = !content
          ? []
          : content.ok
            ? [`ok    content ${content.contentSha256 ?? ''} (hashed here) is the contentSha256 the proposal states`]
            : ['FAIL  content', ...content.problems.map((p) => `      ${p}`)];
        const verdict = !report.ok ? 'failed' : report.anchored ? 'verified' : 'unanchored';
        out.result({ ...report, verdict, verified: verdict === 'verified' }, () =>
          [
            ...contentLines,
            ...report.checks.map((c) =>
              [
                `${c.ok ? 'ok  ' : 'FAIL'}  ${c.judgmentId}  by ${c.agentTag}  (${keyNote[c.key]}; ${
                  c.signed === 'v2' ? 'signed the ' + 'content' : c.signed === 'v1' ? "v1: content bound by the node's word only" : 'unknown payload'
                })`,
                ...c.problems.map((p) => `      ${p}`),
              ].join('\n'),
            ),
            report.checked === 0
              ? `${report.proposalId} has no judgments to check${content && !content.ok ? '; its content does not hold (above)' : ''}`
              : `${report.checked - report.failed}/${report.checked} judgments of ${report.proposalId} hold` +
                (report.contentSha256 ? `, over content ${report.contentSha256} (hashed here)` : '') +
                (report.keysUnchecked ? `; ${report.keysUnchecked} key owner(s) unchecked (pass --agent PROFILE.json to tie keys to judges)` : ''),
            ...(verdict === 'unanchored' ? [anchorLine(report)] : []),
          ].join('\n'),
        );
        return { failed: 1, unanchored: 3, verified: 0 }[verdict];
      }),
    );
}
