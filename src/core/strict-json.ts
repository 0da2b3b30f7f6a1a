// Strict JSON for things that are signed: RFC 8259 text that JSON.parse reads, plus two rules
// JSON.parse does not keep. A duplicate key in one object is refused (JSON.parse keeps the
// last one silently, so two readers could see two documents in one file; RFC 8785 and the
// I-JSON profile, RFC 7493, forbid it), and so is a lone surrogate, raw or escaped (it has no
// UTF-8 form, so no two canonicalizers agree on it). Bytes that are not UTF-8 are refused.

export type StrictJson = { ok: true; value: unknown } | { ok: false; reason: string };

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Parses bytes or text as strict JSON; answers the value, or why it is not strict JSON. */
export function parseStrictJson(input: string | Uint8Array): StrictJson {
  let text: string;
  if (typeof input === 'string') text = input;
  else {
    try {
      text = decoder.decode(input);
    } catch {
      return { ok: false, reason: 'not UTF-8' };
    }
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a BOM is not part of the JSON text
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `not JSON: ${(e as Error).message}` };
  }
  // One pass for the depth and the strict rules; only text refused is measured again, for the
  // deepest nesting the refusal names (a depth over the bound is said before any other problem).
  const problem = scan(text, MAX_JSON_DEPTH);
  if (problem === null) return { ok: true, value };
  const depth = jsonDepth(text);
  if (depth > MAX_JSON_DEPTH || problem === TOO_DEEP) return { ok: false, reason: `nested ${depth} levels deep (at most ${MAX_JSON_DEPTH})` };
  return { ok: false, reason: problem };
}

/**
 * Why text that JSON.parse already accepted is not strict JSON (a duplicate key, a lone
 * surrogate), or null: the rules of parseStrictJson for a reader that parses by itself (the
 * node's body parser, which also refuses prototype poisoning).
 */
export function strictJsonProblem(text: string): string | null {
  return scan(text);
}

/** Decodes bytes as UTF-8, or answers undefined for bytes that are not (never U+FFFD in their place). */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * How deep JSON may nest wherever akas reads it (request bodies, files to verify). No document
 * of the protocol nests past about ten levels; JSON.parse reads any depth, but what then walks
 * the value recursively (JSON.stringify, canonicalization, schema validation) overflows the
 * stack somewhere past a few thousand levels.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * The deepest nesting of arrays and objects in JSON text, counted without parsing (one pass,
 * strings skipped): so a body can be refused before anything recursive reads it.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) max = depth;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    } else if (c === 0x22 /* " */) {
      const j = stringEnd(text, i);
      if (j < 0) return max;
      i = j;
    }
  }
  return max;
}

/** What a cheap pass over JSON text counts (jsonShape): nesting depth, object members plus array elements, and the keys of the widest object. */
export interface JsonShape {
  depth: number;
  members: number;
  keys: number;
}

/**
 * The nesting depth, the number of object members and array elements, and the keys of the
 * widest object of JSON text, counted in one pass without building anything (strings skipped
 * with indexOf): so a body can be refused for its size in values before JSON.parse, the strict
 * scan, validation and the idempotency fingerprint each walk every value of it. A body of one
 * object with 90,000 keys cost the node 14 to 27 times what the same bytes as one string cost
 * (issue 30); this pass costs about the same for both. The count stops, and answers, as soon as it
 * passes `stop.members` or `stop.keys`, or the depth passes `stop.depth` (what is answered is
 * then only known to be over that). Text that is not JSON gets some count; JSON.parse refuses
 * it afterwards.
 */
