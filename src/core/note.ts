// C2SP signed notes (the format of golang.org/x/mod/sumdb/note) with Ed25519 keys, and the
// C2SP tlog-checkpoint text they carry for the transparency log.
//
// A signed note is its text (lines ending in "\n"), a blank line, then one line per signature:
// "— <key name> <base64(4-byte key hash || 64-byte Ed25519 signature over the text)>\n".
// Keys travel as strings: "<name>+<hex8 key hash>+<base64(0x01 || public key)>" for verifiers,
// "PRIVATE+KEY+<name>+<hex8>+<base64(0x01 || seed)>" for signers; the key hash is the first
// 4 bytes of SHA-256(name || "\n" || 0x01 || public key).
import { sha256Hex } from './hash.js';
import { ed25519, runNow, type Checking } from './checking.js';
import { publicKeyFromPrivate, sign } from './ed25519.js';

/** Largest signed note openNote reads, in UTF-8 bytes. */
export const NOTE_MAX_BYTES = 1 << 20;
/** Most signature lines openNote reads (the limit Go's sumdb/note applies). */
export const NOTE_MAX_SIGNATURES = 100;

const ALG_ED25519 = 0x01;
const SIG_PREFIX = '\u2014 ';
const HEX32 = /^[0-9a-f]{64}$/i;
const HEX8 = /^[0-9a-f]{8}$/i;
// Canonical padded standard base64 (the re-encoding check below also refuses stray low bits).
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// Go's unicode.IsSpace is exactly the White_Space property; \s would miss U+0085 and add U+FEFF.
const SPACE = /\p{White_Space}/u;
// Lone surrogates have no UTF-8 encoding: the bytes signed would not be the text given.
const LONE_SURROGATE = /\p{Cs}/u;
// The note may hold no ASCII control character other than newline (as Go's Open requires).
const CONTROL = /[\x00-\x09\x0b-\x1f]/;

/** An Ed25519 note verifier key, parsed: hex fields are lowercase. */
export interface NoteVerifierKey {
  name: string;
  /** 8 hex chars: the 4-byte key hash. */
  keyHash: string;
  /** 64 hex chars: the raw public key. */
  publicKey: string;
}

/** An Ed25519 note signer key, parsed (with the public key it derives). */
export interface NoteSignerKey extends NoteVerifierKey {
  /** 64 hex chars: the raw 32-byte seed. Secret. */
  seed: string;
}

/** What openNote found. `ok` only when at least one known key signed and none failed. */
export interface OpenedNote {
  ok: boolean;
  /** The signed text (with its final newline); null when the note could not be parsed. */
  text: string | null;
  /** Names of the known keys whose signatures verified, in note order. */
  verifiedBy: string[];
  /** Why the note is refused; empty when ok. */
  errors: string[];
}

/** A C2SP tlog-checkpoint. */
export interface Checkpoint {
  origin: string;
  size: number;
  rootHash: Buffer;
  /** Lines after the root hash, each non-empty, without their newline. */
  extensions: string[];
}

/** Whether a key name is valid: non-empty, no '+', no Unicode space, well-formed text. */
export function isNoteKeyName(name: unknown): name is string {
  return typeof name === 'string' && name !== '' && !name.includes('+') && !SPACE.test(name) && !LONE_SURROGATE.test(name) && !CONTROL.test(name);
}

/** Canonical padded standard base64 to bytes; null for anything else (stray bits, no padding, other alphabets). */
export function decodeBase64(s: string): Buffer | null {
  if (!BASE64.test(s)) return null;
  const bytes = Buffer.from(s, 'base64');
  return bytes.toString('base64') === s ? bytes : null;
}

const keyHashOf = (name: string, publicKey: Buffer) =>
  sha256Hex(Buffer.concat([Buffer.from(`${name}\n`, 'utf8'), Buffer.of(ALG_ED25519), publicKey])).slice(0, 8);

