// Offline check of a proposal bundle (`akas export`, GET /api/knowledge/proposals/{id}/bundle;
// PROTOCOL 8.4). Every check is reported under its layer:
// - content: the proposal's content (PROTOCOL 6.10) hashed here gives the contentSha256 it
//   shows, and that recomputed hash is the one every signature below must name; the decision
//   recomputed from the judgments and the rule its log event names; the judgments, credentials
//   and log events one set (none missing, none extra); the content hashes of `cas` named by
//   the content;
// - L2: each judgment's fields rebuild what its judge signed (v2: with the recomputed content
//   hash), the judge's Ed25519 signature holds, and the key was the judge's when the judgment
//   arrived (per the judges' windows);
// - L1: each judgment's credential verifies (strict eddsa-jcs-2022), says what the judgment
//   says and names the content, and (with a pinned issuer) was signed by a key that was the
//   issuer's then;
// - CAS: each content hash the proposal names matches the bytes given with --blobs;
// - L3: the node's log events about the proposal (submitted, each judgment, the decision), each
//   with its inclusion proof against a checkpoint signed by a pinned (or issuer-endorsed) log
//   key, naming the content (bundle-log.ts); the node's HMACs need the node's key: reported as
//   unchecked.
// Each layer's checks are a named sub-check below, a generator yielding the signatures it needs
// (src/core/checking.ts), run in the order bundleChecking lists them.
// What could not be checked (no pinned issuer, a blob not given, a v1 judgment that signed no
// content, a v1 bundle) is said, not counted.
// Free of Node built-ins (the browser build has it): the bytes of --blobs come through a
// Blobs source (cas.ts reads a folder on Node; blobsInMemory takes bytes in a browser).
import { runAsync, runNow, type Checking } from '../src/core/checking.js';
import { contentOfProposalView, hashesNamedBy, type ProposalContent } from '../src/core/content.js';
import { judgmentUrn } from '../src/core/credential.js';
import { sha256 } from '../src/core/crypto.js';
import { canonicalize } from '../src/core/jcs.js';
import type { ProposalKind } from '../src/core/kinds.js';
import { logChecking, type BundleScope } from './bundle-log.js';
import { credentialChecking } from './credential.js';
import { trustChecking, type IssuerKeyList, type IssuerTrust } from './issuer-keys.js';
import type { WitnessPolicy } from './log.js';
import { parseAgentKeys, proposalJudgmentsChecking, type AgentKeys, type JudgmentsReport } from './judgment.js';
import { Checks, credentialCheckId, NotCheckableError, readJsonInput, type Report } from './report.js';
import { statusChecking, type StatusOutcome } from './bundle-status.js';
import { preinflated, type Inflate } from './status-list.js';

/** The format a node exports now; a v1 bundle (before content binding) still verifies. */
export const BUNDLE_FORMAT = 'akas.bundle.v2';
export const BUNDLE_FORMATS = ['akas.bundle.v1', 'akas.bundle.v2'] as const;

/** The bytes given for the content hashes a bundle names (`--blobs DIR` on Node: cas.ts blobsInFolder). */
export interface Blobs {
  /** What the bytes given for `sha256` hash to, and their size; null when none were given. */
  hash(sha256: string): Promise<{ sha256: string; bytes: number; name: string } | null>;
  /** Where they were looked for, for the "not checked" message. */
  where: string;
}

/** Blobs held in memory (a browser's files, read into bytes), by the sha256 they claim. */
export function blobsInMemory(byHash: Map<string, Uint8Array> | Record<string, Uint8Array>, where = 'the bytes given'): Blobs {
  const map = byHash instanceof Map ? byHash : new Map(Object.entries(byHash));
  const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return {
    where,
    async hash(sha) {
      const bytes = map.get(sha) ?? map.get(sha.toUpperCase());
      return bytes ? { sha256: hex(sha256(bytes)), bytes: bytes.length, name: sha } : null;
    },
  };
}

