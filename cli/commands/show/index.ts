// akas show ID: what the node minted an id for, read by that id (docs/CLI.md, the grammar's rule
// 2): a proposal (prop_, cprop_, ...), an attestation with its inclusion proof (att_), a
// decision-graph traversal the node kept (trv_). The id's prefix says which; each is shown by
// the room it belongs to. The tree is read by path (akas node), a brief by its id (akas brief),
// an agent by its tag (akas agents).
// A proposal and an attestation are verified here before they are shown (issue 50, 4): read
// with ?evidence=full (the proposal's bundle; the log key's endorsement and the issuer keys) and
// checked under the profile's pin at a checkpoint proven one history with the one kept
// (cli/commands/read/cli.ts); the verdict is printed under them, is their --json's
// `verification`, and is the exit code. A traversal is the node's computation over published
// nodes, not something it published: shown as it is (each leaf is verified when read: akas node).
import type { Command } from 'commander';
import { type Json, terminalSafe, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { SKIPPED_BY_FLAG } from '../read/skipped.js';
import { showTraversal } from '../knowledge/index.js';
import { showAttestation } from '../log/index.js';
import { showProposal } from '../proposals/index.js';

/** Which thing an id names, by its prefix (the grammars the node mints ids in). */
export function shownBy(id: string): ((cli: Cli, id: string) => Promise<unknown>) | undefined {
  if (/^[a-z]*prop_[0-9a-f]{16}$/.test(id)) return showProposal;
  if (/^att_[0-9a-f]{16}$/.test(id)) return showAttestation;
  if (/^trv_[0-9a-f]{16}$/.test(id)) return showTraversal;
  return undefined;
}

export function showCommands(program: Command, cli: Cli) {
  program
    .command('show')
    .summary('show a proposal, attestation or traversal by its id')
    .description(
      'show what the node minted an id for: a proposal (status, payload, judgments), an attestation (with its inclusion proof and the ' +
        'signed checkpoint: save it with --json for akas verify log-proof), or a decision-graph traversal the node kept',
    )
    .argument('<id>', 'a proposal id (prop_, cprop_, gprop_, aprop_, eprop_, sprop_, tprop_), att_ or trv_, then 16 hex')
    .option('--no-verify', "do not check the proposal or attestation on this machine (it is printed as the node's word, and says so)")
    .action(
      action(cli, async (id: string, opts: { verify: boolean }) => {
        const show = shownBy(id);
        if (!show)
          throw usageError(
            `not a proposal, attestation or traversal id: ${id} (a tree path is read with akas node PATH, a brief with akas brief ID, ` +
              'an agent with akas agents TAG)',
          );
        if (show === showTraversal) return void (await show(cli, id));
        return showVerified(cli, id, show === showProposal ? 'proposal' : 'attestation', opts.verify);
      }),
    );
}

/** A proposal or an attestation read with its evidence, verified (unless --no-verify), shown with its verdict; answers the verdict's exit code. */
export async function showVerified(cli: Cli, id: string, what: 'proposal' | 'attestation', verify: boolean): Promise<number> {
  const url = what === 'proposal' ? `/api/knowledge/proposals/${id}` : `/api/attestations/${id}`;
  const out = cli.output();
  const read = await cli.client().get<Json>(verify ? `${url}?evidence=full` : url);
  const shown = async (answer: Json) => (what === 'proposal' ? showProposal(cli, id, answer) : showAttestation(cli, id, {}, answer));
  if (!verify) {
    out.note(SKIPPED_BY_FLAG.line);
    await shown({ ...read, verification: SKIPPED_BY_FLAG });
    return 0;
  }
  const { verifyForCli, exitOfVerification, verificationText } = await import('../read/cli.js');
  const verification = await verifyForCli(cli, read);
  await shown({ ...read, verification });
  if (!out.json) out.io.stdout.write(`${terminalSafe(verificationText(verification).replace(/^\n/, ''))}\n`);
  return exitOfVerification(verification);
}
