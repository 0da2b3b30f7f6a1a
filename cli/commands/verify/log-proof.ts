// akas verify log-proof: an attestation's inclusion proof and checkpoint checked offline, with
// the witnesses whose cosignatures count.
import type { Command } from 'commander';
import { collect, readSource } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { anchoredOnOf, checkable, finish, trustArg, witnessPolicyArg } from './shared.js';

export function logProofCommand(verify: Command, cli: Cli) {
  verify
    .command('log-proof')
    .summary("check an attestation's inclusion proof and checkpoint offline")
    .description(
      "check an attestation's inclusion proof and checkpoint offline: the JSON of `akas show ID --json`, or its C2SP tlog-proof " +
        '(`akas export ID --format tlog-proof`)',
    )
    .argument('<file>', 'the saved answer or .tlog-proof file (- for stdin)')
    .option('--trust <file>', 'the log keys and witness quorum you pin, in one file (akas trust pin > trust.json; PROTOCOL 8.6)')
    .option(
      '--log-key <key>',
      "the node's log key to pin (C2SP verifier key string: akas node-keys prints it; GET /api/node/keys has it too); without it or --trust, exit 3",
    )
    .option(
      '--witness <key>',
      'a witness whose cosignature counts (its cosignature/v1 verifier key NAME+KEYID+KEY, as `akas witness` prints it); repeatable',
      collect,
      [],
    )
    .option('--witness-quorum <k>', 'how many of the given witnesses must have cosigned the checkpoint (default: all)')
    .option('--verbose', 'list every check, not only those that failed or could not run')
    .action(
      action(cli, async (file: string, opts: { trust?: string; logKey?: string; witness: string[]; witnessQuorum?: string; verbose?: boolean }) => {
        const pinned = await trustArg(opts.trust, { '--log-key': opts.logKey, '--witness': opts.witness, '--witness-quorum': opts.witnessQuorum });
        const witnesses = pinned ? pinned.witnesses : witnessPolicyArg(opts.witness, opts.witnessQuorum);
        const logKey = pinned ? pinned.logKeys : opts.logKey;
        const { verifyLogProof, verifyTlogProof } = await import('../../../verifier/index.js');
        const text = readSource(file);
        // A C2SP tlog-proof starts with its header line (PROTOCOL 16.5); anything else is the JSON answer.
        const { readJsonInput } = await import('../../../verifier/report.js');
        const r = await checkable(file, () =>
          text.startsWith('c2sp.org/tlog-proof@')
            ? verifyTlogProof(text, logKey, witnesses)
            : verifyLogProof(readJsonInput(text, 'a C2SP tlog-proof nor a log proof in strict JSON'), logKey, witnesses),
        );
        const { checks, ...rest } = r;
        return finish(cli, r, { anchoredOn: anchoredOnOf({ trust: opts.trust, logKey: opts.logKey }), status: null, verbose: opts.verbose, extra: rest });
      }),
    );
}
