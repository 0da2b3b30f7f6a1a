// The shared pieces of the route schemas (PROTOCOL 1.3 and 11.2): the error envelopes every
// route may answer, registered once with addSchema so /openapi.json names them as components,
// and small builders the route files use for their answers.
//
// Response schemas here are the documentation and the test-time contract of each answer, not
// its serializer: answers are written with JSON.stringify (see openapi.ts), so a schema can
// never drop a field. Top-level answers are closed (additionalProperties: false) so that a field
// added to an answer without its schema fails the tests (response-check.ts) instead of slipping
// out unnoticed; nested free-form data (payloads, attestation bodies) stays open.
import { Type, type TSchema } from 'typebox';
import { ERROR_CODES, PROPOSAL_KINDS, TIERS } from '../core/index.js';

export const CODES = Object.keys(ERROR_CODES);

const Hint = Type.Union([Type.String(), Type.Object({ next: Type.Optional(Type.Array(Type.String())) }, { additionalProperties: true })], {
  description: 'What to do next: a sentence, or {next: [...]}.',
});
const FieldErrors = Type.Array(Type.Object({ field: Type.String(), reason: Type.String() }, { additionalProperties: false }), {
  description: 'One item per failing field (dotted paths such as payload.branches[0].id): the first 50 (errorCount says how many there were).',
});
const ErrorCount = Type.Integer({ minimum: 0, description: 'How many errors there were in all; errors[] lists the first 50 (PROTOCOL 1.3).' });

/** The envelope of every refusal (PROTOCOL 1.3): a sentence, a code of section 13, and the facts of the refusal. */
export const ErrorEnvelope = Type.Object(
  {
    error: Type.String({ description: 'What went wrong, as a sentence.' }),
    code: Type.String({ enum: CODES, description: 'A code of PROTOCOL 13; GET /errors#<code> explains it.' }),
    hint: Type.Optional(Hint),
    field: Type.Optional(Type.String()),
    errors: Type.Optional(FieldErrors),
    errorCount: Type.Optional(ErrorCount),
    recovery: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  {
    $id: 'ErrorEnvelope',
    additionalProperties: true,
    description: 'A refusal (PROTOCOL 1.3); further fields carry the facts of the refusal (required, balance, tier, signingPayload, ...).',
  },
);

export const ValidationError = Type.Object(
  {
    error: Type.String(),
    code: Type.Literal('validation_failed'),
    errors: FieldErrors,
    errorCount: ErrorCount,
    hint: Type.Optional(Hint),
  },
  { $id: 'ValidationError', additionalProperties: true, description: 'Every failing field of the body, query or path (PROTOCOL 1.3).' },
);

/** The orientation block of a 401 (PROTOCOL 1.2, 1.3): where a new agent starts. */
export const Orientation = Type.Object(
  {
    register_url: Type.String(),
    calibrate_url: Type.String(),
    me_url: Type.String(),
    schemas_url: Type.String(),
    openapi_url: Type.String(),
    llms_txt_url: Type.String(),
    descriptor_url: Type.String(),
    docs_url: Type.String(),
    example_curl: Type.String(),
  },
  { additionalProperties: false },
);

export const AgentOrientation = Type.Object(
  {
    error: Type.String(),
    code: Type.String({ enum: ['unauthorized', 'key_rotated', 'recovery_failed'] }),
    hint: Type.Optional(Hint),
    orientation: Orientation,
  },
  { $id: 'AgentOrientation', additionalProperties: true, description: 'A 401 with the orientation of a new agent (PROTOCOL 1.2, 1.3).' },
);

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'The catalog entry of the code: <origin>/errors#rate_limited.' }),
    title: Type.String(),
    status: Type.Literal(429),
    detail: Type.String(),
    instance: Type.String(),
    error: Type.String(),
    code: Type.Literal('rate_limited'),
    retryAfter: Type.Optional(Type.Number({ description: 'Seconds to wait (also the Retry-After header).' })),
    hint: Type.Optional(Hint),
    scope: Type.Optional(
      Type.String({
        enum: ['per-bearer', 'per-ip', 'per-ip-per-day', 'per-apikey-per-day', 'per-agent-per-day', 'event-streams-per-client', 'event-streams-per-node'],
      }),
    ),
    cap: Type.Optional(Type.Integer({ description: 'The daily cap: requests, or bytes for the content-store quota (unit: "bytes").' })),
    used: Type.Optional(Type.Integer({ description: 'Content-store quota: bytes taken today.' })),
    requested: Type.Optional(Type.Integer({ description: 'Content-store quota: the bytes of the refused upload (as declared, or as far as it got).' })),
    tier: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    nextEligibleAt: Type.Optional(Type.Integer({ description: 'Epoch ms when a daily cap resets.' })),
    resetIn: Type.Optional(Type.Integer({ description: 'Milliseconds until a daily cap resets.' })),
  },
  { $id: 'Problem', additionalProperties: true, description: 'application/problem+json: a token bucket or a daily cap (PROTOCOL 1.4).' },
);

