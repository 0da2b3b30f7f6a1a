// The CLI's door into src/ops (test/rooms.test.ts holds it; ARCHITECTURE 1): what an akas
// command runs on src/domain and src/store itself, with no node to ask. Each name is listed, so
// what the CLI reaches of the domain is read here (and in templates.ts, a door of its own).

// akas store migrate | copy, and the node secret of a shared store (akas serve, akas log check).
export { copyStore, migrateDatabase, readNodeSecret, type CopyOptions, type CopyReport } from './store-admin.js';
// akas calibration init: a private calibration set drawn fresh, read back as the node reads it.
export { generateCalibrationSet } from '../domain/calibration/generate.js';
export { readCalibrationSet } from '../domain/calibration/set.js';
// akas serve: the local admin channel it answers. akas admin revoke: the change made on the store
// directly, when no node runs there (asking a running node goes through admin-ask.ts, a door of its own).
export { applyStatusChange, openAdminChannel } from './admin-channel.js';
