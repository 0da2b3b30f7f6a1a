/**
 * Appended to the argv of a `verify credential` worker (cli/commands/verify/pool.ts): the single-file
 * verifier's entry (cli/commands/verify/main.ts) tells a worker by it without loading node:worker_threads
 * at every start.
 */
export const WORKER_ARG = '--akas-verify-pool-worker';
