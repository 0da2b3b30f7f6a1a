// The running node: opens the store (a data folder, or a postgres:// URL shared by several
// processes), loads (or creates) the node keys, builds the app and listens. Closes cleanly on
// SIGINT/SIGTERM.
import { resolve } from 'node:path';
import { cryptoRandom, newNodeKeyMaterial, nodeKeysFrom, systemClock, type NodeKeys } from '../core/index.js';
import {
  assertPrivateFolder,
  checkLogOrigin,
  followSealedNodeKeys,
  loadOrCreateNodeKeys,
  loadOrCreateSealedNodeKeys,
  openLevelStore,
  openStore,
  rotateNodeKeys,
  type Store,
} from '../store/index.js';
import { calibrationSetOf, CalibrationSetError } from '../domain/calibration-set.js';
import { createApp, type AppConfig } from './app.js';

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
  config: Partial<AppConfig>;
  /** Start on the demo calibration set on a non-loopback address all the same (--allow-demo-calibration). */
  allowDemoCalibration?: boolean;
  /** Rotate these node keys before starting (the prior keys stay, so old signatures verify). */
  rotate?: { issuer?: boolean; hmac?: boolean };
  /** Be a witness too, for these logs (PROTOCOL 9.9): their keys, the witness key file, its name for a new key. */
  witnessFor?: { logs: string[]; keyFile?: string; name?: string };
}

interface OpenedNode {
  store: Store;
  keys: NodeKeys;
  /** The data folder, or the database URL without its password. */
  location: string;
  /** Stops following key rotations made by other processes. */
  unfollow: () => void;
}

/** Opens a node's store and keys: the data folder and its key file, or the shared database and the keys sealed in it. */
export async function openNode(opts: StoreOptions, rotate: StartOptions['rotate'] = {}): Promise<OpenedNode> {
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
  assertPrivateFolder(dataDir);
  const store = await openLevelStore(dataDir);
  try {
    const keys = checkLogOrigin(
      rotate.issuer || rotate.hmac ? rotateNodeKeys(dataDir, rotate, cryptoRandom, systemClock.now()) : loadOrCreateNodeKeys(dataDir, cryptoRandom, systemClock.now(), opts.logOrigin),
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
  const { store, keys, unfollow } = await openNode(typeof opts === 'string' ? { dataDir: opts } : opts);
  try {
    const { checkLog } = await import('../domain/log.js');
    const { checkLedger } = await import('../domain/ledger.js');
    const { checkProposals } = await import('../domain/proposal-check.js');
    const log = await checkLog(store, keys, onProgress);
    const ledger = await checkLedger(store);
    const proposals = await checkProposals(store);
    return { ok: log.ok && ledger.ok && proposals.ok, log, ledger: { ok: ledger.ok, problems: ledger.problems, totals: ledger.totals }, proposals };
  } finally {
    unfollow();
    await store.close();
  }
}

/** Addresses only this machine can reach: every client of a node listening on one has the same IP. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
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
    reason: opts.trustProxy ? 'on: one judge per client IP for each proposal (the IP read from X-Forwarded-For, --trust-proxy)' : `on: one judge per client IP for each proposal (listening on ${opts.host})`,
  };
}

export async function startNode(opts: StartOptions) {
  // A node others can reach must not calibrate on answers that ship in the package.
  const calibration = calibrationSetOf(opts.config);
  if (calibration.source === 'demo' && !isLoopbackHost(opts.host) && !opts.allowDemoCalibration) {
    throw new CalibrationSetError(
      `Refusing to serve on ${opts.host} with the demo calibration set${calibration.demoReason ? ` (${calibration.demoReason})` : ''}: its answers and decoys ship in the package, so any agent reaches the top tier and recognises every decoy. ` +
        'Make a private set (akas calibration init DIR) and start with --calibration DIR, or pass --allow-demo-calibration for a node whose tiers mean nothing.',
    );
  }
  const { store, keys, location, unfollow } = await openNode(opts, opts.rotate);
  let app;
  let witnessKey: { name: string; seed: string; verifierKey: string } | undefined;
  try {
    if (opts.witnessFor?.logs.length) {
      const { loadOrCreateWitnessKey } = await import('../witness/index.js');
      const { cosignerVerifierKey } = await import('../core/index.js');
      const { existsSync } = await import('node:fs');
      const keyFile = opts.witnessFor.keyFile ?? resolve(opts.dataDir, 'witness-key');
      // A new key is named after the log (its origin is unique to this node) unless named.
      const k = loadOrCreateWitnessKey(keyFile, opts.witnessFor.name ?? (existsSync(keyFile) ? undefined : `${keys.log.origin}/witness`));
      witnessKey = { name: k.name, seed: k.seed, verifierKey: cosignerVerifierKey(k.name, k.publicKey) };
    }
    app = await createApp({
      store,
      keys,
      config: { ...opts.config, ...(witnessKey ? { witnessFor: { logs: opts.witnessFor!.logs, key: witnessKey } } : {}) },
      // Logs go to stderr; stdout carries the command's own output.
      logger: opts.logLevel === 'silent' ? false : { level: opts.logLevel, stream: process.stderr },
    });
  } catch (e) {
    unfollow();
    await store.close();
    throw e;
  }
  const address = await app.listen({ host: opts.host, port: opts.port });
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    unfollow();
    await app.close();
    await store.close();
    // The regex evaluator is one worker per process (unref'd); stop it with the node.
    const { closeRegexWorker } = await import('../domain/tools/index.js');
    await closeRegexWorker();
    resolveClosed();
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  return {
    url: address,
    dataDir: location,
    calibration: { source: calibration.source, dir: calibration.dir, demoReason: calibration.demoReason, questions: calibration.pools.A.length + calibration.pools.B.length, challenges: calibration.bank.normal.length, decoys: calibration.bank.decoys.length },
    shared: store.shared === true,
    issuerDid: keys.issuer.did,
    logKey: keys.log.verifierKey,
    witnessKey: witnessKey?.verifierKey,
    signingKeyId: keys.hmac[0].signingKeyId,
    app,
    close,
    closed,
  };
}
