import { mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/setup/sequencer.js';

/** The HTTP suites that run on both stores (ARCHITECTURE 7): once on LevelDB, once on PostgreSQL. */
const BOTH_STORES = ['test/http/identity.test.ts', 'test/http/proposals.test.ts', 'test/http/cas.test.ts', 'test/http/migration.test.ts', 'test/http/search.test.ts'];

/** The CLI's suites, in-process (see `isolate` below). */
const CLI_IN_PROCESS = ['test/cli/**/*.test.ts'];

/** The suites that drive the built binary, a browser or both. */
const E2E = ['test/e2e/**/*.test.ts', 'test/browser/**/*.test.ts'];

/** The chaos harness (issue 49): its seeded run over three processes on PostgreSQL, and the checker's and nemesis's own tests. */
const CHAOS = ['test/chaos/**/*.test.ts'];

/** The suites that run akas in the test's own process (see `isolate` below). */
const IN_PROCESS = ['test/{core,domain,verifier,witness,data,http,store,explorer,ops,node}/**/*.test.ts', 'test/*.test.ts'];

export default defineConfig({
  test: {
    // e2e tests spawn the built binary and a real node; give them room on a 2-core machine that
    // other work loads too (a start took 22 s at a load average of 20). Guards, not measures.
    testTimeout: 180_000,
    // A node records itself in $XDG_STATE_HOME/akas/nodes (src/ops/node-registry.ts): never in the
    // home of whoever runs the tests. test/helpers/e2e.ts gives each e2e file a folder of its own.
    env: { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'akas-test-state-')) },
    // Vitest runs cores - 1 files at once (one, on 2 cores), but most files wait on child
    // processes, fsync and PostgreSQL more than they compute: two at once on 2 cores took the
    // suite from 453 s to 272 s. AKAS_TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.AKAS_TEST_WORKERS) || Math.max(2, availableParallelism() - 1),
    hookTimeout: 180_000,
    // One throwaway PostgreSQL cluster for the run (test/setup/postgres.ts).
    globalSetup: ['test/setup/postgres.ts'],
    // The longest files first, across the projects (test/setup/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    projects: [
      // The suites that run the node in their own process share one module graph per worker
      // (isolate: false): each file then skips importing the app again (about 1.5 s of CPU a
      // file), which halved the time of these folders. They keep no state between files that
      // matters: every test makes its own store and node, and what a file changes of the
      // process (the regex limits) it restores.
      { extends: true, test: { name: 'level', include: IN_PROCESS, isolate: false } },
      // The CLI run in-process against an in-process node (test/helpers/cli.ts): one module
      // graph per worker too (each file imported the app and the CLI again, 1.6 s of CPU a file).
      // Each file restores what it changes of the process (AKAS_CONFIG_DIR, BROWSER, the exit
      // code). ink decides once, when first imported, whether it runs in CI (and then draws only
      // its last frame): the tests that read frames need every frame, so the project says it
      // is not in CI, whatever the machine says, and so every file sees the same ink.
      { extends: true, test: { name: 'cli', include: CLI_IN_PROCESS, isolate: false, env: { CI: '0', CONTINUOUS_INTEGRATION: '0' } } },
      // What drives the built binary or a browser: one module graph per worker too. These files
      // spend their time in the processes they start; what they keep in the test's process is
      // per file (the default config folder of test/helpers/e2e.ts is keyed by the file), and
      // importing vitest and the helpers again for each file cost about 2 s of CPU a file.
      { extends: true, test: { name: 'e2e', include: E2E, isolate: false } },
      // The chaos harness: a project of its own, so the seeded run (about a minute of load on its
      // own PostgreSQL cluster and three built processes, then the checker) runs once, and the
      // sequencer starts it first among the long files. A fresh process per file.
      { extends: true, test: { name: 'chaos', include: CHAOS } },
      // The release checks (a packed install, the single executable): a fresh process per file.
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: [...IN_PROCESS, ...CLI_IN_PROCESS, ...E2E, ...CHAOS] } },
      {
        extends: true,
        test: { name: 'postgres', include: BOTH_STORES, isolate: false, env: { AKAS_TEST_STORE: 'postgres' }, setupFiles: ['test/setup/store.ts'] },
      },
    ],
  },
});
