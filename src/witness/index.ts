// The witness (C2SP tlog-witness): its own small service on src/core and src/store.
export {
  Witness,
  WitnessLogs,
  WitnessRefused,
  WitnessRefusedSummary,
  MAX_REFUSED_TEXT_BYTES,
  originHash,
  logKeysByOrigin,
  type WitnessAnswer,
  type WitnessOptions,
  type WitnessedLog,
  type RefusedCheckpoint,
  type RefusedSummary,
} from './witness.js';
export { serveWitness, handleWitnessRequest, MAX_BODY_BYTES } from './server.js';
export { loadOrCreateWitnessKey, WitnessKeyError } from './key.js';
