// akas export: the offline bundle of a proposal from a node (PROTOCOL 8.4), with its blobs and
// credentials when asked, for `akas verify bundle` and `akas verify credential` to check with
// no node (cli/commands/verify/).
import type { Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../errors.js';
import { action, type Cli } from '../program.js';
import type { Json } from '../json.js';

export function exportCommands(program: Command, cli: Cli) {
  program
    .command('export')
    .description('download the offline bundle of a proposal (its judgments, signatures, credentials, keys, content hashes)')
    .argument('<id>', 'proposal id')
    .option('-o, --output <file>', 'write the bundle here instead of stdout')
    .option('--blobs <dir>', 'also fetch the blobs it references that this node stores, into DIR/<sha256> (each hash checked)')
    .option('--credentials <dir>', 'also write each judgment credential to DIR/<judgmentId>.json (for akas verify credential DIR)')
    .action(
      action(cli, async (id: string, opts: { output?: string; blobs?: string; credentials?: string }) => {
        const bundle = await cli.client().get<Json>(`/api/knowledge/proposals/${encodeURIComponent(id)}/bundle`);
        const text = JSON.stringify(bundle, null, 2) + '\n';
        const out = cli.output();
        if (opts.credentials) {
          try {
            mkdirSync(opts.credentials, { recursive: true });
            for (const c of (bundle.credentials ?? []) as Json[]) {
              const name =
                String(c.credentialSubject?.id ?? '').replace(/^urn:akas:judgment:/, '') || `credential-${(bundle.credentials as Json[]).indexOf(c)}`;
              writeFileSync(join(opts.credentials, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`), JSON.stringify(c, null, 2) + '\n');
            }
          } catch (e) {
            throw new CliError(2, `Cannot write into ${opts.credentials}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
              code: 'unwritable',
              path: opts.credentials,
            });
          }
        }
        if (opts.blobs) {
          mkdirSync(opts.blobs, { recursive: true });
          const { getBlob } = await import('../cas-transfer.js');
          for (const ref of bundle.cas ?? []) {
            if (!ref.platformVerified) continue;
            await getBlob(cli, out, ref.sha256, join(opts.blobs, ref.sha256));
          }
        }
        if (opts.output) {
          try {
            writeFileSync(opts.output, text);
          } catch (e) {
            throw new CliError(2, `Cannot write ${opts.output}: ${(e as NodeJS.ErrnoException).code}`, { code: 'unwritable', path: opts.output });
          }
          out.note(`bundle of ${id} written to ${opts.output}`);
        } else cli.io.stdout.write(text);
      }),
    );
}
