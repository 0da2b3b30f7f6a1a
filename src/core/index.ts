// src/core as the other rooms use it: each name here is imported by src/store, src/domain,
// src/ops, src/http, src/witness, src/explorer, cli or bench (issue 31, 7). What only
// core's own modules use stays in its module, and so does what only a test reaches: a test of
// core's internals imports the module it tests. The verifier imports core's modules directly
// (its browser build must not reach paths.ts, which reads node:fs).
export { canonicalize } from './jcs.js';
export { hmacSha256Hex, safeEqual, sha256Hex } from './hash.js';
export { generateKeyPair, privateKeyObject, publicKeyFromPrivate, sign, verify } from './ed25519.js';
export { didKeyDocument, didKeyFromPublicKey, ed25519Multibase, publicKeyFromMultibase } from './didkey.js';
export { kindOfProposalId, PROPOSAL_ID_RE, PROPOSAL_KINDS, type ProposalKind } from './kinds.js';
export {
  API_KEY_RE,
  cryptoRandom,
  hex,
  newApiKey,
  newChallengeId,
  newJudgmentId,
  newLedgerId,
  newProposalId,
  newRecoveryToken,
  type RandomSource,
  rotatedApiKey,
  TAG_RE,
  tagOf,
} from './ids.js';
export { ERROR_CODES, type ErrorCode, isServiceError, ServiceError } from './errors.js';
export { type Clock, DAY_MS, FakeClock, nextUtcMidnight, systemClock, utcDay } from './clock.js';
export { Lru } from './lru.js';
export {
  CALIBRATION_ATTEMPTS,
  CALIBRATION_BONUS,
  CALIBRATION_QUESTIONS,
  isPaidTier,
  MIN_SERVICE_SCORE,
  type PaidTier,
  PROPOSE_CAP,
  type Tier,
  TIER_BANDS,
  TIER_PRICE,
  tierOf,
  TIERS,
} from './tiers.js';
export { dataPath } from './paths.js';
export { currentHmac, freshNodeKeys, newNodeKeyMaterial, type NodeKeyMaterial, type NodeKeys, nodeKeysFrom, rotateHmacKey, rotateIssuerKey } from './keys.js';
export {
  credentialUrl,
  detailUrl,
  judgeUrl,
  JUDGMENT_V2,
  judgmentSigningPayload,
  type JudgmentSigningPayload,
  judgmentSigningString,
  KIND_ROUTES,
  PUBLISH_THRESHOLD,
  type ScoreDimensions,
  weightedComposite,
} from './judgment.js';
export { VERSION } from './version.js';
export { isoTime, judgmentCredential, VC_V2_CONTEXT } from './credential.js';
// Status lists (PROTOCOL 8.7): domain/credentials issues and changes them, http serves them.
export {
  getStatusBit,
  isStatusPurpose,
  multibaseBase64url,
  setStatusBit,
  STATUS_HEAD_PATH,
  STATUS_HEAD_TYPE,
  STATUS_LIST_EVENT_KIND,
  STATUS_LIST_LENGTH,
  STATUS_LIST_TTL_MS,
  STATUS_PURPOSES,
  statusEntry,
  statusHeadStatement,
  statusListCredential,
  statusListPath,
  toMultibaseBase64url,
  type StatusEntry,
  type StatusHead,
  type StatusHeadList,
  type StatusPurpose,
} from './status-list.js';
export { decodeUtf8Strict, jsonShape, MAX_JSON_DEPTH, strictJsonProblem } from './strict-json.js';
export {
  consistencyOldRoot,
  consistencyProof,
  EMPTY_ROOT,
  type GetNode,
  inclusionProof,
  leafHash,
  nodesToStoreOnAppend,
  rootAt,
  verifyConsistency,
} from './merkle.js';
export { formatCheckpoint, isNoteKeyName, type NoteVerifierKey, openNote, parseCheckpoint, parseNote, parseVerifierKey, signNote } from './note.js';
export { type AttestationTier, entryHash, entryLeaf, GENESIS_PREV_HASH, type LogEntry } from './log-entry.js';
export { checkKeyPossession, type KeyPossession, type PossessionPurpose, proveKeyPossession } from './possession.js';
export { contentSha256Of, hashesNamedBy, type NamedHash, proposalContent, type ProposalContent, targetPathOf, titleOfBody } from './content.js';
export {
  BRIEF_BINDING_FIELDS,
  BRIEF_LEVELS,
  BRIEF_MANIFEST_FIELDS,
  type BriefBinding,
  briefCutSha256,
  type BriefLevel,
  type BriefManifestFields,
  briefManifestStatement,
  briefTexts,
  cutBrief,
  deepText,
} from './brief.js';
export { capErrors, type LimitsOptions, limitsSchema } from './schema-limits.js';
export { BODY_SLACK, type Bounds, MIN_BODY_BYTES, routeBodyBounds, schemaBounds } from './body-bounds.js';
export {
  addSignatureLines,
  cosign,
  cosignerKeyId,
  type CosignerSigner,
  cosignerSignerKey,
  cosignerVerifierKey,
  parseCosignerKey,
  parseCosignerSignerKey,
  verifyCosignatures,
} from './cosignature.js';
export {
  bundlePath,
  decodeBundle,
  encodeBundle,
  encodeTileIndex,
  MAX_ENTRY_BYTES,
  parseTilePath,
  perfectRoot,
  TILE_HEIGHT,
  TILE_WIDTH,
  TileHashReader,
  tilePath,
  type TileRef,
  tileWidthAt,
} from './tiles.js';
export { formatAddCheckpoint, formatTlogSize, parseAddCheckpoint, parseTlogSize, TLOG_SIZE_CONTENT_TYPE } from './witness-wire.js';
export {
  AKAS_PREDICATE_BASE,
  dsseBase64,
  type DsseEnvelope,
  dsseEnvelope,
  IN_TOTO_PAYLOAD_TYPE,
  pae,
  type ResourceDescriptor,
  SIGSTORE_BUNDLE_V03,
  type SigstoreBundle,
  sigstoreBundle,
  type Statement,
  STATEMENT_TYPE,
} from './dsse.js';
export { formatTlogProof, parseTlogProof, TLOG_PROOF_HEADER, type TlogProof } from './tlog-proof.js';
export { EMPTY_MAP_ROOT, LOOKUP_ROOT_KIND, LookupMap, lookupKeyHash, type MapProof } from './lookup.js';
export { encodeMapProof, verifyMapProof } from './lookup-proof.js';
export { entryLookupKeys, LOOKUP_KEY_PREFIXES, lookupKeyProblem, MAX_LOOKUP_KEY } from './lookup-keys.js';
