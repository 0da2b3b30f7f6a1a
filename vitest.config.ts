import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/** The HTTP suites that run on both stores (ARCHITECTURE 7): once on LevelDB, once on PostgreSQL. */
const BOTH_STORES = ['test/http/identity.test.ts', 'test/http/proposals.test.ts', 'test/http/cas.test.ts', 'test/http/migration.test.ts', 'test/http/search.test.ts'];

export default defineConfig({
  test: {
    // e2e tests spawn the built binary and a real node; give them room on a 2-core machine that
    // other work loads too (a start took 22 s at a load average of 20). Guards, not measures.
    testTimeout: 180_000,
    // Vitest runs cores - 1 files at once (one, on 2 cores), but most files wait on child
    // processes, fsync and PostgreSQL more than they compute: two at once on 2 cores took the
    // suite from 453 s to 272 s. AKAS_TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.AKAS_TEST_WORKERS) || Math.max(2, availableParallelism() - 1),
    hookTimeout: 180_000,
    // One throwaway PostgreSQL cluster for the run (test/setup/postgres.ts).
    globalSetup: ['test/setup/postgres.ts'],
    projects: [
      { extends: true, test: { name: 'level', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'postgres', include: BOTH_STORES, env: { AKAS_TEST_STORE: 'postgres' }, setupFiles: ['test/setup/store.ts'] } },
    ],
  },
});
