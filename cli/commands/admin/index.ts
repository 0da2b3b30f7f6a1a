// `akas admin revoke`: an operator withdraws judgment credentials (PROTOCOL 8.7). A running node
// is asked through its local admin channel (a Unix socket in its data folder, or in a private
// runtime folder when that path is too long for one: src/ops/admin-ask.ts); a stopped
// node's store, or a shared PostgreSQL database, is changed directly. Which node: the one --data
// or --store names, else the one local node that runs (each records itself when it starts:
// src/ops/node-registry.ts), else the default folder; every answer names the one acted on.
import type { Command } from 'commander';
import { CliError, nodeMeant, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

interface RevokeOptions {
  reason?: string;
  suspend?: boolean;
  unsuspend?: boolean;
  judge?: string;
  data?: string;
  store?: string;
  nodeSecretFile?: string;
}

/** The node acted on, as every answer names it (--json's `node`). */
interface Acted {
  running: boolean;
  dataDir?: string;
  store?: string;
  url?: string;
  pid?: number;
  /** How it was chosen: named (--data, --store or their env), the one running, or the default folder. */
  chosen: 'named' | 'running' | 'default';
}

/** One line naming the node acted on and whether it ran: what every answer ends with. */
function describe(a: Acted): string {
  if (a.store) return `the database ${a.store} (${a.running ? 'nodes run on it here: they serve the change at once' : 'no node recorded running on it here'})`;
  if (a.running) {
    const one = a.chosen === 'running' ? ' (the one node running here)' : '';
    return `the running node at ${a.url ?? '(its address unrecorded)'}, data folder ${a.dataDir}${one}`;
  }
  return `the stopped node's folder ${a.dataDir} (not running${a.chosen === 'default' ? '; no node runs here, so the default folder' : ''})`;
}

/** Why no store opened, in one sentence naming the folder (or database) and what to do. */
function notOpened(e: Error, code: string, a: Acted, registry: string): string {
  if (!a.dataDir) return `cannot open the node's store: ${e.message}`;
  if (code === 'no_node')
    return a.chosen === 'default'
      ? `no node is running here (none is recorded in ${registry}), and the default folder ${a.dataDir} holds no stopped node either: ` +
          'start one (akas serve), or give --data DIR'
      : `no node is running on ${a.dataDir}, and it holds no stopped node either: is --data right?`;
  if (code === 'data_in_use') return `${e.message} (a node runs there, but its admin channel did not answer)`;
  return `cannot open the node's store in ${a.dataDir} (not running): ${e.message}`;
}

export function adminCommands(program: Command, cli: Cli) {
  const admin = program
    .command('admin')
    .summary("an operator's changes to a node, running or stopped")
    .description("an operator's changes to a node, through its local admin channel or directly on its store");

  admin
    .command('revoke')
    .summary('revoke, suspend or lift judgment credentials (a new status list version)')
    .description('revoke (or --suspend, --unsuspend) judgment credentials: a new version of the status list, recorded in the log')
    .argument('[ids...]', 'judgment ids (jdg_...), credential URLs as the node serves them (absolute or the path), or credential subject ids')
    .requiredOption('--reason <text>', 'why (kept with the list version, written to the log, shown on the credential)')
    .option('--suspend', 'suspend instead (reversible: --unsuspend)')
    .option('--unsuspend', 'lift a suspension')
    .option('--judge <tag>', 'every credential of this judge')
    .option('--data <dir>', "the node's data folder (env AKAS_DATA; default: the one local node running, else ./.akas)")
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
        const ask = await import('../../../src/ops/admin-ask.js');
        // The node meant: named by a flag or its env, else the one that runs here (its record).
        const meant = await nodeMeant(opts, process.env, ask);
        const storeUrl = meant.location.kind === 'store' ? meant.location.store : undefined;
        let acted: Acted;
        let socket: string | undefined;
        if (meant.location.kind === 'store') acted = { running: false, chosen: 'named' };
        else {
          const node = 'node' in meant ? meant.node : undefined;
          socket = node?.socket;
          acted = { running: false, dataDir: meant.location.dataDir, ...(node ? { url: node.url, pid: node.pid } : {}), chosen: meant.chosen };
        }
        // A running node answers on its channel; else this process opens the store itself.
        let answer = acted.dataDir ? await ask.askAdminChannel(acted.dataDir, request, process.env, socket) : undefined;
        if (answer) acted.running = true;
        const via = answer ? 'the running node' : storeUrl ? 'the database' : 'the stopped node';
        if (!answer) {
          const ops = await import('../../../src/ops/index.js');
          const { openNode } = await import('../../../src/node/index.js');
          const nodeSecret = meant.location.kind === 'store' ? ops.readNodeSecret(meant.location.secretFile, meant.location.secret) : undefined;
          const dataDir = meant.location.dataDir;
          const opened = await openNode(storeUrl ? { dataDir, store: storeUrl, nodeSecret } : { dataDir }, {}, true).catch((e: Error) => {
            const code = e.name === 'NoNodeError' ? 'no_node' : e.name === 'StoreInUseError' ? 'data_in_use' : 'unreachable';
            throw new CliError(code, notOpened(e, code, acted, ask.nodeRegistryFolder()), { error: e.message, node: acted });
          });
          if (storeUrl) {
            // The nodes on the database read the list from it on each request: they serve the change at once.
            const bare = (u: string) => u.replace(/:[^@/]*@/, '@');
            const onIt = (await ask.liveNodes().catch(() => [])).filter((n) => n.store && bare(n.store) === bare(opened.location));
            acted = { ...acted, store: opened.location, running: onIt.length > 0, ...(onIt.length === 1 ? { url: onIt[0].url, pid: onIt[0].pid } : {}) };
          }
          try {
            answer = await ops.applyStatusChange(opened, request);
          } finally {
            opened.unfollow();
            await opened.store.close();
          }
        }
        if (!answer.ok) {
          const { code, status, message, errors } = answer.error;
          // An unknown id, a missing reason: the command could not run (exit 2), naming what and
          // where; the node's code and status pass through as a refusal over HTTP does (docs/CLI.md "--json").
          throw CliError.fromNode(2, `${message.replace(/\.?$/, '.')} Asked ${describe(acted)}.`, {
            code,
            status,
            error: message,
            node: acted,
            ...(errors ? { errors } : {}),
          });
        }
        const r = answer.result;
        cli.output().result({ ...r, via, node: acted }, () => {
          const done = r.action === 'revoke' ? 'revoked' : r.action === 'suspend' ? 'suspended' : 'unsuspended';
          const flipped = r.credentials.filter((c) => c.changed);
          return [
            ...r.credentials.map((c) => `${c.changed ? done.padEnd(11) : 'already so'.padEnd(11)} ${c.judgmentId} (${r.purpose} index ${c.index})`),
            r.changed
              ? `${r.purpose} list version ${r.version} (${flipped.length} change(s), reason: ${r.reason}), recorded in the log; via ${describe(acted)}`
              : `nothing changed: the ${r.purpose} list stays at version ${r.version}; via ${describe(acted)}`,
          ].join('\n');
        });
      }),
    );
}