export function jsonShape(text: string, stop: { members?: number; keys?: number; depth?: number } = {}): JsonShape {
  const maxMembers = stop.members ?? Infinity;
  const maxKeys = stop.keys ?? Infinity;
  const maxDepth = stop.depth ?? MAX_JSON_DEPTH;
  // Per open container, whether it is an array (a comma there starts another element; in an
  // object, the colon of each member counts it) and an object's keys so far. Past maxDepth
  // the pass stops, so this is enough.
  const isArray = new Uint8Array(maxDepth + 2);
  const keysOf = new Uint32Array(maxDepth + 2);
  let depth = 0;
  let deepest = 0;
  let members = 0;
  let widest = 0;
  // Just inside '[': the next token is the array's first element unless it is ']'.
  let firstOfArray = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    if (firstOfArray) {
      firstOfArray = false;
      if (c !== 0x5d /* ] */) members++;
    }
    if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      if (end < 0) break;
      i = end;
    } else if (c === 0x3a /* : */) {
      members++;
      if (++keysOf[depth] > widest) {
        widest = keysOf[depth];
        if (widest > maxKeys) break;
      }
    } else if (c === 0x2c /* , */) {
      if (isArray[depth] === 1) members++;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > deepest) {
        deepest = depth;
        if (depth > maxDepth) break;
      }
      isArray[depth] = c === 0x5b ? 1 : 0;
      keysOf[depth] = 0;
      firstOfArray = c === 0x5b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (depth > 0) depth--;
    } else continue;
    if (members > maxMembers) break;
  }
  return { depth: deepest, members, keys: widest };
}

/** The index of the quote closing the string that opens at `start`: one not preceded by an odd run of backslashes (-1: none). */
function stringEnd(text: string, start: number): number {
  let j = text.indexOf('"', start + 1);
  while (j > 0) {
    let k = j - 1;
    while (text.charCodeAt(k) === 0x5c) k--;
    if ((j - 1 - k) % 2 === 0) return j;
    j = text.indexOf('"', j + 1);
  }
  return -1;
}

// One pass over text JSON.parse already accepted: tracks the keys of each open object and
// checks every string for lone surrogates (raw, or as \u escapes). Strings are skipped with
// indexOf, and decoded only when they hold an escape: most of a signed document is plain text.
const SURROGATE = /[\ud800-\udfff]/;

/** scan's answer for text nested deeper than it was asked to take. */
const TOO_DEEP = 'too deep';

/** The keys of an open object so far: a list while it is short (no Set made for the usual few), a Set past that. */
type KeysSeen = string[] | Set<string>;
const SHORT_OBJECT = 16;

/** Records `key` in `seen`; false when it was there already. Answers the structure to keep (a Set once the list grew long). */
function seeKey(seen: KeysSeen, key: string): KeysSeen | false {
  if (!Array.isArray(seen)) return seen.has(key) ? false : seen.add(key);
  if (seen.includes(key)) return false;
  seen.push(key);
  return seen.length > SHORT_OBJECT ? new Set(seen) : seen;
}

function scan(text: string, maxDepth = Number.POSITIVE_INFINITY): string | null {
  // A string without escapes holds a lone surrogate only if the text holds a raw surrogate at
  // all: else such a string is looked at only as a key (most strings of a document are values).
  const rawSurrogates = SURROGATE.test(text);
  if (!rawSurrogates && text.indexOf('\\') < 0) return scanPlain(text, maxDepth);
  const keys: Array<KeysSeen | null> = []; // one entry per open container; null for arrays
  let expectKey = false;
  const n = text.length;
  // The next backslash at or after some position (-1: none left), looked up again only once
  // passed: searching from every string to the end would be quadratic on a large body.
  let nextEscape = -2;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */) {
      if (keys.push([]) > maxDepth) return TOO_DEEP;
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      if (keys.push(null) > maxDepth) return TOO_DEEP;
      expectKey = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      keys.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = keys.length > 0 && keys[keys.length - 1] !== null;
    } else if (c === 0x22 /* " */) {
      let end = text.indexOf('"', i + 1);
      if (nextEscape !== -1 && nextEscape <= i) nextEscape = text.indexOf('\\', i + 1);
      const escapeAt = nextEscape;
      let value: string | undefined;
      if (escapeAt < 0 || escapeAt > end) {
        if (expectKey || rawSurrogates) value = text.slice(i + 1, end);
      } else {
        // An escape inside: find the real closing quote, then let JSON decode the string.
        let j = i + 1;
        while (text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? (text.charCodeAt(j + 1) === 0x75 ? 6 : 2) : 1;
        end = j;
        value = JSON.parse(text.slice(i, end + 1)) as string;
      }
      if (value !== undefined && SURROGATE.test(value) && hasLoneSurrogate(value))
        return `a string holds a lone surrogate (${JSON.stringify(value.slice(0, 40))})`;
      if (expectKey) {
        const seen = seeKey(keys[keys.length - 1]!, value!);
        if (seen === false) return duplicateKey(value!);
        keys[keys.length - 1] = seen;
        expectKey = false;
      }
      i = end;
    }
  }
  return null;
}

