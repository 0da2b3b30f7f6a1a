// `akas serve`: the whole node on an embedded LevelDB store in a data folder, or on a
// PostgreSQL database that several `akas serve` processes share (--store postgres://...).
// Its flags are read by serveConfig (config.ts, a pure function tested alone); the action
// opens, checks and starts the node that configuration names, records it for `akas admin`,
// and says where it listens.
import type { Command } from 'commander';
import { CliError, collect, type Output, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import type { DemoSummary } from '../demo/seed.js';
import { readKeyList } from '../witness/index.js';
import type { ServeConfig, ServeOptions } from './config.js';
import { listenUrls } from './listen-addresses.js';

type NodeDoor = typeof import('../../../src/node/index.js');
type Started = Awaited<ReturnType<NodeDoor['startNode']>>;
type Refusal = (e: unknown) => never;

export function serveCommands(program: Command, cli: Cli) {
  program
    .command('serve')
    .summary('run a node: the HTTP API on a data folder or a shared PostgreSQL store')
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
    .option('--issuer-did-web', "standing credentials name the node's did:web (of --public-url) as issuer, not its did:key (PROTOCOL 8.10)")
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
      '--cosigner <NAME+KEYID+KEY@URL>',
      'a witness this node asks to cosign every checkpoint (C2SP tlog-witness): its verifier key and URL, as `akas witness` prints them; repeatable',
      collect,
      [],
    )
    .option('--cosigners <file>', 'cosigners from a file, one NAME+KEYID+KEY@URL a line (# comments)')
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
    .action(action(cli, (opts: ServeOptions) => serve(cli, opts)));
}

async function serve(cli: Cli, opts: ServeOptions) {
  const cosignerList = opts.cosigners ? readKeyList(opts.cosigners) : [];
  const { serveConfig } = await import('./config.js');
  const read = serveConfig(opts, process.env, { stderrIsTTY: Boolean(process.stderr.isTTY), cosignerList });
  if ('usage' in read) throw usageError(read.usage);
  const c = read.config;
  const door = await import('../../../src/node/index.js');
  const { dataDir } = c.location;
  const store = c.location.kind === 'store' ? c.location.store : undefined;
  const refusal: Refusal = (e) => refuse(e, door.startError(e, { dataDir, store }));
  const where = await storeOptions(c, refusal);
  if (c.check) await checkFirst(cli, door, where, refusal);
  const adminSocket = await adminSocketOf(c, refusal);
  const node = await door
    .startNode({
      ...(adminSocket ? { beforeListen: openChannel(adminSocket) } : {}),
      ...where,
      host: c.host,
      port: c.port,
      allowDemoCalibration: c.allowDemoCalibration,
      logLevel: c.logLevel,
      logFormat: c.logFormat,
      ...(c.demo ? { seeding: 'the demo tree (akas serve --demo)' } : {}),
      rotate: c.rotate,
      ...(c.witnessFor ? { witnessFor: c.witnessFor } : {}),
      config: c.node,
    })
    .catch(refusal);
  const out = cli.output();
  await recordUntilClosed(node, adminSocket, out);
  const addresses = listenUrls(node.app.server.address());
  // A person reads the banner first, then the demo's seeding and the log; JSON is one
  // document, once the demo is in.
  if (!cli.globals().json) out.result(null, () => banner(c, node, addresses, adminSocket));
  const demo = c.demo ? await seedDemoTree(node, out) : undefined;
  // /healthz answered 503 `seeding` until now (PROTOCOL 11.1).
  node.ready();
  if (cli.globals().json) out.result(startedJson(c, node, addresses, demo), '');
  else out.result(null, tail(demo));
  await node.closed;
}

/** Where the store is, with the node secret read for a database (a file that cannot be read refuses the start). */
async function storeOptions(c: ServeConfig, refusal: Refusal) {
  const where: { dataDir: string; store?: string; nodeSecret?: string; logOrigin?: string } = { dataDir: c.location.dataDir, logOrigin: c.logOrigin };
  if (c.location.kind !== 'store') return where;
  const { readNodeSecret } = await import('../../../src/ops/index.js');
  try {
    return { ...where, store: c.location.store, nodeSecret: readNodeSecret(c.location.secretFile, c.location.secret) };
  } catch (e) {
    return refusal(e);
  }
}

/** --check: the data folder's audit before the start; a failed one refuses it (exit 1). */
async function checkFirst(cli: Cli, door: NodeDoor, where: Parameters<NodeDoor['checkNode']>[0], refusal: Refusal) {
  const r = await door.checkNode(where).catch(refusal);
  const problems = [...r.log.problems, ...r.ledger.problems, ...r.proposals.problems, ...r.records.problems];
  cli
    .output()
    .note(
      `check: ${r.log.entries} log entries, ${r.log.checkpoints} checkpoints, ledger ${r.ledger.ok ? 'balanced' : 'NOT balanced'}, ` +
        `${r.proposals.proposals} proposals, ${r.records.agents} agents, ${r.records.blobs.acknowledged} blobs${problems.length ? ':' : ': ok'}`,
    );
  if (!r.ok) throw new CliError('check_failed', ['the data folder failed its check; not starting', ...problems.map((p) => `  ${p}`)].join('\n'), { problems });
}

/**
 * The local admin channel (akas admin revoke while the node runs; PROTOCOL 8.7): a Unix socket
 * in the data folder, or in a private runtime folder when that path is too long for one; placed
 * before anything is written, opened before the port is bound. A shared database's admin goes
 * to the database itself.
 */
