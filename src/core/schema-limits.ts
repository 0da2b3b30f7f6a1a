// Size limits before items (PROTOCOL 1.3). A validator that reports every error (ajv's
// allErrors) does work in proportion to the errors a body holds: an array of 400,000 bad
// items gave 400,003 errors, a 94 MiB answer and seconds of a held event loop. Each schema
// therefore gets a second, derived schema that holds only its size limits (maxItems,
// maxLength, maxProperties) and the structure leading to them; it runs first, stopping at the
// first limit broken, and only a body within every limit meets the full validation. Within
// the limits, the number of errors is bounded by the schema itself.
//
// The derived schema never refuses what the full one accepts: it keeps no type (each size
// keyword applies only to its own type), a union refuses only when every branch would, and
// what it cannot follow (not, if/then/else, $ref) it leaves to the full validation.
//
// And the errors a refusal lists are capped (capErrors): the first 50, each item cut to a
// bounded size, with errorCount saying how many there were. So no error answer is larger
// than a few KiB, whatever its request.

type Schema = Record<string, unknown>;

export interface LimitsOptions {
  /**
   * The validator refuses unknown properties (additionalProperties: false without ajv's
   * removeAdditional): an object of many more keys than its schema declares is refused by
   * size first (declared + 50), since every key beyond them is an error of its own.
   */
  closedObjectsBounded?: boolean;
}

/** Unknown keys an object may hold and still get each one named (closedObjectsBounded). */
export const UNKNOWN_KEYS_NAMED = 50;

const SIZE_KEYWORDS = ['maxItems', 'maxLength', 'maxProperties'] as const;
const isSchema = (s: unknown): s is Schema => typeof s === 'object' && s !== null && !Array.isArray(s);

/**
 * The size limits of a JSON Schema as a schema of their own, or `true` when it has none (then
 * there is nothing to check first).
 */
export function limitsSchema(schema: unknown, opts: LimitsOptions = {}): Schema | true {
  return derive(schema, opts);
}

function derive(s: unknown, opts: LimitsOptions): Schema | true {
  if (!isSchema(s)) return true;
  const out: Schema = {};
  for (const k of SIZE_KEYWORDS) if (typeof s[k] === 'number') out[k] = s[k];

  const props = isSchema(s.properties) ? s.properties : undefined;
  const patterns = isSchema(s.patternProperties) ? s.patternProperties : undefined;
  const derivedProps: Schema = {};
  let anyProp = false;
  for (const [name, p] of Object.entries(props ?? {})) {
    const d = derive(p, opts);
    derivedProps[name] = d;
    if (d !== true) anyProp = true;
  }
  const derivedPatterns: Schema = {};
  let anyPattern = false;
  for (const [re, p] of Object.entries(patterns ?? {})) {
    const d = derive(p, opts);
    derivedPatterns[re] = d;
    if (d !== true) anyPattern = true;
  }
  const additional = isSchema(s.additionalProperties) ? derive(s.additionalProperties, opts) : true;
  // additionalProperties applies to the keys properties and patternProperties do not name: keep
  // every name (true where nothing is limited) whenever it is kept.
  if (additional !== true) {
    out.additionalProperties = additional;
    if (props) out.properties = derivedProps;
    if (patterns) out.patternProperties = derivedPatterns;
  } else {
    if (anyProp) out.properties = Object.fromEntries(Object.entries(derivedProps).filter(([, d]) => d !== true));
    if (anyPattern) out.patternProperties = Object.fromEntries(Object.entries(derivedPatterns).filter(([, d]) => d !== true));
  }
  if (opts.closedObjectsBounded && s.additionalProperties === false && !patterns) {
    const bound = Object.keys(props ?? {}).length + UNKNOWN_KEYS_NAMED;
    out.maxProperties = typeof out.maxProperties === 'number' ? Math.min(out.maxProperties, bound) : bound;
  }

  if (Array.isArray(s.items)) {
    const tuple = s.items.map((i) => derive(i, opts));
    if (tuple.some((d) => d !== true)) out.items = tuple;
  } else if (s.items !== undefined) {
    const d = derive(s.items, opts);
    if (d !== true) out.items = d;
  }
  if (Array.isArray(s.prefixItems)) {
    const tuple = s.prefixItems.map((i) => derive(i, opts));
    if (tuple.some((d) => d !== true)) out.prefixItems = tuple;
  }
  if (isSchema(s.additionalItems)) {
    const d = derive(s.additionalItems, opts);
    if (d !== true) out.additionalItems = d;
  }

  // A union refuses only when no branch could accept: a branch without limits leaves the
  // union without any.
  const all: Schema[] = [];
  if (Array.isArray(s.allOf))
    for (const b of s.allOf as unknown[]) {
      const d = derive(b, opts);
      if (d !== true) all.push(d);
    }
  for (const k of ['anyOf', 'oneOf'] as const) {
    if (!Array.isArray(s[k])) continue;
    const branches = (s[k] as unknown[]).map((b) => derive(b, opts));
    if (branches.length && branches.every((b) => b !== true)) all.push({ anyOf: branches });
  }
  if (all.length) out.allOf = all;
  return Object.keys(out).length ? out : true;
}

/** How many errors a refusal lists (PROTOCOL 1.3); errorCount says how many there were. */
export const MAX_ERRORS_LISTED = 50;
/** The listed errors together stay under this many characters of JSON. */
const MAX_ERRORS_CHARS = 12 * 1024;
/** Any string of an error item (a field path, a reason, a parameter) is cut to this. */
const MAX_ITEM_STRING = 300;

function cut(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > MAX_ITEM_STRING ? `${value.slice(0, MAX_ITEM_STRING)}…` : value;
  if (Array.isArray(value)) return depth > 2 ? [] : value.slice(0, 20).map((v) => cut(v, depth + 1));
  if (isSchema(value)) {
    if (depth > 2) return {};
    return Object.fromEntries(
      Object.entries(value)
        .slice(0, 20)
        .map(([k, v]) => [k, cut(v, depth + 1)]),
    );
  }
  return value;
}

/**
 * The errors a refusal lists: the first MAX_ERRORS_LISTED, each string cut short, and no more
 * than about 12 KiB of them; `errorCount` is how many there were in all.
 */
export function capErrors<T>(errors: readonly T[]): { errors: T[]; errorCount: number } {
  const kept: T[] = [];
  let chars = 0;
  for (const e of errors) {
    if (kept.length >= MAX_ERRORS_LISTED) break;
    const item = cut(e) as T;
    chars += JSON.stringify(item)?.length ?? 0;
    if (chars > MAX_ERRORS_CHARS && kept.length > 0) break;
    kept.push(item);
  }
  return { errors: kept, errorCount: errors.length };
}
