// C2SP tlog-cosignature, the Ed25519 `cosignature/v1` type (signature type 0x04 of C2SP
// signed-note): a witness's timestamped statement that, as of that time, the checkpoint it
// signs is the largest consistent tree head it has seen for the log. One file for the signer
// (`akas witness`), the node that collects cosignatures, and the offline verifier.
//
// A cosignature is a note signature line on the checkpoint:
//   — <cosigner name> base64(key ID || u64 big-endian timestamp || Ed25519 signature)
// key ID = SHA-256(<name> || "\n" || 0x04 || 32-byte public key)[:4], and the signature is
// over "cosignature/v1\ntime <timestamp>\n" followed by the whole checkpoint text.
//
// The ML-DSA-44 type (0x06) that the specification recommends for new deployments is not
// implemented: Node 20's crypto has no ML-DSA, and the issue asks for cosignature/v1.
import { sha256Hex } from './hash.js';
import { ed25519, runNow, type Checking } from './checking.js';
import { publicKeyFromPrivate, sign } from './ed25519.js';
import { decodeBase64, isNoteKeyName, noteSignatureLine, parseNote, type NoteSignatureLine } from './note.js';

/** Signature type of Ed25519 signed notes (C2SP signed-note). */
export const ALG_ED25519_NOTE = 0x01;
/** Signature type of timestamped Ed25519 checkpoint cosignatures (C2SP signed-note, tlog-cosignature). */
export const ALG_COSIGNATURE_V1 = 0x04;
/** The domain-separating header line of the signed message. */
export const COSIGNATURE_V1_HEADER = 'cosignature/v1';
/** Bytes after the key ID: u64 timestamp and a 64-byte Ed25519 signature. */
const TIMESTAMPED_BYTES = 8 + 64;
/** The two key types a cosigner key may be given as (0x04, or a plain Ed25519 note key 0x01). */
const cosignerKeyType = (alg: number) => alg === 0x04 || alg === 0x01;
/** tlog-cosignature: "`timestamp` ... MUST NOT exceed 2^63 - 1". */
const MAX_TIMESTAMP = (1n << 63n) - 1n;
const HEX32 = /^[0-9a-f]{64}$/i;
const HEX8 = /^[0-9a-f]{8}$/i;

/** A cosigner's public key, parsed: hex fields lowercase. */
export interface CosignerKey {
  name: string;
  /** 8 hex: SHA-256(name || "\n" || 0x04 || public key)[:4]. */
  keyId: string;
  /** 64 hex. */
  publicKey: string;
}

/** A cosigner's signing key (secret: the seed). */
export interface CosignerSigner extends CosignerKey {
  /** 64 hex: the Ed25519 seed. */
  seed: string;
}

/** A cosignature found on a checkpoint and verified. */
export interface VerifiedCosignature {
  name: string;
  keyId: string;
  /** POSIX seconds. */
  timestamp: number;
  line: string;
}

/**
 * tlog-cosignature: "The key ID for Ed25519 cosignatures MUST be computed as
 * SHA-256(<name> || "\n" || 0x04 || 32-byte Ed25519 cosigner public key)[:4]".
 */
export function cosignerKeyId(name: string, publicKeyHex: string): string {
  if (!isNoteKeyName(name)) throw new TypeError(`cosignature: invalid key name ${JSON.stringify(name)}`);
  if (typeof publicKeyHex !== 'string' || !HEX32.test(publicKeyHex)) throw new TypeError('cosignature: an Ed25519 public key is 64 hex chars');
  return sha256Hex(Buffer.concat([Buffer.from(`${name}\n`, 'utf8'), Buffer.of(ALG_COSIGNATURE_V1), Buffer.from(publicKeyHex, 'hex')])).slice(0, 8);
}

const noteKeyIdOf = (name: string, alg: number, key: Buffer) => sha256Hex(Buffer.concat([Buffer.from(`${name}\n`, 'utf8'), Buffer.of(alg), key])).slice(0, 8);

/** The cosigner's verifier key ("vkey"): "<name>+<key ID>+base64(0x04 || public key)". */
export function cosignerVerifierKey(name: string, publicKeyHex: string): string {
  const id = cosignerKeyId(name, publicKeyHex);
  return `${name}+${id}+${Buffer.concat([Buffer.of(ALG_COSIGNATURE_V1), Buffer.from(publicKeyHex, 'hex')]).toString('base64')}`;
}

/** The cosigner's signer key string: "PRIVATE+KEY+<name>+<key ID>+base64(0x04 || seed)". Secret. */
export function cosignerSignerKey(name: string, seedHex: string): string {
  const id = cosignerKeyId(name, publicKeyFromPrivate(seedHex.toLowerCase()));
  return `PRIVATE+KEY+${name}+${id}+${Buffer.concat([Buffer.of(ALG_COSIGNATURE_V1), Buffer.from(seedHex, 'hex')]).toString('base64')}`;
}