export interface BundleOptions {
  /** The bytes of the content hashes the bundle names (`--blobs DIR`: cas.ts blobsInFolder). */
  blobs?: Blobs;
  /** The issuer DID to pin (the node's current issuer, e.g. from GET /healthz). */
  issuer?: string;
  /**
   * The node's key list as the auditor fetched it (GET /api/node/keys, `--issuer-keys`): its
   * signed rotations are followed with the bundle's own, so a bundle exported before an
   * issuer rotation verifies when pinned on the issuer the node shows now.
   */
  issuerKeys?: IssuerKeyList;
  /** The instant credentials' validity is checked at (ms); now by default. */
  at?: number;
  /** The log's C2SP verifier key to pin (else the one the pinned issuer endorses, if any). */
  logKey?: string;
  /** The issuer keys a trust file pins, each in its window (verifier/trust.ts issuerTrustOf), instead of --issuer. */
  trust?: IssuerTrust;
  /** The log keys a trust file's policy pins (any one signs the checkpoint), instead of --log-key. */
  logKeys?: string[];
  /** Witnesses whose quorum must have cosigned the bundle's checkpoint (PROTOCOL 9.9; checked with Node's crypto only, not in the browser build). */
  witnesses?: WitnessPolicy;
  /** GZIP for the stapled status lists (node:zlib in the CLI); by default the platform's DecompressionStream. */
  inflate?: Inflate;
}

