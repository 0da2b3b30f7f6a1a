// `akas serve`: the whole node on an embedded LevelDB store in a data folder, or on a
// PostgreSQL database that several `akas serve` processes share (--store postgres://...).
import type { Command } from 'commander';
import { action, type Cli } from '../program.js';
import { CliError, usageError } from '../errors.js';

interface ServeOptions {
  port?: string;
  host?: string;
  data?: string;
  store?: string;
  nodeSecretFile?: string;
  publicUrl?: string;
  trustProxy?: boolean;
  allowSameIp?: boolean;
  allowAnonymousPropose?: boolean;
  registrationCap?: string;
  rateLimit?: string;
  logLevel?: string;
  rotateIssuerKey?: boolean;
  rotateHmacKey?: boolean;
  check?: boolean;
}

export function serveCommands(program: Command, cli: Cli) {
  program
    .command('serve')
    .description('run a node: HTTP API on an embedded store in a data folder, or on a PostgreSQL database several processes share (--store)')
    .option('--port <n>', 'port to listen on (env AKAS_PORT; 0 picks a free one)')
    .option('--host <addr>', 'address to bind (env AKAS_HOST)')
    .option('--data <dir>', 'data folder of the embedded store (env AKAS_DATA; default ./.akas)')
    .option('--store <url>', 'a postgres:// URL: the database several processes share instead of a data folder (env AKAS_STORE)')
    .option('--node-secret-file <file>', 'with --store: file (mode 0600) holding the secret that seals the node keys in the database (env AKAS_NODE_SECRET_FILE, or the secret itself in AKAS_NODE_SECRET)')
    .option('--public-url <url>', 'origin used in absolute URLs (default: the Host the request came to)')
    .option('--trust-proxy', 'read the client IP from X-Forwarded-For (behind a reverse proxy)')
    .option('--allow-same-ip', 'let agents on one IP judge the same proposal (a single-operator local node)')
    .option('--allow-anonymous-propose', 'open the anonymous propose path (no deposit, 5 per IP per kind per day)')
    .option('--registration-cap <n>', 'registrations per IP per day (default 20)')
    .option('--rate-limit <burst:perSecond>', 'token bucket per Bearer, else per IP (env AKAS_RATE_LIMIT; default 120:2)')
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
        // A flag wins over the environment: --data alone ignores AKAS_STORE.
        const storeUrl = opts.store ?? (opts.data === undefined ? env.AKAS_STORE : undefined);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--port must be 0..65535, got ${opts.port}`);
        if (storeUrl !== undefined && !/^postgres(ql)?:\/\//i.test(storeUrl)) throw usageError('--store takes a postgres:// URL (the embedded store is --data DIR)');
        if (storeUrl !== undefined && opts.data !== undefined) throw usageError('--data and --store exclude each other: with --store the data, blobs and node keys live in the database');
        const cap = opts.registrationCap !== undefined ? Number(opts.registrationCap) : undefined;
        if (cap !== undefined && (!Number.isInteger(cap) || cap < 0)) throw usageError('--registration-cap must be a whole number');
        const logLevel = opts.logLevel ?? env.AKAS_LOG_LEVEL ?? 'info';
        if (!LOG_LEVELS.includes(logLevel)) throw usageError(`unknown --log-level ${logLevel}: use one of ${LOG_LEVELS.join(', ')}`);
        const rateLimitArg = opts.rateLimit ?? env.AKAS_RATE_LIMIT;
        let rateLimit: { burst: number; refillPerSecond: number } | undefined;
        if (rateLimitArg !== undefined) {
          const m = /^(\d+):(\d+(?:\.\d+)?)$/.exec(rateLimitArg);
          if (!m || Number(m[1]) < 1 || Number(m[2]) <= 0) throw usageError(`--rate-limit is BURST:PER_SECOND (e.g. 120:2), got ${rateLimitArg}`);
          rateLimit = { burst: Number(m[1]), refillPerSecond: Number(m[2]) };
        }
        const { startNode, checkNode, startError } = await import('../../src/http/server.js');
        const { readNodeSecret } = await import('../../src/http/store-admin.js');
        const refusal = (e: unknown): never => refuse(e, startError(e, { dataDir, store: storeUrl }));
        let where: { dataDir: string; store?: string; nodeSecret?: string } = { dataDir };
        try {
          if (storeUrl) where = { dataDir, store: storeUrl, nodeSecret: readNodeSecret(opts.nodeSecretFile ?? env.AKAS_NODE_SECRET_FILE, env.AKAS_NODE_SECRET) };
        } catch (e) {
          refusal(e);
        }
        if (opts.check) {
          const r = await checkNode(where).catch(refusal);
          const problems = [...r.log.problems, ...r.ledger.problems, ...r.proposals.problems, ...r.records.problems];
          cli
            .output()
            .note(
              `check: ${r.log.entries} log entries, ${r.log.checkpoints} checkpoints, ledger ${r.ledger.ok ? 'balanced' : 'NOT balanced'}, ${r.proposals.proposals} proposals, ${r.records.agents} agents, ${r.records.blobs.acknowledged} blobs${problems.length ? ':' : ': ok'}`,
            );
          if (!r.ok) throw new CliError(1, ['the data folder failed its check; not starting', ...problems.map((p) => `  ${p}`)].join('\n'), { code: 'check_failed', problems });
        }
        const node = await startNode({
          ...where,
          host,
          port,
          logLevel,
          rotate: { issuer: opts.rotateIssuerKey, hmac: opts.rotateHmacKey },
          config: {
            publicUrl: opts.publicUrl,
            trustProxy: Boolean(opts.trustProxy),
            sameIpCollusionCheck: !opts.allowSameIp,
            allowAnonymousPropose: Boolean(opts.allowAnonymousPropose),
            ...(cap !== undefined ? { registrationCapPerIp: cap } : {}),
            ...(rateLimit ? { rateLimit } : {}),
          },
        }).catch(refusal);
        const out = cli.output();
        out.result(
          { listening: node.url, ...(node.shared ? { store: node.dataDir } : { dataDir: node.dataDir }), issuer: node.issuerDid, signingKeyId: node.signingKeyId },
          () =>
            [
              `akas node listening on ${node.url}`,
              node.shared ? `  store        ${node.dataDir}` : `  data folder  ${node.dataDir}`,
              `  issuer       ${node.issuerDid}`,
              '  stop with Ctrl-C',
            ].join('\n'),
        );
        await node.closed;
      }),
    );
}

/** pino's levels: anything else is refused before anything starts. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Errors that refuse a start for a reason the operator must fix (node keys that disagree, a
 * schema behind or ahead, the folder in use, read-only or full, the port taken, no node to
 * check) become exit 2 with one line naming the cause and the fix, and a code naming them.
 */
function refuse(e: unknown, known: { code: string; message: string } | undefined): never {
  const name = (e as Error)?.name;
  if (name === 'NodeKeysError') throw new CliError(2, (e as Error).message, { code: 'node_keys', error: (e as Error).message });
  if (name === 'SchemaError') throw new CliError(2, (e as Error).message, { code: 'schema_version', error: (e as Error).message });
  if (known) throw new CliError(2, known.message, { code: known.code, error: known.message });
  throw e;
}
