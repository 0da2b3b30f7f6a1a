// The node's secrets live in one file beside the LevelDB folder (never inside the store),
// created at first start with mode 0600 and reused after. A file readable by others is
// refused: the node will not run on keys that may have leaked.
import { chmodSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  generateKeyPair,
  newNodeKeyMaterial,
  nodeKeysFrom,
  rotateHmacKey,
  rotateIssuerKey,
  type NodeKeyMaterial,
  type NodeKeys,
  type RandomSource,
} from '../core/index.js';

export const NODE_KEYS_FILE = 'node-keys.json';

/** The file of version 1 (issuer and HMAC keys only), upgraded on first read. */
interface KeyFileV1 {
  version: 1;
  issuer: { privateKey: string };
  hmac: Array<{ signingKeyId: string; key: string; createdAt: number }>;
}

/** Writes a file atomically (temp file, then rename) with mode 0600. */
export function writePrivateFile(path: string, content: string) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  renameSync(tmp, path);
  chmodSync(path, 0o600);
}

/** Thrown when the node keys cannot be used as they are (mode, content, a secret that does not open them). */
export class NodeKeysError extends Error {
  override readonly name = 'NodeKeysError';
}

/** Refuses a secrets file that others may read (on systems with POSIX modes). */
export function assertPrivateMode(path: string) {
  if (process.platform === 'win32') return;
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) {
    throw new NodeKeysError(
      `${path} has mode ${mode.toString(8).padStart(4, '0')}: it holds secrets and must be readable by its owner only (chmod 600 ${path}).`,
    );
  }
}

/**
 * Refuses a data folder that others may enter (on systems with POSIX modes): it holds the
 * store (agents' records, the IPs they came from, the log) and the key file. A folder the
 * node creates is 0700; one that already existed wider is refused, never re-chmodded, as a
 * key file is: a wider mode means someone else may have read what is in it.
 */
export function assertPrivateFolder(dir: string) {
  if (process.platform === 'win32' || !existsSync(dir)) return;
  const mode = statSync(dir).mode & 0o777;
  if (mode & 0o077) {
    throw new NodeKeysError(
      `The data folder ${dir} has mode ${mode.toString(8).padStart(4, '0')}: it holds the node's store and keys and must be open to its ` +
        `owner only (chmod 700 ${dir}).`,
    );
  }
}

const keyPath = (dataDir: string) => join(dataDir, NODE_KEYS_FILE);

/** The key material of a data folder, or undefined when it has none yet. */
export function readNodeKeyMaterial(dataDir: string, now: number): NodeKeyMaterial | undefined {
  const path = keyPath(dataDir);
  if (!existsSync(path)) return undefined;
  assertPrivateMode(path);
  let file: NodeKeyMaterial | KeyFileV1;
  try {
    file = JSON.parse(readFileSync(path, 'utf8')) as NodeKeyMaterial | KeyFileV1;
  } catch (e) {
    throw new NodeKeysError(`${path} is not readable JSON (${(e as Error).message})`);
  }
  if (file.version === 1) {
    // Version 1 had one issuer key and no log key: its window starts with the node.
    const born = Math.min(...file.hmac.map((h) => h.createdAt));
    const upgraded: NodeKeyMaterial = {
      version: 2,
      issuers: [{ privateKey: file.issuer.privateKey, validFrom: born, validUntil: null }],
      rotations: [],
      hmac: file.hmac,
      log: { privateKey: generateKeyPair().privateKey, createdAt: now },
    };
    writeNodeKeyMaterial(dataDir, upgraded);
    return upgraded;
  }
  if (file.version !== 2 || !Array.isArray(file.issuers) || !file.issuers.length || !Array.isArray(file.hmac) || !file.hmac.length || !file.log) {
    throw new NodeKeysError(`${path} is not a node key file this version of akas knows`);
  }
  return file;
}

export function writeNodeKeyMaterial(dataDir: string, m: NodeKeyMaterial) {
  writePrivateFile(keyPath(dataDir), JSON.stringify(m, null, 2) + '\n');
}

/**
 * Loads the node's keys from dataDir, creating them on first start. `logOrigin` names the
 * log's origin at the first start only: a folder whose log has another origin is refused.
 */
export function loadOrCreateNodeKeys(dataDir: string, random: RandomSource, now: number, logOrigin?: string): NodeKeys {
  let m = readNodeKeyMaterial(dataDir, now);
  if (!m) {
    m = newNodeKeyMaterial(random, now, logOrigin);
    writeNodeKeyMaterial(dataDir, m);
  }
  return checkLogOrigin(nodeKeysFrom(m), logOrigin);
}

/** Refuses keys whose log origin is not the one asked for (it is fixed when the log is made). */
export function checkLogOrigin(keys: NodeKeys, logOrigin?: string): NodeKeys {
  if (logOrigin !== undefined && keys.log.origin !== logOrigin) {
    throw new NodeKeysError(
      `this node's log has the origin ${keys.log.origin}, fixed at its first start; --log-origin ${logOrigin} cannot change it (drop the flag)`,
    );
  }
  return keys;
}

/**
 * Rotates the issuer and/or HMAC key of a data folder (creating the keys first if needed)
 * and answers the new keys. A running node reads its keys at start, so it uses them from
 * its next start (`akas serve --rotate-issuer-key` rotates, then starts).
 */
export function rotateNodeKeys(dataDir: string, what: { issuer?: boolean; hmac?: boolean }, random: RandomSource, now: number): NodeKeys {
  let m = readNodeKeyMaterial(dataDir, now) ?? newNodeKeyMaterial(random, now);
  if (what.issuer) m = rotateIssuerKey(m, now);
  if (what.hmac) m = rotateHmacKey(m, random, now);
  writeNodeKeyMaterial(dataDir, m);
  return nodeKeysFrom(m);
}
