// Offline check of a knowledge read (`akas verify node`, PROTOCOL 10.7): the JSON of
// `akas node PATH --json` (GET /api/knowledge/node/..., /artifact/by-path, ...) or of
// `akas brief ID --json` (GET /api/knowledge/briefs/{id}), with its evidence. Checked with no
// node and no network:
// - content: what is served hashes to the contentSha256 of the proposal that published it
//   (a capability, decision or artifact node holds its whole content; a brief read at the deep
//   level too), or (a brief cut to a lower level) the cut hashes to its manifest's
//   contentSha256, the texts served are those of the cut, and the manifest names the proposal
//   and its contentSha256; tree expansions and sharpenings carry their content in the evidence;
// - L1: the brief manifest's Ed25519 signature by the node's issuer key (pinned with --issuer,
//   followed along its signed rotations with --issuer-keys);
// - L3: the proposal.published event names that proposal and content, and is in the log under
//   a checkpoint signed by the log key (pinned, or endorsed by the pinned issuer). The HMACs
//   need the node: reported as unchecked.
// Free of Node built-ins (the browser build has it): signatures go through the generators of
// src/core/checking.ts, run at once on Node (verifyNode) or awaited (verifyNodeAsync).
import { briefCutSha256, briefManifestStatement, briefTexts, type BriefLevel } from '../src/core/brief.js';
import { ed25519Hex, runAsync, runNow, type Checking } from '../src/core/checking.js';
import { contentSha256, type ProposalContent } from '../src/core/content.js';
import { canonicalize } from '../src/core/jcs.js';
import { publicKeyFromMultibase } from '../src/core/didkey.js';
import type { ProposalKind } from '../src/core/kinds.js';
import { trustChecking, type IssuerKeyList, type IssuerTrust } from './issuer-keys.js';
import { endorsedLogKeyChecking, logInclusionChecking, witnessesChecking, type WitnessPolicy } from './log.js';
import { memoized, SignatureMemo } from './memo.js';
import { carriesDecision, decisionChecking } from './node-decision.js';
import type { StatusOutcome } from './bundle-status.js';
import { type CheckInput, Checks, NotCheckableError, readJsonInput, type Report } from './report.js';
import { preinflated, type Inflate } from './status-list.js';

export interface NodeOptions {
  /** The node's issuer DID to pin (from its /healthz or GET /api/node/keys). */
  issuer?: string;
  /** The node's key list (GET /api/node/keys), to follow the pinned issuer's signed rotations. */
  issuerKeys?: IssuerKeyList;
  /** The log's C2SP verifier key to pin (else the one the pinned issuer endorses). */
  logKey?: string;
  /** The issuer keys a trust file pins, each in its window (verifier/trust.ts issuerTrustOf), instead of --issuer. */
  trust?: IssuerTrust;
  /** The log keys a trust file's policy pins, instead of --log-key. */
  logKeys?: string[];
  /** Witnesses whose quorum must have cosigned the publication's checkpoint (PROTOCOL 9.9). */
  witnesses?: WitnessPolicy;
  /** The instant the decision's credentials and status lists are checked at (ms); now by default. */
  at?: number;
  /** GZIP for the status lists a read with full evidence staples (node:zlib); verifyNodeAsync inflates them itself. */
  inflate?: Inflate;
  /** Signature verdicts kept across reads (memo.ts): a reader that checks every read passes the same one each time. */
  memo?: SignatureMemo;
}