/** "<name>+<hex8>+<base64>" split, the key bytes decoded; null when malformed. */
function splitKeyString(s: string): { name: string; id: string; alg: number; key: Buffer } | null {
  const first = s.indexOf('+');
  const second = s.indexOf('+', first + 1);
  if (first < 0 || second < 0) return null;
  const name = s.slice(0, first);
  const id = s.slice(first + 1, second);
  const bytes = decodeBase64(s.slice(second + 1));
  if (!isNoteKeyName(name) || !HEX8.test(id) || !bytes || bytes.length !== 33) return null;
  return { name, id: id.toLowerCase(), alg: bytes[0], key: bytes.subarray(1) };
}

/**
 * Parses a cosigner's verifier key. A type-0x04 vkey is taken as it is (its key ID must
 * match). A plain Ed25519 note vkey (type 0x01) names the same key as a cosigner, as Go's
 * transparency-dev/formats accepts it: its key ID is checked as 0x01 and recomputed as 0x04.
 * Null for anything else (other types, a wrong key ID, bad base64, a bad name).
 */
export function parseCosignerKey(s: string): CosignerKey | null {
  if (typeof s !== 'string') return null;
  const k = splitKeyString(s);
  if (!k || !cosignerKeyType(k.alg)) return null;
  if (noteKeyIdOf(k.name, k.alg, k.key) !== k.id) return null;
  const publicKey = k.key.toString('hex');
  return { name: k.name, keyId: cosignerKeyId(k.name, publicKey), publicKey };
}

/** Parses a cosigner's signer key string (type 0x04, or a plain Ed25519 note signer key 0x01); null when malformed. */
export function parseCosignerSignerKey(s: string): CosignerSigner | null {
  if (typeof s !== 'string' || !s.startsWith('PRIVATE+KEY+')) return null;
  const k = splitKeyString(s.slice('PRIVATE+KEY+'.length));
  if (!k || !cosignerKeyType(k.alg)) return null;
  const seed = k.key.toString('hex');
  const publicKey = publicKeyFromPrivate(seed);
  if (noteKeyIdOf(k.name, k.alg, Buffer.from(publicKey, 'hex')) !== k.id) return null;
  return { name: k.name, keyId: cosignerKeyId(k.name, publicKey), publicKey, seed };
}

/**
 * The signed message (tlog-cosignature, "Ed25519 signed message"): "MUST be two newline
 * terminated lines (one header line and one timestamp line) followed by the whole note body
 * of the cosigned checkpoint (including the final newline, but not including any signature
 * lines)". The header "MUST be the fixed string `cosignature/v1`"; the timestamp line "MUST
 * consist of the string `time`, a single space (0x20), and [the timestamp] encoded as an ASCII
 * decimal with no leading zeroes".
 */
export function cosignedMessage(checkpointText: string, timestamp: number): Buffer {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new TypeError('cosignature: the timestamp is a non-negative whole number of seconds');
  if (typeof checkpointText !== 'string' || !checkpointText.endsWith('\n')) throw new TypeError('cosignature: the checkpoint text ends in a newline');
  return Buffer.from(`${COSIGNATURE_V1_HEADER}\ntime ${timestamp}\n${checkpointText}`, 'utf8');
}

/**
 * The cosignature line of a checkpoint text at a timestamp (POSIX seconds), ending in a
 * newline. tlog-witness: "The cosignature MUST NOT omit the timestamp, i.e. the timestamp MUST
 * NOT be zero".
 */
export function cosign(checkpointText: string, signer: Pick<CosignerSigner, 'name' | 'seed'>, timestamp: number): string {
  if (!(timestamp > 0)) throw new TypeError('cosignature: the timestamp must not be zero');
  const publicKey = publicKeyFromPrivate(signer.seed.toLowerCase());
  const id = cosignerKeyId(signer.name, publicKey);
  // tlog-cosignature: timestamped_signature is "serialized in sequence, with the timestamp
  // encoded in big-endian order".
  const ts = Buffer.alloc(8);
  ts.writeBigUInt64BE(BigInt(timestamp));
  const signature = Buffer.from(sign(signer.seed, cosignedMessage(checkpointText, timestamp)), 'hex');
  return noteSignatureLine(signer.name, id, Buffer.concat([ts, signature]));
}