function checkName(name: string): void {
  if (!isNoteKeyName(name)) throw new TypeError(`note: invalid key name ${JSON.stringify(name)}`);
}

function checkHexKey(hex: string, what: string): void {
  if (typeof hex !== 'string' || !HEX32.test(hex)) throw new TypeError(`note: an Ed25519 ${what} is 64 hex chars`);
}

/** The 4-byte key hash (8 lowercase hex) of an Ed25519 key under a name. Throws on a bad name or key. */
export function noteKeyHash(name: string, publicKeyHex: string): string {
  checkName(name);
  checkHexKey(publicKeyHex, 'public key');
  return keyHashOf(name, Buffer.from(publicKeyHex, 'hex'));
}

/** The verifier key string "<name>+<hex8>+<base64(0x01 || public key)>". Throws on a bad name or key. */
export function verifierKeyString(name: string, publicKeyHex: string): string {
  const hash = noteKeyHash(name, publicKeyHex);
  return `${name}+${hash}+${Buffer.concat([Buffer.of(ALG_ED25519), Buffer.from(publicKeyHex, 'hex')]).toString('base64')}`;
}

/** The signer key string "PRIVATE+KEY+<name>+<hex8>+<base64(0x01 || seed)>". Throws on a bad name or seed. Secret. */
export function signerKeyString(name: string, seedHex: string): string {
  checkName(name);
  checkHexKey(seedHex, 'seed');
  const hash = noteKeyHash(name, publicKeyFromPrivate(seedHex.toLowerCase()));
  return `PRIVATE+KEY+${name}+${hash}+${Buffer.concat([Buffer.of(ALG_ED25519), Buffer.from(seedHex, 'hex')]).toString('base64')}`;
}

/** Splits "<name>+<hex8>+<base64 key>" into its parts: 0x01 and 32 key bytes, or null. */
function splitKey(s: string): { name: string; hash: string; key: Buffer } | null {
  // The name holds no '+' and the hash is hex, so the first two '+' split it (base64 may hold more).
  const first = s.indexOf('+');
  const second = s.indexOf('+', first + 1);
  if (first < 0 || second < 0) return null;
  const name = s.slice(0, first);
  const hash = s.slice(first + 1, second);
  const key = decodeBase64(s.slice(second + 1));
  if (!isNoteKeyName(name) || !HEX8.test(hash) || !key) return null;
  if (key.length !== 33 || key[0] !== ALG_ED25519) return null; // only Ed25519 (algorithm 1) is known
  return { name, hash: hash.toLowerCase(), key: key.subarray(1) };
}

/**
 * Parses a verifier key string; null when malformed: a bad name, a key hash that is not 8 hex
 * chars or does not match, bad base64, an unknown algorithm byte, a key not 32 bytes.
 */
export function parseVerifierKey(s: string): NoteVerifierKey | null {
  if (typeof s !== 'string') return null;
  const parts = splitKey(s);
  if (!parts || keyHashOf(parts.name, parts.key) !== parts.hash) return null;
  return { name: parts.name, keyHash: parts.hash, publicKey: parts.key.toString('hex') };
}

/** Parses a signer key string; null when malformed, as parseVerifierKey, or without its PRIVATE+KEY+ prefix. */
export function parseSignerKey(s: string): NoteSignerKey | null {
  if (typeof s !== 'string' || !s.startsWith('PRIVATE+KEY+')) return null;
  const parts = splitKey(s.slice('PRIVATE+KEY+'.length));
  if (!parts) return null;
  const seed = parts.key.toString('hex');
  // The hash names the public key, which only the seed derives: check it after deriving.
  const publicKey = publicKeyFromPrivate(seed);
  if (keyHashOf(parts.name, Buffer.from(publicKey, 'hex')) !== parts.hash) return null;
  return { name: parts.name, keyHash: parts.hash, publicKey, seed };
}

