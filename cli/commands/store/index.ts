// `akas store`: the PostgreSQL store's administration. `migrate` runs the schema migrations
// alone (akas serve runs them at start too); `copy` moves a stopped LevelDB node's data
// folder (every space, the blobs, the node keys) into an empty database and checks the copy.
import type { Command } from 'commander';
import { action, type Cli } from '../../program.js';
import { CliError, isPostgresUrl, nodeLocation, usageError } from '../../kit/index.js';

export function storeCommands(program: Command, cli: Cli) {
  const store = program
    .command('store')
    .summary('the PostgreSQL store several akas serve processes share')
    .description('the PostgreSQL store several `akas serve` processes share: migrate it, copy a data folder into it');

  store
    .command('migrate')
    .summary('create or migrate the PostgreSQL schema (forward only)')
    .description('create or migrate the database schema (forward only) and report the versions applied; akas serve does it at start too')
    .option('--store <url>', 'postgres:// URL (env AKAS_STORE; ?schema=NAME picks a PostgreSQL schema)')
    .action(
      action(cli, async (opts: { store?: string }) => {
        const where = nodeLocation(opts);
        if (where.kind !== 'store') throw usageError('--store takes a postgres:// URL (or set AKAS_STORE)');
        const url = where.store;
        const { migrateDatabase } = await import('../../../src/ops/index.js');
        const out = cli.output();
        let last = '';
        const r = await migrateDatabase(url, (what) => {
          // Progress: each step once, and the backfill's count every 10,000 nodes.
          const step = what.replace(/: \d+$/, '');
          const n = Number(/: (\d+)$/.exec(what)?.[1] ?? 0);
          if (step !== last || n % 10_000 === 0) out.note(what);
          last = step;
        }).catch((e: Error) => {
          throw new CliError(e.name === 'SchemaError' ? 'schema_version' : 'unreachable', `cannot migrate: ${e.message}`, { error: e.message });
        });
        out.result(r, () =>
          [
            r.applied.length
              ? [`${r.location}: schema version ${r.from} -> ${r.to}`, ...r.applied.map((m) => `  applied ${m.version}: ${m.description}`)].join('\n')
              : `${r.location}: schema at version ${r.to}, nothing to apply`,
            ...r.indexes.map((name) => `  built index ${name} (concurrently)`),
            ...(r.search.indexed ? [`  search index: ${r.search.indexed} published nodes indexed`] : []),
          ].join('\n'),
        );
      }),
    );

  store
    .command('copy')
    .summary("copy a stopped node's data folder into an empty PostgreSQL store")
    .description('copy a stopped LevelDB node (data, blobs, node keys) into an empty PostgreSQL database, then check counts, the ledger and the log there')
    // Not requiredOption: the old --from and --to (cli/commands/renamed/index.ts) fill them after commander's check.
    .option('--data <dir>', 'the data folder of the LevelDB node (stop it first; required)')
    .option('--store <url>', 'postgres:// URL of an empty database, or a new ?schema=NAME (required)')
    .option(
      '--node-secret-file <file>',
      'file (mode 0600) holding the secret that seals the node keys in the database (env AKAS_NODE_SECRET_FILE, or AKAS_NODE_SECRET)',
    )
    .action(
      action(cli, async (opts: { data?: string; store?: string; nodeSecretFile?: string }) => {
        if (opts.data === undefined || opts.store === undefined) throw usageError('give the data folder and the database: --data DIR --store postgres://...');
        if (!isPostgresUrl(opts.store)) throw usageError('--store takes a postgres:// URL');
        if (isPostgresUrl(opts.data)) throw usageError('--data is the data folder of a LevelDB node');
        const { copyStore, readNodeSecret } = await import('../../../src/ops/index.js');
        const out = cli.output();
        let r;
        try {
          const nodeSecret = readNodeSecret(opts.nodeSecretFile ?? process.env.AKAS_NODE_SECRET_FILE, process.env.AKAS_NODE_SECRET);
          let last = '';
          r = await copyStore({
            from: opts.data,
            to: opts.store,
            nodeSecret,
            onProgress: (what) => {
              if (what !== last) out.note(`copying ${what}...`);
              last = what;
            },
          });
        } catch (e) {
          throw new CliError((e as Error).name === 'NodeKeysError' ? 'node_keys' : 'copy_failed', `cannot copy: ${(e as Error).message}`, {
            error: (e as Error).message,
          });
        }
        const report = r;
        out.result(report, () =>
          [
            `copied ${report.from} -> ${report.to} (issuer ${report.issuer})`,
            ...report.spaces.map((s) => `  ${s.space.padEnd(24)} ${String(s.source).padStart(9)} -> ${String(s.target).padStart(9)}`),
            `  ${'blobs'.padEnd(24)} ${String(report.blobs.source).padStart(9)} -> ${String(report.blobs.target).padStart(9)} (${report.blobs.bytes} bytes)`,
            `search index: ${report.search.indexed} published nodes indexed`,
            `ledger: ${report.ledger.ok ? 'balanced' : 'NOT balanced'}; log: ${report.log.entries} entries, ${report.log.checkpoints} ` +
              `checkpoints, ${report.log.ok ? 'ok' : 'PROBLEMS'}`,
            ...report.problems.map((p) => `  ${p}`),
            report.ok ? 'the copy checks out: start akas serve --store with the same URL and secret' : 'the copy does NOT check out',
          ].join('\n'),
        );
        return report.ok ? 0 : 1;
      }),
    );
}
