// `akas serve`: the whole node on an embedded LevelDB store in a data folder.
import type { Command } from 'commander';
import { action, type Cli } from '../program.js';
import { CliError, usageError } from '../errors.js';

interface ServeOptions {
  port?: string;
  host?: string;
  data?: string;
  publicUrl?: string;
  trustProxy?: boolean;
  allowSameIp?: boolean;
  allowAnonymousPropose?: boolean;
  registrationCap?: string;
  logLevel?: string;
  rotateIssuerKey?: boolean;
  rotateHmacKey?: boolean;
  check?: boolean;
}

export function serveCommands(program: Command, cli: Cli) {
  program
    .command('serve')
    .description('run a node: HTTP API on an embedded store in a data folder')
    .option('--port <n>', 'port to listen on (env AKAS_PORT; 0 picks a free one)')
    .option('--host <addr>', 'address to bind (env AKAS_HOST)')
    .option('--data <dir>', 'data folder (env AKAS_DATA; default ./.akas)')
    .option('--public-url <url>', 'origin used in absolute URLs (default: the Host the request came to)')
    .option('--trust-proxy', 'read the client IP from X-Forwarded-For (behind a reverse proxy)')
    .option('--allow-same-ip', 'let agents on one IP judge the same proposal (a single-operator local node)')
    .option('--allow-anonymous-propose', 'open the anonymous propose path (no deposit, 5 per IP per kind per day)')
    .option('--registration-cap <n>', 'registrations per IP per day (default 20)')
    .option('--log-level <level>', 'pino level: info, warn, error, silent (env AKAS_LOG_LEVEL)')
    .option('--rotate-issuer-key', 'start with a new credential issuer key (prior keys stay published, so old credentials verify)')
    .option('--check', "audit the data folder first (the log's chain, tree and checkpoints, the ledger, the proposals); refuse to start if it fails")
    .option('--rotate-hmac-key', 'start with a new HMAC key (prior keys stay, so old manifests and claim secrets verify)')
    .action(
      action(cli, async (opts: ServeOptions) => {
        const env = process.env;
        const port = Number(opts.port ?? env.AKAS_PORT ?? 7373);
        const host = opts.host ?? env.AKAS_HOST ?? '127.0.0.1';
        const dataDir = opts.data ?? env.AKAS_DATA ?? './.akas';
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--port must be 0..65535, got ${opts.port}`);
        const cap = opts.registrationCap !== undefined ? Number(opts.registrationCap) : undefined;
        if (cap !== undefined && (!Number.isInteger(cap) || cap < 0)) throw usageError('--registration-cap must be a whole number');
        const { startNode, checkNode } = await import('../../src/http/server.js');
        if (opts.check) {
          const r = await checkNode(dataDir);
          const problems = [...r.log.problems, ...r.ledger.problems, ...r.proposals.problems];
          cli.output().note(`check: ${r.log.entries} log entries, ${r.log.checkpoints} checkpoints, ledger ${r.ledger.ok ? 'balanced' : 'NOT balanced'}, ${r.proposals.proposals} proposals${problems.length ? ':' : ': ok'}`);
          if (!r.ok) throw new CliError(1, ['the data folder failed its check; not starting', ...problems.map((p) => `  ${p}`)].join('\n'), { code: 'check_failed', problems });
        }
        const node = await startNode({
          dataDir,
          host,
          port,
          logLevel: opts.logLevel ?? env.AKAS_LOG_LEVEL ?? 'info',
          rotate: { issuer: opts.rotateIssuerKey, hmac: opts.rotateHmacKey },
          config: {
            publicUrl: opts.publicUrl,
            trustProxy: Boolean(opts.trustProxy),
            sameIpCollusionCheck: !opts.allowSameIp,
            allowAnonymousPropose: Boolean(opts.allowAnonymousPropose),
            ...(cap !== undefined ? { registrationCapPerIp: cap } : {}),
          },
        });
        const out = cli.output();
        out.result({ listening: node.url, dataDir: node.dataDir, issuer: node.issuerDid, signingKeyId: node.signingKeyId }, () =>
          [`akas node listening on ${node.url}`, `  data folder  ${node.dataDir}`, `  issuer       ${node.issuerDid}`, '  stop with Ctrl-C'].join('\n'),
        );
        await node.closed;
      }),
    );
}
