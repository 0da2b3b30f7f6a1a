// The log's door: what the rest of the code uses of it, by name. The files of log/ import one
// another directly, never this one.
export { TransparencyLog } from './log.js';
export { enqueueLogEntry, leafBytesAtMost } from './sequencer.js';
export {
  cosignedNote,
  LogCheckpoints,
  LOG_LOCK,
  LogEntries,
  LogHead,
  LogIndex,
  LogNodes,
  LogOutbox,
  seqKey,
  seqOfId,
  statusIndexKey,
  statusIndexPrefix,
  statusVersionRef,
  storeNodes,
  type StoredCheckpoint,
} from './spaces.js';
export { checkLog } from './audit.js';
export { auditEvent, EVENT_KIND } from './events.js';
export { attest, attestationKinds, dryRun, kindOf } from './attestations.js';
export { attestationStatement, predicateTypeOf, SUBJECT_FIELDS, subjectsOf } from './statements.js';
export { LogTileReader } from './tiles.js';
export { LookupIndex, type MapAnswer, type PublishedRoot } from './lookup.js';
export { findEntries, inclusionOf, type EntryFilter } from './queries.js';
export { parseWitnessSpec, servedCheckpoint, WitnessClient, type WitnessConfig } from './witnesses.js';
