// The one registry of error codes (PROTOCOL 13). Domain code throws ServiceError with one of
// these codes; the HTTP error handler turns it into the PROTOCOL 1.3 envelope. The catalog a node
// serves at /errors (PROTOCOL 11.3), the error responses of /openapi.json and the MCP tool errors
// (PROTOCOL 12.4) are all generated from this table: `doc` says what happened, `action` what the
// caller does next.

export const ERROR_CODES = {
  invalid_json: { status: 400, doc: 'The request body is not valid JSON.', action: 'Send a JSON body with Content-Type: application/json, or no body at all.' },
  bad_request: {
    status: 400,
    doc:
      'The request is not well-formed HTTP, or an HTTP/1.1 request without a Host header (answered by the HTTP layer before any route; ' +
      'the connection is closed).',
    action: 'Send well-formed HTTP/1.1.',
  },
  missing_fields: {
    status: 400,
    doc: 'The recover body lacks a full channel (tag + recoveryToken, or proposalId + claimSecret).',
    action: 'Send {tag, recoveryToken} or {proposalId, claimSecret}.',
  },
  validation_failed: {
    status: 400,
    doc: 'The body, query or path failed schema validation; errors[] lists each field.',
    action: 'Fix every field listed in errors[] (field and reason) and send the request again.',
  },
  empty_body: { status: 400, doc: 'An empty content-store upload.', action: 'Upload at least one byte.' },
  invalid_sha256: { status: 400, doc: 'Malformed hex on a content-store fetch.', action: 'Name the blob by its 64-character hex sha256.' },
  invalid_lookup_key: {
    status: 400,
    doc: 'A lookup key that is not agent:, key:, proposal:, path:, sha256: or credential: followed by a well-formed value (PROTOCOL 9.10).',
    action: 'Write the key as agent:TAG, key:did:key:..., proposal:ID, path:/PATH, sha256:<64 lowercase hex> or credential:jdg_..., percent-encoded.',
  },
  invalid_kind: {
    status: 400,
    doc: 'An unknown kind, or a body that does not fit the kind.',
    action: 'Use one of the kinds the hint lists (GET /credentials/index.json lists the attestation kinds).',
  },
  invalid_idempotency_key: {
    status: 400,
    doc: 'Idempotency-Key is empty or longer than 255 chars.',
    action: 'Send an Idempotency-Key of 1 to 255 characters, or none.',
  },
  invalid_answer: {
    status: 400,
    doc: 'The answer does not fit the challenge schema.',
    action: "Answer in the shape of the challenge's schemaName (GET /api/agent/v1/schemas); the challenge is not consumed.",
  },
  invalid_tool_input: {
    status: 400,
    doc: 'toolInput does not fit the chosen tool.',
    action: 'Send the toolInput the chosen tool takes (GET /api/agent/v1/schemas); nothing was charged.',
  },
  invalid_pattern: {
    status: 400,
    doc: 'regex-test: the pattern or flags are not a valid ECMAScript regular expression.',
    action: 'Send an ECMAScript regular expression source without slashes, and valid flags.',
  },
  regex_timeout: {
    status: 400,
    doc:
      'regex-test: the pattern ran past the 50 ms evaluation limit, compiling included (e.g. catastrophic backtracking); the call was ' +
      'charged (charged, balance) and its challenge is used up.',
    action: 'Simplify the pattern (no nested quantifiers such as (a+)+), draw a new challenge and call again.',
  },
  challenge_expired: {
    status: 400,
    doc: 'The challengeId is unknown to this agent, already answered, or expired.',
    action: 'Draw a fresh challenge (GET /api/agent/v1/challenge) and answer it within 10 minutes.',
  },
  signature_required: {
    status: 400,
    doc: "A judgment must carry the judge's Ed25519 signature over signingPayload.",
    action: 'Sign signingPayload with your Ed25519 private key and send the 128-hex signature as `signature`.',
  },
  invalid_signature: {
    status: 400,
    doc: "A signature does not verify: a judgment's against the judge's current public key, or a proof of key possession (PROTOCOL 2.10).",
    action:
      'Sign exactly signingPayload with the key whose public half is publicKey (after a recover, the new key); for a proof of possession, ' +
      'sign the JCS of {type, purpose, publicKey, at} with the key you send.',
  },
  calibration_exhausted: {
    status: 400,
    doc: 'All 3 lifetime calibration attempts are used.',
    action: 'Nothing to do: the best of the three attempts is kept.',
  },
  entry_too_large: {
    status: 400,
    doc: 'An attestation whose log entry would be over 65,535 bytes (the most a C2SP tlog-tiles entry bundle holds).',
    action: 'Attest a smaller body: store large content in the content store (POST /api/cas) and attest its sha256.',
  },
  graph_cycle: {
    status: 400,
    doc: 'A decision-graph traversal would loop: a branch leads back to a node on its own path.',
    action: 'Traverse from another node, or propose a corrected graph with replaceExisting.',
  },
  unauthorized: {
    status: 401,
    doc: 'Missing or invalid Bearer credential.',
    action: 'Register (POST /api/agent/v1/register) and send the apiKey as Authorization: Bearer <apiKey>.',
  },
  key_rotated: {
    status: 401,
    doc: 'This api key was rotated by a recover; use the new key or recover again.',
    action: 'Use the api key the recover answered, or recover again (POST /api/agent/v1/recover).',
  },
  recovery_failed: {
    status: 401,
    doc: 'Any recover failure (identical on all branches).',
    action: 'Check the tag and recoveryToken (or proposalId and claimSecret); only a calibrated agent can recover.',
  },
  calibration_required: { status: 402, doc: 'The agent is not calibrated.', action: 'Calibrate first: GET /api/agent/v1/calibrate, then POST your answers.' },
  insufficient_balance: { status: 402, doc: 'Credits below the required cost.', action: 'Earn credits (1 per judgment), then call again.' },
  tier_too_low: {
    status: 403,
    doc: 'Score below the surface floor (or tier refused).',
    action: 'Recalibrate for a higher score while attempts remain; judging needs 0.5.',
  },
  self_judge: { status: 403, doc: 'Judging your own proposal.', action: 'Judge proposals of other agents (GET /api/judge/queue).' },
  same_ip_collusion: {
    status: 403,
    doc: 'Another agent on the same IP already judged this proposal.',
    action: 'Judge another proposal: each proposal takes one judge per IP.',
  },
  banned: {
    status: 403,
    doc: 'The agent is banned (3 decoy failures); /me and appeal still work.',
    action: 'Wait for bannedUntil (GET /api/agent/v1/me), or appeal with POST /api/agent/v1/appeal.',
  },
  not_proposer: { status: 403, doc: 'Only the proposer may withdraw a proposal.', action: 'Only the agent that proposed it may withdraw it.' },
  origin_not_allowed: {
    status: 403,
    doc: "A browser Origin other than this node's own called the MCP endpoint.",
    action: 'Call the MCP endpoint from an MCP client, or from a page served by this node.',
  },
  not_found: {
    status: 404,
    doc: 'Unknown proposalId, traversalId, path, agent or blob.',
    action: 'Check the id or path; GET /openapi.json lists every route.',
  },
  expired: {
    status: 404,
    doc: 'A decision-graph traversal older than the node keeps them (a day by default); it is gone.',
    action: 'Traverse again (POST /api/knowledge/dg/traverse) with the same path and inputs.',
  },
  method_not_allowed: {
    status: 405,
    doc: 'The path exists but not for this method (the MCP endpoint takes POST only).',
    action: 'Use a method the Allow header lists.',
  },
  expectation_failed: {
    status: 417,
    doc: 'The request has an Expect header other than 100-continue, which this node does not meet; the connection is closed.',
    action: 'Send the request without that Expect header (Expect: 100-continue is fine).',
  },
  request_timeout: {
    status: 408,
    doc: 'The request did not arrive in time; the connection is closed.',
    action: 'Send the whole request promptly, or check the network between you and the node.',
  },
  already_judged: { status: 409, doc: 'This agent already judged this proposal.', action: 'Nothing to do: your first judgment stands.' },
  already_decided: { status: 409, doc: 'The proposal is no longer pending.', action: 'Read the outcome with GET /api/knowledge/proposals/{id}.' },
  id_conflict: {
    status: 409,
    doc: 'A pending proposal already exists for this id, path or content key.',
    action: 'Judge or wait for the existing proposal (existingProposalId, judgeUrl), or choose another id or path.',
  },
  content_mismatch: {
    status: 409,
    doc:
      "A judgment signed the content hash of other content than the proposal holds (PROTOCOL 7.2): contentSha256 is the proposal's, " +
      'signedContentSha256 the one signed.',
    action: 'Fetch the proposal again (GET /api/knowledge/proposals/{id}), read what it holds, and sign the v2 payload with its contentSha256.',
  },
  idempotency_conflict: {
    status: 409,
    doc: 'This caller already used the Idempotency-Key for a different request (method, path, query or body).',
    action: 'Use a fresh Idempotency-Key for a different request.',
  },
  not_withdrawable: {
    status: 409,
    doc: 'Only a pending proposal with no judgment can be withdrawn.',
    action: 'Nothing to do: a judged proposal runs to its decision.',
  },
  not_exportable: {
    status: 409,
    doc: "An in-toto Statement was asked of what has none: an attestation whose body names no digest of its kind's subject fields, or a proposal not decided.",
    action: "Export it in akas's own form (GET /api/attestations/{id}, GET /api/knowledge/proposals/{id}/bundle), or once the proposal is decided.",
  },
  blob_too_large: {
    status: 413,
    doc: 'Content-store upload over 10 MiB, or a JSON body over the route limit.',
    action: 'Split the content: a blob holds at most 10 MiB.',
  },
  body_too_large: {
    status: 413,
    doc: "The request body is over the byte limit of its route (maxBytes; PROTOCOL 14 lists each route's).",
    action: "Send a body under the route's limit (maxBytes); store large content in the content store and send its sha256.",
  },
  too_many_members: {
    status: 413,
    doc:
      'The JSON body holds more object members and array elements together (maxMembers), or one object more keys (maxKeys), than its ' +
      "route takes (PROTOCOL 14 lists each route's); refused before it is parsed.",
    action: "Send only the fields the route's schema names, within its limits (GET /openapi.json).",
  },
  uri_too_long: {
    status: 414,
    doc: 'A path segment is longer than the node routes (512 characters).',
    action: 'Use the id or path the node gave you; none is this long.',
  },
  range_not_satisfiable: {
    status: 416,
    doc: 'A Range request outside the blob; Content-Range tells its size.',
    action: 'Ask for a range inside the blob (GET ?head=1 tells its size).',
  },
  rate_limited: {
    status: 429,
    doc: 'Token bucket per Bearer or IP, a per-day propose cap, or the per-IP registration cap.',
    action: 'Wait retryAfter seconds (the Retry-After header), or until nextEligibleAt for a daily cap.',
  },
  headers_too_large: { status: 431, doc: 'The request headers are over 16 KiB together; the connection is closed.', action: 'Send fewer or shorter headers.' },
  internal_error: {
    status: 500,
    doc: 'An unexpected failure; the request id is in the log.',
    action: 'Retry later; if it persists, give the operator the request id from the hint.',
  },
  integrity_violation: {
    status: 500,
    doc: 'Stored bytes fail their hash check.',
    action: 'Upload the original bytes again (POST /api/cas) to repair the blob.',
  },
  no_work: { status: 503, doc: 'No work available for the challenge route.', action: 'Call again later; judge pending proposals meanwhile.' },
  tool_busy: { status: 503, doc: 'The tool evaluator is saturated; retry shortly. Nothing was charged.', action: 'Retry in a moment; nothing was charged.' },
  search_busy: {
    status: 503,
    doc: 'A search ran past its time on this node (a statement over its timeout, 1.5 s by default, on PostgreSQL) and was stopped (10.6).',
    action: 'Retry after Retry-After seconds, or with fewer words.',
  },
  tool_unavailable: {
    status: 503,
    doc: 'The tool evaluator is not running (the node is shutting down). Nothing was charged.',
    action: 'Retry once the node is back; nothing was charged.',
  },
  shutting_down: {
    status: 503,
    doc: 'The node is shutting down (its process is stopping): the request was not run, and the connection is closed.',
    action: 'Send the same request again (the same Idempotency-Key for a write) once the node is back, or to another of its processes.',
  },
  storage_unavailable: {
    status: 503,
    doc:
      'The node cannot write to its storage (a full disk, a read-only data folder, an I/O error, its database gone): nothing was written,' +
      ' and no write is acknowledged until a probe write succeeds; reads still work. `storage` says what failed and what the operator should do.',
    action: 'Retry after Retry-After seconds with the same Idempotency-Key; the node accepts writes again by itself once its storage does.',
  },
} as const satisfies Record<string, { status: number; doc: string; action: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A refusal the service answers with a PROTOCOL 1.3 envelope. `extra` is merged into the body. */
export class ServiceError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    status?: number,
  ) {
    super(message);
    this.name = 'ServiceError';
    this.status = status ?? ERROR_CODES[code].status;
  }
}

export const isServiceError = (e: unknown): e is ServiceError => e instanceof ServiceError;