/** Why a note text cannot be signed, or null. */
function textProblem(text: string): string | null {
  if (typeof text !== 'string' || text === '') return 'the text is empty';
  if (!text.endsWith('\n')) return 'the text does not end in a newline';
  if (text.startsWith('\n') || text.includes('\n\n')) return 'the text holds a blank line';
  if (CONTROL.test(text)) return 'the text holds a control character';
  if (LONE_SURROGATE.test(text)) return 'the text is not well-formed Unicode';
  return null;
}

/**
 * Signs a note text with an Ed25519 seed under a key name; answers the whole signed note
 * (text, blank line, one signature line). Throws a TypeError on misuse: a bad name or seed,
 * or a text that is empty, lacks its final newline, holds a blank line or a control
 * character, or would make a note over NOTE_MAX_BYTES.
 */
export function signNote(text: string, name: string, seedHex: string): string {
  const problem = textProblem(text);
  if (problem) throw new TypeError(`note: ${problem}`);
  checkName(name);
  checkHexKey(seedHex, 'seed');
  const seed = seedHex.toLowerCase();
  const hash = noteKeyHash(name, publicKeyFromPrivate(seed));
  const signature = Buffer.from(sign(seed, Buffer.from(text, 'utf8')), 'hex');
  const note = `${text}\n${SIG_PREFIX}${name} ${Buffer.concat([Buffer.from(hash, 'hex'), signature]).toString('base64')}\n`;
  if (Buffer.byteLength(note, 'utf8') > NOTE_MAX_BYTES) throw new TypeError(`note: a signed note over ${NOTE_MAX_BYTES} bytes`);
  return note;
}

const refused = (text: string | null, ...errors: string[]): OpenedNote => ({ ok: false, text, verifiedBy: [], errors });

/** A parsed verifier key as given, re-checked (it may come from a config file), lowercased. */
function checkedKey(k: NoteVerifierKey | null | undefined): NoteVerifierKey | null {
  if (!k || !isNoteKeyName(k.name) || typeof k.publicKey !== 'string' || !HEX32.test(k.publicKey)) return null;
  const keyHash = keyHashOf(k.name, Buffer.from(k.publicKey, 'hex'));
  if (typeof k.keyHash !== 'string' || k.keyHash.toLowerCase() !== keyHash) return null;
  return { name: k.name, keyHash, publicKey: k.publicKey.toLowerCase() };
}

/** The verifier keys by "name+hash", or the reason the list is unusable. */
function keyring(verifierKeys: ReadonlyArray<string | NoteVerifierKey>): Map<string, NoteVerifierKey> | string {
  if (!Array.isArray(verifierKeys)) return 'the verifier keys are not a list';
  const ring = new Map<string, NoteVerifierKey>();
  for (const [i, k] of verifierKeys.entries()) {
    const key = typeof k === 'string' ? parseVerifierKey(k) : checkedKey(k);
    // A bad key in the trust list is a configuration fault: fail closed and say which.
    if (!key) return `verifier key #${i} is malformed`;
    const id = `${key.name}+${key.keyHash}`;
    const known = ring.get(id);
    if (known && known.publicKey !== key.publicKey) return `verifier keys #${i} and another share the name and hash ${id}`;
    ring.set(id, key);
  }
  return ring;
}

/** One signature line of a note: the key name, the 4-byte key ID (8 hex) and what follows it. */
export interface NoteSignatureLine {
  name: string;
  /** The first 4 bytes of the signature, as 8 lowercase hex: the key ID. */
  keyId: string;
  /** The bytes after the key ID (for Ed25519, the 64-byte signature). */
  signature: Buffer;
  /** The whole line, without its newline. */
  line: string;
}

/** A note split into its text and signature lines, or why it is malformed. */
export type ParsedNote = { ok: true; text: string; signatures: NoteSignatureLine[] } | { ok: false; error: string };

/**
 * Splits a signed note into its text and signature lines, refusing a malformed note: not
 * well-formed UTF-8, a control character other than newline, no blank line before the
 * signatures, a blank line inside the text (stricter than Go), a malformed signature line,
 * over NOTE_MAX_BYTES or over NOTE_MAX_SIGNATURES signatures. Checks no signature.
 */
