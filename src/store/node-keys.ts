// The node's secrets live in one file beside the LevelDB folder (never inside the store),
// created at first start with mode 0600 and reused after.
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { didKeyFromPublicKey, generateKeyPair, publicKeyFromPrivate, sha256Hex, type NodeKeys, type RandomSource } from '../core/index.js';

interface KeyFile {
  version: 1;
  issuer: { privateKey: string };
  hmac: Array<{ signingKeyId: string; key: string; createdAt: number }>;
}

export const NODE_KEYS_FILE = 'node-keys.json';

/** Writes a file atomically (temp file, then rename) with mode 0600. */
export function writePrivateFile(path: string, content: string) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  renameSync(tmp, path);
  chmodSync(path, 0o600);
}

/** Loads the node's keys from dataDir, creating them on first start. */
export function loadOrCreateNodeKeys(dataDir: string, random: RandomSource, now: number): NodeKeys {
  const path = join(dataDir, NODE_KEYS_FILE);
  let file: KeyFile;
  if (existsSync(path)) {
    file = JSON.parse(readFileSync(path, 'utf8')) as KeyFile;
  } else {
    const hmacKey = random(32).toString('hex');
    file = {
      version: 1,
      issuer: { privateKey: generateKeyPair().privateKey },
      hmac: [{ signingKeyId: 'hk_' + sha256Hex(Buffer.from(hmacKey, 'hex')).slice(0, 16), key: hmacKey, createdAt: now }],
    };
    writePrivateFile(path, JSON.stringify(file, null, 2) + '\n');
  }
  const publicKey = publicKeyFromPrivate(file.issuer.privateKey);
  return {
    issuer: { publicKey, privateKey: file.issuer.privateKey, did: didKeyFromPublicKey(publicKey) },
    hmac: file.hmac.map((h) => ({ signingKeyId: h.signingKeyId, key: Buffer.from(h.key, 'hex'), createdAt: h.createdAt })),
  };
}