export const IdConflict = Type.Object(
  {
    error: Type.String(),
    code: Type.Literal('id_conflict'),
    errors: FieldErrors,
    errorCount: Type.Optional(ErrorCount),
    existingProposalId: Type.String(),
    judgeUrl: Type.String(),
    detailUrl: Type.String(),
    hint: Type.Optional(Hint),
  },
  { $id: 'IdConflict', additionalProperties: true, description: 'A pending proposal or a published node holds this id, path or content key (PROTOCOL 6.5).' },
);

/** The component schemas, registered with app.addSchema (openapi.ts) and referenced as `{$ref: 'Name#'}`. */
export const SHARED_SCHEMAS = [ErrorEnvelope, ValidationError, AgentOrientation, Problem, IdConflict];

export const ref = (id: 'ErrorEnvelope' | 'ValidationError' | 'AgentOrientation' | 'Problem' | 'IdConflict') => ({ $ref: `${id}#` });

// ---- builders for answers ----------------------------------------------------------------

/** A closed object: every property declared (PROTOCOL answers are documented field by field). */
export const Closed = <P extends Record<string, TSchema>>(properties: P, description?: string) =>
  Type.Object(properties, { additionalProperties: false, ...(description ? { description } : {}) });

/**
 * An object whose further properties are free-form data (payloads, bodies, schemas). With no
 * properties named its type is any object (Record<never, never>), so that a record of the
 * domain, an interface with no index signature, fits it.
 */
export const Open = <P extends Record<string, TSchema> = Record<never, never>>(properties: P = {} as P, description?: string) =>
  Type.Object(properties, { additionalProperties: true, ...(description ? { description } : {}) });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Ms = (description = 'Epoch milliseconds.') => Type.Integer({ description });
export const Hex64 = Type.String({ pattern: '^[0-9a-f]{64}$' });
export const Tier = Type.String({ enum: [...TIERS] });
export const Kind = Type.String({ enum: [...PROPOSAL_KINDS] });
export const Url = Type.String({ description: 'A path or an absolute URL on this node.' });
/**
 * A free-form JSON object of a request (an attestation's body, a manifest to check, a graph's
 * inputs), typed as the record it is: its members are the domain's to check. Bound its members
 * with maxProperties where the body allows (PROTOCOL 1.1).
 */
export const FreeObject = (options: { maxProperties?: number } = {}) =>
  Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true, ...options }));

/** One of these strings: anyOf their constants, typed as their union (a union of a list made at run time has no type of its own). */
export const OneOf = <T extends string>(values: readonly T[]) => Type.Unsafe<T>(Type.Union(values.map((v) => Type.Literal(v))));

/** Any JSON value (free-form data). */
export const Any = Type.Unknown();
