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
//   key, naming the content; the node's HMACs need the node's key: reported as unchecked.
// What could not be checked (no pinned issuer, a blob not given, a v1 judgment that signed no
// content, a v1 bundle) is said, not counted.
// Free of Node built-ins (the browser build has it): the bytes of --blobs come through a
// Blobs source (cas.ts reads a folder on Node; blobsInMemory takes bytes in a browser).
import { runAsync, runNow, type Checking } from '../src/core/checking.js';
import { contentOfProposalView, hashesNamedBy, type ProposalContent } from '../src/core/content.js';
import { judgmentUrn } from '../src/core/credential.js';
import { sha256 } from '../src/core/crypto.js';
import { canonicalize } from '../src/core/jcs.js';
import { compositeOf, PUBLISH_THRESHOLD, round6, weightedComposite } from '../src/core/judgment.js';
import { parseStrictJson } from '../src/core/strict-json.js';
import { credentialChecking } from './credential.js';
import { trustChecking, type IssuerKeyList, type IssuerTrust } from './issuer-keys.js';
import { endorsedLogKeyChecking, logInclusionChecking, witnessesChecking, type WitnessPolicy } from './log.js';
import { NotCheckableError, parseAgentKeys, proposalJudgmentsChecking, type AgentKeys } from './judgment.js';
import { Checks, type Report } from './report.js';

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
  /** Witnesses whose quorum must have cosigned the bundle's checkpoint (PROTOCOL 9.9; checked with Node's crypto only, not in the browser build). */
  witnesses?: WitnessPolicy;
}

