// The witness (C2SP tlog-witness): its own small service on src/core and src/store.
export { Witness, WitnessLogs, WitnessRefused, originHash, logKeysByOrigin, type WitnessAnswer, type WitnessOptions, type WitnessedLog, type RefusedCheckpoint } from './witness.js';
export { serveWitness, handleWitnessRequest, MAX_BODY_BYTES } from './server.js';
export { loadOrCreateWitnessKey, WitnessKeyError } from './key.js';