// scanPlain's stacks, kept between calls and grown as needed: per open container (by depth),
// where its keys begin in the key stack (-1: an array); per key of the open objects, where it
// starts in the text and its length; per object past SHORT_OBJECT keys, a Set of them.
let firstKeyAt: Int32Array = new Int32Array(64);
let keyStart: Int32Array = new Int32Array(256);
let keyLength: Int32Array = new Int32Array(256);
const wideKeys: Array<Set<string> | undefined> = [];

/**
 * scan for text with no backslash and no surrogate (a signed document, nearly always): every
 * string reads as it is written, holds no lone surrogate, and a key is itself its span of the
 * text, compared in place with the spans of the same length before it in its object (no string
 * made per key; a Set past SHORT_OBJECT keys, as scan does).
 */
function scanPlain(text: string, maxDepth: number): string | null {
  let depth = 0;
  let keys = 0; // keys of the open objects, on the key stack
  let expectKey = false;
  if (wideKeys.length > 0) wideKeys.length = 0; // a scan that returned early leaves its Sets
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth) return TOO_DEEP;
      if (depth >= firstKeyAt.length) firstKeyAt = grown(firstKeyAt, depth + 1);
      expectKey = c === 0x7b;
      firstKeyAt[depth] = expectKey ? keys : -1;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (firstKeyAt[depth] >= 0) {
        keys = firstKeyAt[depth];
        wideKeys[depth] = undefined;
      }
      depth--;
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = depth > 0 && firstKeyAt[depth] >= 0;
    } else if (c === 0x22 /* " */) {
      const end = text.indexOf('"', i + 1);
      if (expectKey) {
        const wide = wideKeys[depth];
        if (wide !== undefined) {
          const before = wide.size;
          if (wide.add(text.slice(i + 1, end)).size === before) return duplicateKey(text.slice(i + 1, end));
        } else {
          if (!newKeySpan(text, i + 1, end - i - 1, firstKeyAt[depth], keys, depth)) return duplicateKey(text.slice(i + 1, end));
          if (keys >= keyStart.length) {
            keyStart = grown(keyStart, keys + 1);
            keyLength = grown(keyLength, keys + 1);
          }
          keyStart[keys] = i + 1;
          keyLength[keys++] = end - i - 1;
        }
        expectKey = false;
      }
      i = end;
    }
  }
  return null;
}

/**
 * Whether the key at `start` (`length` long) is new among its object's keys [from, to) of the key
 * stack; past SHORT_OBJECT of them, they go into a Set (wideKeys) for the object's later keys.
 */
function newKeySpan(text: string, start: number, length: number, from: number, to: number, depth: number): boolean {
  for (let k = from; k < to; k++) if (keyLength[k] === length && sameSpan(text, keyStart[k], start, length)) return false;
  if (to - from >= SHORT_OBJECT) {
    const set = new Set<string>();
    for (let k = from; k < to; k++) set.add(text.slice(keyStart[k], keyStart[k] + keyLength[k]));
    set.add(text.slice(start, start + length));
    wideKeys[depth] = set;
  }
  return true;
}

function sameSpan(text: string, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (text.charCodeAt(a + k) !== text.charCodeAt(b + k)) return false;
  return true;
}

function grown(a: Int32Array, least: number): Int32Array {
  const b = new Int32Array(Math.max(least, a.length * 2));
  b.set(a);
  return b;
}

const duplicateKey = (key: string) => `duplicate key ${JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key)}`;

/** Whether a JS string holds a surrogate code unit that is not half of a pair. */
export function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u >= 0xd800 && u <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return true;
    } else if (u >= 0xdc00 && u <= 0xdfff) return true;
  }
  return false;
}