export interface BundleReport extends Report {
  proposalId: string;
  kind: string;
  format: string;
  /** The contentSha256 recomputed from the bundle's proposal (absent when it cannot be). */
  contentSha256?: string;
  /** How the content is bound: judgments signed v2 by their judges, v1 ones bound by the node's word only. */
  binding: { judgesSigned: number; nodeOnly: number; submitted: 'log' | 'store' | 'missing' | 'not-checked' };
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const EVENT_KIND = 'attestation.event.v1';
const DECISIONS = ['published', 'rejected', 'withdrawn'];

/** One log item of a bundle: the entry, its event and its proof. */
interface LogItem {
  entry: Json;
  body: Json;
  event: string;
  item: Json;
}

/** Reads a bundle (text, bytes or parsed); throws NotCheckableError when it is not one. */
export function parseBundle(input: string | Uint8Array | unknown): Json {
  let doc = input;
  if (typeof input === 'string' || input instanceof Uint8Array) {
    const parsed = parseStrictJson(input);
    if (!parsed.ok) throw new NotCheckableError(`not a bundle: ${parsed.reason}`);
    doc = parsed.value;
  }
  if (!isObject(doc) || !(BUNDLE_FORMATS as readonly unknown[]).includes(doc.format) || !isObject(doc.proposal)) {
    throw new NotCheckableError(`not an akas bundle (format ${BUNDLE_FORMATS.join(' or ')} with a proposal): export one with akas export PROPOSAL_ID`);
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

/**
 * What in a bundle only a node that binds content (PROTOCOL 6.10) makes, each signed by someone
 * other than the exporter: a judgment signed akas.judgment.v2, a credential naming a
 * contentSha256, a log event naming one or recording a proposal.submitted.
 */
function contentBindingEvidence(bundle: Json): string[] {
  const out: string[] = [];
  const proposal = isObject(bundle.proposal) ? bundle.proposal : {};
  const judgments = (Array.isArray(proposal.judgments) ? proposal.judgments : []) as unknown[];
  const v2Signed = judgments.filter((j) => isObject(j) && isObject(j.signature) && typeof j.signature.signingPayload === 'string' && j.signature.signingPayload.includes('"type":"akas.judgment.v2"')).length;
  if (v2Signed) out.push(`${v2Signed} judgment(s) signed akas.judgment.v2`);
  const creds = ((Array.isArray(bundle.credentials) ? bundle.credentials : []) as unknown[]).filter((cr) => isObject(cr) && isObject(cr.credentialSubject) && cr.credentialSubject.contentSha256 !== undefined).length;
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
  // The format is the bundle's word, not signed: a v1 label must not switch off the checks the
  // evidence allows. A bundle that carries content binding signed by a judge, the issuer or the
  // log (a v2 judgment, a credential or a log event naming a contentSha256) is checked as v2,
  // and labelled v1 it fails: relabelling is how a changed status or proposer would hide.
  const bound = contentBindingEvidence(bundle);
  const v2 = bundle.format === 'akas.bundle.v2' || bound.length > 0;
  if (bundle.format !== 'akas.bundle.v2') {
    c.add('bundle.format', 'content', 'an akas.bundle.v1 holds nothing a node that binds content made', bound.length === 0, bound.length ? `it says akas.bundle.v1 but carries content binding (${bound.join('; ')}): checked as akas.bundle.v2` : undefined);
  }
  const judges: AgentKeys[] = (Array.isArray(bundle.judges) ? bundle.judges : []).map((j, i) => parseAgentKeys(j, `judges[${i}]`));
  const judgmentIds = (Array.isArray(proposal.judgments) ? (proposal.judgments as Json[]) : []).map((j) => String(j?.judgmentId));
  // Each judgment once: a judgment shown twice would count twice in anything read from the bundle.
  const twice = [...new Set(judgmentIds.filter((id, i) => judgmentIds.indexOf(id) !== i))];
  c.add('set.judgments', 'content', 'each judgment is shown once', twice.length === 0, twice.length ? `shown more than once: ${twice.join(', ')}` : undefined);

  // The issuer: pinned, then followed along its signed rotations (the bundle's, and those of
  // the key list the auditor gave with --issuer-keys).
  let trust: IssuerTrust | undefined;
  if (options.issuer) {
    trust = yield* trustChecking(options.issuer, mergeKeyLists(options.issuerKeys, bundle.issuerKeys as IssuerKeyList));
    c.add('issuer.chain', 'L1', `the issuer keys reached from ${options.issuer} through rotations signed by both keys`, trust.problems.length === 0, trust.problems.join('; ') || `${trust.keys.size} key(s)`);
  } else c.add('issuer.chain', 'L1', 'the credentials were issued by the node you trust', null, 'not checked: pass --issuer DID (the node\'s issuer: akas node-keys, or its /healthz) to pin it');

  // L2: every judge signature, and each key's owner at the time.
  const l2 = yield* proposalJudgmentsChecking(proposal, judges);
  const kind = l2.kind;
  const judgments = (Array.isArray(proposal.judgments) ? proposal.judgments : []) as Json[];

  // The content, hashed here: the one hash every signature and event must name.
  let content: ProposalContent | undefined;
  let contentSha256: string | undefined;
  if (v2) {
    const shown = contentOfProposalView(kind, proposal);
    if (!shown.ok) c.add('content.hash', 'content', "the proposal's content hashes to the contentSha256 it shows", false, shown.reason);
    else {
      content = shown.content;
      contentSha256 = shown.contentSha256;
      const same = shown.contentSha256 === proposal.contentSha256;
      c.add('content.hash', 'content', "the proposal's content hashes to the contentSha256 it shows", same, same ? shown.contentSha256 : `its content hashes to ${shown.contentSha256}, it shows ${String(proposal.contentSha256)}: the payload, title, path or spec was changed`);
      const problems = [...shown.problems];
      for (const j of judgments) if (isObject(j) && j.contentSha256 !== undefined && j.contentSha256 !== shown.contentSha256) problems.push(`judgment ${String(j.judgmentId)} shows contentSha256 ${String(j.contentSha256)}`);
      c.add('content.shown', 'content', "the path, title and kind shown, and each judgment's contentSha256, are those of the content", problems.length === 0, problems.join('; ') || undefined);
    }
  } else c.add('content.hash', 'content', "the proposal's content hashes to what was judged", null, 'not checked: an akas.bundle.v1 carries no content hash (export it again from a node that binds content, akas.bundle.v2)');

  for (const j of l2.checks) {
    c.add('judgment.payload', 'L2', 'the shown fields are what the judge signed', j.payloadMatches, j.payloadMatches ? undefined : j.problems[0], j.judgmentId);
    c.add('judgment.signature', 'L2', `${j.agentTag}'s Ed25519 signature`, j.signatureValid, j.signatureValid ? undefined : 'does not verify under the public key shown', j.judgmentId);
    c.add(
      'judgment.key',
      'L2',
      `the key was ${j.agentTag}'s when the judgment arrived`,
      j.key === 'current' || j.key === 'prior' ? true : j.key === 'unchecked' ? null : false,
      j.key === 'unchecked' ? "not checked: the bundle has no public profile of this judge" : j.key === 'not-the-judges' ? "not one of the judge's keys in that window" : j.key,
      j.judgmentId,
    );
    if (!v2) continue;
    if (j.signed === 'v2') {
      c.add('judgment.content', 'L2', `${j.agentTag} signed the content it judged (akas.judgment.v2)`, j.contentSigned, j.contentSigned === null ? 'not checked: the content cannot be recomputed' : j.contentSigned ? undefined : j.problems.find((p) => p.startsWith('the judge signed content')), j.judgmentId);
    } else {
      c.add('judgment.content', 'L2', `${j.agentTag} signed the content it judged`, null, "not checked: a v1 judgment signs no content; it is bound to the content by the node's word only (its credential and log event)", j.judgmentId);
    }
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
    if (v2) {
      if (s.contentSha256 === undefined) c.add('credential.content', 'L1', 'the credential names the content judged', null, 'not checked: a credential issued before content binding names no content', id);
      else if (contentSha256 === undefined) c.add('credential.content', 'L1', 'the credential names the content judged', null, 'not checked: the content cannot be recomputed', id);
      else c.add('credential.content', 'L1', 'the credential names the content judged', s.contentSha256 === contentSha256, s.contentSha256 === contentSha256 ? undefined : `it names ${String(s.contentSha256)}; the content shown hashes to ${contentSha256}`, id);
    }
    // The node's HMAC over the judgment: only the node holds the key.
    c.add('judgment.nodeMac', 'L3', "the node's HMAC over the judgment", null, 'needs the node (HMAC-SHA256 under its key): not checkable offline', id);
  }
  // One credential per judgment: a second credential of a judgment would not be checked above (a
  // credential is found by its subject), so it is refused, in a bundle of either format.
  const subjectIds = credentials.map((cr) => (isObject(cr) && isObject(cr.credentialSubject) ? String(cr.credentialSubject.id) : '(no subject)'));
  const extra = v2 ? subjectIds.filter((id) => !judgmentIds.some((j) => judgmentUrn(j) === id)) : [];
  const repeated = [...new Set(subjectIds.filter((id, i) => subjectIds.indexOf(id) !== i))];
  const problems = [extra.length ? `credentials of no judgment shown: ${extra.join(', ')}` : '', repeated.length ? `more than one credential of ${repeated.join(', ')}` : ''].filter(Boolean);
  c.add('set.credentials', 'content', 'every credential is of a judgment in the bundle, one each', problems.length === 0, problems.join('; ') || undefined);

  // L3 made verifiable: each judgment's entry in the node's log, proven against a checkpoint
  // signed by a log key that is pinned, or endorsed by the pinned issuer.
  const logPart = isObject(bundle.log) ? bundle.log : undefined;
  let logKey = options.logKey;
  if (!logKey && trust && logPart) logKey = (yield* endorsedLogKeyChecking(logPart.endorsement, trust)) ?? undefined;
  if (options.logKey) c.add('log.key', 'L3', 'the log key is the one pinned with --log-key', logPart?.verifierKey === options.logKey, logPart?.verifierKey === options.logKey ? undefined : `the bundle names ${String(logPart?.verifierKey)}`);
  else if (trust) c.add('log.key', 'L3', 'the log key is endorsed by a pinned issuer key', logKey !== undefined, logKey ? undefined : "no endorsement of the bundle's log key by an issuer key reached from the pin");
  else c.add('log.key', 'L3', 'the log key is trusted', null, 'not checked: pass --log-key KEY, or --issuer DID (whose endorsement of the log key is in the bundle)');
  const items: LogItem[] = ((Array.isArray(logPart?.entries) ? logPart!.entries : []) as unknown[]).filter(isObject).map((item) => {
    const entry = isObject(item.entry) ? item.entry : {};
    const body = isObject(entry.body) ? entry.body : {};
    // A v1 bundle lists judgment entries by judgmentId only; what an entry records is its body's word.
    return { entry, body, event: typeof body.event === 'string' ? body.event : '', item };
  });
  const inclusion = function* (it: LogItem, subject: string): Checking<void> {
    if (logKey) yield* logInclusionChecking(c, { entry: it.item.entry, inclusion: it.item.inclusion, checkpoint: logPart!.checkpoint }, [logKey], subject);
    else c.add('log.inclusion', 'L3', "the event is in the node's log", null, 'not checked: no trusted log key', subject);
  };
  const names = (body: Json) => (contentSha256 === undefined || body.contentSha256 === undefined ? true : body.contentSha256 === contentSha256);
  const proposer = proposal.proposer ?? null;

  // The submitted event: the content, kind, path and proposer, as the node logged them at propose.
  let submitted: BundleReport['binding']['submitted'] = 'not-checked';
  if (v2) {
    const sub = items.filter((it) => it.event === 'proposal.submitted' && it.body.proposalId === proposal.proposalId);
    if (sub.length === 0) {
      const store = proposal.contentBinding === 'store';
      submitted = store ? 'store' : 'missing';
      c.add('log.submitted', 'L3', 'the log recorded this content, kind, path and proposer at propose', store ? null : false, store ? "not checked: a proposal stored before content binding is bound by the node's store, not by the log" : 'the bundle holds no proposal.submitted event for it');
    } else {
      submitted = 'log';
      const it = sub[0];
      const problems: string[] = [];
      if (sub.length > 1) problems.push(`${sub.length} proposal.submitted events`);
      if (it.entry.kind !== EVENT_KIND) problems.push(`the entry is a ${String(it.entry.kind)}`);
      if (it.body.kind !== kind) problems.push(`it logged kind ${String(it.body.kind)}`);
      if (contentSha256 !== undefined && it.body.contentSha256 !== contentSha256) problems.push(`it logged content ${String(it.body.contentSha256)}, the content shown hashes to ${contentSha256}`);
      if (content && it.body.path !== content.path) problems.push(`it logged path ${String(it.body.path)}`);
      if (it.body.proposer !== proposer || it.entry.agent !== proposer) problems.push(`it logged proposer ${String(it.body.proposer)}, the proposal shows ${String(proposer)}`);
      c.add('log.submitted', 'L3', 'the log recorded this content, kind, path and proposer at propose', problems.length === 0, problems.join('; ') || undefined, 'proposal.submitted');
      yield* inclusion(it, 'proposal.submitted');
    }
  }

  // Each judgment's event.
  for (const id of judgmentIds) {
    const it = items.find((x) => (x.event === 'judgment.recorded' && x.body.judgmentId === id) || (!v2 && x.item.judgmentId === id));
    if (!it) {
      c.add('log.inclusion', 'L3', "the judgment is in the node's log", v2 ? false : null, v2 ? 'the bundle holds no judgment.recorded event for it' : 'not checked: the bundle holds no log entry for it (exported before it was appended)', id);
      continue;
    }
    const about = it.entry.kind === EVENT_KIND && it.event === 'judgment.recorded' && it.body.judgmentId === id && it.body.proposalId === proposal.proposalId;
    const ofContent = names(it.body);
    c.add('log.entry.about', 'L3', 'the log entry records this judgment of this content', about && ofContent, !about ? 'the entry is about something else' : ofContent ? undefined : `it names content ${String(it.body.contentSha256)}`, id);
    yield* inclusion(it, id);
  }
  if (v2) {
    const extra = items.filter((it) => it.event === 'judgment.recorded' && !judgmentIds.includes(String(it.body.judgmentId))).map((it) => String(it.body.judgmentId));
    c.add('set.events', 'content', 'every judgment.recorded event is of a judgment in the bundle', extra.length === 0, extra.length ? `the log recorded judgments the bundle does not show: ${extra.join(', ')}` : undefined);
    // The decision (or withdrawal): its event, and the decision recomputed from the judgments.
    yield* decisionChecking(c, proposal, judgments, items, { contentSha256, proposer, names, inclusion });
  } else {
    c.add('decision.recompute', 'content', `the status shown (${String(proposal.status)}) is the decision the judgments make`, null, 'not checked: an akas.bundle.v1 carries no decision event naming its judgments, weights and rule');
  }
  // The bundle's checkpoint counts only with its witnesses' quorum, when witnesses are given.
  if (options.witnesses) yield* witnessesChecking(c, logPart?.checkpoint, options.witnesses);

  // CAS: the hashes named by the content, and each against the bytes given.
  const refs = (Array.isArray(bundle.cas) ? bundle.cas : []) as Json[];
  if (v2) {
    if (!content) c.add('cas.bound', 'content', 'the content hashes listed are those the content names', null, 'not checked: the content cannot be recomputed');
    else {
      const named = hashesNamedBy(content);
      const key = (r: { sha256?: unknown; role?: unknown }) => `${String(r.role)}:${String(r.sha256)}`;
      const unnamed = refs.filter((r) => !named.some((n) => key(n) === key(r))).map(key);
      const missing = named.filter((n) => !refs.some((r) => key(n) === key(r))).map(key);
      const ok = unnamed.length === 0 && missing.length === 0;
      c.add('cas.bound', 'content', 'the content hashes listed are those the content names', ok, ok ? undefined : [unnamed.length ? `listed but not named by the content: ${unnamed.join(', ')}` : '', missing.length ? `named by the content but not listed: ${missing.join(', ')}` : ''].filter(Boolean).join('; '));
    }
  }
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

  return {
    ...c.report(),
    proposalId: String(proposal.proposalId),
    kind,
    format: String(bundle.format),
    ...(contentSha256 !== undefined ? { contentSha256 } : {}),
    binding: { judgesSigned: l2.checks.filter((j) => j.signed === 'v2').length, nodeOnly: l2.v1, submitted },
  };
}

/**
 * The decision of a bundle's proposal: a decided proposal has its decision event in the log (a
 * pending one has none), naming the status, the content and the proposer; and the decision
 * recomputes from the judgments shown, the weights its event names and the rule it applied
 * (PROTOCOL 7.4), with the same judgments, in the same order.
 */
function* decisionChecking(
  c: Checks,
  proposal: Json,
  judgments: Json[],
  items: LogItem[],
  ctx: { contentSha256: string | undefined; proposer: unknown; names: (body: Json) => boolean; inclusion: (it: LogItem, subject: string) => Checking<void> },
): Checking<void> {
  const status = String(proposal.status);
  const decisions = items.filter((it) => DECISIONS.some((d) => it.event === `proposal.${d}`) && it.body.proposalId === proposal.proposalId);
  const what = 'the log recorded the status shown, for this content and proposer';
  if (!DECISIONS.includes(status)) {
    c.add('log.decision', 'L3', what, decisions.length === 0, decisions.length ? `the log recorded ${decisions.map((d) => d.event).join(', ')} for a proposal shown ${status}` : undefined);
    return;
  }
  if (decisions.length === 0) {
    c.add('log.decision', 'L3', what, false, `the bundle holds no proposal.${status} event for a proposal shown ${status}`);
    return;
  }
  const it = decisions[0];
  const problems: string[] = [];
  if (decisions.length > 1) problems.push(`${decisions.length} decision events: ${decisions.map((d) => d.event).join(', ')}`);
  if (it.entry.kind !== EVENT_KIND) problems.push(`the entry is a ${String(it.entry.kind)}`);
  if (it.event !== `proposal.${status}`) problems.push(`the log recorded ${it.event}, the proposal shows ${status}`);
  if (!ctx.names(it.body)) problems.push(`it names content ${String(it.body.contentSha256)}, the content shown hashes to ${String(ctx.contentSha256)}`);
  if (it.entry.agent !== ctx.proposer) problems.push(`its agent is ${String(it.entry.agent)}, the proposal shows proposer ${String(ctx.proposer)}`);
  c.add('log.decision', 'L3', what, problems.length === 0, problems.join('; ') || (it.body.contentSha256 === undefined ? 'logged before content binding: it names no content' : undefined), it.event);
  yield* ctx.inclusion(it, it.event);
  if (status === 'withdrawn') return;

  const ev = it.body;
  const counted = Array.isArray(ev.judgments) ? (ev.judgments as unknown[]).filter(isObject) : undefined;
  const rule = isObject(ev.rule) ? ev.rule : undefined;
  if (!counted || !rule) {
    const why = 'not checked: a decision logged before content binding names no judgments, weights or rule';
    c.add('set.decision', 'content', 'the judgments shown are those the decision counted', null, why);
    c.add('decision.recompute', 'content', 'the decision recomputes from the judgments and the rule', null, why);
    return;
  }
  const shownIds = judgments.map((j) => String(j.judgmentId));
  const countedIds = counted.map((j) => String(j.judgmentId));
  const setOk = shownIds.length === countedIds.length && shownIds.every((id, i) => id === countedIds[i]);
  c.add('set.decision', 'content', 'the judgments shown are those the decision counted, in order', setOk, setOk ? undefined : `the decision counted ${countedIds.join(', ') || 'none'}; the bundle shows ${shownIds.join(', ') || 'none'}`);

  const problems2: string[] = [];
  const required = rule.requiredJudgments;
  if (rule.publishThreshold !== PUBLISH_THRESHOLD) problems2.push(`the rule applied publishes at ${String(rule.publishThreshold)}, not PROTOCOL 7.4's ${PUBLISH_THRESHOLD}`);
  if (required !== proposal.requiredJudgments) problems2.push(`the rule applied wants ${String(required)} judgments, the proposal shows ${String(proposal.requiredJudgments)}`);
  if (counted.length !== required) problems2.push(`${counted.length} judgments counted, the rule wants ${String(required)}`);
  const rows: Array<{ weight: number; composite: number }> = [];
  for (const k of counted) {
    const j = judgments.find((x) => x.judgmentId === k.judgmentId);
    if (!j) continue; // set.decision names it
    let composite: number;
    try {
      composite = compositeOf(j.scores as never);
    } catch {
      problems2.push(`judgment ${String(k.judgmentId)} has no four scores`);
      continue;
    }
    if (k.composite !== composite || j.composite !== composite) problems2.push(`judgment ${String(k.judgmentId)}: its scores give composite ${composite}, the decision counted ${String(k.composite)}`);
    if (typeof k.weight !== 'number' || !Number.isFinite(k.weight) || k.weight < 0) problems2.push(`judgment ${String(k.judgmentId)}: the decision counted no weight`);
    else if (j.weight !== k.weight) problems2.push(`judgment ${String(k.judgmentId)} shows weight ${String(j.weight)}, the decision counted ${k.weight}`);
    rows.push({ weight: Number(k.weight), composite });
  }
  const weighted = weightedComposite(rows);
  const decision = weighted >= PUBLISH_THRESHOLD ? 'published' : 'rejected';
  const outcome = isObject(proposal.outcome) ? proposal.outcome : {};
  if (round6(weighted) !== ev.weightedComposite) problems2.push(`the judgments give a weighted composite of ${round6(weighted)}, the decision logged ${String(ev.weightedComposite)}`);
  if (outcome.weightedComposite !== round6(weighted)) problems2.push(`the outcome shows a weighted composite of ${String(outcome.weightedComposite)}, the judgments give ${round6(weighted)}`);
  if (decision !== status || outcome.decision !== decision || it.event !== `proposal.${decision}`) {
    problems2.push(`the judgments decide ${decision} (${round6(weighted)} against ${PUBLISH_THRESHOLD}); the proposal shows ${status}, its outcome ${String(outcome.decision)}, the log ${it.event}`);
  }
  c.add('decision.recompute', 'content', `the decision recomputes from the judgments and the rule (${String(required)} judgments, publish at ${PUBLISH_THRESHOLD})`, problems2.length === 0, problems2.join('; ') || `${decision} at ${round6(weighted)}`);
}
