// Offline check of a proposal bundle (`akas export`, GET /api/knowledge/proposals/{id}/bundle;
// PROTOCOL 8.4). Every check is reported under its layer:
// - L2: each judgment's fields rebuild what its judge signed, the judge's Ed25519 signature
//   holds, and the key was the judge's when the judgment arrived (per the judges' windows);
// - L1: each judgment's credential verifies (strict eddsa-jcs-2022), says what the judgment
//   says, and (with a pinned issuer) was signed by a key that was the issuer's then;
// - CAS: each content hash the proposal names matches the bytes given with --blobs;
// - L3: each judgment's entry in the node's transparency log, with its inclusion proof
//   against a checkpoint signed by a pinned (or issuer-endorsed) log key; the node's HMACs
//   need the node's key: reported as unchecked, never as verified.
// What could not be checked (no pinned issuer, a blob not given) is said, not counted.
// Free of Node built-ins (the browser build has it): the bytes of --blobs come through a
// Blobs source (cas.ts reads a folder on Node; blobsInMemory takes bytes in a browser).
import { runAsync, runNow, type Checking } from '../src/core/checking.js';
import { judgmentUrn } from '../src/core/credential.js';
import { sha256 } from '../src/core/crypto.js';
import { canonicalize } from '../src/core/jcs.js';
import { parseStrictJson } from '../src/core/strict-json.js';
import { credentialChecking } from './credential.js';
import { trustChecking, type IssuerKeyList, type IssuerTrust } from './issuer-keys.js';
import { endorsedLogKeyChecking, logInclusionChecking, witnessesChecking, type WitnessPolicy } from './log.js';
import { NotCheckableError, parseAgentKeys, proposalJudgmentsChecking, type AgentKeys } from './judgment.js';
import { Checks, type Report } from './report.js';

export const BUNDLE_FORMAT = 'akas.bundle.v1';

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
  /** Witnesses whose quorum must have cosigned the bundle's checkpoint (PROTOCOL 9.9; checked with Node's crypto only, not in the browser build). */
  witnesses?: WitnessPolicy;
}

