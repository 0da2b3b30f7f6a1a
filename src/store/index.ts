export type { Store, Tx, Space, Range, TransactOptions, SharedBuckets, Blobs, BlobReader, BlobWriter } from './types.js';
export { space } from './types.js';
export { openLevelStore } from './level.js';
export { openTempStore } from './testing.js';
export { loadOrCreateNodeKeys, writePrivateFile, rotateNodeKeys, readNodeKeyMaterial, assertPrivateMode, NodeKeysError, NODE_KEYS_FILE } from './node-keys.js';
export { BlobStore, BlobUpload, StoredBlob, blobsOf } from './blobs.js';
