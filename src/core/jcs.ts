// RFC 8785 JSON Canonicalization Scheme. Everything that is hashed, MACed or signed goes
// through this one function; nothing is ever signed from JSON.stringify alone.
//
// Written here rather than taken from the `canonicalize` package (which
// @digitalbazaar/eddsa-jcs-2022-cryptosuite uses, and which test/core/jcs.test.ts holds this
// to, beside RFC 8785's vectors): that one builds each array and object as a chain of template
// strings (a reduce per container), and made about half the garbage of checking a credential
// (bench/credentials.ts). RFC 8785 section 3.2 is ECMAScript's JSON.stringify with object
// members sorted by their names' UTF-16 code units (what Array.sort does to strings): strings and
// numbers are written as JSON.stringify writes them (section 3.2.2), without whitespace. The
// value is written token by token onto one string, each object's names sorted only when they
// are not in order already. (Copying the value in JCS order for the native JSON.stringify to
// write cost more on Node 20: the copy, then a second walk, about 2.3 µs more per credential.)

/** The canonical text being written (one string appended to, token by token). */
let out = '';

// What JSON.stringify escapes in a string (RFC 8785 section 3.2.2.2): controls, '"', '\\', and a
// surrogate (one of a pair is written as it is; a lone one escaped, as JSON.stringify does).
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON.stringify writes it: most need no escape and are only quoted (no call into JSON). */
const quote = (s: string) => (NEEDS_CARE.test(s) ? JSON.stringify(s) : `"${s}"`);

/**
 * Sorts member names by their UTF-16 code units (what `<` compares, and Array.sort without a
 * comparator), the first `from` of them in order already: by insertion for the few names an
 * object has (Array.sort converts and compares each pair in a generic path, some ten times the
 * cost of `<` here).
 */
function sortNames(keys: string[], from: number): void {
  if (keys.length > 32) {
    keys.sort();
    return;
  }
  for (let i = from; i < keys.length; i++) {
    const k = keys[i];
    let j = i - 1;
    for (; j >= 0 && keys[j] > k; j--) keys[j + 1] = keys[j];
    keys[j + 1] = k;
  }
}

// What starts a member (its name quoted, the colon; after the first, the comma before them),
// remembered by name: the same few dozen names recur in every credential of a batch.
const FIRST_MEMBERS = new Map<string, string>();
const NEXT_MEMBERS = new Map<string, string>();

function memberStart(name: string, kept: Map<string, string>, comma: '' | ','): string {
  let start = kept.get(name);
  if (start === undefined) {
    start = `${comma}${quote(name)}:`;
    if (kept.size >= 1024) kept.clear();
    kept.set(name, start);
  }
  return start;
}

/** Appends the JCS of one value to `out`; `inArray`: where undefined is written as null. */
function write(value: unknown, inArray: boolean): void {
  switch (typeof value) {
    case 'string':
      out += quote(value);
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new Error(Number.isNaN(value) ? 'NaN is not allowed' : 'Infinity is not allowed');
      // JSON.stringify writes a finite number as ToString does (-0 as 0): appended, it is written so without a call into JSON.
      out += value;
      return;
    case 'boolean':
      out += value ? 'true' : 'false';
      return;
    case 'undefined':
    case 'symbol':
      if (inArray) out += 'null';
      else throw new TypeError('value has no JSON representation');
      return;
    case 'object':
      if (value === null) out += 'null';
      else writeObject(value as Record<string, unknown>);
      return;
    default:
      // A function or a bigint: JSON holds neither.
      throw new TypeError(`a ${typeof value} has no JSON representation`);
  }
}

/** Appends the JCS of an object or array; `changes` override the object's own members (undefined: left out). */
function writeObject(value: Record<string, unknown>, changes?: Record<string, unknown>): void {
  if (typeof value.toJSON === 'function') {
    write(value.toJSON(), false);
    return;
  }
  if (Array.isArray(value)) {
    out += '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      write(value[i], true);
    }
    out += ']';
    return;
  }
  const keys = Object.keys(value);
  if (changes !== undefined) for (const k of Object.keys(changes)) if (!Object.hasOwn(value, k)) keys.push(k);
  // Sorted only when they are not in order already (a document signed before was often written sorted).
  for (let i = 1; i < keys.length; i++)
    if (keys[i - 1] > keys[i]) {
      sortNames(keys, i);
      break;
    }
  out += '{';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const v = changes !== undefined && Object.hasOwn(changes, keys[i]) ? changes[keys[i]] : value[keys[i]];
    // RFC 8785 section 3.1 takes I-JSON: members JSON cannot hold (undefined) are left out, as JSON.stringify leaves them.
    if (v === undefined || typeof v === 'symbol') continue;
    if (first) {
      first = false;
      out += memberStart(keys[i], FIRST_MEMBERS, '');
    } else out += memberStart(keys[i], NEXT_MEMBERS, ',');
    write(v, false);
  }
  out += '}';
}

/**
 * The JCS (RFC 8785) serialization of a JSON value, with `changes` overriding members of the
 * top object when given (undefined: a member left out), so a document is canonicalized without
 * its proof, or under another @context, without being copied first. Throws on values JSON
 * cannot hold.
 */
export function canonicalize(value: unknown, changes?: Record<string, unknown>): string {
  // A string alone (a proof's @context item) is only quoted.
  if (typeof value === 'string') return quote(value);
  // Saved and restored: a toJSON may canonicalize something of its own.
  const outer = out;
  out = '';
  try {
    if (changes !== undefined && typeof value === 'object' && value !== null && !Array.isArray(value)) writeObject(value as Record<string, unknown>, changes);
    else write(value, false);
    return out;
  } finally {
    out = outer;
  }
}

/** The UTF-8 bytes of canonicalize(value). */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalize(value), 'utf8');
}
