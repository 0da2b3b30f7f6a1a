// What a request body may hold, derived from the JSON Schema it must fit (PROTOCOL 1.1 and 14):
// how many object members and array elements in all, how many keys in one object, and how many
// bytes. One object of many keys costs far more than as many array elements or members spread
// over small objects (JSON.parse makes it a dictionary, and every reader after it hashes each
// key): 19,900 keys in one object cost the dry run 44 ms, in 199 objects 8 ms. A body is counted
// against these before it is parsed (strict-json.ts jsonShape), so a body far larger than its
// route could ever take is refused for the price of one pass over its bytes; validation then
// checks the exact limits (schema-limits.ts).
//
// The derivation answers an upper bound of what the schema accepts, so it never refuses a body
// the schema would take: a string counts 6 bytes a character (a \uXXXX escape), every member
// room for its key, punctuation and the indentation of pretty-printed JSON. What the schema
// leaves without a bound (an array without maxItems, a free-form value, a map without
// maxProperties) is infinite here: the route must say what bounds it (the schema the domain
// validates that part with, or a count of its own), or it has no bound to derive.
//
// Members a client sends that no schema names (unknown fields, dropped or ignored) are not
// counted by the derivation; every body gets BODY_SLACK for them instead.

type Schema = Record<string, unknown>;

export interface Bounds {
  /** Object members and array elements, at every depth together. */
  members: number;
  /** Keys of one object, the widest. */
  keys: number;
  /** Bytes of JSON text. */
  bytes: number;
}

/** What every body may hold beyond what its schema derives: fields a client adds that no schema names. */
export const BODY_SLACK: Bounds = { members: 64, keys: 64, bytes: 1024 };
/** The least byte limit of a route: a body of a few fields, sent pretty-printed, fits. */
export const MIN_BODY_BYTES = 4 * 1024;

/**
 * A value of a map whose size the schema bounds (maxProperties) but whose values it leaves
 * free (attesterLineage, a traversal's inputs, a manifest's fields): taken as a small value, a
 * string of up to 1,000 characters or a few fields.
 */
export const MAP_VALUE: Bounds = { members: 16, keys: 16, bytes: 6 * 1000 + 2 };

/**
 * A pattern-bound string without maxLength is taken as this many characters (every such pattern
 * of the protocol fixes fewer: hashes, keys, signatures, versions).
 */
const PATTERN_CHARS = 256;
/** A map key the schema does not name, in characters. */
const MAP_KEY_CHARS = 128;
/** Per member: quotes, colon, comma, and the indentation of pretty-printed JSON. */
const MEMBER_OVERHEAD = 32;
/** A character of a JSON string may be sent as a \uXXXX escape. */
const BYTES_PER_CHAR = 6;
/** A JSON number as text (a double's shortest form is at most 24 characters). */
const NUMBER_BYTES = 32;

const FREE: Bounds = { members: Infinity, keys: Infinity, bytes: Infinity };
const SCALAR = (bytes: number): Bounds => ({ members: 0, keys: 0, bytes });
const isSchema = (s: unknown): s is Schema => typeof s === 'object' && s !== null && !Array.isArray(s);
const each = (bs: Bounds[], f: (...xs: number[]) => number, empty: number): Bounds =>
  bs.length
    ? { members: f(...bs.map((b) => b.members)), keys: f(...bs.map((b) => b.keys)), bytes: f(...bs.map((b) => b.bytes)) }
    : { members: empty, keys: empty, bytes: empty };
const max = (bs: Bounds[]) => each(bs, Math.max, 0);
const min = (bs: Bounds[]) => each(bs, Math.min, Infinity);

/** The JSON of a literal value (a const or an enum member): its members, keys and bytes exactly. */
function literal(v: unknown): Bounds {
  const bytes = (JSON.stringify(v) ?? 'null').length * BYTES_PER_CHAR;
  const children = Array.isArray(v) ? v : isSchema(v) ? Object.values(v) : [];
  const inner = children.map(literal);
  return {
    members: children.length + inner.reduce((n, b) => n + b.members, 0),
    keys: Math.max(isSchema(v) ? children.length : 0, ...inner.map((b) => b.keys)),
    bytes,
  };
}

/**
 * The most members, keys of one object and bytes a JSON value fitting `schema` can hold
 * (Infinity where the schema leaves it unbounded). Unions take their largest branch, allOf its
 * smallest part.
 */
export function schemaBounds(schema: unknown): Bounds {
  if (schema === false) return SCALAR(0);
  if (!isSchema(schema)) return FREE;
  const s = schema;
  const parts: Bounds[] = [];
  for (const k of ['anyOf', 'oneOf'] as const) if (Array.isArray(s[k])) parts.push(max((s[k] as unknown[]).map(schemaBounds)));
  if (Array.isArray(s.allOf)) parts.push(min((s.allOf as unknown[]).map(schemaBounds)));
  if ('const' in s) parts.push(literal(s.const));
  if (Array.isArray(s.enum)) parts.push(max(s.enum.map(literal)));
  const types = typeOf(s);
  if (types) parts.push(max(types.map((t) => ofType(s, t))));
  // Each part constrains the same value: the tightest holds.
  return parts.length ? min(parts) : FREE;
}

