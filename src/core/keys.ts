// The node's own keys (PROTOCOL 8.3): the VC issuer Ed25519 keys (the current one and every
// prior one, with the window in which each was the issuer's, chained by signed rotation
// statements), the HMAC keys (current first; prior ones kept so old MACs still verify) and
// the transparency log's Ed25519 key. `NodeKeyMaterial` is what the key file holds;
// `NodeKeys` is what the running node uses. Pure: the file lives in src/store/node-keys.ts.
import { didKeyFromPublicKey, ed25519Multibase } from './didkey.js';
import { canonicalize } from './jcs.js';
import { generateKeyPair, publicKeyFromPrivate, sign } from './ed25519.js';
import { sha256Hex } from './hash.js';
import type { RandomSource } from './ids.js';
import { issuerRotation, type PublishedIssuerKey, type SignedIssuerRotation } from './credential.js';
import type { LogKeyEndorsement } from './log-entry.js';
import { isNoteKeyName, verifierKeyString } from './note.js';

/** The node key file's content (secrets: mode 0600, never logged). */
export interface NodeKeyMaterial {
  version: 2;
  /** Oldest first; the last one is the current issuer (validUntil null). */
  issuers: Array<{ privateKey: string; validFrom: number; validUntil: number | null }>;
  rotations: SignedIssuerRotation[];
  /** Current first. */
  hmac: Array<{ signingKeyId: string; key: string; createdAt: number }>;
  /**
   * The log key, and its origin when one was chosen at the first start (`--log-origin`; the
   * C2SP recommendation: the log's URL without its scheme). Without one: akas/<fingerprint>.
   */
  log: { privateKey: string; createdAt: number; origin?: string };
}

export interface NodeKeys {
  /** The current issuer key: credentials are signed with it. */
  issuer: { publicKey: string; privateKey: string; did: string; validFrom: number };
  /** Every issuer key the node has had, oldest first, the current one last (public halves only). */
  issuers: PublishedIssuerKey[];
  rotations: SignedIssuerRotation[];
  hmac: Array<{ signingKeyId: string; key: Buffer; createdAt: number }>;
  /** The Ed25519 key that signs the transparency log's checkpoints (C2SP signed notes). */
  log: {
    publicKey: string;
    privateKey: string;
    /** The log's origin line: akas/ + the fingerprint of the node's first issuer key (stable across issuer rotations). */
    origin: string;
    /** The C2SP note verifier key string (`origin+hash+base64`). */
    verifierKey: string;
    /** The current issuer key vouching for the log key (Ed25519, 128 hex, over the JCS of the statement). */
    endorsement: LogKeyEndorsement & { signature: string };
  };
}

/** The key new HMACs are made with. */
export const currentHmac = (keys: NodeKeys) => keys.hmac[0];

/** The signingKeyId of an HMAC key: hk_ + 16 hex of its sha256 (names the key without revealing it). */
export const hmacKeyId = (keyHex: string) => 'hk_' + sha256Hex(Buffer.from(keyHex, 'hex')).slice(0, 16);

/** Fresh key material for a new node. */
export function newNodeKeyMaterial(random: RandomSource, now: number, logOrigin?: string): NodeKeyMaterial {
  if (logOrigin !== undefined && !isNoteKeyName(logOrigin))
    throw new TypeError(`a log origin is non-empty text with no space and no '+': ${JSON.stringify(logOrigin)}`);
  const hmacKey = random(32).toString('hex');
  return {
    version: 2,
    issuers: [{ privateKey: generateKeyPair().privateKey, validFrom: now, validUntil: null }],
    rotations: [],
    hmac: [{ signingKeyId: hmacKeyId(hmacKey), key: hmacKey, createdAt: now }],
    log: { privateKey: generateKeyPair().privateKey, createdAt: now, ...(logOrigin ? { origin: logOrigin } : {}) },
  };
}

/**
 * Material with a new current issuer key from `now`: the old key's window closes, and the
 * rotation statement is signed by both keys.
 */
export function rotateIssuerKey(m: NodeKeyMaterial, now: number): NodeKeyMaterial {
  const old = m.issuers[m.issuers.length - 1];
  const next = generateKeyPair();
  const from = didKeyFromPublicKey(publicKeyFromPrivate(old.privateKey));
  const to = didKeyFromPublicKey(next.publicKey);
  const statement = canonicalize(issuerRotation(from, to, now));
  return {
    ...m,
    issuers: [...m.issuers.slice(0, -1), { ...old, validUntil: now }, { privateKey: next.privateKey, validFrom: now, validUntil: null }],
    rotations: [
      ...m.rotations,
      { ...issuerRotation(from, to, now), signatures: { from: sign(old.privateKey, statement), to: sign(next.privateKey, statement) } },
    ],
  };
}

/** Material with a new current HMAC key; prior keys stay so MACs made with them still verify. */
export function rotateHmacKey(m: NodeKeyMaterial, random: RandomSource, now: number): NodeKeyMaterial {
  const key = random(32).toString('hex');
  return { ...m, hmac: [{ signingKeyId: hmacKeyId(key), key, createdAt: now }, ...m.hmac] };
}

/** The keys a running node uses, from its material. */
export function nodeKeysFrom(m: NodeKeyMaterial): NodeKeys {
  const issuers = m.issuers.map((k) => {
    const publicKey = publicKeyFromPrivate(k.privateKey);
    return { publicKey, privateKey: k.privateKey, validFrom: k.validFrom, validUntil: k.validUntil };
  });
  const current = issuers[issuers.length - 1];
  const logPublic = publicKeyFromPrivate(m.log.privateKey);
  const origin = m.log.origin ?? `akas/${ed25519Multibase(issuers[0].publicKey)}`;
  const verifierKey = verifierKeyString(origin, logPublic);
  const statement: LogKeyEndorsement = { type: 'akas.log-key.v1', origin, verifierKey, issuer: didKeyFromPublicKey(current.publicKey) };
  return {
    issuer: { publicKey: current.publicKey, privateKey: current.privateKey, did: didKeyFromPublicKey(current.publicKey), validFrom: current.validFrom },
    issuers: issuers.map((k) => ({
      did: didKeyFromPublicKey(k.publicKey),
      publicKeyMultibase: ed25519Multibase(k.publicKey),
      validFrom: k.validFrom,
      validUntil: k.validUntil,
    })),
    rotations: m.rotations,
    hmac: m.hmac.map((h) => ({ signingKeyId: h.signingKeyId, key: Buffer.from(h.key, 'hex'), createdAt: h.createdAt })),
    log: {
      publicKey: logPublic,
      privateKey: m.log.privateKey,
      origin,
      verifierKey,
      endorsement: { ...statement, signature: sign(current.privateKey, canonicalize(statement)) },
    },
  };
}

/** A complete set of fresh node keys in memory (tests, benchmarks). */
export const freshNodeKeys = (random: RandomSource, now = 0) => nodeKeysFrom(newNodeKeyMaterial(random, now));
