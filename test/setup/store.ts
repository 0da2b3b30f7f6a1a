// Setup of the `postgres` project (the HTTP suites on PostgreSQL): without a server, every
// test fails in CI and is skipped with a warning elsewhere; never a silent pass.
import { beforeEach, inject } from 'vitest';

if (!inject('pgUrl')) {
  const why = `PostgreSQL tests cannot run: ${inject('pgError') || 'no cluster'}`;
  if (process.env.CI === 'true' || process.env.CI === '1') {
    beforeEach(() => {
      throw new Error(why);
    });
  } else {
    console.error(`\n!!! ${why}\n!!! SKIPPED: the HTTP suites on PostgreSQL (in CI this fails)\n`);
    beforeEach((ctx) => ctx.skip());
  }
}
