// PostgreSQL for tests: the cluster the global setup started (test/setup/postgres.ts), a fresh
// schema per store, and a loud refusal when there is no server: PostgreSQL tests fail in CI
// (CI=true) and are skipped with a warning elsewhere, never silently.
import { randomBytes } from 'node:crypto';
import { describe, inject, it } from 'vitest';
import { openPgStore, type PgStore, type PgStoreOptions } from '../../src/store/postgres/index.js';

/** The cluster's URL, or undefined (after saying why) when there is none. */
export function pgUrl(): string | undefined {
  const url = inject('pgUrl');
  return url || undefined;
}

/** The URL of a new, empty schema in the test cluster (a store there migrates it at open). */
export function freshSchemaUrl(prefix = 't'): string {
  const url = pgUrl();
  if (!url) throw new Error(`no PostgreSQL test cluster: ${inject('pgError')}`);
  return `${url}?schema=${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Drops the schema of a store URL (with everything in it). */
export async function dropSchema(store: PgStore) {
  await store.sql(`DROP SCHEMA IF EXISTS $schema CASCADE`);
}

/** A PgStore on a fresh schema; dispose closes it (and any reopened one) and drops the schema. */
export async function openTestPgStore(options?: PgStoreOptions) {
  const url = freshSchemaUrl();
  let current = await openPgStore(url, options);
  return {
    url,
    get store() {
      return current;
    },
    reopen: async () => {
      await current.close();
      current = await openPgStore(url, options);
      return current;
    },
    dispose: async () => {
      await current.close();
      const admin = await openPgStore(url, { migrate: false }).catch(() => undefined);
      if (admin) {
        await dropSchema(admin);
        await admin.close();
      }
    },
  };
}

/**
 * describe() for suites that need PostgreSQL. Without a server: in CI a failing test that
 * says why; elsewhere a warning on stderr and the suite skipped under a name that says why.
 */
export function describePg(name: string, body: () => void) {
  if (pgUrl()) return describe(name, body);
  const why = `PostgreSQL tests cannot run: ${inject('pgError') || 'no cluster'}`;
  if (process.env.CI === 'true' || process.env.CI === '1') {
    describe(name, () =>
      it('needs a PostgreSQL server', () => {
        throw new Error(why);
      }),
    );
  } else {
    console.error(`\n!!! ${why}\n!!! SKIPPED: ${name} (in CI this fails)\n`);
    describe.skip(`${name} [SKIPPED: ${why}]`, body);
  }
}
