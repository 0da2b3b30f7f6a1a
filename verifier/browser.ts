// The verifier's browser build (dist/akas-verify.browser.js, scripts/build-verifier.mjs): the
// same checks as `akas verify`, on WebCrypto's Ed25519, for pages such as the web explorer.
// Every function answers a Promise (WebCrypto is asynchronous) of the same report the Node
// verifier gives: {verified, checks: [{id, layer, what, valid, why?, subject?}]}, where
// `valid` is true (holds), false (does not) or null (could not be checked: never counted as
// verified). Inputs are the texts or bytes of the files (strict JSON is checked then), or
// values already parsed. docs/VERIFIER.md documents it with an example.
// Every report says whether it is anchored (issue 32): `anchored` false when a check ran only on
// keys the input brought itself (no issuer or log key pinned), `unanchored` naming those checks,
// and `verdict`, the one verdict every verifier gives (verifier/report.ts: 'verified', 'not
// verified', 'unanchored' or 'status unknown'); `verified` is true only for that first verdict.
// A credential that names a status list is checked against the lists the page fetched, or is
// "status unknown" (issue 47): never verified unread. A trust file (parseTrust) pins the issuers
// and log keys in one object. DSSE envelopes and Sigstore bundles (PROTOCOL 16.4) are checked
// by the same code as `akas verify dsse|sigstore`, on WebCrypto's Ed25519 and ECDSA P-256.
import { CRYPTO_PLATFORM } from '../src/core/crypto.js';
import { VERSION } from '../src/core/version.js';
import { blobsInMemory, verifyBundleAsync, type BundleOptions, type BundleReport } from './bundle.js';
import {
  credentialStatusAsync,
  verifyStatusAsync,
  type FetchedStatusList,
  type StatusGiven,
  type StatusOptions,
  type StatusReport,
  type StatusVersionRecord,
} from './browser-status.js';
import { artifactEvalsComplete, type ReadJson } from './complete.js';
import { verifyCredentialAsync, type CredentialOptions, type CredentialReport } from './credential.js';
import { dsseKey, verifyDsseAsync, type DsseKey, type DsseOptions, type DsseReport } from './dsse.js';
import { verifySigstoreAsync } from './sigstore.js';
import { verifyStandingAsync, type StandingOptions, type StandingReport } from './standing.js';
import { trustIssuerKeysAsync, type IssuerKeyList, type IssuerTrust } from './issuer-keys.js';
import { verifyProposalJudgmentsAsync, type AgentKeys, type JudgmentsReport } from './judgment.js';
import { verifyConsistencyAsync, verifyLogProofAsync, type WitnessPolicy } from './log.js';
import { verifyLookupAsync } from './lookup.js';
import { verifyNodeAsync, type NodeOptions, type NodeReport } from './node.js';
import { verifyReadAsync, type ReadReport } from './read.js';
import { verifyCasBytes as casBytes } from './cas-bytes.js';
import { isPresentation, verifyPresentationAsync, type PresentationOptions, type PresentationReport } from './presentation.js';
import {
  Checks,
  checksOut,
  credentialCheckId,
  NotCheckableError,
  readJsonInput,
  statusText,
  tally,
  verdictLine,
  verdictOf,
  type Check,
  type Report,
  type StatusSummary,
  type Verdict,
  type VerdictObject,
} from './report.js';
import { issuerTrustFromPins } from './issuer-keys.js';
import { parseTrust as parseTrustFile, TrustFileError, type Trust } from './trust.js';

