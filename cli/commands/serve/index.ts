// `akas serve`: the whole node on an embedded LevelDB store in a data folder, or on a
// PostgreSQL database that several `akas serve` processes share (--store postgres://...).
import { isIP } from 'node:net';
import type { Command } from 'commander';
import { action, type Cli } from '../../program.js';
import { CliError, usageError } from '../../kit/errors.js';
import { readKeyList } from '../witness/index.js';
import { listenUrls } from './listen-addresses.js';
import { collect } from '../../kit/options.js';

interface ServeOptions {
  port?: string;
  host?: string;
  data?: string;
  store?: string;
  nodeSecretFile?: string;
  publicUrl?: string;
  trustProxy?: boolean | string;
  allowSameIp?: boolean;
  allowAnonymousPropose?: boolean;
  registrationCap?: string;
  rateLimit?: string;
  casQuota?: string;
  traversalTtl?: string;
  calibration?: string;
  allowDemoCalibration?: boolean;
  logLevel?: string;
  logFormat?: string;
  rotateIssuerKey?: boolean;
  rotateHmacKey?: boolean;
  check?: boolean;
  witness: string[];
  witnesses?: string;
  logOrigin?: string;
  witnessLog: string[];
  witnessKey?: string;
  witnessName?: string;
  demo?: boolean;
}

