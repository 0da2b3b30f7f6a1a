// The running node: opens the store (a data folder, or a postgres:// URL shared by several
// processes), loads (or creates) the node keys, builds the app and listens. Closes cleanly on
// SIGINT/SIGTERM.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { cryptoRandom, newNodeKeyMaterial, nodeKeysFrom, systemClock, type NodeKeys } from '../core/index.js';
import {
  assertPrivateFolder,
  checkLogOrigin,
  followSealedNodeKeys,
  loadOrCreateNodeKeys,
  loadOrCreateSealedNodeKeys,
  type LevelStore,
  NODE_KEYS_FILE,
  openLevelStore,
  openStore,
  readNodeKeyMaterial,
  redact,
  rotateNodeKeys,
  storageCause,
  storageDetail,
  type StorageCause,
  type Store,
} from '../store/index.js';
import { calibrationSetOf, CalibrationSetError } from '../domain/calibration/set.js';
import { createApp, type AppConfig } from './app.js';
import type { FastifyInstance } from 'fastify';
import { nodeLogger } from './request-log.js';
import { listenOrigin } from './kit/urls.js';

// This file is the CLI's one door into src/http (ARCHITECTURE 1): `akas serve --witness` parses
// the witnesses it gives the node with the parser the node's own witness client uses.
export { parseWitnessSpec } from '../domain/log/index.js';

export interface StoreOptions {
  /** The data folder of the embedded store (unused with `store`). */
  dataDir: string;
  /** A postgres:// URL: the store several processes share; the node keys are sealed in it. */
  store?: string;
  /** The secret sealing the node keys in a shared store (AKAS_NODE_SECRET). */
  nodeSecret?: string;
  /** The log's origin, at the first start only (C2SP: the log's URL without scheme). */
  logOrigin?: string;
}

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
  rotate?: { issuer?: boolean; hmac?: boolean };
  /** Listen not ready: /healthz answers 503 `seeding` (naming this) until ready() is called. */
  seeding?: string;
  /** Be a witness too, for these logs (PROTOCOL 9.9): their keys, the witness key file, its name for a new key. */
  witnessFor?: { logs: string[]; keyFile?: string; name?: string };
  /**
   * Opened once the store and app are ready, before the port is bound (`akas serve`: the local
   * admin channel, PROTOCOL 8.7): its failure refuses the start, undone like any other, never an
   * error after listening. Answers what closes it, called when the node closes.
   */
  beforeListen?: (app: FastifyInstance) => Promise<() => Promise<void>>;
}

interface OpenedNode {
  store: Store;
  keys: NodeKeys;
  /** The data folder, or the database URL without its password. */
  location: string;
  /** Stops following key rotations made by other processes. */
  unfollow: () => void;
}

/** A data folder that holds no node: an audit refuses it rather than make one (exit 2). */
export class NoNodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoNodeError';
  }
}

/**
 * Opens a node's store and keys: the data folder and its key file, or the shared database and
 * the keys sealed in it. existing: only a folder that already holds a node (an audit), never
 * creating one.
 */
export async function openNode(opts: StoreOptions, rotate: StartOptions['rotate'] = {}, existing = false): Promise<OpenedNode> {
  if (opts.store) {
    const store = await openStore(opts.store);
    try {
      const initial = opts.logOrigin ? newNodeKeyMaterial(cryptoRandom, systemClock.now(), opts.logOrigin) : undefined;
      const material = await loadOrCreateSealedNodeKeys(store, opts.nodeSecret, cryptoRandom, systemClock.now(), { rotate, ...(initial ? { initial } : {}) });
      const keys = checkLogOrigin(nodeKeysFrom(material), opts.logOrigin);
      // Another process may rotate the keys later: this one follows (one set per deployment).
      const unfollow = followSealedNodeKeys(store, opts.nodeSecret!, keys);
      return { store, keys, location: store.location, unfollow };
    } catch (e) {
      await store.close();
      throw e;
    }
  }
  const dataDir = resolve(opts.dataDir);
  if (existing) {
    if (!existsSync(dataDir)) throw new NoNodeError(`there is no folder ${dataDir}: nothing to check (is --data right?)`);
    if (!existsSync(join(dataDir, 'level', 'CURRENT')) || !existsSync(join(dataDir, NODE_KEYS_FILE))) {
      throw new NoNodeError(`${dataDir} holds no akas node (no store and node keys in it): nothing to check (is --data right?)`);
    }
  }
  assertPrivateFolder(dataDir);
  const store = await openLevelStore(dataDir, { createIfMissing: !existing });
  try {
    const now = systemClock.now();
    const material = existing ? readNodeKeyMaterial(dataDir, now) : undefined;
    if (existing && !material) throw new NoNodeError(`${dataDir} holds no node keys (${NODE_KEYS_FILE}): nothing to check`);
    const keys = checkLogOrigin(
      material
        ? nodeKeysFrom(material)
        : rotate.issuer || rotate.hmac
          ? rotateNodeKeys(dataDir, rotate, cryptoRandom, now)
          : loadOrCreateNodeKeys(dataDir, cryptoRandom, now, opts.logOrigin),
      opts.logOrigin,
    );
    return { store, keys, location: dataDir, unfollow: () => undefined };
  } catch (e) {
    await store.close();
    throw e;
  }
}

