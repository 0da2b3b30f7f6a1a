// RFC 8785 JSON Canonicalization Scheme. Everything that is hashed, MACed or signed goes
// through this one function; nothing is ever signed from JSON.stringify alone.
//
// Written here rather than taken from the `canonicalize` package (which
// @digitalbazaar/eddsa-jcs-2022-cryptosuite uses, and which test/core/jcs.test.ts holds this
// to, beside RFC 8785's vectors): that one builds each array and object as a chain of template
// strings (a reduce per container), and made about half the garbage of checking a credential
// (bench/credentials.ts). RFC 8785 section 3.2 is ECMAScript's JSON.stringify with object
// members sorted by their names' UTF-16 code units (what Array.sort does to strings): strings and
// numbers are written as JSON.stringify writes them (section 3.2.2), without whitespace. So the
// value is copied with each object's members in that order and JSON.stringify, native, writes
// the copy in one pass. An object keeps its members in the order they were added, except names
// that are array indexes ("0", "17"), which come first in numeric order whatever was added:
// a value with such a name is written token by token instead (write below), as is any value
// JSON.stringify would write differently (NaN, Infinity: JCS refuses them).

/** Thrown inside inOrder for a member name an object cannot hold in JCS order; caught in canonicalize. */
const INDEX_NAME = Symbol('an array-index member name');

/** A member name JSON.stringify would not write in insertion order: one starting with a digit (a superset of the array indexes). */
const indexLike = (name: string) => {
  const c = name.charCodeAt(0);
  return c >= 0x30 && c <= 0x39;
};

/** The number as JCS takes it: NaN and the infinities have no JSON form (JSON.stringify would write null). */
function finite(n: number): number {
  if (Number.isNaN(n)) throw new Error('NaN is not allowed');
  if (!Number.isFinite(n)) throw new Error('Infinity is not allowed');
  return n;
}

/**
 * The value with every object's members in JCS order (a copy where the order differs or a
 * member changes; the value itself where nothing does), `changes` overriding the top object's
 * members (undefined: left out, as JCS leaves undefined members out).
 */
function inOrder(value: unknown, changes?: Record<string, unknown>): unknown {
  switch (typeof value) {
    case 'number':
      return finite(value);
    case 'function':
    case 'bigint':
      throw new TypeError(`a ${typeof value} has no JSON representation`);
    case 'object':
      break;
    default:
      return value;
  }
  if (value === null) return value;
  const o = value as Record<string, unknown>;
  if (typeof o.toJSON === 'function') return inOrder(o.toJSON());
  if (Array.isArray(o)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < o.length; i++) {
      const e = o[i];
      const ordered = inOrder(e);
      if (ordered !== e) (copy ??= o.slice())[i] = ordered;
    }
    return copy ?? o;
  }
  const keys = Object.keys(o);
  if (changes) for (const k of Object.keys(changes)) if (!keys.includes(k)) keys.push(k);
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    if (indexLike(keys[i])) throw INDEX_NAME;
    if (i > 0 && keys[i - 1] > keys[i]) sorted = false;
  }
  if (!sorted) keys.sort();
  let same = sorted && !changes;
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const v = changes && k in changes ? changes[k] : o[k];
    const ordered = inOrder(v);
    if (ordered !== v) same = false;
    out[k] = ordered;
  }
  return same ? o : out;
}

/** The canonical text being written (one string appended to, token by token). */
let out = '';

// What JSON.stringify escapes in a string (RFC 8785 section 3.2.2.2): controls, '"', '\\', and a
// surrogate (one of a pair is written as it is; a lone one escaped, as JSON.stringify does).
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON.stringify writes it: most need no escape and are only quoted (no call into JSON). */
const quote = (s: string) => (NEEDS_CARE.test(s) ? JSON.stringify(s) : `"${s}"`);

/** Appends the JCS of one value to `out`; `inArray`: where undefined is written as null. */
function write(value: unknown, inArray: boolean): void {
  switch (typeof value) {
    case 'string':
      out += quote(value);
      return;
    case 'number':
      if (Number.isNaN(value)) throw new Error('NaN is not allowed');
      if (!Number.isFinite(value)) throw new Error('Infinity is not allowed');
      out += JSON.stringify(value);
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

function writeObject(value: Record<string, unknown>): void {
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
  // Sorted only when they are not in order already (a document signed before was often written sorted).
  for (let i = 1; i < keys.length; i++)
    if (keys[i - 1] > keys[i]) {
      keys.sort();
      break;
    }
  out += '{';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const v = value[keys[i]];
    // RFC 8785 section 3.1 takes I-JSON: members JSON cannot hold (undefined) are left out, as JSON.stringify leaves them.
    if (v === undefined || typeof v === 'symbol') continue;
    if (first) first = false;
    else out += ',';
    out += quote(keys[i]);
    out += ':';
    write(v, false);
  }
  out += '}';
}

/** The JCS of a value token by token (the values inOrder cannot copy in order). */
function written(value: unknown): string {
  // Saved and restored: a toJSON may canonicalize something of its own.
  const outer = out;
  out = '';
  try {
    write(value, false);
    return out;
  } finally {
    out = outer;
  }
}

/**
 * The JCS (RFC 8785) serialization of a JSON value, with `changes` overriding members of the
 * top object when given (undefined: a member left out), so a document is canonicalized without
 * its proof, or under another @context, without being copied first. Throws on values JSON
 * cannot hold.
 */
export function canonicalize(value: unknown, changes?: Record<string, unknown>): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(inOrder(value, changes));
  } catch (e) {
    if (e !== INDEX_NAME) throw e;
    text = written(changes ? { ...(value as object), ...changes } : value);
  }
  if (text === undefined) throw new TypeError('value has no JSON representation');
  return text;
}

/** The UTF-8 bytes of canonicalize(value). */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalize(value), 'utf8');
}
