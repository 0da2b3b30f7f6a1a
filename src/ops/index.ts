// The CLI's one door into src/ops (test/rooms.test.ts holds it; ARCHITECTURE 1): what an akas
// command runs on src/domain and src/store itself, with no node to ask. Each name is listed,
// so what the CLI reaches of the domain is read here and nowhere else.

// akas store migrate | copy, and the node secret of a shared store (akas serve, akas log check).
export { copyStore, migrateDatabase, readNodeSecret, type CopyOptions, type CopyReport } from './store-admin.js';
// akas calibration init: a private calibration set drawn fresh, read back as the node reads it.
export { generateCalibrationSet } from '../domain/calibration/generate.js';
export { readCalibrationSet } from '../domain/calibration/set.js';
// akas propose KIND --template: the payload GET /api/agent/v1/schemas serves, printed with no node.
export { PROPOSAL_TEMPLATES } from '../domain/proposals/templates.js';
