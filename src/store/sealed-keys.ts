// Node keys kept in a shared store (ARCHITECTURE 7): every process of a deployment signs with
// the same issuer, HMAC and log keys, so they live in the database, sealed (AES-256-GCM) under
// a key derived (scrypt) from a secret the operator gives every process (AKAS_NODE_SECRET);
// the secret itself is never stored. The first process to start creates the keys under a
// lock (two starting together agree on one set); a process given another secret cannot open
// them and refuses to start. A rotation re-seals the keys, and every running process follows
// it through the store's watch.
import { createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCb, type ScryptOptions } from 'node:crypto';
import { newNodeKeyMaterial, nodeKeysFrom, rotateHmacKey, rotateIssuerKey, type NodeKeyMaterial, type NodeKeys, type RandomSource } from '../core/index.js';
import { NodeKeysError } from './node-keys.js';
import { space, type Store } from './types.js';

interface SealedNodeKeys {
  version: 1;
  kdf: { name: 'scrypt'; salt: string; N: number; r: number; p: number };
  iv: string;
  tag: string;
  /** The key material (JSON), encrypted. */
  data: string;
  /** The current issuer's did:key, in clear (public): it names the keys in messages. */
  issuer: string;
  updatedAt: number;
}

export const SealedKeys = space<SealedNodeKeys>('node-keys');
const KEY = 'current';
const LOCK = 'node-keys';
/** Binds the ciphertext to its use: the same secret sealing something else never opens as keys. */
const AAD = Buffer.from('akas node keys v1');
const SCRYPT = { N: 2 ** 15, r: 8, p: 1 };
/** Shortest secret accepted: it is the only thing between a database dump and the keys. */
export const MIN_SECRET_LENGTH = 16;

const derived = new Map<string, Promise<Buffer>>();

function deriveKey(secret: string, kdf: SealedNodeKeys['kdf']): Promise<Buffer> {
  const id = `${kdf.salt}:${kdf.N}:${kdf.r}:${kdf.p}:${secret}`;
  let key = derived.get(id);
  if (!key) {
    const options: ScryptOptions = { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * kdf.N * kdf.r };
    key = new Promise<Buffer>((resolve, reject) => scryptCb(secret, Buffer.from(kdf.salt, 'base64'), 32, options, (e, k) => (e ? reject(e) : resolve(k))));
    derived.clear(); // one secret per process: keep only the latest
    derived.set(id, key);
  }
  return key;
}

/** Refuses a missing or short secret, saying how to give one. */
export function checkNodeSecret(secret: string | undefined): string {
  if (!secret) {
    throw new NodeKeysError(
      'a shared store keeps the node keys in the database, sealed under a secret every process is given: set AKAS_NODE_SECRET (or ' +
        '--node-secret-file FILE), the same for every process',
    );
  }
  if (secret.length < MIN_SECRET_LENGTH)
    throw new NodeKeysError(`the node secret must be at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32)`);
  return secret;
}

async function seal(m: NodeKeyMaterial, secret: string, now: number, kdf?: SealedNodeKeys['kdf']): Promise<SealedNodeKeys> {
  const params = kdf ?? { name: 'scrypt' as const, salt: randomBytes(16).toString('base64'), ...SCRYPT };
  const key = await deriveKey(secret, params);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(AAD);
  const data = Buffer.concat([cipher.update(JSON.stringify(m), 'utf8'), cipher.final()]);
  return {
    version: 1,
    kdf: params,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
    issuer: nodeKeysFrom(m).issuer.did,
    updatedAt: now,
  };
}

async function unseal(sealed: SealedNodeKeys, secret: string, where: string): Promise<NodeKeyMaterial> {
  if (sealed.version !== 1 || sealed.kdf?.name !== 'scrypt') throw new NodeKeysError(`the node keys in ${where} are sealed in a way this akas does not know`);
  const key = await deriveKey(secret, sealed.kdf);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(AAD);
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const json = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
    return JSON.parse(json) as NodeKeyMaterial;
  } catch {
    throw new NodeKeysError(
      `the node secret does not open the node keys in ${where} (issuer ${sealed.issuer}): these keys disagree with this process's. Every ` +
        `process of one deployment must be given the same AKAS_NODE_SECRET; not starting.`,
    );
  }
}

export interface SealedKeysOptions {
  /** Rotate these keys (under the lock) before answering them. */
  rotate?: { issuer?: boolean; hmac?: boolean };
  /** Keys to store when the store has none yet (a copy from a LevelDB node brings its own). */
  initial?: NodeKeyMaterial;
}

/**
 * The node keys of a shared store: opened with the secret, created (or `initial` stored) when
 * there are none, rotated when asked, all under one lock.
 */
export async function loadOrCreateSealedNodeKeys(
  store: Store,
  secretIn: string | undefined,
  random: RandomSource,
  now: number,
  options: SealedKeysOptions = {},
): Promise<NodeKeyMaterial> {
  const secret = checkNodeSecret(secretIn);
  const existing = await store.get(SealedKeys, KEY);
  // Open outside the lock first: a wrong secret is refused before anything is written.
  if (existing) await unseal(existing, secret, store.location);
  if (existing && !options.rotate?.issuer && !options.rotate?.hmac) return unseal(existing, secret, store.location);
  return store.transact([LOCK], async (tx) => {
    const current = await tx.get(SealedKeys, KEY);
    let m = current ? await unseal(current, secret, store.location) : (options.initial ?? newNodeKeyMaterial(random, now));
    if (current && !options.rotate?.issuer && !options.rotate?.hmac) return m;
    if (options.rotate?.issuer) m = rotateIssuerKey(m, now);
    if (options.rotate?.hmac) m = rotateHmacKey(m, random, now);
    tx.put(SealedKeys, KEY, await seal(m, secret, now, current?.kdf));
    return m;
  });
}

/** The current issuer of a shared store's keys, read without the secret (or undefined: none yet). */
export async function sealedIssuer(store: Store): Promise<string | undefined> {
  return (await store.get(SealedKeys, KEY))?.issuer;
}

/**
 * Keeps `keys` (the object every part of the running node reads) equal to the store's: when
 * another process rotates them, they are re-opened and replaced in place. Answers a function
 * that stops following.
 */
export function followSealedNodeKeys(store: Store, secretIn: string, keys: NodeKeys, onError: (e: unknown) => void = () => undefined): () => void {
  const secret = checkNodeSecret(secretIn);
  let seen = '';
  let running: Promise<void> = Promise.resolve();
  const reload = () => {
    running = running
      .then(async () => {
        const sealed = await store.get(SealedKeys, KEY);
        if (!sealed || sealed.iv === seen) return;
        const m = await unseal(sealed, secret, store.location);
        seen = sealed.iv;
        Object.assign(keys, nodeKeysFrom(m));
      })
      .catch(onError);
  };
  reload();
  return store.watch(SealedKeys, reload, reload);
}
