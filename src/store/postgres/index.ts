// The PostgreSQL store (ARCHITECTURE 7): loaded only when a postgres:// URL is given, so the
// embedded default never loads the driver.
export { PgStore, openPgStore, migratePg, type PgStoreOptions } from './store.js';
export { PgBlobs, CHUNK_BYTES } from './blobs.js';
export { pgTarget, type PgTarget, type PgPoolSource, type PgPoolRole } from './connect.js';
export { isPostgresUrl, redact } from './url.js';
export { MIGRATIONS, LATEST_VERSION, SchemaError, type MigrationReport } from './schema.js';
export { WATCH_BOUND_MS, HEARTBEAT_EVERY_MS, HEARTBEAT_TIMEOUT_MS } from './watch.js';