export function parseNote(signed: string | Uint8Array): ParsedNote {
  const bad = (error: string): ParsedNote => ({ ok: false, error });
  let msg: string;
  if (typeof signed === 'string') {
    // UTF-16 length never exceeds UTF-8 length, so a long string is refused before encoding it.
    if (signed.length > NOTE_MAX_BYTES || Buffer.byteLength(signed, 'utf8') > NOTE_MAX_BYTES) return bad('note is over 1 MiB');
    if (LONE_SURROGATE.test(signed)) return bad('note is not well-formed Unicode');
    msg = signed;
  } else if (signed instanceof Uint8Array) {
    if (signed.length > NOTE_MAX_BYTES) return bad('note is over 1 MiB');
    try {
      msg = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(signed);
    } catch {
      return bad('note is not valid UTF-8');
    }
  } else {
    return bad('note is not text');
  }
  // C2SP signed-note: notes "MUST NOT contain any ASCII control characters (those below
  // U+0020) other than newline".
  if (CONTROL.test(msg)) return bad('note holds a control character');

  // The signatures follow the last blank line; each line of them ends in a newline.
  const split = msg.lastIndexOf('\n\n');
  if (split < 0) return bad('note has no blank line before its signatures');
  const text = msg.slice(0, split + 1);
  const block = msg.slice(split + 2);
  if (block === '' || !block.endsWith('\n')) return bad('note signatures do not end in a newline');
  // Go's Open would take a blank line inside the text; no note we sign has one, so none is read.
  if (text.startsWith('\n') || text.includes('\n\n')) return bad('note text holds a blank line');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > NOTE_MAX_SIGNATURES) return bad(`note has over ${NOTE_MAX_SIGNATURES} signatures`);
  const signatures: NoteSignatureLine[] = [];
  for (const line of lines) {
    if (!line.startsWith(SIG_PREFIX)) return bad('note has a malformed signature line');
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(' ');
    const name = space < 0 ? rest : rest.slice(0, space);
    const sig = space < 0 ? null : decodeBase64(rest.slice(space + 1));
    if (!isNoteKeyName(name) || !sig || sig.length < 5) return bad('note has a malformed signature line');
    signatures.push({ name, keyId: sig.subarray(0, 4).toString('hex'), signature: sig.subarray(4), line });
  }
  return { ok: true, text, signatures };
}

/** A note signature line: "— <name> <base64(key ID || signature)>\n". */
export function noteSignatureLine(name: string, keyIdHex: string, signature: Uint8Array): string {
  return `${SIG_PREFIX}${name} ${Buffer.concat([Buffer.from(keyIdHex, 'hex'), signature]).toString('base64')}\n`;
}

/**
 * Opens a signed note against the trusted verifier keys (strings or parsed). The note is ok
 * when at least one known key's signature verifies and no known key's signature fails;
 * signatures by unknown keys are ignored, as Go's sumdb/note does. Malformed notes are
 * refused (parseNote). Never throws on the note's content.
 */
export function openNote(signed: string | Uint8Array, verifierKeys: ReadonlyArray<string | NoteVerifierKey>): OpenedNote {
  return runNow(openNoteChecking(signed, verifierKeys));
}

