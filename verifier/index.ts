// The offline verifier: checks that need no node and no network (ARCHITECTURE 1). Imports
// src/core and data/ only. Named here is what the CLI and the benches use (issue 31, 7); the
// browser build has its own entry (browser.ts), and a test of one check imports its module.
export { blobsInFolder, hashFile, normalizeSha256, readCasManifest, verifyCasFile, verifyCasManifest } from './cas.js';
export { parseAgentKeys, verifyProposalJudgments } from './judgment.js';
export { type Check, type CheckId, CHECKS, Checks, exitOf, NotCheckableError, tally, verdictOf } from './report.js';
export { parseTrust, parseTlogPolicy, TRUST_TYPE, TrustFileError, type Trust } from './trust.js';
export { type CredentialReport, verifyCredential } from './credential.js';
export { type IssuerTrust, trustIssuerKeys } from './issuer-keys.js';
export { verifyBundle } from './bundle.js';
export {
  type AuditState,
  checkLogInclusion,
  checkWitnesses,
  consistent,
  endorsedLogKey,
  LogAuditor,
  openCheckpoint,
  type OpenedCheckpoint,
  verifyLogProof,
  type WitnessPolicy,
} from './log.js';
export { verifyPresentation } from './presentation.js';
export { verifyNode, verifyNodeAsync } from './node.js';
export { readShape, type ReadReport, type ReadShape, verifyRead } from './read.js';
export { SignatureMemo } from './memo.js';
export { dsseKey, verifyDsse } from './dsse.js';
export { verifySigstore } from './sigstore.js';
export { tlogProofDocument, verifyTlogProof } from './tlog-proof.js';
export { type LookupReport, verifyLookup, verifyLookupAsync } from './lookup.js';
