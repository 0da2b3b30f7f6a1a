// akas verify log-proof: an attestation's inclusion proof and checkpoint checked offline, with
// the witnesses whose cosignatures count.
import type { Command } from 'commander';
import { CliError } from '../../errors.js';
import { readSource } from '../../input.js';
import { action, type Cli } from '../../program.js';
import { mark, witnessPolicyArg } from './shared.js';

const collect = (value: string, previous: string[]) => [...previous, value];

export function logProofCommand(verify: Command, cli: Cli) {
  verify
    .command('log-proof')
    .description(
      "check an attestation's inclusion proof and checkpoint offline: the JSON of `akas attestation ID --json`, or its C2SP tlog-proof (`--format tlog-proof`)",
    )
    .argument('<file>', 'the saved answer or .tlog-proof file (- for stdin)')
    .requiredOption('--log-key <key>', "the node's log key (C2SP verifier key string: akas node-keys prints it; GET /api/node/keys has it too)")
    .option(
      '--witness <key>',
      'a witness whose cosignature counts (its cosignature/v1 verifier key NAME+KEYID+KEY, as `akas witness` prints it); repeatable',
      collect,
      [],
    )
    .option('--witness-quorum <k>', 'how many of the given witnesses must have cosigned the checkpoint (default: all)')
    .action(
      action(cli, async (file: string, opts: { logKey: string; witness: string[]; witnessQuorum?: string }) => {
        const witnesses = witnessPolicyArg(opts.witness, opts.witnessQuorum);
        const { verifyLogProof, verifyTlogProof } = await import('../../../verifier/index.js');
        const text = readSource(file);
        // A C2SP tlog-proof starts with its header line (PROTOCOL 16.5); anything else is the JSON answer.
        let r: ReturnType<typeof verifyLogProof>;
        if (text.startsWith('c2sp.org/tlog-proof@')) r = verifyTlogProof(text, opts.logKey, witnesses);
        else {
          let doc: unknown;
          try {
            doc = JSON.parse(text);
          } catch {
            throw new CliError(2, `${file === '-' ? 'stdin' : file} is neither JSON nor a C2SP tlog-proof`, { code: 'invalid_json', path: file });
          }
          r = verifyLogProof(doc, opts.logKey, witnesses);
        }
        cli.output().result(r, () => r.checks.map((c) => `${mark(c.valid)}  ${c.id.padEnd(16)} ${c.valid === true ? c.what : (c.why ?? c.what)}`).join('\n'));
        return r.verified ? 0 : 1;
      }),
    );
}
