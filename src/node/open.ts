// Opening a node: its store (a data folder, or a postgres:// URL several processes share) and
// its keys (the data folder's key file, or the set sealed in the database). What every command
// that acts on a node's data needs (`akas serve`, `akas log check`, `akas admin revoke` on a
// stopped node) and nothing more: no HTTP server is loaded here (ARCHITECTURE 1).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cryptoRandom, newNodeKeyMaterial, nodeKeysFrom, systemClock, type NodeKeys } from '../core/index.js';
import {
  assertPrivateFolder,
  checkLogOrigin,
  followSealedNodeKeys,
  loadOrCreateNodeKeys,
  loadOrCreateSealedNodeKeys,
  NODE_KEYS_FILE,
  openLevelStore,
  openStore,
  readNodeKeyMaterial,
  rotateNodeKeys,
  type OpenedStore,
} from '../store/index.js';
import type { Strategies } from '../domain/context.js';

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

/** Node keys to rotate as the node opens (the prior keys stay, so old signatures verify). */
export interface Rotate {
  issuer?: boolean;
  hmac?: boolean;
}

export interface OpenedNode {
  store: OpenedStore;
  keys: NodeKeys;
  /**
   * The node's strategies on this store (strategies.ts), chosen here, where the node is
   * assembled; loaded when asked, so that a command that only audits loads none of them.
   */
  strategies: () => Promise<Strategies>;
  /** The data folder, or the database URL without its password. */
  location: string;
  /** Stops following key rotations made by other processes. */
  unfollow: () => void;
}

/** The strategies of a node on this store, chosen when first asked (strategies.ts loads the domain's parts). */
const strategiesOf = (store: OpenedStore) => () => import('./strategies.js').then((m) => m.strategiesFor(store));

/** A data folder that holds no node: an audit refuses it rather than make one (exit 2). */
export class NoNodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoNodeError';
  }
}

/** The shared database and the keys sealed in it (made at the first start, with the log's origin if given). */
async function openShared(opts: StoreOptions & { store: string }, rotate: Rotate): Promise<OpenedNode> {
  const store = await openStore(opts.store);
  try {
    const initial = opts.logOrigin ? newNodeKeyMaterial(cryptoRandom, systemClock.now(), opts.logOrigin) : undefined;
    const material = await loadOrCreateSealedNodeKeys(store, opts.nodeSecret, cryptoRandom, systemClock.now(), { rotate, ...(initial ? { initial } : {}) });
    const keys = checkLogOrigin(nodeKeysFrom(material), opts.logOrigin);
    // Another process may rotate the keys later: this one follows (one set per deployment).
    const unfollow = followSealedNodeKeys(store, opts.nodeSecret!, keys);
    return { store, keys, strategies: strategiesOf(store), location: store.location, unfollow };
  } catch (e) {
    await store.close();
    throw e;
  }
}

/** Refuses a folder that holds no node (no store, no key file), saying what to check. */
function assertHoldsNode(dataDir: string): void {
  if (!existsSync(dataDir)) throw new NoNodeError(`there is no folder ${dataDir}: nothing to check (is --data right?)`);
  if (!existsSync(join(dataDir, 'level', 'CURRENT')) || !existsSync(join(dataDir, NODE_KEYS_FILE))) {
    throw new NoNodeError(`${dataDir} holds no akas node (no store and node keys in it): nothing to check (is --data right?)`);
  }
}

/** The data folder's store and key file: made when missing unless `existing`. */
async function openFolder(opts: StoreOptions, rotate: Rotate, existing: boolean): Promise<OpenedNode> {
  const dataDir = resolve(opts.dataDir);
  if (existing) assertHoldsNode(dataDir);
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
    return { store, keys, strategies: strategiesOf(store), location: dataDir, unfollow: () => undefined };
  } catch (e) {
    await store.close();
    throw e;
  }
}

/**
 * Opens a node's store and keys: the data folder and its key file, or the shared database and
 * the keys sealed in it. existing: only a folder that already holds a node (an audit, a status
 * change on a stopped node), never creating one.
 */
export async function openNode(opts: StoreOptions, rotate: Rotate = {}, existing = false): Promise<OpenedNode> {
  return opts.store ? openShared({ ...opts, store: opts.store }, rotate) : openFolder(opts, rotate, existing);
}
