// The one place ajv instances are made. Every validator of the project is ajv 8 with the same
// base, and a preset names what a use really changes (which value it may rewrite, how many
// errors it reports, what it checks beyond types). Each call makes a fresh instance: an
// instance caches what it compiles and may carry schemas of its own (addSchema), so users
// never share one by accident.
import AjvModule, { type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';

const Ajv = AjvModule as unknown as typeof AjvModule.default;
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** An ajv 8 instance, as createAjv makes it. */
export type AjvInstance = InstanceType<typeof Ajv>;

// strict: false everywhere: the attestation schemas of data/ use union types and `required`
// in anyOf branches, which ajv's strict mode refuses (test/data/attestations.test.ts compiles
// them strictly with exactly those allowed).
//
// validateSchema: false: ajv otherwise checks each schema against the JSON Schema meta-schema,
// which it first compiles with the instance's own options: 150 to 350 ms for each of the six
// instances a process makes, paid by every start of a node and every test file. The schemas
// the project compiles are its own (routes, data/, tools) and the tests hold them to the
// meta-schema (test/data/schemas.test.ts); the one kind that comes from outside, an operator's
// calibration set, is checked when it is read (assertSchema below).
const BASE: Options = { strict: false, validateSchema: false };

// allErrors: a refusal names every failing field (PROTOCOL 1.3), kept cheap by checking a
// value's size limits first (bounded-validate.ts). strictNumbers: JSON.parse reads 1e400 as
// Infinity, which JSON (and so JCS) cannot hold.
const EVERY_ERROR: Options = { allErrors: true };
const JSON_NUMBERS: Options = { strictNumbers: true };

const PRESETS = {
  // An HTTP body (src/http/validation.ts): unknown fields dropped, not refused (removeAdditional
  // removes what a schema with additionalProperties: false does not name; our unions are of
  // literals or open objects, where the removal is exact), defaults filled, no type coercion.
  body: { options: { ...EVERY_ERROR, ...JSON_NUMBERS, removeAdditional: true, useDefaults: true, coerceTypes: false }, formats: true },
  // Query strings, path parameters and headers: as a body, with types coerced, since those
  // arrive as strings.
  params: { options: { ...EVERY_ERROR, ...JSON_NUMBERS, removeAdditional: true, useDefaults: true, coerceTypes: 'array' }, formats: true },
  // A document checked as it is (the attestation and propose dry runs): every error, nothing
  // changed in it, extra fields reported rather than removed.
  candidate: { options: { ...EVERY_ERROR, ...JSON_NUMBERS }, formats: true },
  // The domain's own schemas (tool inputs, challenge answers, calibration answer schemas,
  // validate.ts): every error, no coercion and no defaults written into the caller's object,
  // and no format checks.
  answer: { options: { ...EVERY_ERROR, useDefaults: false, coerceTypes: false }, formats: false },
  // A node's own answers, checked against what its routes document (tests only,
  // src/http/response-check.ts).
  response: { options: { ...EVERY_ERROR }, formats: true },
  // The size-limits pass run before a full validation (bounded-validate.ts): stops at the first
  // limit broken and changes nothing in the value.
  limits: { options: { allErrors: false, coerceTypes: false }, formats: false },
} satisfies Record<string, { options: Options; formats: boolean }>;

/** What a validator is for; each names its options above. */
export type AjvPreset = keyof typeof PRESETS;

/** A new ajv instance with the project's options for `preset` (and ajv-formats where it checks formats). */
export function createAjv(preset: AjvPreset): AjvInstance {
  const { options, formats } = PRESETS[preset];
  const ajv = new Ajv({ ...BASE, ...options });
  if (formats) addFormats(ajv);
  return ajv;
}

/**
 * createAjv(preset), made at its first call. The modules that validate (the HTTP validators, the
 * domain's own schemas, the size-limits pass) are loaded by every node's start, which compiles
 * nothing with them (routes compile on first request: src/http/validation.ts); making their four
 * instances there was a part of each `akas serve`'s CPU before it listens (bench/coldstart.ts).
 */
export function ajvOnFirstUse(preset: AjvPreset): () => AjvInstance {
  let ajv: AjvInstance | undefined;
  return () => (ajv ??= createAjv(preset));
}

let meta: AjvInstance | undefined;

/** The problems of `schema` as a JSON Schema (draft-07, ajv's meta-schema), or none. */
export function schemaProblems(schema: unknown): string[] {
  meta ??= new Ajv({ strict: false, allErrors: true });
  if (meta.validateSchema(schema as object)) return [];
  return (meta.errors ?? []).map((e) => `${e.instancePath || '(schema)'} ${e.message}`);
}