export interface BundleReport extends Report {
  proposalId: string;
  kind: string;
  format: string;
  /** The contentSha256 recomputed from the bundle's proposal (absent when it cannot be). */
  contentSha256?: string;
  /** How the content is bound: judgments signed v2 by their judges, v1 ones bound by the node's word only. */
  binding: { judgesSigned: number; nodeOnly: number; submitted: 'log' | 'store' | 'missing' | 'not-checked' };
  /** The time the stapled status lists speak for, and the credentials they withdraw (PROTOCOL 8.7); absent when the bundle has none. */
  status?: StatusOutcome;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** What the blobs given hash to, by the sha256 the bundle names (null: none were given). */
type BlobHashes = Map<string, { sha256: string; bytes: number; name: string } | null>;

/** Reads a bundle (text, bytes or parsed); throws NotCheckableError when it is not strict JSON (invalid_json) or not a bundle. */
export function parseBundle(input: string | Uint8Array | unknown): Json {
  const doc = readJsonInput(input, 'a bundle');
  if (!isObject(doc) || !(BUNDLE_FORMATS as readonly unknown[]).includes(doc.format) || !isObject(doc.proposal)) {
    throw new NotCheckableError(`not an akas bundle (format ${BUNDLE_FORMATS.join(' or ')} with a proposal): export one with akas export PROPOSAL_ID`);
  }
  return doc;
}

const SHA256_ANY_CASE = /^[0-9a-fA-F]{64}$/;
const normalizeSha256 = (text: unknown) => (typeof text === 'string' && SHA256_ANY_CASE.test(text.trim()) ? text.trim().toLowerCase() : undefined);

/** What the blobs given hash to, for every content hash the bundle names (read before the checks run). */
async function hashBlobs(bundle: Json, blobs: Blobs | undefined): Promise<BlobHashes> {
  const out: BlobHashes = new Map();
  for (const ref of (Array.isArray(bundle.cas) ? bundle.cas : []) as Json[]) {
    const sha = isObject(ref) ? normalizeSha256(ref.sha256) : undefined;
    if (sha && !out.has(sha)) out.set(sha, blobs ? await blobs.hash(sha) : null);
  }
  return out;
}

/** Two key lists as one: the rotations of both (each is checked for its two signatures anyway), the keys of the first that has them. */
function mergeKeyLists(mine: IssuerKeyList | undefined, bundled: IssuerKeyList | undefined): IssuerKeyList | undefined {
  if (!mine) return bundled;
  const seen = new Set<string>();
  const rotations = [...(Array.isArray(mine.rotations) ? mine.rotations : []), ...(Array.isArray(bundled?.rotations) ? bundled!.rotations : [])].filter((r) => {
    let key: string;
    try {
      key = canonicalize(r);
    } catch {
      return true;
    }
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { keys: mine.keys ?? bundled?.keys, rotations };
}

/**
 * What in a bundle only a node that binds content (PROTOCOL 6.10) makes, each signed by someone
 * other than the exporter: a judgment signed akas.judgment.v2, a credential naming a
 * contentSha256, a log event naming one or recording a proposal.submitted.
 */
function contentBindingEvidence(bundle: Json): string[] {
  const out: string[] = [];
  const proposal = isObject(bundle.proposal) ? bundle.proposal : {};
  const judgments = (Array.isArray(proposal.judgments) ? proposal.judgments : []) as unknown[];
  const v2Signed = judgments.filter(
    (j) =>
      isObject(j) &&
      isObject(j.signature) &&
      typeof j.signature.signingPayload === 'string' &&
      j.signature.signingPayload.includes('"type":"akas.judgment.v2"'),
  ).length;
  if (v2Signed) out.push(`${v2Signed} judgment(s) signed akas.judgment.v2`);
  const creds = ((Array.isArray(bundle.credentials) ? bundle.credentials : []) as unknown[]).filter(
    (cr) => isObject(cr) && isObject(cr.credentialSubject) && cr.credentialSubject.contentSha256 !== undefined,
  ).length;
  if (creds) out.push(`${creds} credential(s) naming a contentSha256`);
  const log = isObject(bundle.log) ? bundle.log : {};
  const events = ((Array.isArray(log.entries) ? log.entries : []) as unknown[]).filter((it) => {
    const body = isObject(it) && isObject(it.entry) && isObject(it.entry.body) ? it.entry.body : undefined;
    return body !== undefined && (body.contentSha256 !== undefined || body.event === 'proposal.submitted');
  }).length;
  if (events) out.push(`${events} log event(s) naming a contentSha256`);
  return out;
}

/** Checks a bundle offline (Node: Ed25519 answers at once). Throws NotCheckableError (the check cannot run) for input that is not a bundle. */
export async function verifyBundle(input: string | Uint8Array | unknown, options: BundleOptions = {}): Promise<BundleReport> {
  const bundle = parseBundle(input);
  return runNow(bundleChecking(bundle, await withInflate(bundle, options), await hashBlobs(bundle, options.blobs)));
}

// The stapled lists' GZIP: the caller's, else inflated first with the platform's DecompressionStream.
async function withInflate(bundle: Json, options: BundleOptions): Promise<BundleOptions> {
  if (options.inflate) return options;
  const status = isObject(bundle.status) && Array.isArray(bundle.status.lists) ? bundle.status.lists : [];
  return { ...options, inflate: await preinflated(status.map((l) => (isObject(l) ? l.credential : undefined))) };
}

/** verifyBundle where Ed25519 is asynchronous (WebCrypto in a browser). */
export async function verifyBundleAsync(input: string | Uint8Array | unknown, options: BundleOptions = {}): Promise<BundleReport> {
  const bundle = parseBundle(input);
  return runAsync(bundleChecking(bundle, await withInflate(bundle, options), await hashBlobs(bundle, options.blobs)));
}

/** A bundle's checks, layer by layer, in the order its report lists them. */
function* bundleChecking(bundle: Json, options: BundleOptions, blobHashes: BlobHashes): Checking<BundleReport> {
  const c = new Checks();
  const proposal = bundle.proposal as Json;
  const v2 = formatCheck(c, bundle);
  const judges: AgentKeys[] = (Array.isArray(bundle.judges) ? bundle.judges : []).map((j, i) => parseAgentKeys(j, `judges[${i}]`));
  const judgmentIds = judgmentSetCheck(c, proposal);
  const trust = yield* issuerChecking(c, bundle, options);
  const l2 = yield* proposalJudgmentsChecking(proposal, judges);
  const judgments = (Array.isArray(proposal.judgments) ? proposal.judgments : []) as Json[];
  const { content, contentSha256 } = contentCheck(c, l2.kind, proposal, judgments, v2);
  const scope: BundleScope = { bundle, proposal, judgments, judgmentIds, kind: l2.kind, v2, trust, content, contentSha256 };
  judgeSignatureChecks(c, l2, v2);
  yield* credentialsChecking(c, scope, options.at);
  credentialSetCheck(c, scope);
  const submitted = yield* logChecking(c, scope, options);
  const status = yield* statusChecking(c, scope, { inflate: options.inflate!, at: options.at, logKey: options.logKey, issuer: options.issuer });
  casChecks(c, scope, blobHashes, options.blobs);
  return {
    ...c.report(),
    proposalId: String(proposal.proposalId),
    kind: l2.kind,
    format: String(bundle.format),
    ...(contentSha256 !== undefined ? { contentSha256 } : {}),
    binding: { judgesSigned: l2.checks.filter((j) => j.signed === 'v2').length, nodeOnly: l2.v1, submitted },
    ...(status ? { status } : {}),
  };
}

// content: the format is the bundle's word, not signed: a v1 label must not switch off the
// checks the evidence allows. A bundle that carries content binding signed by a judge, the
// issuer or the log (a v2 judgment, a credential or a log event naming a contentSha256) is
// checked as v2, and labelled v1 it fails: relabelling is how a changed status or proposer
// would hide. Answers whether the bundle is checked as v2.
function formatCheck(c: Checks, bundle: Json): boolean {
  const bound = contentBindingEvidence(bundle);
  if (bundle.format !== 'akas.bundle.v2') {
    c.add({
      id: 'bundle.format',
      what: 'an akas.bundle.v1 holds nothing a node that binds content made',
      valid: bound.length === 0,
      why: bound.length ? `it says akas.bundle.v1 but carries content binding (${bound.join('; ')}): checked as akas.bundle.v2` : undefined,
    });
  }
  return bundle.format === 'akas.bundle.v2' || bound.length > 0;
}

// content: each judgment once (a judgment shown twice would count twice in anything read from
// the bundle). Answers the judgment ids, in the order shown.
export function judgmentSetCheck(c: Checks, proposal: Json): string[] {
  const judgmentIds = (Array.isArray(proposal.judgments) ? (proposal.judgments as Json[]) : []).map((j) => String(j?.judgmentId));
  const twice = [...new Set(judgmentIds.filter((id, i) => judgmentIds.indexOf(id) !== i))];
  c.add({
    id: 'set.judgments',
    what: 'each judgment is shown once',
    valid: twice.length === 0,
    why: twice.length ? `shown more than once: ${twice.join(', ')}` : undefined,
  });
  return judgmentIds;
}

// L1: the issuer, pinned, then followed along its signed rotations (the bundle's, and those of
// the key list the auditor gave with --issuer-keys); or the keys a trust file pins, each in its
// window. The anchor of L1: answers undefined when none was pinned (the verdict is unanchored).
function* issuerChecking(c: Checks, bundle: Json, options: BundleOptions): Checking<IssuerTrust | undefined> {
  if (options.trust) {
    c.add({
      id: 'issuer.chain',
      what: 'the issuer keys the trust file pins',
      valid: true,
      why: `${options.trust.keys.size} key(s), each in its window`,
      anchor: true,
    });
    return options.trust;
  }
  if (!options.issuer) {
    c.add({
      id: 'issuer.chain',
      what: 'the credentials were issued by the node you trust',
      valid: null,
      why: "not checked: pass --trust FILE (akas node-keys --trust), or --issuer DID (the node's issuer: akas node-keys, or its /healthz), to pin it",
      anchor: true,
    });
    return undefined;
  }
  const trust = yield* trustChecking(options.issuer, mergeKeyLists(options.issuerKeys, bundle.issuerKeys as IssuerKeyList));
  c.add({
    id: 'issuer.chain',
    what: `the issuer keys reached from ${options.issuer} through rotations signed by both keys`,
    valid: trust.problems.length === 0,
    why: trust.problems.join('; ') || `${trust.keys.size} key(s)`,
    anchor: true,
  });
  return trust;
}

// content: the content, hashed here: the one hash every signature and event must name (a v1
// bundle carries none). Answers the content and its hash when they can be recomputed.
function contentCheck(c: Checks, kind: ProposalKind, proposal: Json, judgments: Json[], v2: boolean): { content?: ProposalContent; contentSha256?: string } {
  if (!v2) {
    c.add({
      id: 'content.hash',
      what: "the proposal's content hashes to what was judged",
      valid: null,
      why: 'not checked: an akas.bundle.v1 carries no content hash (export it again from a node that binds content, akas.bundle.v2)',
    });
    return {};
  }
  const shown = contentOfProposalView(kind, proposal);
  if (!shown.ok) {
    c.add({ id: 'content.hash', what: "the proposal's content hashes to the contentSha256 it shows", valid: false, why: shown.reason });
    return {};
  }
  const same = shown.contentSha256 === proposal.contentSha256;
  c.add({
    id: 'content.hash',
    what: "the proposal's content hashes to the contentSha256 it shows",
    valid: same,
    why: same
      ? shown.contentSha256
      : `its content hashes to ${shown.contentSha256}, it shows ${String(proposal.contentSha256)}: the payload, title, path or spec was changed`,
  });
  const problems = [...shown.problems];
  for (const j of judgments)
    if (isObject(j) && j.contentSha256 !== undefined && j.contentSha256 !== shown.contentSha256)
      problems.push(`judgment ${String(j.judgmentId)} shows contentSha256 ${String(j.contentSha256)}`);
  c.add({
    id: 'content.shown',
    what: "the path, title and kind shown, and each judgment's contentSha256, are those of the content",
    valid: problems.length === 0,
    why: problems.join('; ') || undefined,
  });
  return { content: shown.content, contentSha256: shown.contentSha256 };
}

// L2: every judge signature, and each key's owner at the time (checked by
// proposalJudgmentsChecking, reported here one check each).
export function judgeSignatureChecks(c: Checks, l2: JudgmentsReport, v2: boolean) {
  for (const j of l2.checks) {
    c.add({
      id: 'judgment.payload',
      what: 'the shown fields are what the judge signed',
      valid: j.payloadMatches,
      why: j.payloadMatches ? undefined : j.problems[0],
      subject: j.judgmentId,
    });
    c.add({
      id: 'judgment.signature',
      what: `${j.agentTag}'s Ed25519 signature`,
      valid: j.signatureValid,
      why: j.signatureValid ? undefined : 'does not verify under the public key shown',
      subject: j.judgmentId,
    });
    c.add({
      id: 'judgment.key',
      what: `the key was ${j.agentTag}'s when the judgment arrived`,
      valid: j.key === 'current' || j.key === 'prior' ? true : j.key === 'unchecked' ? null : false,
      why:
        j.key === 'unchecked'
          ? 'not checked: the bundle has no public profile of this judge'
          : j.key === 'not-the-judges'
            ? "not one of the judge's keys in that window"
            : j.key,
      subject: j.judgmentId,
    });
    if (!v2) continue;
    if (j.signed === 'v2') {
      c.add({
        id: 'judgment.content',
        what: `${j.agentTag} signed the content it judged (akas.judgment.v2)`,
        valid: j.contentSigned,
        why:
          j.contentSigned === null
            ? 'not checked: the content cannot be recomputed'
            : j.contentSigned
              ? undefined
              : j.problems.find((p) => p.startsWith('the judge signed content')),
        subject: j.judgmentId,
      });
    } else {
      c.add({
        id: 'judgment.content',
        what: `${j.agentTag} signed the content it judged`,
        valid: null,
        why: "not checked: a v1 judgment signs no content; it is bound to the content by the node's word only (its credential and log event)",
        subject: j.judgmentId,
      });
    }
  }
}

// L1: one credential per judgment, verifying (strict eddsa-jcs-2022) and saying what the
// judgment says and the content it judged; beside it, the node's HMAC, which only the node can check.
export function* credentialsChecking(c: Checks, scope: BundleScope, at: number | undefined): Checking<void> {
  const { bundle, proposal, trust, v2, contentSha256 } = scope;
  const credentials = (Array.isArray(bundle.credentials) ? bundle.credentials : []) as Json[];
  const bySubject = new Map(credentials.map((cr) => [isObject(cr.credentialSubject) ? cr.credentialSubject.id : undefined, cr]));
  for (const j of scope.judgments) {
    const id = String(j.judgmentId);
    const cred = bySubject.get(judgmentUrn(id));
    if (!cred) {
      c.add({
        id: 'credential.present',
        what: 'the judgment has its credential',
        valid: false,
        why: 'no credential in the bundle names this judgment',
        subject: id,
      });
      continue;
    }
    const r = yield* credentialChecking(cred, { trust, at });
    for (const check of r.checks)
      c.add({ id: credentialCheckId(check.id), what: check.what, valid: check.valid, why: check.why, subject: id, anchor: check.anchor });
    const s = cred.credentialSubject as Json;
    const judge = isObject(s.judge) ? s.judge : {};
    const sig = isObject(j.signature) ? j.signature : {};
    const same =
      s.proposalId === proposal.proposalId &&
      s.kind === (proposal.kind ?? scope.kind) &&
      judge.tag === j.agentTag &&
      judge.publicKey === sig.publicKey &&
      s.judgeSignature === sig.signature &&
      s.rationale === j.rationale &&
      s.composite === j.composite &&
      JSON.stringify(s.scores) === JSON.stringify(j.scores);
    c.add({
      id: 'credential.matches',
      what: 'the credential says what the judgment says',
      valid: same,
      why: same ? undefined : 'its subject differs from the judgment in the bundle',
      subject: id,
    });
    if (v2) {
      if (s.contentSha256 === undefined)
        c.add({
          id: 'credential.content',
          what: 'the credential names the content judged',
          valid: null,
          why: 'not checked: a credential issued before content binding names no content',
          subject: id,
        });
      else if (contentSha256 === undefined)
        c.add({
          id: 'credential.content',
          what: 'the credential names the content judged',
          valid: null,
          why: 'not checked: the content cannot be recomputed',
          subject: id,
        });
      else
        c.add({
          id: 'credential.content',
          what: 'the credential names the content judged',
          valid: s.contentSha256 === contentSha256,
          why: s.contentSha256 === contentSha256 ? undefined : `it names ${String(s.contentSha256)}; the content shown hashes to ${contentSha256}`,
          subject: id,
        });
    }
    // The node's HMAC over the judgment: only the node holds the key.
    c.add({
      id: 'judgment.nodeMac',
      what: "the node's HMAC over the judgment",
      valid: null,
      why: 'needs the node (HMAC-SHA256 under its key): not checkable offline',
      subject: id,
    });
  }
}

// content: one credential per judgment. A second credential of a judgment would not be checked
// by credentialsChecking (a credential is found by its subject), so it is refused, in a bundle
// of either format; a v2 bundle holds no credential of a judgment it does not show.
export function credentialSetCheck(c: Checks, { bundle, judgmentIds, v2 }: BundleScope) {
  const credentials = (Array.isArray(bundle.credentials) ? bundle.credentials : []) as Json[];
  const subjectIds = credentials.map((cr) => (isObject(cr) && isObject(cr.credentialSubject) ? String(cr.credentialSubject.id) : '(no subject)'));
  const extra = v2 ? subjectIds.filter((id) => !judgmentIds.some((j) => judgmentUrn(j) === id)) : [];
  const repeated = [...new Set(subjectIds.filter((id, i) => subjectIds.indexOf(id) !== i))];
  const problems = [
    extra.length ? `credentials of no judgment shown: ${extra.join(', ')}` : '',
    repeated.length ? `more than one credential of ${repeated.join(', ')}` : '',
  ].filter(Boolean);
  c.add({
    id: 'set.credentials',
    what: 'every credential is of a judgment in the bundle, one each',
    valid: problems.length === 0,
    why: problems.join('; ') || undefined,
  });
}

// CAS: the content hashes listed are those the content names (content), and each matches the
// bytes given with --blobs (CAS).
function casChecks(c: Checks, { bundle, v2, content }: BundleScope, blobHashes: BlobHashes, blobs: Blobs | undefined) {
  const refs = (Array.isArray(bundle.cas) ? bundle.cas : []) as Json[];
  if (v2) {
    if (!content)
      c.add({
        id: 'cas.bound',
        what: 'the content hashes listed are those the content names',
        valid: null,
        why: 'not checked: the content cannot be recomputed',
      });
    else {
      const named = hashesNamedBy(content);
      const key = (r: { sha256?: unknown; role?: unknown }) => `${String(r.role)}:${String(r.sha256)}`;
      const unnamed = refs.filter((r) => !named.some((n) => key(n) === key(r))).map(key);
      const missing = named.filter((n) => !refs.some((r) => key(n) === key(r))).map(key);
      const ok = unnamed.length === 0 && missing.length === 0;
      c.add({
        id: 'cas.bound',
        what: 'the content hashes listed are those the content names',
        valid: ok,
        why: ok
          ? undefined
          : [
              unnamed.length ? `listed but not named by the content: ${unnamed.join(', ')}` : '',
              missing.length ? `named by the content but not listed: ${missing.join(', ')}` : '',
            ]
              .filter(Boolean)
              .join('; '),
      });
    }
  }
  for (const ref of refs) {
    const sha = normalizeSha256(ref.sha256);
    const what = `the ${String(ref.role)} bytes hash to ${String(ref.sha256)}`;
    if (!sha) {
      c.add({ id: 'cas.hash', what, valid: false, why: 'not a sha256', subject: String(ref.sha256) });
      continue;
    }
    const got = blobHashes.get(sha);
    if (!got) {
      c.add({
        id: 'cas.hash',
        what,
        valid: null,
        why: blobs ? `not checked: no file named ${sha} in ${blobs.where}` : 'not checked: pass --blobs DIR with the bytes',
        subject: sha,
      });
      continue;
    }
    const { sha256, bytes, name: file } = got;
    const sizeOk = typeof ref.bytes !== 'number' || ref.bytes === bytes;
    c.add({
      id: 'cas.hash',
      what,
      valid: sha256 === sha && sizeOk,
      why: sha256 !== sha ? `${file} hashes to ${sha256}` : sizeOk ? undefined : `${file} has ${bytes} bytes, the proposal says ${ref.bytes}`,
      subject: sha,
    });
  }
}
