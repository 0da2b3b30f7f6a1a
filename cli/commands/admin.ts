// `akas admin revoke`: an operator withdraws judgment credentials (PROTOCOL 8.7). A running node
// is asked through its local admin channel (a Unix socket in its data folder, or in a private
// runtime folder when that path is too long for one: src/ops/admin-ask.ts); a stopped
// node's store, or a shared PostgreSQL database, is changed directly.
import type { Command } from 'commander';
import { CliError, usageError } from '../errors.js';
import { action, type Cli } from '../program.js';

const isPg = (s: string) => /^postgres(ql)?:\/\//i.test(s);

interface RevokeOptions {
  reason?: string;
  suspend?: boolean;
  unsuspend?: boolean;
  judge?: string;
  data?: string;
  store?: string;
  nodeSecretFile?: string;
}

export function adminCommands(program: Command, cli: Cli) {
  const admin = program.command('admin').description("an operator's changes to a node, through its local admin channel or directly on its store");

  admin
    .command('revoke')
    .description('revoke (or --suspend, --unsuspend) judgment credentials: a new version of the status list, recorded in the log')
    .argument('[ids...]', 'judgment ids (jdg_...), credential URLs as the node serves them (absolute or the path), or credential subject ids')
    .requiredOption('--reason <text>', 'why (kept with the list version, written to the log, shown on the credential)')
    .option('--suspend', 'suspend instead (reversible: --unsuspend)')
    .option('--unsuspend', 'lift a suspension')
    .option('--judge <tag>', 'every credential of this judge')
    .option('--data <dir>', "the node's data folder (env AKAS_DATA; default ./.akas)")
    .option('--store <url>', 'the postgres:// URL of a shared store (env AKAS_STORE)')
    .option(
      '--node-secret-file <file>',
      'file (mode 0600) with the secret that seals the node keys in the database (env AKAS_NODE_SECRET_FILE, or AKAS_NODE_SECRET)',
    )
    .action(
      action(cli, async (ids: string[], opts: RevokeOptions) => {
        if (opts.suspend && opts.unsuspend) throw usageError('--suspend and --unsuspend exclude each other');
        if (!ids.length && !opts.judge) throw usageError('name a credential (ID) or a judge (--judge TAG)');
        const request = {
          action: opts.suspend ? 'suspend' : opts.unsuspend ? 'unsuspend' : 'revoke',
          reason: opts.reason ?? '',
          ids,
          judge: opts.judge,
        } as const;
        const storeUrl = opts.store ?? (opts.data ? undefined : process.env.AKAS_STORE);
        if (storeUrl && !isPg(storeUrl)) throw usageError('--store takes a postgres:// URL');
        const dataDir = opts.data ?? process.env.AKAS_DATA ?? './.akas';
        // A running node answers on its channel; else this process opens the store itself.
        const { askAdminChannel } = await import('../../src/ops/admin-ask.js');
        let answer = storeUrl ? undefined : await askAdminChannel(dataDir, request);
        const via = answer ? 'the running node' : storeUrl ? 'the database' : 'the stopped node';
        if (!answer) {
          const ops = await import('../../src/ops/index.js');
          const { openNode } = await import('../../src/http/server.js');
          const nodeSecret = storeUrl ? ops.readNodeSecret(opts.nodeSecretFile ?? process.env.AKAS_NODE_SECRET_FILE, process.env.AKAS_NODE_SECRET) : undefined;
          const opened = await openNode(storeUrl ? { dataDir, store: storeUrl, nodeSecret } : { dataDir }, {}, true).catch((e: Error) => {
            throw new CliError(2, `cannot open the node's store: ${e.message}`, { code: 'unreachable', error: e.message });
          });
          try {
            answer = await ops.applyStatusChange(opened, request);
          } finally {
            opened.unfollow();
            await opened.store.close();
          }
        }
        if (!answer.ok) {
          const { code, message, errors } = answer.error;
          // An unknown id, a missing reason: the command could not run (exit 2), naming what.
          throw new CliError(2, message, { code, error: message, ...(errors ? { errors } : {}) });
        }
        const r = answer.result;
        cli.output().result({ ...r, via }, () => {
          const done = r.action === 'revoke' ? 'revoked' : r.action === 'suspend' ? 'suspended' : 'unsuspended';
          const flipped = r.credentials.filter((c) => c.changed);
          return [
            ...r.credentials.map((c) => `${c.changed ? done.padEnd(11) : 'already so'.padEnd(11)} ${c.judgmentId} (${r.purpose} index ${c.index})`),
            r.changed
              ? `${r.purpose} list version ${r.version} (${flipped.length} change(s), reason: ${r.reason}), recorded in the log; via ${via}`
              : `nothing changed: the ${r.purpose} list stays at version ${r.version}; via ${via}`,
          ].join('\n');
        });
      }),
    );
}