/** The timestamp a cosignature line's bytes carry, or null when they are not a timestamped Ed25519 signature. */
export function cosignatureTimestamp(bytesAfterKeyId: Uint8Array): number | null {
  if (bytesAfterKeyId.length !== TIMESTAMPED_BYTES) return null;
  const t = Buffer.from(bytesAfterKeyId.buffer, bytesAfterKeyId.byteOffset, 8).readBigUInt64BE(0);
  if (t > MAX_TIMESTAMP || t > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(t);
}

/** Whether one signature line is a valid cosignature of the text by the key. */
function* checkLine(text: string, key: CosignerKey, line: NoteSignatureLine): Checking<{ ok: true; timestamp: number } | { ok: false; why: string }> {
  const timestamp = cosignatureTimestamp(line.signature);
  if (timestamp === null) return { ok: false, why: 'not a timestamped Ed25519 cosignature (72 bytes after the key ID)' };
  if (timestamp === 0) return { ok: false, why: 'the timestamp is zero' };
  const ok = yield* ed25519(key.publicKey, cosignedMessage(text, timestamp), line.signature.subarray(8));
  return ok ? { ok: true, timestamp } : { ok: false, why: 'the signature does not verify' };
}

export interface CosignatureReport {
  /** The checkpoint text the note carries (null when the note is malformed). */
  text: string | null;
  /** Valid cosignatures by the given keys, one per key at most. */
  valid: VerifiedCosignature[];
  /** Lines whose name and key ID match a given key but whose signature fails, with why. */
  invalid: Array<{ name: string; keyId: string; why: string }>;
  /** Given keys with no cosignature on the note. */
  missing: string[];
  /** Why the note or a key is unusable (then nothing counts). */
  error?: string;
}

/**
 * The cosignatures of a signed checkpoint by the given cosigner keys (vkey strings or parsed).
 * tlog-cosignature: "Clients are configured with tuples of (cosigner name, public key,
 * supported cosignature version) and based on that they can compute the expected name and key
 * ID, and ignore any signature lines that don't match the name and key ID." Lines of unknown
 * keys (the log's own signature among them) are ignored; a matching line that fails is
 * reported invalid. `now` (POSIX seconds), when given, refuses cosignatures dated more than
 * `maxFutureSeconds` (default 600) after it ("verifiers MAY reject cosignatures with
 * timestamps in the future"). Never throws on the note's content.
 */
export function verifyCosignatures(
  signedNote: string | Uint8Array,
  keys: ReadonlyArray<string | CosignerKey>,
  options: { now?: number; maxFutureSeconds?: number } = {},
): CosignatureReport {
  return runNow(cosignaturesChecking(signedNote, keys, options));
}

/** verifyCosignatures as a check that yields its signatures (src/core/checking.ts), for the browser build's asynchronous Ed25519. */
export function* cosignaturesChecking(
  signedNote: string | Uint8Array,
  keys: ReadonlyArray<string | CosignerKey>,
  options: { now?: number; maxFutureSeconds?: number } = {},
): Checking<CosignatureReport> {
  const ring = new Map<string, CosignerKey>();
  for (const [i, k] of keys.entries()) {
    const key =
      typeof k === 'string'
        ? parseCosignerKey(k)
        : k && isNoteKeyName(k.name) && HEX32.test(k.publicKey)
          ? { ...k, keyId: cosignerKeyId(k.name, k.publicKey) }
          : null;
    if (!key) return { text: null, valid: [], invalid: [], missing: [], error: `witness key #${i} is not a cosignature/v1 (or Ed25519) verifier key` };
    ring.set(`${key.name}+${key.keyId}`, key);
  }
  const parsed = parseNote(signedNote);
  if (!parsed.ok) return { text: null, valid: [], invalid: [], missing: [...ring.keys()], error: parsed.error };
  const validById = new Map<string, VerifiedCosignature>();
  const invalidById = new Map<string, CosignatureReport['invalid'][number]>();
  const seen = new Set<string>();
  const judged = new Set<string>();
  for (const line of parsed.signatures) {
    const id = `${line.name}+${line.keyId}`;
    const key = ring.get(id);
    if (!key || judged.has(line.line)) continue; // the same line twice has one verdict
    judged.add(line.line);
    seen.add(id);
    // Every line under a given key is verified (signed-note: "If the key name and ID match a
    // known key, verifiers MUST verify the signature"): a valid line does not hide a failing one.
    const r = yield* checkLine(parsed.text, key, line);
    const why = !r.ok
      ? r.why
      : options.now !== undefined && r.timestamp > options.now + (options.maxFutureSeconds ?? 600)
        ? `dated ${r.timestamp}, in the future`
        : null;
    if (why !== null) {
      if (!invalidById.has(id)) invalidById.set(id, { name: line.name, keyId: line.keyId, why });
    } else if (r.ok && !validById.has(id)) validById.set(id, { name: line.name, keyId: line.keyId, timestamp: r.timestamp, line: line.line });
  }
  // A key with a failing line counts as no cosignature, whatever its other lines.
  const valid = [...validById].filter(([id]) => !invalidById.has(id)).map(([, v]) => v);
  const missing = [...ring.keys()].filter((id) => !seen.has(id));
  return { text: parsed.text, valid, invalid: [...invalidById.values()], missing };
}

/** The note's text with its signature lines plus the given extra lines (each ending in a newline), deduplicated. */
export function addSignatureLines(signedNote: string, lines: string[]): string {
  const have = new Set(signedNote.slice(signedNote.lastIndexOf('\n\n') + 2).split('\n'));
  const extra = lines.map((l) => l.replace(/\n$/, '')).filter((l) => l && !have.has(l));
  return extra.length ? signedNote + extra.map((l) => `${l}\n`).join('') : signedNote;
}