export interface NodeReport extends Report {
  /** `node` (a knowledge node read) or `brief` (a brief read by id). */
  shape: 'node' | 'brief';
  path: string;
  kind: string;
  proposalId?: string;
  contentSha256?: string;
  contentBinding?: string;
  /** A read with full evidence (PROTOCOL 10.7): the time its status lists speak for and the judgments withdrawn from the decision. */
  status?: StatusOutcome;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const EVENT_KIND = 'attestation.event.v1';
const NODE_KINDS = ['branch', 'leaf-brief', 'leaf-capability', 'leaf-decision', 'leaf-artifact'];
const KIND_OF_LEAF: Record<string, ProposalKind> = {
  'leaf-brief': 'brief',
  'leaf-capability': 'capability',
  'leaf-decision': 'graph',
  'leaf-artifact': 'artifact',
};
const LEVELS: BriefLevel[] = ['tldr', 'core', 'deep'];

// Two JSON values are the same when their JCS forms are.
const hashOf = (content: ProposalContent) => {
  try {
    return contentSha256(content);
  } catch {
    return undefined;
  }
};

/** The kinds whose published node sits at the proposal's own path. */
const PATH_KINDS: readonly ProposalKind[] = ['brief', 'capability', 'graph', 'artifact'];

/** Reads a node or brief read; throws NotCheckableError when it is neither. */
export function parseNodeRead(input: string | Uint8Array | unknown): { doc: Json; shape: 'node' | 'brief' } {
  const doc = readJsonInput(input, 'a node read');
  if (isObject(doc) && typeof doc.path === 'string' && NODE_KINDS.includes(doc.kind as string)) return { doc, shape: 'node' };
  if (isObject(doc) && isObject(doc.brief) && isObject(doc.manifest) && doc.kind === undefined) return { doc, shape: 'brief' };
  throw new NotCheckableError('not a knowledge node or brief read: save one with akas node PATH --json, or akas brief ID --json');
}

/**
 * A read with no evidence: failed, unless it is an implicit branch (one no proposal made), whose
 * read rests on no signed decision: the node's word, so never "verified" (an anchor not checked:
 * PROTOCOL 8.6, 10.7).
 */
function noEvidence(implicit: boolean): CheckInput {
  if (!implicit) return { id: 'evidence', what: EVIDENCE_WHAT, valid: false, why: 'the read carries no evidence' };
  const why = 'not checked: an implicit branch, which no proposal made: nothing is published here (each child is checked when read)';
  return { id: 'evidence', what: EVIDENCE_WHAT, valid: null, why, anchor: true };
}
const EVIDENCE_WHAT = 'what is served is bound to the proposal that published it';

/** Checks a node or brief read offline against its evidence (Node: Ed25519 answers at once). Throws NotCheckableError for input that is neither. */
export function verifyNode(input: string | Uint8Array | unknown, options: NodeOptions = {}): NodeReport {
  return runNow(memoized(nodeChecking(parseNodeRead(input), options), options.memo ?? new SignatureMemo(256)));
}

/**
 * verifyNode where Ed25519 is asynchronous (WebCrypto in a browser); the stapled status lists are
 * inflated with the platform's DecompressionStream unless `inflate` is given.
 */
export async function verifyNodeAsync(input: string | Uint8Array | unknown, options: NodeOptions = {}): Promise<NodeReport> {
  const read = parseNodeRead(input);
  const inflate = options.inflate ?? (await stapledInflate(read.doc));
  return runAsync(memoized(nodeChecking(read, { ...options, inflate }), options.memo ?? new SignatureMemo(256)));
}

/** An Inflate for the status lists a read stapled (PROTOCOL 10.7), made with the platform's DecompressionStream; undefined when it staples none. */
export async function stapledInflate(doc: unknown): Promise<Inflate | undefined> {
  const ev = isObject(doc) && isObject(doc.evidence) ? doc.evidence : {};
  const lists = isObject(ev.status) && Array.isArray(ev.status.lists) ? ev.status.lists : [];
  return lists.length ? preinflated(lists.map((l) => (isObject(l) ? l.credential : undefined))) : undefined;
}

function* nodeChecking({ doc, shape }: { doc: Json; shape: 'node' | 'brief' }, options: NodeOptions): Checking<NodeReport> {
  const c = new Checks();
  const kind = shape === 'brief' ? 'brief' : String(doc.kind);
  const report = (extra: Partial<NodeReport> = {}): NodeReport => ({ ...c.report(), shape, path: String(doc.path), kind, ...extra });

  let trust: IssuerTrust | undefined = options.trust;
  if (trust)
    c.add({ id: 'issuer.chain', what: 'the issuer keys the trust file pins', valid: true, why: `${trust.keys.size} key(s), each in its window`, anchor: true });
  else if (options.issuer) {
    trust = yield* trustChecking(options.issuer, options.issuerKeys);
    c.add({
      id: 'issuer.chain',
      what: `the issuer keys reached from ${options.issuer}${options.issuerKeys ? ' through rotations signed by both keys' : ''}`,
      valid: trust.problems.length === 0,
      why: trust.problems.join('; ') || `${trust.keys.size} key(s)`,
      anchor: true,
    });
  }

  const ev = doc.evidence;
  if (!isObject(ev)) {
    c.add(noEvidence(shape === 'node' && doc.kind === 'branch' && doc.proposalId === undefined));
    return report();
  }
  const evKind = ev.kind as ProposalKind;
  const evHash = typeof ev.contentSha256 === 'string' ? ev.contentSha256 : undefined;
  const ids: string[] = [];
  if (shape === 'node' && doc.kind !== 'leaf-brief' && doc.proposalId !== ev.proposalId)
    ids.push(`the node names proposal ${String(doc.proposalId)}, its evidence ${String(ev.proposalId)}`);
  c.add({
    id: 'evidence',
    what: 'the evidence is about the proposal that made what is served',
    valid: ids.length === 0 && typeof ev.proposalId === 'string' && evHash !== undefined,
    why: ids.join('; ') || (evHash === undefined ? 'the evidence names no contentSha256' : undefined),
  });

  if (shape === 'brief' || doc.kind === 'leaf-brief') yield* briefChecking(c, doc, shape, ev, trust);
  else checkServedContent(c, doc, ev, evKind);

  // L3: the publication event, in the log under a trusted key.
  const logPart = isObject(ev.log) ? ev.log : {};
  // The anchor of L3: a log key pinned (--log-key, a trust file's policy), else endorsed by a pinned issuer key.
  const pinned = options.logKey ? [options.logKey] : options.logKeys?.length ? options.logKeys : undefined;
  const by = options.logKey ? '--log-key' : 'the trust file';
  let logKeys = pinned;
  if (!logKeys && trust) {
    const endorsed = yield* endorsedLogKeyChecking(logPart.endorsement, trust);
    logKeys = endorsed ? [endorsed] : undefined;
  }
  if (pinned) {
    const ok = pinned.includes(logPart.verifierKey as string);
    c.add({
      id: 'log.key',
      what: `the log key is one pinned by ${by}`,
      valid: ok,
      why: ok ? undefined : `the evidence names ${String(logPart.verifierKey)}, which ${by} does not pin`,
      anchor: true,
    });
  } else if (trust)
    c.add({
      id: 'log.key',
      what: 'the log key is endorsed by a pinned issuer key',
      valid: logKeys !== undefined,
      why: logKeys ? undefined : "no endorsement of the evidence's log key by a pinned issuer key",
      anchor: true,
    });
  else
    c.add({
      id: 'log.key',
      what: 'the log key is trusted',
      valid: null,
      why: 'not checked: pass --trust FILE, --log-key KEY, or --issuer DID (whose endorsement of the log key is in the evidence)',
      anchor: true,
    });
  const pub = ev.publication;
  if (!isObject(pub)) {
    c.add({
      id: 'log.publication',
      what: 'the log recorded the publication of this content',
      valid: false,
      why: 'the evidence holds no proposal.published event',
    });
  } else {
    const entry = isObject(pub.entry) ? pub.entry : {};
    const body = isObject(entry.body) ? entry.body : {};
    const problems: string[] = [];
    if (entry.kind !== EVENT_KIND || body.event !== 'proposal.published') problems.push(`the entry records ${String(body.event ?? entry.kind)}`);
    if (body.proposalId !== ev.proposalId) problems.push(`it is about ${String(body.proposalId)}`);
    if (pub.id !== entry.id) problems.push(`the evidence names event ${String(pub.id)}, the entry is ${String(entry.id)}`);
    if (body.contentSha256 !== undefined && body.contentSha256 !== evHash)
      problems.push(`it names content ${String(body.contentSha256)}, the evidence ${String(evHash)}`);
    // The path served, against the path the decision published at (PROTOCOL 9.3): what binds it
    // when the content cannot be rehashed here (a brief cut to tldr or core). Only kinds whose
    // node sits at the proposal's own path (an expansion's branches sit below it).
    if (typeof body.path === 'string' && PATH_KINDS.includes(evKind) && typeof doc.path === 'string' && doc.path !== body.path)
      problems.push(`it published at ${body.path}, the read serves ${doc.path}`);
    const legacy = body.contentSha256 === undefined;
    c.add({
      id: 'log.publication',
      what: 'the log recorded the publication of this content',
      valid: problems.length ? false : legacy ? null : true,
      why:
        problems.join('; ') ||
        (legacy ? "not checked: published before content binding, its event names no content: bound by the node's store, not by the log" : undefined),
      subject: 'proposal.published',
    });
    if (logKeys) yield* logInclusionChecking(c, { entry: pub.entry, inclusion: pub.inclusion, checkpoint: pub.checkpoint }, logKeys, 'proposal.published');
    else
      c.add({
        id: 'log.inclusion',
        what: "the event is in the node's log",
        valid: null,
        why: 'not checked: no trusted log key',
        subject: 'proposal.published',
        anchor: true,
      });
    // The checkpoint counts only with its witnesses' quorum, when witnesses are given (9.9).
    if (options.witnesses) yield* witnessesChecking(c, pub.checkpoint, options.witnesses, 'proposal.published');
  }
  // A read with full evidence: the decision behind it, and whether it still holds (node-decision.ts).
  const status = carriesDecision(ev)
    ? yield* decisionChecking(c, ev, { trust, logKeys, issuer: options.issuer, at: options.at, inflate: options.inflate })
    : undefined;
  return report({
    proposalId: String(ev.proposalId),
    ...(evHash ? { contentSha256: evHash } : {}),
    contentBinding: String(ev.contentBinding),
    ...(status ? { status } : {}),
  });
}

/** A capability, decision, artifact or branch node: its served fields against the content it was published from. */
function checkServedContent(c: Checks, doc: Json, ev: Json, evKind: ProposalKind) {
  const evHash = ev.contentSha256;
  const what = "what is served hashes to the publishing proposal's contentSha256";
  // Tree expansions and sharpenings: the content rides in the evidence; the node serves a part of it.
  if (evKind === 'tree-expansion' || evKind === 'spec-sharpening') {
    const content = isObject(ev.content) ? (ev.content as unknown as ProposalContent) : undefined;
    const hash = content ? hashOf(content) : undefined;
    c.add({
      id: 'content.hash',
      what: "the evidence's content hashes to its contentSha256",
      valid: hash !== undefined && hash === evHash && content?.kind === evKind,
      why:
        hash === undefined
          ? 'the evidence carries no readable content'
          : hash === evHash
            ? undefined
            : `it hashes to ${hash}, the evidence says ${String(evHash)}`,
    });
    if (!content || hash === undefined) return;
    const problems: string[] = [];
    if (evKind === 'tree-expansion') {
      const base = content.path === '/' ? '' : String(content.path);
      const child = ((content.payload as { children?: Array<{ slug: string; title: string; spec: string }> }).children ?? []).find(
        (ch) => `${base}/${ch.slug}` === doc.path,
      );
      if (!child) problems.push(`${String(doc.path)} is not a child the expansion added`);
      else {
        if (doc.kind !== 'branch') problems.push(`an expansion makes branches; this node is a ${String(doc.kind)}`);
        if (doc.title !== child.title) problems.push(`title ${JSON.stringify(doc.title)}, the expansion says ${JSON.stringify(child.title)}`);
        if (doc.spec !== child.spec) problems.push('its spec is not the one the expansion gave');
      }
    } else {
      if (doc.path !== content.path) problems.push(`the sharpening is of ${String(content.path)}`);
      if (doc.spec !== content.spec) problems.push('its spec is not the one the sharpening gave');
    }
    c.add({
      id: 'content.served',
      what: 'the path, title and spec served are those of the content',
      valid: problems.length === 0,
      why: problems.join('; ') || undefined,
    });
    if (evKind === 'spec-sharpening' && doc.kind !== 'branch') {
      c.add({
        id: 'content.refined',
        what: 'the rest of a sharpened node (title, payload)',
        valid: null,
        why: `not checked here: bound by the version it sharpened (read it with ?version=${Number(doc.version) - 1} and check that)`,
      });
    }
    return;
  }
  const kind = KIND_OF_LEAF[String(doc.kind)];
  if (!kind || kind !== evKind) {
    c.add({ id: 'content.hash', what, valid: false, why: `a ${String(doc.kind)} node with the evidence of a ${String(evKind)} proposal` });
    return;
  }
  let payload = doc.payload;
  if (kind === 'artifact' && isObject(payload)) {
    const { kind: _leaf, ...rest } = payload; // the node labels the payload with its node kind
    payload = rest;
  }
  const hash = hashOf({ kind, path: doc.path as string, title: doc.title as string, spec: doc.spec as string, payload });
  c.add({
    id: 'content.hash',
    what,
    valid: hash === evHash,
    why:
      hash === evHash
        ? String(hash)
        : `the path, title, spec and payload served hash to ${String(hash)}; the proposal's content is ${String(evHash)}: what is served was changed`,
  });
  // What the node serves beside the payload, restated from it (PROTOCOL 10.2): a decision's
  // branches (each with its priors, null when none), an artifact's manifest. An agent acts on
  // these, so they must say what the payload hashed above says.
  const p = isObject(doc.payload) ? doc.payload : {};
  const same = (a: unknown, b: unknown) => {
    try {
      return canonicalize(a) === canonicalize(b);
    } catch {
      return false;
    }
  };
  const problems: string[] = [];
  if (kind === 'graph' && doc.branches !== undefined) {
    const restated = (Array.isArray(p.branches) ? p.branches : []).map((b) =>
      isObject(b) ? { id: b.id, condition: b.condition, to: b.to, priors: b.priors ?? null } : b,
    );
    if (!same(doc.branches, restated)) problems.push("the branches served are not the payload's branches");
  }
  if (kind === 'artifact') {
    if (p.kind !== undefined && p.kind !== 'leaf-artifact') problems.push(`the payload is labelled ${JSON.stringify(p.kind)}`);
    if (doc.manifest !== undefined) {
      const m = isObject(doc.manifest) ? doc.manifest : {};
      const want: Json = {
        artifactPath: doc.path,
        uri: p.uri,
        mediaType: p.mediaType,
        sha256: p.sha256,
        artifactKind: p.artifactKind,
        provenance: p.provenance,
        bytes: p.bytes,
      };
      const differ = Object.keys(want).filter((k) => !same(m[k], want[k]));
      if (differ.length) problems.push(`the manifest's ${differ.join(', ')} ${differ.length > 1 ? 'are' : 'is'} not the payload's`);
    }
  }
  if (problems.length || (kind === 'graph' && doc.branches !== undefined) || (kind === 'artifact' && doc.manifest !== undefined)) {
    c.add({
      id: 'content.served',
      what: kind === 'graph' ? 'the branches served are those of the payload' : "the artifact's manifest says what the payload says",
      valid: problems.length === 0,
      why: problems.join('; ') || undefined,
    });
  }
  if (kind === 'artifact' && (doc.independentEvals !== undefined || doc.evalSummary !== undefined)) c.add(evalsCheck(doc));
}

type MetricSummary = { count: number; mean: number; min: number; max: number };

/**
 * What an artifact's evals give (PROTOCOL 10.4's evalSummary): their count, distinct runners, and
 * by metric the count, mean (rounded to 6 decimals), min and max; null when an eval is not one.
 */
export function evalSummaryOf(evals: unknown[]): { count: number; distinctRunners: number; byMetric: Record<string, MetricSummary> } | null {
  const byMetric: Record<string, MetricSummary> = {};
  const runners = new Set<string>();
  for (const e of evals) {
    if (!isObject(e) || typeof e.metric !== 'string' || typeof e.score !== 'number' || !Number.isFinite(e.score) || typeof e.runner !== 'string') return null;
    runners.add(e.runner);
    const m = Object.hasOwn(byMetric, e.metric) ? byMetric[e.metric] : (byMetric[e.metric] = { count: 0, mean: 0, min: Infinity, max: -Infinity });
    m.count += 1;
    m.mean += (e.score - m.mean) / m.count;
    m.min = Math.min(m.min, e.score);
    m.max = Math.max(m.max, e.score);
  }
  for (const m of Object.values(byMetric)) m.mean = Math.round(m.mean * 1e6) / 1e6;
  return { count: evals.length, distinctRunners: runners.size, byMetric };
}

/**
 * An artifact's evals and their summary: the summary must be what the evals shown give (recomputed
 * here; a mean within 1e-6, the rounding of the order they are summed in). Whether the evals are
 * every one the log records of the artifact's bytes, each as recorded, needs the log's index: the
 * verified read (akas node, akas mcp --stdio) holds them against the lookup of sha256:<its sha256>
 * (index.complete, index.recorded).
 */
function evalsCheck(doc: Json): CheckInput {
  const what = 'the eval summary shown beside the artifact is what its evals give';
  const evals = doc.independentEvals;
  const s = isObject(doc.evalSummary) ? doc.evalSummary : undefined;
  const want = Array.isArray(evals) ? evalSummaryOf(evals) : null;
  if (!want || !s) return { id: 'content.evals', what, valid: false, why: `the read carries ${want ? 'no evalSummary' : 'no well-formed independentEvals'}` };
  const problems: string[] = [];
  if (s.count !== want.count) problems.push(`count ${String(s.count)}, the evals shown are ${want.count}`);
  if (s.distinctRunners !== want.distinctRunners) problems.push(`distinctRunners ${String(s.distinctRunners)}, the evals shown have ${want.distinctRunners}`);
  const shown = isObject(s.byMetric) ? s.byMetric : {};
  for (const metric of new Set([...Object.keys(shown), ...Object.keys(want.byMetric)])) {
    const a = isObject(shown[metric]) ? shown[metric] : undefined;
    const b = Object.hasOwn(want.byMetric, metric) ? want.byMetric[metric] : undefined;
    if (!a || !b) problems.push(`metric ${metric} is ${a ? 'in the summary but in no eval shown' : 'in an eval shown but not in the summary'}`);
    else if (a.count !== b.count || a.min !== b.min || a.max !== b.max || !(Math.abs(Number(a.mean) - b.mean) <= 1e-6))
      problems.push(
        `${metric}: the summary says count ${String(a.count)}, mean ${String(a.mean)}, min ${String(a.min)}, max ${String(a.max)}; ` +
          `the evals give ${b.count}, ${b.mean}, ${b.min}, ${b.max}`,
      );
  }
  return {
    id: 'content.evals',
    what,
    valid: problems.length === 0,
    why:
      problems.join('; ').slice(0, 600) ||
      `${want.count} eval(s), the summary theirs; that they are every eval the log records of these bytes, each as recorded, is not told by ` +
        "the read alone: a read that looks up the artifact's sha256 under the pinned log key checks it (index.complete, index.recorded)",
  };
}

/** A brief (a leaf-brief node, or a brief read by id): the cut, its manifest, its texts, and the manifest's binding and signature. */
function* briefChecking(c: Checks, doc: Json, shape: 'node' | 'brief', ev: Json, trust: IssuerTrust | undefined): Checking<void> {
  const brief = isObject(doc.brief) ? doc.brief : undefined;
  const m = isObject(doc.manifest) ? doc.manifest : undefined;
  if (!brief || !m) {
    c.add({ id: 'manifest.content', what: 'the brief served hashes to its manifest', valid: false, why: 'the read carries no brief or no manifest' });
    return;
  }
  const level = m.level as BriefLevel;
  let cutHash: string | undefined;
  try {
    cutHash = briefCutSha256(brief);
  } catch {
    cutHash = undefined;
  }
  const cutProblems: string[] = [];
  if (cutHash !== m.contentSha256)
    cutProblems.push(`the brief served hashes to ${String(cutHash)}, its manifest says ${String(m.contentSha256)}: the text was changed`);
  if (m.briefId !== brief.id || m.version !== brief.version)
    cutProblems.push(`the manifest is of ${String(m.briefId)}@${String(m.version)}, the brief ${String(brief.id)}@${String(brief.version)}`);
  if (!LEVELS.includes(level)) cutProblems.push(`the manifest names level ${String(m.level)}`);
  c.add({
    id: 'manifest.content',
    what: 'the brief served hashes to the contentSha256 of its manifest',
    valid: cutProblems.length === 0,
    why: cutProblems.join('; ') || undefined,
  });

  if (shape === 'node') {
    // Every text the node serves beside the brief is the cut's (PROTOCOL 10.2).
    const problems: string[] = [];
    try {
      const texts = briefTexts(brief, LEVELS.includes(level) ? level : 'deep') as Record<string, string | undefined>;
      for (const field of ['tldr', 'core', 'deep'])
        if (doc[field] !== texts[field])
          problems.push(
            doc[field] === undefined
              ? `no ${field} text`
              : texts[field] === undefined
                ? `a ${field} text the level ${String(level)} does not serve`
                : `its ${field} text is not the brief's`,
          );
    } catch {
      problems.push('the brief has no levels');
    }
    if (doc.title !== brief.title) problems.push(`title ${JSON.stringify(doc.title)}, the brief's is ${JSON.stringify(brief.title)}`);
    if (doc.briefId !== brief.id) problems.push(`briefId ${String(doc.briefId)}, the brief is ${String(brief.id)}`);
    if (doc.refinedAt === undefined && doc.spec !== (brief.levels as Json | undefined)?.tldr) problems.push("its spec is not the brief's tldr");
    c.add({
      id: 'content.served',
      what: "the node's title, spec and texts are those of the brief served",
      valid: problems.length === 0,
      why: problems.join('; ') || undefined,
    });
  }

  // The proposal's content: recomputed when the whole brief is served.
  const evHash = ev.contentSha256;
  if (level === 'deep') {
    const hash = hashOf({ kind: 'brief', path: doc.path as string, title: brief.title as string, payload: brief });
    c.add({
      id: 'content.hash',
      what: "the brief served hashes to the publishing proposal's contentSha256",
      valid: hash === evHash,
      why: hash === evHash ? String(hash) : `the path, title and brief served hash to ${String(hash)}; the proposal's content is ${String(evHash)}`,
    });
  } else {
    c.add({
      id: 'content.hash',
      what: "the brief served hashes to the publishing proposal's contentSha256",
      valid: null,
      why:
        `not checked here: the brief is cut to ${String(level)}; its manifest, signed by the node, binds this cut to the proposal's content ` +
        `(read it at level deep to recompute that)`,
    });
  }

  // The manifest's binding and its Ed25519 signature by the node's issuer key.
  const pub = isObject(ev.publication) ? ev.publication : undefined;
  const binding: string[] = [];
  if (m.proposalId !== ev.proposalId) binding.push(`it names proposal ${String(m.proposalId)}, the evidence ${String(ev.proposalId)}`);
  if (m.proposalContentSha256 !== evHash) binding.push(`it names content ${String(m.proposalContentSha256)}, the evidence ${String(evHash)}`);
  if ((m.publicationEventId ?? null) !== (pub?.id ?? null))
    binding.push(`it names event ${String(m.publicationEventId)}, the evidence ${String(pub?.id ?? null)}`);
  c.add({
    id: 'manifest.binding',
    what: 'the manifest names the publishing proposal, its content and its publication event',
    valid: binding.length === 0,
    why: binding.join('; ') || undefined,
  });

  const ns = isObject(m.nodeSignature) ? m.nodeSignature : undefined;
  const publicKey = typeof ns?.issuer === 'string' ? publicKeyFromMultibase(ns.issuer) : null;
  let statement: string | undefined;
  try {
    statement = briefManifestStatement(m as never);
  } catch {
    statement = undefined;
  }
  const signed = ns?.algorithm === 'Ed25519' && publicKey !== null && statement !== undefined && (yield* ed25519Hex(publicKey, statement, ns.signature));
  c.add({
    id: 'manifest.signature',
    what: "the node's Ed25519 signature over the manifest",
    valid: signed,
    why: signed
      ? `by ${String(ns!.issuer)}`
      : ns
        ? 'does not verify under the key it names: the manifest was changed'
        : 'the manifest carries no nodeSignature (a manifest made before content binding)',
  });
  if (trust) {
    const key = signed ? trust.keys.get(String(ns!.issuer)) : undefined;
    const at = Number(m.fetchedAt);
    const inWindow = key !== undefined && at >= key.from && at < key.until;
    c.add({
      id: 'manifest.issuer',
      what: `the signing key was the issuer's (${trust.byTrustFile ? 'pinned by the trust file' : `pinned ${trust.pinned}`}) when the manifest was made`,
      valid: inWindow,
      why: inWindow
        ? undefined
        : key === undefined
          ? `${String(ns?.issuer)} is not an issuer key ${trust.byTrustFile ? 'the trust file pins' : `reached from ${trust.pinned}`}`
          : "that key was not the issuer's at fetchedAt",
      anchor: true,
    });
  } else
    c.add({
      id: 'manifest.issuer',
      what: 'the manifest was signed by the node you trust',
      valid: null,
      why: "not checked: pass --trust FILE, or --issuer DID (the node's issuer: akas node-keys, or its /healthz)",
      anchor: true,
    });
  c.add({
    id: 'manifest.hmac',
    what: "the node's HMAC over the manifest",
    valid: null,
    why: 'needs the node (akas verify manifest asks it): not checkable offline',
  });
}
