import { openLevelStore } from './level.js';
import { isPostgresUrl } from './postgres/url.js';
import type { OpenedStore } from './types.js';

export type {
  Store,
  ExclusiveStore,
  SharedStore,
  OpenedStore,
  Tx,
  Reads,
  Space,
  Range,
  TransactOptions,
  TextDoc,
  TextHit,
  TextIndex,
  TextPage,
  TextQuery,
  TextTerm,
  SharedBuckets,
  TokenBucketStore,
  Drawn,
  Blobs,
  BlobReader,
  BlobWriter,
  BlobAudit,
} from './types.js';
export { space } from './types.js';
export { HeldBuckets } from './buckets.js';
export { openLevelStore, LevelStore, StoreIncidents, StoreInUseError, walDrops, type WalIncident } from './level.js';
export { StorageHealth, storageCause, storageDetail, storageUnavailable, type StorageCause, type StorageStatus } from './health.js';
export { openTempStore } from './testing.js';
export {
  loadOrCreateNodeKeys,
  checkLogOrigin,
  writePrivateFile,
  rotateNodeKeys,
  readNodeKeyMaterial,
  assertPrivateMode,
  assertPrivateFolder,
  NodeKeysError,
  NODE_KEYS_FILE,
} from './node-keys.js';
export { loadOrCreateSealedNodeKeys, followSealedNodeKeys, sealedIssuer, checkNodeSecret, MIN_SECRET_LENGTH } from './sealed-keys.js';
export { BlobStore, InlineBlobs, BlobFiles, FileIndex, EMBEDDED_BLOB_SPACES, INLINE_BLOB_BYTES, blobLock, blobsOf } from './blobs/store.js';
export { BlobUpload } from './blobs/upload.js';
export { StoredBlob, InlineBlob } from './blobs/readers.js';
export { isPostgresUrl, redact } from './postgres/url.js';

/**
 * Opens the store a location names: a postgres:// URL opens the shared PostgreSQL store
 * (migrating its schema; the driver is loaded only then), anything else is the folder of an
 * embedded LevelDB store.
 */
export async function openStore(location: string, options: { migrate?: boolean; notify?: boolean } = {}): Promise<OpenedStore> {
  if (isPostgresUrl(location)) {
    const { openPgStore } = await import('./postgres/index.js');
    return openPgStore(location, options);
  }
  return openLevelStore(location);
}

/** Runs the missing migrations of a PostgreSQL store, alone (`akas store migrate`). */
export async function migrateStore(url: string, onStep?: (what: string) => void) {
  const { migratePg } = await import('./postgres/index.js');
  return migratePg(url, onStep);
}
