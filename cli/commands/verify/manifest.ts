// akas verify manifest: asks the node whether a manifest is its own and unchanged. NOT
// offline: the signature is an HMAC only the node can check (the single-file verifier drops it).
import type { Command } from 'commander';
import { type Json, readJsonFile } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

export function manifestCommand(verify: Command, cli: Cli) {
  verify
    .command('manifest')
    .summary('ask the node whether a manifest is its own and unchanged (not offline)')
    .description(
      'ask the node whether a brief, artifact or eval manifest is its own and unchanged (an HMAC only the node can check: NOT offline); ' +
        'exit 0 valid, 1 invalid, 2 could not ask',
    )
    .argument('<file>', 'a manifest, or a node, brief or eval-proposal answer that carries one, as --json prints it (- for stdin)')
    .action(
      action(cli, async (file: string) => {
        const doc = readJsonFile(file);
        const { checkManifest, subject } = await import('./manifest-check.js');
        const r = await checkManifest(cli.client(), doc);
        cli.output().result(r, () => {
          const node = r.node;
          return [
            `${r.valid ? 'VALID  ' : 'INVALID'}  ${subject(r.kind, (doc as Json).manifest ?? doc)}, key ${node.signingKeyId ?? '-'}`,
            `  signature  ${node.valid ? 'holds' : `does not hold: ${node.reason}`}`,
            `             checked by the node at ${r.signatureCheckedBy}: an HMAC-SHA256 under the node's own key, which`,
            '             only the node holds; this says the node vouches for the manifest, it is not an offline proof',
            ...r.local.map((c) => `  ${c.check.padEnd(9)}  ${c.ok ? 'holds' : 'does not hold'}: ${c.detail} (checked here, offline)`),
          ].join('\n');
        });
        return r.valid ? 0 : 1;
      }),
    );
}
