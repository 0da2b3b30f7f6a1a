// The one registry of error codes (PROTOCOL 13). Domain code
// throws ServiceError with one of these codes; the HTTP error handler turns it into the PROTOCOL 1.3
// envelope, and /errors will be generated from this table.

export const ERROR_CODES = {
  invalid_json: { status: 400, doc: 'The request body is not valid JSON.' },
  missing_fields: { status: 400, doc: 'The recover body lacks a full channel (tag + recoveryToken, or proposalId + claimSecret).' },
  validation_failed: { status: 400, doc: 'The body, query or path failed schema validation; errors[] lists each field.' },
  empty_body: { status: 400, doc: 'An empty content-store upload.' },
  invalid_sha256: { status: 400, doc: 'Malformed hex on a content-store fetch.' },
  invalid_kind: { status: 400, doc: 'An unknown kind, or a body that does not fit the kind.' },
  invalid_idempotency_key: { status: 400, doc: 'Idempotency-Key is empty or longer than 255 chars.' },
  invalid_answer: { status: 400, doc: 'The answer does not fit the challenge schema.' },
  invalid_tool_input: { status: 400, doc: 'toolInput does not fit the chosen tool.' },
  invalid_pattern: { status: 400, doc: 'regex-test: the pattern or flags are not a valid ECMAScript regular expression.' },
  regex_timeout: { status: 400, doc: 'regex-test: the pattern ran past the 50 ms evaluation limit (e.g. catastrophic backtracking); nothing was charged.' },
  challenge_expired: { status: 400, doc: 'The challengeId is unknown to this agent, already answered, or expired.' },
  signature_required: { status: 400, doc: 'A judgment must carry the judge\'s Ed25519 signature over signingPayload.' },
  invalid_signature: { status: 400, doc: 'A signature does not verify: a judgment\'s against the judge\'s current public key, or a proof of key possession (PROTOCOL 2.10).' },
  calibration_exhausted: { status: 400, doc: 'All 3 lifetime calibration attempts are used.' },
  graph_cycle: { status: 400, doc: 'A decision-graph traversal would loop: a branch leads back to a node on its own path.' },
  unauthorized: { status: 401, doc: 'Missing or invalid Bearer credential.' },
  key_rotated: { status: 401, doc: 'This api key was rotated by a recover; use the new key or recover again.' },
  recovery_failed: { status: 401, doc: 'Any recover failure (identical on all branches).' },
  calibration_required: { status: 402, doc: 'The agent is not calibrated.' },
  insufficient_balance: { status: 402, doc: 'Credits below the required cost.' },
  tier_too_low: { status: 403, doc: 'Score below the surface floor (or tier refused).' },
  self_judge: { status: 403, doc: 'Judging your own proposal.' },
  same_ip_collusion: { status: 403, doc: 'Another agent on the same IP already judged this proposal.' },
  banned: { status: 403, doc: 'The agent is banned (3 decoy failures); /me and appeal still work.' },
  not_proposer: { status: 403, doc: 'Only the proposer may withdraw a proposal.' },
  not_found: { status: 404, doc: 'Unknown proposalId, traversalId, path, agent or blob.' },
  already_judged: { status: 409, doc: 'This agent already judged this proposal.' },
  already_decided: { status: 409, doc: 'The proposal is no longer pending.' },
  id_conflict: { status: 409, doc: 'A pending proposal already exists for this id, path or content key.' },
  idempotency_conflict: { status: 409, doc: 'This caller already used the Idempotency-Key for a different request (method, path, query or body).' },
  not_withdrawable: { status: 409, doc: 'Only a pending proposal with no judgment can be withdrawn.' },
  blob_too_large: { status: 413, doc: 'Content-store upload over 10 MiB, or a JSON body over the route limit.' },
  body_too_large: { status: 413, doc: 'The request body is over the limit for this route.' },
  range_not_satisfiable: { status: 416, doc: 'A Range request outside the blob; Content-Range tells its size.' },
  rate_limited: { status: 429, doc: 'Token bucket per Bearer or IP, a per-day propose cap, or the per-IP registration cap.' },
  internal_error: { status: 500, doc: 'An unexpected failure; the request id is in the log.' },
  integrity_violation: { status: 500, doc: 'Stored bytes fail their hash check.' },
  no_work: { status: 503, doc: 'No work available for the challenge route.' },
  tool_busy: { status: 503, doc: 'The tool evaluator is saturated; retry shortly. Nothing was charged.' },
  tool_unavailable: { status: 503, doc: 'The tool evaluator is not running (the node is shutting down). Nothing was charged.' },
} as const satisfies Record<string, { status: number; doc: string }>;

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
