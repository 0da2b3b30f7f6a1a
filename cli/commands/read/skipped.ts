// What a read not checked on purpose says (issue 50, 4): `--no-verify` of the CLI's reads and of
// `akas mcp --stdio`. Kept apart from ./verify.ts so a command can say it without loading the verifier.

/** The `verification` a read carries when it was not checked, and the line that says so. */
export const SKIPPED = (why: string) => ({ verdict: null, skipped: why, line: `akas did not check this (${why}): it is the node's word, unverified` });

/** What --json adds, and what a person is told, when --no-verify skipped the check. */
export const SKIPPED_BY_FLAG = SKIPPED('--no-verify');