export interface BundleReport extends Report {
  proposalId: string;
  kind: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads a bundle (text, bytes or parsed); throws NotCheckableError when it is not one. */
export function parseBundle(input: string | Uint8Array | unknown): Json {
  let doc = input;
  if (typeof input === 'string' || input instanceof Uint8Array) {
    const parsed = parseStrictJson(input);
    if (!parsed.ok) throw new NotCheckableError(`not a bundle: ${parsed.reason}`);
    doc = parsed.value;
  }
  if (!isObject(doc) || doc.format !== BUNDLE_FORMAT || !isObject(doc.proposal)) {
    throw new NotCheckableError(`not an akas bundle (format ${BUNDLE_FORMAT} with a proposal): export one with akas export PROPOSAL_ID`);
  }
  return doc;
}

const SHA256_ANY_CASE = /^[0-9a-fA-F]{64}$/;
const normalizeSha256 = (text: unknown) => (typeof text === 'string' && SHA256_ANY_CASE.test(text.trim()) ? text.trim().toLowerCase() : undefined);

/** What the blobs given hash to, for every content hash the bundle names (read before the checks run). */
async function hashBlobs(bundle: Json, blobs: Blobs | undefined): Promise<Map<string, { sha256: string; bytes: number; name: string } | null>> {
  const out = new Map<string, { sha256: string; bytes: number; name: string } | null>();
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

/** Checks a bundle offline (Node: Ed25519 answers at once). Throws NotCheckableError (the check cannot run) for input that is not a bundle. */
export async function verifyBundle(input: string | Uint8Array | unknown, options: BundleOptions = {}): Promise<BundleReport> {
  const bundle = parseBundle(input);
  return runNow(bundleChecking(bundle, options, await hashBlobs(bundle, options.blobs)));
}

/** verifyBundle where Ed25519 is asynchronous (WebCrypto in a browser). */
export async function verifyBundleAsync(input: string | Uint8Array | unknown, options: BundleOptions = {}): Promise<BundleReport> {
  const bundle = parseBundle(input);
  return runAsync(bundleChecking(bundle, options, await hashBlobs(bundle, options.blobs)));
}

function* bundleChecking(bundle: Json, options: BundleOptions, blobHashes: Map<string, { sha256: string; bytes: number; name: string } | null>): Checking<BundleReport> {
  const c = new Checks();
  const proposal = bundle.proposal as Json;
  const judges: AgentKeys[] = (Array.isArray(bundle.judges) ? bundle.judges : []).map((j, i) => parseAgentKeys(j, `judges[${i}]`));

  // The issuer: pinned, then followed along its signed rotations (the bundle's, and those of
  // the key list the auditor gave with --issuer-keys).
  let trust: IssuerTrust | undefined;
  if (options.issuer) {
    trust = yield* trustChecking(options.issuer, mergeKeyLists(options.issuerKeys, bundle.issuerKeys as IssuerKeyList));
    c.add('issuer.chain', 'L1', `the issuer keys reached from ${options.issuer} through rotations signed by both keys`, trust.problems.length === 0, trust.problems.join('; ') || `${trust.keys.size} key(s)`);
  } else c.add('issuer.chain', 'L1', 'the credentials were issued by the node you trust', null, 'not checked: pass --issuer DID (the node\'s issuer, e.g. from its /healthz) to pin it');

  // L2: every judge signature, and each key's owner at the time.
  const l2 = yield* proposalJudgmentsChecking(proposal, judges);
  const judgments = (Array.isArray(proposal.judgments) ? proposal.judgments : []) as Json[];
  for (const j of l2.checks) {
    c.add('judgment.payload', 'L2', 'the shown fields are what the judge signed', j.payloadMatches, j.payloadMatches ? undefined : 'kind, proposalId, judge, scores or rationale were changed', j.judgmentId);
    c.add('judgment.signature', 'L2', `${j.agentTag}'s Ed25519 signature`, j.signatureValid, j.signatureValid ? undefined : 'does not verify under the public key shown', j.judgmentId);
    c.add(
      'judgment.key',
      'L2',
      `the key was ${j.agentTag}'s when the judgment arrived`,
      j.key === 'current' || j.key === 'prior' ? true : j.key === 'unchecked' ? null : false,
      j.key === 'unchecked' ? "not checked: the bundle has no public profile of this judge" : j.key === 'not-the-judges' ? "not one of the judge's keys in that window" : j.key,
      j.judgmentId,
    );
  }

  // L1: one credential per judgment, saying what the judgment says.
  const credentials = (Array.isArray(bundle.credentials) ? bundle.credentials : []) as Json[];
  const bySubject = new Map(credentials.map((cr) => [isObject(cr.credentialSubject) ? cr.credentialSubject.id : undefined, cr]));
  for (const j of judgments) {
    const id = String(j.judgmentId);
    const cred = bySubject.get(judgmentUrn(id));
    if (!cred) {
      c.add('credential.present', 'L1', 'the judgment has its credential', false, 'no credential in the bundle names this judgment', id);
      continue;
    }
    const r = yield* credentialChecking(cred, { trust, at: options.at });
    for (const check of r.checks) c.add(`credential.${check.id}`, check.layer, check.what, check.valid, check.why, id);
    const s = cred.credentialSubject as Json;
    const judge = isObject(s.judge) ? s.judge : {};
    const sig = isObject(j.signature) ? j.signature : {};
    const same =
      s.proposalId === proposal.proposalId &&
      s.kind === (proposal.kind ?? l2.kind) &&
      judge.tag === j.agentTag &&
      judge.publicKey === sig.publicKey &&
      s.judgeSignature === sig.signature &&
      s.rationale === j.rationale &&
      s.composite === j.composite &&
      JSON.stringify(s.scores) === JSON.stringify(j.scores);
    c.add('credential.matches', 'L1', 'the credential says what the judgment says', same, same ? undefined : 'its subject differs from the judgment in the bundle', id);
    // The node's HMAC over the judgment: only the node holds the key.
    c.add('judgment.nodeMac', 'L3', "the node's HMAC over the judgment", null, 'needs the node (HMAC-SHA256 under its key): not checkable offline', id);
  }

  // L3 made verifiable: each judgment's entry in the node's log, proven against a checkpoint
  // signed by a log key that is pinned, or endorsed by the pinned issuer.
  const logPart = isObject(bundle.log) ? bundle.log : undefined;
  let logKey = options.logKey;
  if (!logKey && trust && logPart) logKey = (yield* endorsedLogKeyChecking(logPart.endorsement, trust)) ?? undefined;
  if (options.logKey) c.add('log.key', 'L3', 'the log key is the one pinned with --log-key', logPart?.verifierKey === options.logKey, logPart?.verifierKey === options.logKey ? undefined : `the bundle names ${String(logPart?.verifierKey)}`);
  else if (trust) c.add('log.key', 'L3', 'the log key is endorsed by a pinned issuer key', logKey !== undefined, logKey ? undefined : "no endorsement of the bundle's log key by an issuer key reached from the pin");
  else c.add('log.key', 'L3', 'the log key is trusted', null, 'not checked: pass --log-key KEY, or --issuer DID (whose endorsement of the log key is in the bundle)');
  const entries = (Array.isArray(logPart?.entries) ? logPart!.entries : []) as Json[];
  for (const j of judgments) {
    const id = String(j.judgmentId);
    const item = entries.find((e) => e.judgmentId === id);
    if (!item) {
      c.add('log.inclusion', 'L3', 'the judgment is in the node\'s log', null, 'not checked: the bundle holds no log entry for it (exported before it was appended)', id);
      continue;
    }
    const entry = isObject(item.entry) ? item.entry : {};
    const body = isObject(entry.body) ? entry.body : {};
    const about = entry.kind === 'attestation.event.v1' && body.event === 'judgment.recorded' && body.judgmentId === id && body.proposalId === proposal.proposalId;
    c.add('log.entry.about', 'L3', 'the log entry records this judgment', about, about ? undefined : 'the entry is about something else', id);
    if (logKey) yield* logInclusionChecking(c, { entry: item.entry, inclusion: item.inclusion, checkpoint: logPart!.checkpoint }, [logKey], id);
    else c.add('log.inclusion', 'L3', 'the judgment is in the node\'s log', null, 'not checked: no trusted log key', id);
  }
  // The bundle's checkpoint counts only with its witnesses' quorum, when witnesses are given.
  if (options.witnesses) yield* witnessesChecking(c, logPart?.checkpoint, options.witnesses);

  // CAS: the hashes the proposal names, against the bytes given.
  const refs = (Array.isArray(bundle.cas) ? bundle.cas : []) as Json[];
  for (const ref of refs) {
    const sha = normalizeSha256(ref.sha256);
    const what = `the ${String(ref.role)} bytes hash to ${String(ref.sha256)}`;
    if (!sha) {
      c.add('cas.hash', 'CAS', what, false, 'not a sha256', String(ref.sha256));
      continue;
    }
    const got = blobHashes.get(sha);
    if (!got) {
      c.add('cas.hash', 'CAS', what, null, options.blobs ? `not checked: no file named ${sha} in ${options.blobs.where}` : 'not checked: pass --blobs DIR with the bytes', sha);
      continue;
    }
    const { sha256, bytes, name: file } = got;
    const sizeOk = typeof ref.bytes !== 'number' || ref.bytes === bytes;
    c.add('cas.hash', 'CAS', what, sha256 === sha && sizeOk, sha256 !== sha ? `${file} hashes to ${sha256}` : sizeOk ? undefined : `${file} has ${bytes} bytes, the proposal says ${ref.bytes}`, sha);
  }

  return { ...c.report(), proposalId: String(proposal.proposalId), kind: l2.kind };
}