/** openNote as a check that yields its signatures (src/core/checking.ts), for the browser build's asynchronous Ed25519. */
export function* openNoteChecking(signed: string | Uint8Array, verifierKeys: ReadonlyArray<string | NoteVerifierKey>): Checking<OpenedNote> {
  const ring = keyring(verifierKeys);
  if (typeof ring === 'string') return refused(null, ring);
  const parsed = parseNote(signed);
  if (!parsed.ok) return refused(null, parsed.error);
  const { text } = parsed;

  const verifiedBy: string[] = [];
  const errors: string[] = [];
  const verified = new Set<string>();
  const failed = new Set<string>();
  const judged = new Set<string>();
  for (const { name, keyId, signature, line } of parsed.signatures) {
    const id = `${name}+${keyId}`;
    const key = ring.get(id);
    // C2SP signed-note: "Verifiers MUST ignore signatures from unknown keys, even if they share
    // a name or ID (but not both) with a known key" (a witness's cosignature, say).
    if (!key || judged.has(line)) continue; // the same line twice has one verdict
    judged.add(line);
    // "If the key name and ID match a known key, verifiers MUST verify the signature": every
    // line under it, so a valid line cannot hide a failing one of the same key (Go's Open
    // skips a second line of a key; tlog-witness answers such a note 403).
    if (yield* ed25519(key.publicKey, Buffer.from(text, 'utf8'), signature)) {
      if (!verified.has(id)) verifiedBy.push(name);
      verified.add(id);
    } else if (!failed.has(id)) {
      failed.add(id);
      errors.push(`invalid signature by ${id}`);
    }
  }
  // "If no signature from a known key verifies successfully, clients MUST reject the note."
  if (verifiedBy.length === 0 && errors.length === 0) errors.push('no signature by a known key');
  return { ok: errors.length === 0, text, verifiedBy: errors.length ? [] : verifiedBy, errors };
}

const SIZE = /^(?:0|[1-9][0-9]*)$/;

/** Why a checkpoint line cannot be written, or null. */
const lineProblem = (line: unknown) =>
  typeof line !== 'string' || line === ''
    ? 'is empty'
    : line.includes('\n') || CONTROL.test(line)
      ? 'holds a control character'
      : LONE_SURROGATE.test(line)
        ? 'is not well-formed Unicode'
        : null;

/**
 * The C2SP tlog-checkpoint text: "<origin>\n<size>\n<base64 root>\n", then any extension
 * lines. Throws a TypeError on misuse: an empty origin or extension line, a newline or
 * control character in one, a size that is not a non-negative safe integer, a root not 32 bytes.
 */
export function formatCheckpoint(c: { origin: string; size: number; rootHash: Uint8Array; extensions?: string[] }): string {
  const extensions = c.extensions ?? [];
  for (const [what, line] of [['origin', c.origin] as const, ...extensions.map((e, i) => [`extension line #${i}`, e] as const)]) {
    const problem = lineProblem(line);
    if (problem) throw new TypeError(`checkpoint: the ${what} ${problem}`);
  }
  if (!Number.isSafeInteger(c.size) || c.size < 0) throw new TypeError('checkpoint: the size is not a non-negative safe integer');
  if (!(c.rootHash instanceof Uint8Array) || c.rootHash.length !== 32) throw new TypeError('checkpoint: the root hash is not 32 bytes');
  const root = Buffer.from(c.rootHash.buffer, c.rootHash.byteOffset, c.rootHash.byteLength).toString('base64');
  return [c.origin, String(c.size), root, ...extensions].map((line) => `${line}\n`).join('');
}

/**
 * Parses a C2SP tlog-checkpoint text (the text of an opened note); null unless it is exactly:
 * a non-empty origin line, a decimal size without leading zeros (at most 2^53 - 1), the
 * canonical padded base64 of a 32-byte root, then only non-empty extension lines, each line
 * ending in a newline.
 */
export function parseCheckpoint(text: string): Checkpoint | null {
  if (typeof text !== 'string' || !text.endsWith('\n') || CONTROL.test(text) || LONE_SURROGATE.test(text)) return null;
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3 || lines.some((line) => line === '')) return null;
  const [origin, sizeLine, rootLine, ...extensions] = lines;
  if (!SIZE.test(sizeLine)) return null;
  const size = Number(sizeLine);
  if (!Number.isSafeInteger(size)) return null; // a size past 2^53 cannot be held exactly
  const rootHash = decodeBase64(rootLine);
  if (rootHash?.length !== 32) return null;
  return { origin, size, rootHash, extensions };
}
