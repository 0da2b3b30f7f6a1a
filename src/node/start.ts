// Starting a node: the port checked, the node opened (store and keys), the app src/http builds
// on it, listening; closed cleanly on SIGINT/SIGTERM. src/http is imported here, lazily, and
// only here: the commands that open a stopped node load none of it (ARCHITECTURE 1).
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { cosignerVerifierKey, type NodeKeys } from '../core/index.js';
import type { AppConfig, createApp } from '../http/app.js';
import type { LevelStore, Store } from '../store/index.js';
import { PortError } from './errors.js';
import { openNode, type OpenedNode, type Rotate, type StoreOptions } from './open.js';
import { reachableFromOutside } from './policy.js';

/** The app src/http builds on an opened node (a fastify instance). */
export type NodeApp = Awaited<ReturnType<typeof createApp>>;

export interface StartOptions extends StoreOptions {
  host: string;
  port: number;
  logLevel: string;
  /** JSON lines (the default), or one line a person reads each (`akas serve` on a terminal). */
  logFormat?: 'json' | 'pretty';
  config: Partial<AppConfig>;
  /** Start on the demo calibration set on a non-loopback address all the same (--allow-demo-calibration). */
  allowDemoCalibration?: boolean;
  /** Rotate these node keys before starting (the prior keys stay, so old signatures verify). */
  rotate?: Rotate;
  /** Listen not ready: /healthz answers 503 `seeding` (naming this) until ready() is called. */
  seeding?: string;
  /** Be a witness too, for these logs (PROTOCOL 9.9): their keys, the witness key file, its name for a new key. */
  witnessFor?: { logs: string[]; keyFile?: string; name?: string };
  /**
   * Opened once the store and app are ready, before the port is bound (`akas serve`: the local
   * admin channel, PROTOCOL 8.7): its failure refuses the start, undone like any other, never an
   * error after listening. Answers what closes it, called when the node closes.
   */
  beforeListen?: (app: NodeApp) => Promise<() => Promise<void>>;
}

type WitnessKey = { name: string; seed: string; verifierKey: string };

/** Listens once on host:port and lets go: a port already taken is said before the data folder is touched. */
function checkPort(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', (e: NodeJS.ErrnoException) => reject(new PortError(host, port, e.code ?? 'EADDRNOTAVAIL')));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolvePort()));
  });
}

/**
 * What a start made in the data folder, to be taken back if the start fails: the folder
 * itself when it did not exist, else the store and key file it created there (a failed
 * start leaves no folder and no keys behind).
 */
function madeByStart(opts: StoreOptions): { undo: () => void; newFolder: boolean } {
  if (opts.store) return { undo: () => undefined, newFolder: false };
  const dir = resolve(opts.dataDir);
  if (!existsSync(dir)) return { undo: () => rmSync(dir, { recursive: true, force: true }), newFolder: true };
  const before = new Set(readdirSync(dir));
  return {
    undo: () => {
      for (const name of readdirSync(dir)) if (!before.has(name)) rmSync(join(dir, name), { recursive: true, force: true });
    },
    newFolder: false,
  };
}

/** The calibration set the node will use; a node others can reach must not calibrate on answers that ship in the package. */
async function calibrationFor(opts: StartOptions) {
  const { calibrationSetOf, CalibrationSetError } = await import('../domain/calibration/set.js');
  const calibration = calibrationSetOf(opts.config);
  const outside = reachableFromOutside(opts);
  if (calibration.source === 'demo' && outside && !opts.allowDemoCalibration) {
    throw new CalibrationSetError(
      `Refusing to serve ${outside} with the demo calibration set${calibration.demoReason ? ` (${calibration.demoReason})` : ''}: its ` +
        `answers and decoys ship in the package, so any agent reaches the top tier and recognises every decoy. ` +
        'Make a private set (akas calibration init DIR) and start with --calibration DIR, or pass --allow-demo-calibration for a node whose ' +
        'tiers mean nothing.',
    );
  }
  return calibration;
}

/** The witness key of a node that witnesses other logs (PROTOCOL 9.9), loaded or made. */
async function witnessKeyFor(opts: StartOptions, keys: NodeKeys): Promise<WitnessKey | undefined> {
  if (!opts.witnessFor?.logs.length) return undefined;
  const { loadOrCreateWitnessKey } = await import('../witness/index.js');
  const keyFile = opts.witnessFor.keyFile ?? resolve(opts.dataDir, 'witness-key');
  // A new key is named after the log (its origin is unique to this node) unless named.
  const k = loadOrCreateWitnessKey(keyFile, opts.witnessFor.name ?? (existsSync(keyFile) ? undefined : `${keys.log.origin}/witness`));
  return { name: k.name, seed: k.seed, verifierKey: cosignerVerifierKey(k.name, k.publicKey) };
}

/** What a start made that a failed start closes again. */
interface Made {
  app?: NodeApp;
  closeBeforeListen?: () => Promise<void>;
}

