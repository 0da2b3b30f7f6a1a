// The verifier's browser build (dist/akas-verify.browser.js, scripts/build-verifier.mjs): the
// same checks as `akas verify`, on WebCrypto's Ed25519, for pages such as the web explorer.
// Every function answers a Promise (WebCrypto is asynchronous) of the same report the Node
// verifier gives: {verified, checks: [{id, layer, what, valid, why?, subject?}]}, where
// `valid` is true (holds), false (does not) or null (could not be checked: never counted as
// verified). Inputs are the texts or bytes of the files (strict JSON is checked then), or
// values already parsed. docs/VERIFIER.md documents it with an example.
// Every report says whether it is anchored (issue 32): `anchored` false when a check ran only on
// keys the input brought itself (no issuer or log key pinned), `unanchored` naming those checks,
// and `verdict` ('verified', 'failed' or 'unanchored'); `verified` is true only for an anchored
// report with no failure. A trust file (parseTrust) pins the issuers and log keys in one object.
import { CRYPTO_PLATFORM } from '../src/core/crypto.js';
import { VERSION } from '../src/core/version.js';
import { blobsInMemory, verifyBundleAsync, type BundleOptions, type BundleReport } from './bundle.js';
import { verifyStatusAsync, type FetchedStatusList, type StatusOptions, type StatusReport, type StatusVersionRecord } from './browser-status.js';
import { verifyCredentialAsync, type CredentialOptions, type CredentialReport } from './credential.js';
import { trustIssuerKeysAsync, type IssuerKeyList, type IssuerTrust } from './issuer-keys.js';
import { verifyProposalJudgmentsAsync, type AgentKeys, type JudgmentsReport } from './judgment.js';
import { verifyConsistencyAsync, verifyLogProofAsync, type WitnessPolicy } from './log.js';
import { verifyNodeAsync, type NodeOptions, type NodeReport } from './node.js';
import { verifyCasBytes as casBytes } from './cas-bytes.js';
import { isPresentation, verifyPresentationAsync, type PresentationOptions, type PresentationReport } from './presentation.js';
import { tally, verdictOf, type Check, type Report, type Verdict } from './report.js';
import { issuerTrustFromPins } from './issuer-keys.js';
import { parseTrust as parseTrustFile, TrustFileError, type Trust } from './trust.js';

export { CRYPTO_PLATFORM, VERSION, tally, isPresentation, TrustFileError };
export type {
  NodeOptions,
  NodeReport,
  WitnessPolicy,
  BundleReport,
  Check,
  CredentialOptions,
  CredentialReport,
  IssuerKeyList,
  IssuerTrust,
  JudgmentsReport,
  PresentationOptions,
  PresentationReport,
  Report,
  FetchedStatusList,
  StatusOptions,
  StatusReport,
  StatusVersionRecord,
  Trust,
  Verdict,
};

/** A report as the browser build answers it: `verified` only when anchored with no failure, and the verdict named. */
const settled = <R extends { verified: boolean; anchored: boolean }>(r: R): R & { verdict: Verdict } => {
  const verdict = verdictOf(r);
  return { ...r, verified: verdict === 'verified', verdict };
};

/** What a trust file pins, in the options the functions below take: {trust, logKeys} (and witnesses, with Node's verifier only). */
export interface Pinned {
  trust?: IssuerTrust;
  logKeys?: string[];
}

/**
 * A trust file (akas node-keys --trust; PROTOCOL 8.6), its text or parsed value, as options for
 * verifyBundle, verifyNode, verifyCredential. Throws TrustFileError.
 */
export const parseTrust = (input: unknown): Pinned & { file: Trust } => {
  const file = parseTrustFile(input);
  return { file, trust: issuerTrustFromPins(file.issuers), logKeys: file.policy.logs.length ? file.policy.logs : undefined };
};

/** One credential (VC DM 2.0, eddsa-jcs-2022): its text, bytes or parsed value. Options: at, issuer, trust, checkJudgeSignature. */
export const verifyCredential = async (input: unknown, options?: CredentialOptions) => settled(await verifyCredentialAsync(input, options));

/** A verifiable presentation and every credential in it. Options: challenge, domain, requireProof, and those of verifyCredential. */
export const verifyPresentation = async (input: unknown, options?: PresentationOptions) => settled(await verifyPresentationAsync(input, options));

/**
 * Each credential's status (revocation, suspension: PROTOCOL 8.7) in the lists the caller fetched
 * from the URLs its entries name, each list checked under the pinned issuer (options.trust). An
 * entry whose list was not fetched or does not verify is "status unknown" (null), never good.
 */
export const verifyStatus = (credentials: unknown[], lists: FetchedStatusList[], options?: StatusOptions): Promise<StatusReport> =>
  verifyStatusAsync(credentials, lists, options);

/** The issuer keys reached from a pinned did:key through the node's signed rotations (GET /api/node/keys `issuer`). */
export const trustIssuerKeys = (pinned: string, list: IssuerKeyList | undefined): Promise<IssuerTrust> => trustIssuerKeysAsync(pinned, list);

/** The judges' signatures (L2) of a proposal detail (GET /api/knowledge/proposals/{id}), with their public profiles. */
export const verifyProposalJudgments = (detail: unknown, profiles?: AgentKeys[]): Promise<JudgmentsReport> => verifyProposalJudgmentsAsync(detail, profiles);

/** A saved GET /api/attestations/{id} answer against a pinned log key (a C2SP verifier key string), and a witness quorum when given. */
export const verifyLogProof = async (doc: unknown, logKey: string | string[] | undefined, witnesses?: WitnessPolicy) =>
  settled(await verifyLogProofAsync(doc, logKey, witnesses));

/**
 * Two signed checkpoints ({old?, new, proof?}: the notes and GET /api/log/proof/consistency's
 * proof) against a pinned log key: both signatures, and that the newer tree extends the older.
 */
export const verifyConsistency = (doc: unknown, logKey: string): Promise<Report> => verifyConsistencyAsync(doc, logKey);

/** Bytes against an expected sha256 (`akas verify cas FILE --sha256 HASH`); answers the hash too. */
export const verifyCas = async (bytes: Uint8Array, expected?: string, name?: string): Promise<Report & { sha256: string; bytes: number }> =>
  casBytes(bytes, expected, name);

export interface BrowserBundleOptions extends Omit<BundleOptions, 'blobs'> {
  /** The bytes of the blobs the bundle names, by their sha256 (e.g. files the user dropped, read with arrayBuffer()). */
  blobs?: Map<string, Uint8Array> | Record<string, Uint8Array>;
}

/** A proposal bundle (`akas export`), layer by layer. Rejects (the check cannot run) when the input is not a bundle. */
export const verifyBundle = async (input: unknown, options: BrowserBundleOptions = {}) =>
  settled(await verifyBundleAsync(input, { ...options, blobs: options.blobs ? blobsInMemory(options.blobs) : undefined }));

/** A knowledge read (`akas node PATH --json`, `akas brief ID --json`) against its evidence (PROTOCOL 10.7). Options: issuer, issuerKeys, logKey. */
export const verifyNode = async (input: unknown, options?: NodeOptions) => settled(await verifyNodeAsync(input, options));