export function serveCommands(program: Command, cli: Cli) {
  program
    .command('serve')
    .description('run a node: HTTP API on an embedded store in a data folder, or on a PostgreSQL database several processes share (--store)')
    .option('--port <n>', 'port to listen on (env AKAS_PORT; 0 picks a free one)')
    .option('--host <addr>', 'address to bind (env AKAS_HOST)')
    .option('--data <dir>', 'data folder of the embedded store (env AKAS_DATA; default ./.akas)')
    .option('--store <url>', 'a postgres:// URL: the database several processes share instead of a data folder (env AKAS_STORE)')
    .option(
      '--node-secret-file <file>',
      'with --store: file (mode 0600) holding the secret that seals the node keys in the database (env AKAS_NODE_SECRET_FILE, or the secret ' +
        'itself in AKAS_NODE_SECRET)',
    )
    .option(
      '--public-url <url>',
      'the origin clients reach the node at, named in its documents and absolute URLs (env AKAS_PUBLIC_URL; default: the address it listens ' +
        'on; required with --trust-proxy)',
    )
    .option(
      '--trust-proxy [hops|addresses]',
      "read the client IP from X-Forwarded-For behind reverse proxies: how many proxy hops (alone: 1), or the proxies' addresses and CIDRs, " +
        'comma-separated (env AKAS_TRUST_PROXY)',
    )
    .option('--allow-same-ip', 'let agents on one IP judge the same proposal (a single-operator local node)')
    .option('--allow-anonymous-propose', 'open the anonymous propose path (no deposit, 5 per IP per kind per day)')
    .option('--registration-cap <n>', 'registrations per IP per day (default 20)')
    .option('--rate-limit <burst:perSecond>', 'token bucket per Bearer, else per IP (env AKAS_RATE_LIMIT; default 120:2)')
    .option(
      '--cas-quota <MiB>',
      'content-store bytes a day per client IP for anonymous uploads; calibrated agents get 2 to 20 times it by tier (env AKAS_CAS_QUOTA; default 100)',
    )
    .option('--traversal-ttl <hours>', 'how long decision-graph traversals are kept for GET (env AKAS_TRAVERSAL_TTL; default 24)')
    .option(
      '--calibration <dir>',
      'the private calibration set (pools and challenge bank) made by `akas calibration init DIR` (env AKAS_CALIBRATION; default: the demo ' +
        'set, public answers)',
    )
    .option(
      '--allow-demo-calibration',
      'serve a node others can reach (a non-loopback address, behind --trust-proxy, or a --public-url that is not loopback) with the demo ' +
        'calibration set all the same (its answers ship in the package)',
    )
    .option('--log-level <level>', 'pino level: info, warn, error, silent (env AKAS_LOG_LEVEL)')
    .option(
      '--log-format <format>',
      'json (one JSON line each, the default when stderr is not a terminal) or pretty (the default on a terminal) (env AKAS_LOG_FORMAT)',
    )
    .option('--rotate-issuer-key', 'start with a new credential issuer key (prior keys stay published, so old credentials verify)')
    .option('--check', "audit the data folder first (the log's chain, tree and checkpoints, the ledger, the proposals); refuse to start if it fails")
    .option('--rotate-hmac-key', 'start with a new HMAC key (prior keys stay, so old manifests and claim secrets verify)')
    .option(
      '--witness <NAME+KEYID+KEY@URL>',
      'a witness to cosign every checkpoint (C2SP tlog-witness): its verifier key and URL, as `akas witness` prints them; repeatable',
      collect,
      [],
    )
    .option('--witnesses <file>', 'witnesses from a file, one NAME+KEYID+KEY@URL a line (# comments)')
    .option(
      '--witness-log <key>',
      'be a witness too (at /witness, C2SP tlog-witness) for the log of this verifier key ORIGIN+KEYHASH+KEY; repeatable: two nodes can witness each other',
      collect,
      [],
    )
    .option('--witness-key <file>', 'with --witness-log: the witness key file (default DATA/witness-key; made at the first start)')
    .option('--witness-name <name>', 'with --witness-log: the name of a new witness key (default <log origin>/witness)')
    .option(
      '--log-origin <origin>',
      "the log's origin, at the first start only (C2SP recommends the log's URL without scheme, e.g. example.com/akas; default akas/<issuer fingerprint>)",
    )
    .option(
      '--demo',
      "seed a small demo tree through the normal paths once listening (demo agents propose and judge; the README's examples read it); kept " +
        'in the data folder, seeded once',
    )
    .action(
      action(cli, async (opts: ServeOptions) => {
        const env = process.env;
        const port = Number(opts.port ?? env.AKAS_PORT ?? 7373);
        const host = opts.host ?? env.AKAS_HOST ?? '127.0.0.1';
        const dataDir = opts.data ?? env.AKAS_DATA ?? './.akas';
        // A flag wins over the environment: --data alone ignores AKAS_STORE.
        const storeUrl = opts.store ?? (opts.data === undefined ? env.AKAS_STORE : undefined);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--port must be 0..65535, got ${opts.port}`);
        if (storeUrl !== undefined && !/^postgres(ql)?:\/\//i.test(storeUrl))
          throw usageError('--store takes a postgres:// URL (the embedded store is --data DIR)');
        if (storeUrl !== undefined && opts.data !== undefined)
          throw usageError('--data and --store exclude each other: with --store the data, blobs and node keys live in the database');
        const cap = opts.registrationCap !== undefined ? Number(opts.registrationCap) : undefined;
        if (cap !== undefined && (!Number.isInteger(cap) || cap < 0)) throw usageError('--registration-cap must be a whole number');
        const logLevel = opts.logLevel ?? env.AKAS_LOG_LEVEL ?? 'info';
        if (!LOG_LEVELS.includes(logLevel)) throw usageError(`unknown --log-level ${logLevel}: use one of ${LOG_LEVELS.join(', ')}`);
        // A person at a terminal reads lines; anything else (a pipe, a file, a log collector) gets JSON.
        const logFormat = opts.logFormat ?? env.AKAS_LOG_FORMAT ?? (process.stderr.isTTY ? 'pretty' : 'json');
        if (logFormat !== 'json' && logFormat !== 'pretty') throw usageError(`--log-format is json or pretty, got ${logFormat}`);
        const rateLimitArg = opts.rateLimit ?? env.AKAS_RATE_LIMIT;
        let rateLimit: { burst: number; refillPerSecond: number } | undefined;
        if (rateLimitArg !== undefined) {
          const m = /^(\d+):(\d+(?:\.\d+)?)$/.exec(rateLimitArg);
          if (!m || Number(m[1]) < 1 || Number(m[2]) <= 0) throw usageError(`--rate-limit is BURST:PER_SECOND (e.g. 120:2), got ${rateLimitArg}`);
          rateLimit = { burst: Number(m[1]), refillPerSecond: Number(m[2]) };
        }
        const trustProxy = parseTrustProxy(opts.trustProxy ?? env.AKAS_TRUST_PROXY);
        const publicUrlArg = opts.publicUrl ?? env.AKAS_PUBLIC_URL;
        const publicUrl = publicUrlArg === undefined ? undefined : parsePublicUrl(publicUrlArg);
        // Behind a proxy the listen address is not where clients are, and no request header may
        // say where they are (X-Forwarded-Host is the client's to write, and a cache in front
        // keeps what it writes): the operator names the origin.
        if (trustProxy !== false && !publicUrl) {
          throw usageError(
            `${opts.trustProxy === undefined ? 'AKAS_TRUST_PROXY (--trust-proxy)' : '--trust-proxy'} needs --public-url URL, the origin ` +
              `clients reach the node at through the proxy (e.g. --public-url https://akas.example.org): the node names it in its documents ` +
              `and links, and never takes it from a request header such as X-Forwarded-Host`,
          );
        }
        const casQuotaArg = opts.casQuota ?? env.AKAS_CAS_QUOTA;
        const casQuotaMib = casQuotaArg === undefined ? undefined : Number(casQuotaArg);
        if (casQuotaMib !== undefined && !(Number.isFinite(casQuotaMib) && casQuotaMib > 0))
          throw usageError(`--cas-quota is a number of MiB above 0, got ${casQuotaArg}`);
        const ttlArg = opts.traversalTtl ?? env.AKAS_TRAVERSAL_TTL;
        const ttlHours = ttlArg === undefined ? undefined : Number(ttlArg);
        if (ttlHours !== undefined && !(Number.isFinite(ttlHours) && ttlHours > 0))
          throw usageError(`--traversal-ttl is a number of hours above 0, got ${ttlArg}`);
        if (opts.logOrigin !== undefined && !/^[^\s+]+$/u.test(opts.logOrigin))
          throw usageError(`--log-origin is non-empty text with no space and no '+' (e.g. example.com/akas), got ${JSON.stringify(opts.logOrigin)}`);
        const witnessSpecs = [...opts.witness, ...(opts.witnesses ? readKeyList(opts.witnesses) : [])];
        const { parseWitnessSpec, startNode, checkNode, sameIpPolicy, startError } = await import('../../../src/http/server.js');
        let witnesses;
        try {
          witnesses = witnessSpecs.map(parseWitnessSpec);
        } catch (e) {
          throw usageError(`--witness: ${(e as Error).message}`);
        }
        if (opts.witnessLog.length) {
          const { logKeysByOrigin } = await import('../../../src/witness/index.js');
          try {
            logKeysByOrigin(opts.witnessLog);
          } catch (e) {
            throw usageError(`--witness-log: ${(e as Error).message}`);
          }
          if (storeUrl && !opts.witnessKey) throw usageError('with --store, --witness-log needs --witness-key FILE (there is no data folder to keep it in)');
        }
        const refusal = (e: unknown): never => refuse(e, startError(e, { dataDir, store: storeUrl }));
        const sameIp = sameIpPolicy({ host, trustProxy: trustProxy !== false, allowSameIp: Boolean(opts.allowSameIp) });
        // Everything --demo needs is said at once: four agents on one address, calibrated with
        // the demo set's public answers (a node others can reach refuses that set by default).
        if (opts.demo && (opts.calibration ?? env.AKAS_CALIBRATION)) {
          throw usageError(
            "--demo calibrates its four agents with the demo set's public answers: start it without --calibration (or AKAS_CALIBRATION); a " +
              "demo node's tiers mean nothing",
          );
        }
        if (opts.demo && sameIp.enforced) {
          const flags = ['--allow-same-ip', ...(opts.allowDemoCalibration ? [] : ['--allow-demo-calibration'])];
          throw usageError(
            `--demo seeds the tree with four demo agents from this one address, calibrated with the demo set's public answers: run it on a ` +
              `loopback node (the default --host), or add ${flags.join(' and ')} for a demo node others can reach (its tiers mean nothing)`,
          );
        }
        const { readNodeSecret } = await import('../../../src/ops/index.js');
        let where: { dataDir: string; store?: string; nodeSecret?: string; logOrigin?: string } = { dataDir, logOrigin: opts.logOrigin };
        try {
          if (storeUrl)
            where = {
              dataDir,
              store: storeUrl,
              nodeSecret: readNodeSecret(opts.nodeSecretFile ?? env.AKAS_NODE_SECRET_FILE, env.AKAS_NODE_SECRET),
              logOrigin: opts.logOrigin,
            };
        } catch (e) {
          refusal(e);
        }
        if (opts.check) {
          const r = await checkNode(where).catch(refusal);
          const problems = [...r.log.problems, ...r.ledger.problems, ...r.proposals.problems, ...r.records.problems];
          cli
            .output()
            .note(
              `check: ${r.log.entries} log entries, ${r.log.checkpoints} checkpoints, ledger ${r.ledger.ok ? 'balanced' : 'NOT balanced'}, ` +
                `${r.proposals.proposals} proposals, ${r.records.agents} agents, ${r.records.blobs.acknowledged} blobs${problems.length ? ':' : ': ok'}`,
            );
          if (!r.ok)
            throw new CliError(1, ['the data folder failed its check; not starting', ...problems.map((p) => `  ${p}`)].join('\n'), {
              code: 'check_failed',
              problems,
            });
        }
        const calibrationDir = opts.calibration ?? env.AKAS_CALIBRATION;
        // The local admin channel (akas admin revoke while the node runs; PROTOCOL 8.7): a Unix
        // socket in the data folder, or in a private runtime folder when that path is too long for
        // one; placed before anything is written, opened before the port is bound. A shared
        // database's admin goes to the database itself.
        let adminSocket: string | undefined;
        if (!storeUrl) {
          const { prepareAdminSocket } = await import('../../../src/ops/admin-ask.js');
          try {
            adminSocket = prepareAdminSocket(dataDir);
          } catch (e) {
            refusal(e);
          }
        }
        const openChannel = async (app: import('fastify').FastifyInstance) => {
          const { openAdminChannel } = await import('../../../src/ops/index.js');
          const channel = await openAdminChannel(adminSocket!, app.akas, {
            onInternalError: (e) => app.log.error({ err: e }, 'admin channel: a status change failed inside the node'),
          });
          return channel.close;
        };
        const node = await startNode({
          ...(adminSocket ? { beforeListen: openChannel } : {}),
          ...where,
          host,
          port,
          allowDemoCalibration: Boolean(opts.allowDemoCalibration),
          logLevel,
          logFormat,
          ...(opts.demo ? { seeding: 'the demo tree (akas serve --demo)' } : {}),
          rotate: { issuer: opts.rotateIssuerKey, hmac: opts.rotateHmacKey },
          ...(opts.witnessLog.length ? { witnessFor: { logs: opts.witnessLog, keyFile: opts.witnessKey, name: opts.witnessName } } : {}),
          config: {
            publicUrl,
            trustProxy,
            sameIpCollusionCheck: sameIp.enforced,
            sameIpReason: sameIp.reason,
            allowAnonymousPropose: Boolean(opts.allowAnonymousPropose),
            ...(cap !== undefined ? { registrationCapPerIp: cap } : {}),
            ...(rateLimit ? { rateLimit } : {}),
            ...(casQuotaMib !== undefined ? { casQuotaBytes: Math.round(casQuotaMib * 1048576) } : {}),
            ...(ttlHours !== undefined ? { traversalTtlMs: Math.round(ttlHours * 3_600_000) } : {}),
            ...(calibrationDir ? { calibrationDir } : {}),
            witnesses,
          },
        }).catch(refusal);
        const out = cli.output();
        // The node records itself where `akas admin` finds it (PROTOCOL 8.7: its folder or store,
        // socket, address, pid), removed as soon as a signal stops it, and once closed however.
        const { recordNode } = await import('../../../src/ops/admin-ask.js');
        let record: { remove: () => void } | undefined;
        try {
          record = recordNode({
            url: node.url,
            publicUrl: node.publicUrl,
            ...(node.shared ? { store: node.dataDir } : { dataDir: node.dataDir }),
            ...(adminSocket ? { socket: adminSocket } : {}),
          });
        } catch (e) {
          out.note(`${(e as Error).message}: the node runs unrecorded (akas admin revoke then needs --data)`);
        }
        const unrecord = () => {
          record?.remove();
          for (const event of ['SIGINT', 'SIGTERM', 'exit'] as const) process.off(event, unrecord);
        };
        for (const event of ['SIGINT', 'SIGTERM', 'exit'] as const) process.once(event, unrecord);
        void node.closed.then(unrecord);
        const c = node.calibration;
        const calibrationLine =
          c.source === 'private'
            ? `private set ${c.dir} (${c.questions} questions, ${c.challenges} challenges, ${c.decoys} decoys)`
            : `DEMO set${c.demoReason ? ` (${c.demoReason})` : ''}: its answers ship in the package; for a public node, akas calibration ` +
              `init DIR and --calibration DIR`;
        const addresses = listenUrls(node.app.server.address());
        const wildcard = host === '0.0.0.0' || host === '::';
        const banner = () =>
          [
            `akas node listening on ${node.url}${wildcard ? ` and every address below (--host ${host}: all interfaces)` : ''}`,
            ...(addresses.length > 1 || wildcard ? [`  addresses    ${addresses.join(', ')}`] : []),
            `  public URL   ${node.publicUrl}${publicUrl ? '' : ' (the listen address: give --public-url for the one clients use)'}`,
            node.shared ? `  store        ${node.dataDir}` : `  data folder  ${node.dataDir}`,
            // Said only when it is not DATA/admin.sock (the data folder's path is too long for a socket).
            ...(adminSocket && !adminSocket.endsWith('/admin.sock') ? [`  admin socket ${adminSocket}`] : []),
            `  issuer       ${node.issuerDid}`,
            `  log key      ${node.logKey}`,
            ...witnesses.map((w) => `  witness      ${w.name} at ${w.url}`),
            ...(node.witnessKey ? [`  witnessing   as ${node.witnessKey}@${node.url}/witness`] : []),
            `  same-IP rule ${sameIp.reason}`,
            `  calibration  ${calibrationLine}`,
          ].join('\n');
        // A person reads the banner first, then the demo's seeding and the log; JSON is one
        // document, once the demo is in.
        if (!cli.globals().json) out.result(null, banner);
        let demo: Awaited<ReturnType<typeof import('../demo/seed.js').seedDemo>> | undefined;
        if (opts.demo) {
          const { seedDemo } = await import('../demo/seed.js');
          try {
            demo = await seedDemo(node.url, (line) => out.note(line));
          } catch (e) {
            await node.close();
            throw e;
          }
        }
        // /healthz answered 503 `seeding` until now (PROTOCOL 11.1).
        node.ready();
        const tail = [
          ...(demo
            ? [
                `  demo         ${
                  demo.seeded ? `seeded: ${demo.proposals.length} proposals published by ${demo.agents.length} demo ` + `agents` : demo.note
                }; try: akas node /models/tiny-classifier`,
              ]
            : []),
          '  stop with Ctrl-C',
        ].join('\n');
        if (cli.globals().json)
          out.result(
            {
              listening: node.url,
              addresses,
              publicUrl: node.publicUrl,
              ...(node.shared ? { store: node.dataDir } : { dataDir: node.dataDir }),
              issuer: node.issuerDid,
              signingKeyId: node.signingKeyId,
              sameIpRule: sameIp,
              calibration: { set: c.source, ...(c.dir ? { dir: c.dir } : {}) },
              ...(demo ? { demo } : {}),
              logKey: node.logKey,
              witnesses: witnesses.map((w) => w.verifierKey),
              ...(node.witnessKey ? { witness: { verifierKey: node.witnessKey, url: `${node.url}/witness` } } : {}),
            },
            '',
          );
        else out.result(null, tail);
        await node.closed;
      }),
    );
}