/**
 * The node's own audit of its store (`akas log check`, `akas serve --check`): the log's
 * chain, MACs, tree and checkpoints, the credit ledger, and the proposals (their judgments,
 * status, escrow and pending indexes agree). A data folder must not be in use (LevelDB takes
 * it for one process); a shared database may be.
 */
export async function checkNode(opts: StoreOptions | string, onProgress?: (entries: number) => void) {
  const { store, keys, unfollow } = await openNode(typeof opts === 'string' ? { dataDir: opts } : opts, {}, true);
  try {
    const { checkLog } = await import('../domain/log/audit.js');
    const { checkLedger } = await import('../domain/ledger.js');
    const { checkProposals } = await import('../domain/proposals/check.js');
    const { checkRecords } = await import('../domain/records-check.js');
    const log = await checkLog(store, keys, onProgress);
    const ledger = await checkLedger(store);
    const proposals = await checkProposals(store);
    const records = await checkRecords(store);
    return {
      ok: log.ok && ledger.ok && proposals.ok && records.ok,
      log,
      ledger: { ok: ledger.ok, problems: ledger.problems, totals: ledger.totals },
      proposals,
      records,
    };
  } finally {
    unfollow();
    await store.close();
  }
}

/** Addresses only this machine can reach: every client of a node listening on one has the same IP. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}

/**
 * The same-IP rule (PROTOCOL 7.5: one judge per client IP for each proposal) where it can
 * mean something. A node listening on loopback only, without --trust-proxy, sees every
 * client at the same address: there the rule would stop the second agent of a local first
 * session, so agents are told apart by their keys alone. Wherever clients can be told apart
 * by IP (another listen address, or X-Forwarded-For behind a proxy) it holds, unless the
 * operator turns it off.
 */
export function sameIpPolicy(opts: { host: string; trustProxy: boolean; allowSameIp: boolean }): { enforced: boolean; reason: string } {
  if (opts.allowSameIp) return { enforced: false, reason: 'off (--allow-same-ip): agents on one IP may judge the same proposal' };
  if (isLoopbackHost(opts.host) && !opts.trustProxy) {
    return {
      enforced: false,
      reason: `off: listening on loopback only (${opts.host}) without --trust-proxy, every client has one address; agents are told apart by their keys`,
    };
  }
  return {
    enforced: true,
    reason: opts.trustProxy
      ? 'on: one judge per client IP for each proposal (the IP read from X-Forwarded-For, --trust-proxy)'
      : `on: one judge per client IP for each proposal (listening on ${opts.host})`,
  };
}

/**
 * A start or an audit that could not run, in one line naming the cause and the fix (`akas
 * serve` and `akas log check` exit 2 with it), or undefined for an error that is not one of
 * these (a bug: reported as it is).
 */
export function startError(e: unknown, where: { dataDir: string; store?: string }): { code: string; message: string } | undefined {
  const name = (e as Error)?.name;
  if (name === 'StoreInUseError') return { code: 'data_in_use', message: (e as Error).message };
  if (name === 'PortError') return { code: 'port_unavailable', message: (e as Error).message };
  if (name === 'NoNodeError') return { code: 'no_node', message: (e as Error).message };
  if (name === 'AdminSocketError') return { code: 'admin_socket', message: (e as Error).message };
  const cause = storageCause(e);
  if (!cause) return undefined;
  const errno = (e as NodeJS.ErrnoException).code;
  const why = `(${errno && /^E[A-Z]+$/.test(errno) ? errno : storageDetail(e)})`;
  if (where.store) {
    return { code: 'storage', message: `the database ${redact(where.store)} cannot be used ${why}: start PostgreSQL, or check the URL given with --store` };
  }
  const dir = resolve(where.dataDir);
  const message: Record<StorageCause, string> = {
    read_only: `the data folder ${dir} is on a read-only file system ${why}: make it writable, or choose another folder with --data`,
    permission_denied: `this user may not write the data folder ${dir} ${why}: give it write access (chown or chmod), or choose another folder with --data`,
    disk_full: `the disk holding the data folder ${dir} is full ${why}: free some space, or choose another folder with --data`,
    io_error: `the disk holding the data folder ${dir} reported an I/O error ${why}: check the disk (dmesg) before anything else`,
    unavailable: `the data folder ${dir} cannot be used ${why}: check where it lives, or choose another folder with --data`,
    failed: `the store in ${dir} did not open ${why}: look at ${join(dir, 'level', 'LOG')}, or choose another folder with --data`,
  };
  return { code: 'storage', message: message[cause] };
}