function typeOf(s: Schema): string[] | undefined {
  if (typeof s.type === 'string') return [s.type];
  if (Array.isArray(s.type)) return s.type as string[];
  if (isSchema(s.properties) || isSchema(s.additionalProperties) || typeof s.maxProperties === 'number') return ['object'];
  if (s.items !== undefined || typeof s.maxItems === 'number') return ['array'];
  if (typeof s.maxLength === 'number' || typeof s.pattern === 'string') return ['string'];
  return undefined;
}

function ofType(s: Schema, type: string): Bounds {
  switch (type) {
    case 'string': {
      const chars = typeof s.maxLength === 'number' ? s.maxLength : typeof s.pattern === 'string' ? PATTERN_CHARS : Infinity;
      return SCALAR(2 + chars * BYTES_PER_CHAR);
    }
    case 'number':
    case 'integer':
      return SCALAR(NUMBER_BYTES);
    case 'boolean':
    case 'null':
      return SCALAR(5);
    case 'array':
      return arrayBounds(s);
    case 'object':
      return objectBounds(s);
    default:
      return FREE;
  }
}

function arrayBounds(s: Schema): Bounds {
  if (typeof s.maxItems !== 'number') return FREE;
  const tuple = (Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : []) as unknown[];
  const rest = Array.isArray(s.prefixItems) ? s.items : Array.isArray(s.items) ? s.additionalItems : s.items;
  const out = { members: 0, keys: 0, bytes: 2 };
  const add = (b: Bounds, count: number) => {
    out.members += count * (1 + b.members);
    out.keys = Math.max(out.keys, b.keys);
    out.bytes += count * (b.bytes + MEMBER_OVERHEAD);
  };
  const fixed = Math.min(s.maxItems, tuple.length);
  for (let i = 0; i < fixed; i++) add(schemaBounds(tuple[i]), 1);
  if (s.maxItems > fixed && rest !== false) add(schemaBounds(rest), s.maxItems - fixed);
  return out;
}

function objectBounds(s: Schema): Bounds {
  const props = isSchema(s.properties) ? s.properties : {};
  let members = 0;
  let keys = Object.keys(props).length;
  let inner = 0;
  let bytes = 2;
  for (const [key, p] of Object.entries(props)) {
    const b = schemaBounds(p);
    members += 1 + b.members;
    inner = Math.max(inner, b.keys);
    bytes += key.length * BYTES_PER_CHAR + MEMBER_OVERHEAD + b.bytes;
  }
  // Keys the schema does not name: dropped or refused when closed (they fall to BODY_SLACK);
  // a map's keys, bounded by maxProperties, each with its value.
  const patterns = isSchema(s.patternProperties) ? Object.values(s.patternProperties) : [];
  const closed = s.additionalProperties === false && patterns.length === 0;
  const declared = isSchema(s.additionalProperties) || patterns.length > 0;
  if (!closed && (declared || typeof s.maxProperties === 'number')) {
    if (typeof s.maxProperties !== 'number') return FREE;
    const valueSchemas = [...(isSchema(s.additionalProperties) ? [s.additionalProperties] : []), ...patterns];
    const value = valueSchemas.length ? max(valueSchemas.map(schemaBounds)) : MAP_VALUE;
    members += s.maxProperties * (1 + value.members);
    keys += s.maxProperties;
    inner = Math.max(inner, value.keys);
    bytes += s.maxProperties * (MAP_KEY_CHARS * BYTES_PER_CHAR + MEMBER_OVERHEAD + value.bytes);
  }
  // maxProperties counts the declared keys too.
  if (typeof s.maxProperties === 'number') keys = Math.min(keys, s.maxProperties);
  return { members, keys: Math.max(keys, inner), bytes };
}

/** The next power of two at or above n (n itself when infinite). */
const pow2 = (n: number) => (Number.isFinite(n) ? 2 ** Math.ceil(Math.log2(Math.max(1, n))) : n);

/** The next of 1, 2, 5, 10, 20, 50, ... at or above n (n itself when infinite): a count that reads as a round number. */
export function roundCount(n: number): number {
  if (!Number.isFinite(n)) return n;
  for (let decade = 1; ; decade *= 10) for (const step of [1, 2, 5]) if (step * decade >= n) return step * decade;
}

/**
 * A route's bounds from what its schema derives (plus what the route adds for parts the schema
 * leaves free): BODY_SLACK added, then rounded up (counts to 100, 200, 500, 1,000, ...; bytes
 * to a power of two), so a small change of a schema seldom moves them; bytes at least
 * MIN_BODY_BYTES and at most `maxBytes` (the node's JSON body limit). Infinite counts stay
 * infinite: the caller refuses such a route.
 */
export function routeBodyBounds(derived: Bounds, maxBytes: number): Bounds {
  return {
    members: roundCount(derived.members + BODY_SLACK.members),
    keys: roundCount(derived.keys + BODY_SLACK.keys),
    bytes: Math.min(maxBytes, Math.max(MIN_BODY_BYTES, pow2(derived.bytes + BODY_SLACK.bytes))),
  };
}
