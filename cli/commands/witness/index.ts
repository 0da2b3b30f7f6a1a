// `akas witness`: a C2SP tlog-witness anyone can run, for the logs it is given (PROTOCOL 9.8).
// It keeps the latest checkpoint it cosigned per log in its own data folder and cosigns a new
// one only when it extends that one.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError, collect, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';

interface WitnessCliOptions {
  data?: string;
  witnessKey?: string;
  name?: string;
  log: string[];
  logs?: string;
  port?: string;
  host?: string;
}

/** Log keys from a file: one verifier key a line, `#` comments and blank lines skipped. */
export function readKeyList(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CliError('unreadable', `Cannot read ${path}: ${(e as Error).message}`, { path });
  }
  return text
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
}

export function witnessCommands(program: Command, cli: Cli) {
  program
    .command('witness')
    .summary('run a C2SP tlog-witness that cosigns the logs it is given')
    .description('run a C2SP tlog-witness: cosign the checkpoints of the given logs, each only if it is consistent with every one cosigned before')
    .option('--data <dir>', 'data folder of the witness state (env AKAS_WITNESS_DATA; default ./.akas-witness)')
    .option('--witness-key <file>', 'the witness key file (mode 0600; made at the first start with --name; default DATA/witness-key)')
    .option('--name <name>', 'the witness name for a new key (a schema-less URL, e.g. witness.example.com/w1)')
    .option(
      '--log <vkey>',
      "a log to witness: its C2SP verifier key ORIGIN+KEYHASH+KEY (the node's GET /api/node/keys log.verifierKey); repeatable",
      collect,
      [],
    )
    .option('--logs <file>', 'log verifier keys from a file, one a line')
    .option('--port <n>', 'port to listen on (env AKAS_WITNESS_PORT; default 7380; 0 picks a free one)')
    .option('--host <addr>', 'address to bind (default 127.0.0.1)')
    .action(
      action(cli, async (opts: WitnessCliOptions) => {
        const env = process.env;
        const dataDir = resolve(opts.data ?? env.AKAS_WITNESS_DATA ?? './.akas-witness');
        const port = Number(opts.port ?? env.AKAS_WITNESS_PORT ?? 7380);
        const host = opts.host ?? '127.0.0.1';
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--port must be 0..65535, got ${opts.port}`);
        const logs = [...opts.log, ...(opts.logs ? readKeyList(opts.logs) : [])];
        if (logs.length === 0) throw usageError('give the logs to witness: --log ORIGIN+KEYHASH+KEY (repeatable) or --logs FILE');
        const { logKeysByOrigin, loadOrCreateWitnessKey, serveWitness, Witness } = await import('../../../src/witness/index.js');
        try {
          logKeysByOrigin(logs);
        } catch (e) {
          throw usageError((e as Error).message);
        }
        const { mkdirSync } = await import('node:fs');
        mkdirSync(dataDir, { recursive: true, mode: 0o700 });
        let key;
        try {
          key = loadOrCreateWitnessKey(resolve(opts.witnessKey ?? `${dataDir}/witness-key`), opts.name);
        } catch (e) {
          throw new CliError('witness_key', (e as Error).message, { error: (e as Error).message });
        }
        const { openStore } = await import('../../../src/store/index.js');
        const { systemClock } = await import('../../../src/core/index.js');
        const store = await openStore(dataDir);
        const witness = new Witness({ store, clock: systemClock, key, logs });
        const server = await serveWitness(witness, { host, port, onError: (e) => process.stderr.write(`witness: ${(e as Error).stack ?? e}\n`) });
        cli
          .output()
          .result({ listening: server.url, name: witness.name, verifierKey: witness.verifierKey, dataDir, logs: witness.origins, created: key.created }, () =>
            [
              `akas witness ${witness.name} listening on ${server.url}`,
              `  verifier key ${witness.verifierKey}`,
              `  for a node   --cosigner '${witness.verifierKey}@${server.url}'`,
              `  data folder  ${dataDir}`,
              ...witness.origins.map((o) => `  witnesses    ${o}`),
              '  stop with Ctrl-C',
            ].join('\n'),
          );
        await new Promise<void>((done) => {
          const stop = async () => {
            await server.close();
            await store.close();
            done();
          };
          process.once('SIGINT', () => void stop());
          process.once('SIGTERM', () => void stop());
        });
      }),
    );
}