export { SignatureMemo } from './memo.js';
export { CRYPTO_PLATFORM, VERSION, tally, isPresentation, TrustFileError, NotCheckableError, verdictOf, verdictLine, checksOut, statusText, dsseKey };
export type {
  StandingOptions,
  StandingReport,
  NodeOptions,
  NodeReport,
  ReadReport,
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
  StatusGiven,
  StatusSummary,
  Trust,
  Verdict,
  VerdictObject,
  DsseKey,
  DsseOptions,
  DsseReport,
  ReadJson,
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

/** What the browser build adds to a credential's options: its status, as the page read it (issue 47). */
export interface WithStatus {
  /**
   * The status lists (and the node's status head) the page fetched from the URLs the
   * credential's entries name, or 'skip' (the reader chose not to read status, said in the
   * report). Not given, a credential that names a status list is "status unknown".
   */
  status?: StatusGiven;
}

/** The status checks of credentials (parsed documents) under the options' pins: each check with its subject, and the status summary. */
async function statusOf(docs: unknown[], options: CredentialOptions & WithStatus, issuer: string | undefined, name: (i: number) => string | undefined) {
  const checks: Check[] = [];
  let status: StatusSummary | null = null;
  for (const [i, doc] of docs.entries()) {
    const own = typeof (doc as { issuer?: unknown } | null)?.issuer === 'string' ? (doc as { issuer: string }).issuer : undefined;
    const issuers = options.issuer ? [options.issuer] : (issuer ?? own) ? [(issuer ?? own) as string] : [];
    const r = await credentialStatusAsync(doc, options.status, { trust: options.trust, issuers, at: options.at });
    for (const c of r.checks)
      checks.push(name(i) === undefined ? c : { ...c, id: credentialCheckId(c.id), subject: `${name(i)}${c.subject ? ` ${c.subject}` : ''}` });
    if (r.status)
      status = status ? { checked: status.checked && r.status.checked, source: r.status.source, lists: [...status.lists, ...r.status.lists] } : r.status;
  }
  return { checks, status };
}

/** A report with its status checks and summary (none where no credential names a list): `verified` again over all (status checks pin nothing). */
const withChecks = <R extends Report>(r: R, more: Check[], status: StatusSummary | null): R & { status?: StatusSummary } =>
  status ? { ...r, verified: r.verified && !more.some((c) => c.valid === false), checks: [...r.checks, ...more], status } : r;

/**
 * One credential (VC DM 2.0, eddsa-jcs-2022): its text, bytes or parsed value. Options: at,
 * issuer, trust, checkJudgeSignature, and `status` (the lists the page fetched, or 'skip').
 */
export const verifyCredential = async (input: unknown, options: CredentialOptions & WithStatus = {}) => {
  let doc: unknown;
  const r = await verifyCredentialAsync(input, { ...options, onDocument: (d) => (doc = d) });
  const s = doc === undefined ? { checks: [], status: null } : await statusOf([doc], options, r.issuer, () => undefined);
  return settled(withChecks(r, s.checks, s.status));
};

/**
 * An agent's standing (PROTOCOL 8.9): the credential with its status (as verifyCredential), its
 * checkpoint under the pinned log keys, and, given the log's `entries` [0, size), each figure
 * computed again from them. Options: at, issuer, trust, logKeys, entries, status.
 */
export const verifyStanding = async (input: unknown, options: StandingOptions & WithStatus = {}) => {
  const doc = readJsonInput(input, 'a standing credential');
  const r = await verifyStandingAsync(doc, options);
  const s = await statusOf([doc], options, r.issuer, () => undefined);
  return settled(withChecks(r, s.checks, s.status));
};

/** A verifiable presentation and every credential in it. Options: challenge, domain, requireProof, and those of verifyCredential (status too). */
export const verifyPresentation = async (input: unknown, options: PresentationOptions & WithStatus = {}) => {
  const docs: unknown[] = [];
  const r = await verifyPresentationAsync(input, { ...options, onDocument: (d) => docs.push(d) });
  const s = await statusOf(docs, options, undefined, (i) => `verifiableCredential[${i}]`);
  return settled(withChecks(r, s.checks, s.status));
};

/**
 * Who signed a DSSE envelope or a Sigstore bundle, as the Verify page has it: an SPKI PEM public
 * key (Ed25519 or ECDSA P-256: `akas verify dsse --key`), a key dsseKey read, or the issuer keys
 * reached from a pinned DID (trustIssuerKeys) or pinned by a trust file (parseTrust's `trust`),
 * each in its window (`--trust`).
 */
export type DsseSignerInput = string | DsseKey | IssuerTrust;

const signerOf = (s: DsseSignerInput) => (typeof s === 'string' ? dsseKey(s) : s);

/**
 * A DSSE envelope of an in-toto Statement (`akas export ID --format dsse`; PROTOCOL 16.4): its
 * text, bytes or parsed value, under the signer given. Rejects (the check cannot run) with
 * NotCheckableError for text that is not strict JSON, and an Error for a PEM it cannot take.
 */
export const verifyDsse = async (input: unknown, signer: DsseSignerInput, options?: DsseOptions) =>
  settled(await verifyDsseAsync(input, signerOf(signer), options));

/** A keyed Sigstore bundle v0.3 holding one DSSE envelope (`akas export ID --format sigstore`), as verifyDsse. */
export const verifySigstore = async (input: unknown, signer: DsseSignerInput, options?: DsseOptions) =>
  settled(await verifySigstoreAsync(input, signerOf(signer), options));

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

/** A saved lookup in the verifiable index (GET /api/index/{key}; PROTOCOL 9.10) against a pinned log key, and a witness quorum when given. */
export const verifyLookup = async (doc: unknown, logKey: string | string[] | undefined, witnesses?: WitnessPolicy) =>
  settled(await verifyLookupAsync(doc, logKey, witnesses));

/** Reads a route of the page's own node as JSON (a refusal said as a string, as ReadJson asks). */
const fromThisNode: ReadJson = async (route) => {
  const res = await fetch(route, { headers: { accept: 'application/json' } });
  return res.ok ? res.json() : `${route.split('?')[0]} answered ${res.status}`;
};

/**
 * An artifact's evals against the log's record of its bytes (PROTOCOL 9.3, 9.10, 10.4), as
 * `akas node PATH` holds them: a leaf-artifact read (GET /api/knowledge/node/PATH) whose
 * independentEvals must be every eval the lookup of sha256:HEX proves the log records of its
 * path and bytes (index.complete), each as recorded (index.recorded). The lookups are read
 * through `get` (by default from the page's own node) and checked under the pinned log key.
 * Answers null for a read that is no artifact's; else the checks, and when both hold `asOf`
 * (the log size, the evals recorded) and the `checkpoint` the lookup is proven under.
 */
export const verifyArtifactEvals = async (read: unknown, logKey: string | string[] | undefined, get: ReadJson = fromThisNode) => {
  const r = await artifactEvalsComplete(read, get, logKey);
  if (!r) return null;
  const c = new Checks();
  for (const check of r.checks) c.add(check);
  return { ...r, checks: c.list };
};

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

/**
 * Any read made with ?evidence=full (PROTOCOL 10.7): a node or brief read, a search answer (each
 * hit with its own verdict), a proposal detail, an attestation. Options: those of verifyNode, and
 * witnesses (a quorum the checkpoint must carry).
 */
export const verifyRead = async (input: unknown, options?: NodeOptions) => {
  const r = await verifyReadAsync(input, options);
  return settled({ ...r, ...(r.hits ? { hits: r.hits.map((h) => ({ ...h, report: settled(h.report) })) } : {}) });
};