async function adminSocketOf(c: ServeConfig, refusal: Refusal): Promise<string | undefined> {
  if (c.location.kind === 'store') return undefined;
  const { prepareAdminSocket } = await import('../../../src/ops/admin-ask.js');
  try {
    return prepareAdminSocket(c.location.dataDir);
  } catch (e) {
    return refusal(e);
  }
}

/** Opens the admin channel on the node's app, before it listens; answers what closes it. */
const openChannel = (socket: string) => async (app: import('fastify').FastifyInstance) => {
  const { openAdminChannel } = await import('../../../src/ops/index.js');
  const channel = await openAdminChannel(socket, app.akas, {
    onInternalError: (e) => app.log.error({ err: e }, 'admin channel: a status change failed inside the node'),
  });
  return channel.close;
};

/**
 * The node records itself where `akas admin` finds it (PROTOCOL 8.7: its folder or store,
 * socket, address, pid), removed as soon as a signal stops it, and once closed however.
 */
async function recordUntilClosed(node: Started, adminSocket: string | undefined, out: Output) {
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
}

function calibrationLine(node: Started): string {
  const c = node.calibration;
  return c.source === 'private'
    ? `private set ${c.dir} (${c.questions} questions, ${c.challenges} challenges, ${c.decoys} decoys)`
    : `DEMO set${c.demoReason ? ` (${c.demoReason})` : ''}: its answers ship in the package; for a public node, akas calibration ` +
        `init DIR and --calibration DIR`;
}

/** What a person reads once the node listens. */
function banner(c: ServeConfig, node: Started, addresses: string[], adminSocket: string | undefined): string {
  const wildcard = c.host === '0.0.0.0' || c.host === '::';
  return [
    `akas node listening on ${node.url}${wildcard ? ` and every address below (--host ${c.host}: all interfaces)` : ''}`,
    ...(addresses.length > 1 || wildcard ? [`  addresses    ${addresses.join(', ')}`] : []),
    `  public URL   ${node.publicUrl}${c.publicUrl ? '' : ' (the listen address: give --public-url for the one clients use)'}`,
    node.shared ? `  store        ${node.dataDir}` : `  data folder  ${node.dataDir}`,
    // Said only when it is not DATA/admin.sock (the data folder's path is too long for a socket).
    ...(adminSocket && !adminSocket.endsWith('/admin.sock') ? [`  admin socket ${adminSocket}`] : []),
    `  issuer       ${node.issuerDid}`,
    `  log key      ${node.logKey}`,
    ...c.witnesses.map((w) => `  cosigner     ${w.name} at ${w.url}`),
    ...(node.witnessKey ? [`  witnessing   as ${node.witnessKey}@${node.url}/witness`] : []),
    `  same-IP rule ${c.sameIp.reason}`,
    `  calibration  ${calibrationLine(node)}`,
  ].join('\n');
}

/** --demo: the demo tree seeded through the node's own routes; a failure closes the node. */
async function seedDemoTree(node: Started, out: Output): Promise<DemoSummary> {
  const { seedDemo } = await import('../demo/seed.js');
  try {
    return await seedDemo(node.url, (line) => out.note(line));
  } catch (e) {
    await node.close();
    throw e;
  }
}

function tail(demo: DemoSummary | undefined): string {
  return [
    ...(demo
      ? [
          `  demo         ${
            demo.seeded ? `seeded: ${demo.proposals.length} proposals published by ${demo.agents.length} demo ` + `agents` : demo.note
          }; try: akas node /models/tiny-classifier`,
        ]
      : []),
    '  stop with Ctrl-C',
  ].join('\n');
}

/** `akas serve --json`: one document once the node listens (and the demo is in). */
function startedJson(c: ServeConfig, node: Started, addresses: string[], demo: DemoSummary | undefined) {
  const cal = node.calibration;
  return {
    listening: node.url,
    addresses,
    publicUrl: node.publicUrl,
    ...(node.shared ? { store: node.dataDir } : { dataDir: node.dataDir }),
    issuer: node.issuerDid,
    signingKeyId: node.signingKeyId,
    sameIpRule: c.sameIp,
    calibration: { set: cal.source, ...(cal.dir ? { dir: cal.dir } : {}) },
    ...(demo ? { demo } : {}),
    logKey: node.logKey,
    witnesses: c.witnesses.map((w) => w.verifierKey),
    ...(node.witnessKey ? { witness: { verifierKey: node.witnessKey, url: `${node.url}/witness` } } : {}),
  };
}

/**
 * Errors that refuse a start for a reason the operator must fix (node keys that disagree, a
 * schema behind or ahead, the folder in use, read-only or full, the port taken, no node to
 * check) become exit 2 with one line naming the cause and the fix, and a code naming them.
 */
function refuse(e: unknown, known: ReturnType<NodeDoor['startError']>): never {
  const name = (e as Error)?.name;
  if (name === 'NodeKeysError') throw new CliError('node_keys', (e as Error).message, { error: (e as Error).message });
  if (name === 'SchemaError') throw new CliError('schema_version', (e as Error).message, { error: (e as Error).message });
  if (name === 'CalibrationSetError') throw new CliError('calibration_set', (e as Error).message, { error: (e as Error).message });
  if (known) throw new CliError(known.code, known.message, { error: known.message });
  throw e;
}