/** The names proxy-addr knows for address ranges (PROTOCOL 1.4). */
const RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * --trust-proxy (or AKAS_TRUST_PROXY): absent, no proxy is trusted; alone (or `true`), one hop;
 * a whole number, that many hops; otherwise a comma-separated list of the proxies' addresses,
 * CIDRs (10.0.0.0/8, fd00::/8) or range names (loopback, linklocal, uniquelocal).
 */
export function parseTrustProxy(value: boolean | string | undefined): boolean | number | string[] {
  if (value === undefined || value === false || value === '' || value === 'false') return false;
  if (value === true || value === 'true') return 1;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1) throw usageError("--trust-proxy takes a number of hops from 1, or the proxies' addresses");
    return hops;
  }
  const list = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  for (const item of list) {
    const [address, bits, extra] = item.split('/');
    const family = isIP(address);
    const okBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!(RANGE_NAMES.includes(item) || (family !== 0 && okBits && extra === undefined))) {
      throw usageError(`--trust-proxy: ${item} is not an address, a CIDR or one of ${RANGE_NAMES.join(', ')} (or give a number of hops)`);
    }
  }
  if (!list.length) throw usageError("--trust-proxy takes a number of hops, or the proxies' addresses");
  return list;
}

/**
 * --public-url: an http(s) origin, optionally with a path the proxy serves the node under; no
 * credentials, query or fragment (it is joined with paths into every absolute URL). Answered
 * without a trailing slash.
 */
export function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`--public-url is the URL clients reach the node at, such as https://akas.example.org; got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`--public-url is an http:// or https:// URL, got ${JSON.stringify(value)}`);
  if (url.username || url.password || url.search || url.hash || value.includes('?') || value.includes('#')) {
    throw usageError(`--public-url takes no user, password, query or fragment (it starts every absolute URL the node hands out), got ${JSON.stringify(value)}`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
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
  if (name === 'CalibrationSetError') throw new CliError(2, (e as Error).message, { code: 'calibration_set', error: (e as Error).message });
  if (known) throw new CliError(2, known.message, { code: known.code, error: known.message });
  throw e;
}