/** A port another process listens on (or this user may not take): the start is refused before anything is made. */
export class PortError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
    readonly code: string,
  ) {
    super(
      code === 'EADDRINUSE'
        ? `port ${port} on ${host} is already in use (another akas serve?): stop it, or choose another port with --port`
        : code === 'EACCES'
          ? `this user may not listen on port ${port} on ${host} (ports below 1024 need privileges): choose another with --port`
          : `cannot listen on ${host} (${code}): give an address of this machine with --host`,
    );
    this.name = 'PortError';
  }
}

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

/**
 * Why other machines' clients reach this node, or undefined when only this machine's can: a
 * listen address other than loopback, a reverse proxy in front (--trust-proxy: it forwards
 * others' requests to a loopback port), or a public URL that is not loopback.
 */
export function reachableFromOutside(opts: { host: string; config: Partial<Pick<AppConfig, 'trustProxy' | 'publicUrl'>> }): string | undefined {
  if (!isLoopbackHost(opts.host)) return `listening on ${opts.host}`;
  if (opts.config.trustProxy !== undefined && opts.config.trustProxy !== false) return 'behind a reverse proxy (--trust-proxy)';
  if (opts.config.publicUrl) {
    let host: string | undefined;
    try {
      host = new URL(opts.config.publicUrl).hostname;
    } catch {
      host = undefined;
    }
    if (!host || !isLoopbackHost(host)) return `published at ${opts.config.publicUrl} (--public-url)`;
  }
  return undefined;
}

export async function startNode(opts: StartOptions) {
  // A node others can reach must not calibrate on answers that ship in the package.
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
  await checkPort(opts.host, opts.port);
  const { undo, newFolder } = madeByStart(opts);
  let opened;
  try {
    opened = await openNode(opts, opts.rotate);
  } catch (e) {
    // Not holding the folder's lock, this start may only take back a folder it created: the
    // folder may be another process's (the lock held), whose files are not ours to remove.
    if (newFolder) undo();
    throw e;
  }
  const { store, keys, location, unfollow } = opened;
  let app;
  let address: string;
  let witnessKey: { name: string; seed: string; verifierKey: string } | undefined;
  let closeBeforeListen: (() => Promise<void>) | undefined;
  try {
    if (opts.witnessFor?.logs.length) {
      const { loadOrCreateWitnessKey } = await import('../witness/index.js');
      const { cosignerVerifierKey } = await import('../core/index.js');
      const keyFile = opts.witnessFor.keyFile ?? resolve(opts.dataDir, 'witness-key');
      // A new key is named after the log (its origin is unique to this node) unless named.
      const k = loadOrCreateWitnessKey(keyFile, opts.witnessFor.name ?? (existsSync(keyFile) ? undefined : `${keys.log.origin}/witness`));
      witnessKey = { name: k.name, seed: k.seed, verifierKey: cosignerVerifierKey(k.name, k.publicKey) };
    }
    app = await createApp({
      store,
      keys,
      config: { ...opts.config, ...(witnessKey ? { witnessFor: { logs: opts.witnessFor!.logs, key: witnessKey } } : {}) },
      // Logs go to stderr (asynchronously: request-log.ts); stdout carries the command's own output.
      ...(opts.logLevel === 'silent' ? { logger: false } : { loggerInstance: nodeLogger(opts.logLevel, 2, opts.logFormat) }),
    });
    if (opts.seeding) app.akas.seeding = { what: opts.seeding, since: Date.now() };
    if (opts.beforeListen) closeBeforeListen = await opts.beforeListen(app);
    address = await app.listen({ host: opts.host, port: opts.port });
    // The status lists' URLs (PROTOCOL 8.7) name the listen address when no --public-url is given.
    app.akas.config.listenOrigin = listenOrigin(app.server.address());
  } catch (e) {
    unfollow();
    await closeBeforeListen?.().catch(() => undefined);
    await app?.close().catch(() => undefined);
    await store.close();
    undo();
    const code = (e as NodeJS.ErrnoException).code;
    throw code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' ? new PortError(opts.host, opts.port, code) : e;
  }
  const log = app.log;
  // The operator hears of a storage failure and of its end once each, in the node's log.
  const unwatchHealth =
    store.health?.onChange((s, error) =>
      s.ok
        ? log.warn({ storage: s }, 'storage: writes are accepted again')
        : log.error(
            { storage: s, err: error },
            `storage failed (${s.cause}): every write is refused with 503 storage_unavailable until a probe write succeeds. ${s.action}`,
          ),
    ) ?? (() => undefined);
  for (const i of (store as Partial<LevelStore>).incidents ?? []) {
    log.error(
      { incident: i },
      `the store dropped ${i.bytes} bytes of its write-ahead log ${i.file} while opening (${i.reason}): writes acknowledged before may be ` +
        `lost; \`akas log check\` reports it`,
    );
  }
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    unfollow();
    unwatchHealth();
    await closeBeforeListen?.().catch(() => undefined);
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
    shared: store.shared === true,
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
