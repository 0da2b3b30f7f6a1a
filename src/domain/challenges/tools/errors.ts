// Tool failures that are neither bad input (ServiceError invalid_tool_input / invalid_pattern)
// nor a bug. The HTTP layer maps each code to an envelope; the domain adds no error code of
// its own to src/core/errors.ts.

/**
 * Codes of ToolError:
 * - regex_timeout: the pattern ran past the 50 ms evaluation limit (PROTOCOL 14), compiling
 *   included, e.g. catastrophic backtracking; nothing was matched. Suggested mapping: 400 (a
 *   property of the input); use-tool charges it (src/domain/challenges/challenges.ts).
 * - regex_busy: too many regex-test calls are queued for the evaluator; retry shortly.
 *   Suggested mapping: 503 (or 429 with retry-after).
 * - regex_unavailable: the evaluator was closed (closeRegexWorker) or could not start.
 *   Suggested mapping: 503.
 */
export type ToolErrorCode = 'regex_timeout' | 'regex_busy' | 'regex_unavailable';

/** A tool could not produce a result for a reason other than invalid input. */
export class ToolError extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/** Whether e is a ToolError. */
export const isToolError = (e: unknown): e is ToolError => e instanceof ToolError;
