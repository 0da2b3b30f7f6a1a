// Global setup: one throwaway PostgreSQL cluster for the whole run (every store in it gets a
// schema of its own), started before the test workers and stopped after them. Both vitest
// projects (level and postgres) run this; the cluster is shared through the main process.
// When no server can start, tests learn why (pgError) and say so: test/helpers/postgres.ts.
import type { TestProject } from 'vitest/node';
import { startTempCluster, type TempCluster } from '../../src/store/postgres/cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The cluster's URL, or '' when none could be started. */
    pgUrl: string;
    /** Why no cluster could be started ('' when one runs). */
    pgError: string;
  }
}

type Shared = { refs: number; started: Promise<{ cluster?: TempCluster; error?: string }> };
const g = globalThis as typeof globalThis & { __akasPgCluster?: Shared };

export default async function setup(project: TestProject) {
  g.__akasPgCluster ??= {
    refs: 0,
    // fsync off: the tests kill akas processes, never the machine (src/store/postgres/cluster.ts).
    started: startTempCluster({ fsync: false }).then(
      (cluster) => ({ cluster }),
      (e: Error) => ({ error: e.message }),
    ),
  };
  const shared = g.__akasPgCluster;
  shared.refs++;
  const { cluster, error } = await shared.started;
  project.provide('pgUrl', cluster?.url ?? '');
  project.provide('pgError', error ?? '');
  return async () => {
    if (--shared.refs > 0) return;
    g.__akasPgCluster = undefined;
    await cluster?.stop();
  };
}
