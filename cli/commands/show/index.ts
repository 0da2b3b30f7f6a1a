// akas show ID: what the node minted an id for, read by that id (docs/CLI.md, the grammar's rule
// 2): a proposal (prop_, cprop_, ...), an attestation with its inclusion proof (att_), a
// decision-graph traversal the node kept (trv_). The id's prefix says which; each is shown by
// the room it belongs to. The tree is read by path (akas node), a brief by its id (akas brief),
// an agent by its tag (akas agents).
import type { Command } from 'commander';
import { usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
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
    .action(
      action(cli, async (id: string) => {
        const show = shownBy(id);
        if (!show)
          throw usageError(
            `not a proposal, attestation or traversal id: ${id} (a tree path is read with akas node PATH, a brief with akas brief ID, ` +
              'an agent with akas agents TAG)',
          );
        await show(cli, id);
      }),
    );
}