/** The app built on the opened node, listening (src/http loaded here, for the first time). */
async function listenOn(opts: StartOptions, { store, keys, strategies }: OpenedNode, witnessKey: WitnessKey | undefined, made: Made) {
  const [{ createApp }, { nodeLogger }, { listenOrigin }] = await Promise.all([
    import('../http/app.js'),
    import('../http/request-log.js'),
    import('../http-kit/urls.js'),
  ]);
  const app = (made.app = await createApp({
    store,
    keys,
    // Chosen once, here where the node is assembled, from the store it was opened on.
    strategies: await strategies(),
    // A running node appends an index root every 256 entries of growth, checked every second (PROTOCOL 9.10).
    config: { indexRootEveryMs: 1000, ...opts.config, ...(witnessKey ? { witnessFor: { logs: opts.witnessFor!.logs, key: witnessKey } } : {}) },
    // Logs go to stderr (asynchronously: request-log.ts); stdout carries the command's own output.
    ...(opts.logLevel === 'silent' ? { logger: false } : { loggerInstance: await nodeLogger(opts.logLevel, 2, opts.logFormat) }),
  }));
  if (opts.seeding) app.akas.seeding = { what: opts.seeding, since: Date.now() };
  if (opts.beforeListen) made.closeBeforeListen = await opts.beforeListen(app);
  const address = await app.listen({ host: opts.host, port: opts.port });
  // The status lists' URLs (PROTOCOL 8.7) name the listen address when no --public-url is given.
  app.akas.config.listenOrigin = listenOrigin(app.server.address());
  return { app, address, listenOrigin };
}

/** The operator hears of a storage failure and of its end once each, and of a write-ahead log dropped at open, in the node's log. */
function watchStore(log: NodeApp['log'], store: Store): () => void {
  for (const i of (store as Partial<LevelStore>).incidents ?? []) {
    log.error(
      { incident: i },
      `the store dropped ${i.bytes} bytes of its write-ahead log ${i.file} while opening (${i.reason}): writes acknowledged before may be ` +
        `lost; \`akas log check\` reports it`,
    );
  }
  return store.health.onChange((s, error) =>
    s.ok
      ? log.warn({ storage: s }, 'storage: writes are accepted again')
      : log.error(
          { storage: s, err: error },
          `storage failed (${s.cause}): every write is refused with 503 storage_unavailable until a probe write succeeds. ${s.action}`,
        ),
  );
}

/** Opens the node for a start: a start that fails takes back a folder it created (its lock not held, nothing else is ours). */
async function openForStart(opts: StartOptions) {
  await checkPort(opts.host, opts.port);
  const { undo, newFolder } = madeByStart(opts);
  try {
    return { opened: await openNode(opts, opts.rotate), undo };
  } catch (e) {
    // Not holding the folder's lock, this start may only take back a folder it created: the
    // folder may be another process's (the lock held), whose files are not ours to remove.
    if (newFolder) undo();
    throw e;
  }
}

export async function startNode(opts: StartOptions) {
  const calibration = await calibrationFor(opts);
  const { opened, undo } = await openForStart(opts);
  const { store, keys, location, unfollow } = opened;
  const made: Made = {};
  let built: Awaited<ReturnType<typeof listenOn>>;
  let witnessKey: WitnessKey | undefined;
  try {
    witnessKey = await witnessKeyFor(opts, keys);
    built = await listenOn(opts, opened, witnessKey, made);
  } catch (e) {
    unfollow();
    await made.closeBeforeListen?.().catch(() => undefined);
    await made.app?.close().catch(() => undefined);
    await store.close();
    undo();
    const code = (e as NodeJS.ErrnoException).code;
    throw code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' ? new PortError(opts.host, opts.port, code) : e;
  }
  const { app, address, listenOrigin } = built;
  const unwatchStore = watchStore(app.log, store);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    unfollow();
    unwatchStore();
    await made.closeBeforeListen?.().catch(() => undefined);
    await app.close();
    await store.close();
    // The regex evaluator is one worker per process (unref'd); stop it with the node.
    const { closeRegexWorker } = await import('../domain/challenges/tools/index.js');
    await closeRegexWorker();
    resolveClosed();
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  return {
    url: address,
    /** The origin the node's documents name (PROTOCOL 11.1): --public-url, else the listen address. */
    publicUrl: opts.config.publicUrl?.replace(/\/$/, '') ?? listenOrigin(app.server.address()) ?? address,
    dataDir: location,
    calibration: {
      source: calibration.source,
      dir: calibration.dir,
      demoReason: calibration.demoReason,
      questions: calibration.pools.A.length + calibration.pools.B.length,
      challenges: calibration.bank.normal.length,
      decoys: calibration.bank.decoys.length,
    },
    shared: store.shared,
    issuerDid: keys.issuer.did,
    logKey: keys.log.verifierKey,
    witnessKey: witnessKey?.verifierKey,
    signingKeyId: keys.hmac[0].signingKeyId,
    app,
    /** Ends the seeding state: /healthz answers 200 from now on (when the store is well). */
    ready: () => void delete app.akas.seeding,
    close,
    closed,
  };
}
