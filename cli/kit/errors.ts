/**
 * Exit codes (README, ARCHITECTURE 5): 0 ok, 1 refused by the node or a check failed, 2 could
 * not run; 3 a verification that could not be anchored (no key pinned by the auditor: issue 32);
 * 130 interrupted (Ctrl-C in an interactive view), as a shell reports a SIGINT.
 */
export const EXIT = { ok: 0, refused: 1, broken: 2, unanchored: 3, interrupted: 130 } as const;

const BRAND = Symbol.for('akas.CliError');

/**
 * A failure the CLI reports and exits with; `body` is what --json prints. Recognised by a
 * brand rather than instanceof: the bundle duplicates this class into lazily loaded modules
 * (scripts/bundle.mjs), and an error from one copy must still be a CliError to the other.
 */
export class CliError extends Error {
  readonly [BRAND] = true;

  static is(e: unknown): e is CliError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
  }

  constructor(
    readonly exitCode: 1 | 2 | 3 | 130,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Bad flags or arguments (exit 2). */
export const usageError = (message: string) => new CliError(2, message, { error: message, code: 'usage' });

/** Why a file operation failed, as a message says it: the errno code (ENOENT, EACCES), else the message. */
export const reasonOf = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;
