// One entry for every read a reader checks before it uses it (PROTOCOL 10.7; issue 50: `akas
// mcp --stdio` and the CLI's reads verify by default): a node or brief read, a search answer
// whose hits carry their reads, a proposal detail with its evidence, an attestation with its
// proof, each read with ?evidence=full. Each is checked by the verifier of its kind:
// - a node or brief read: verifyNode (content, publication, and the decision behind it);
// - a search answer: each hit's read by verifyNode, and the hit's own fields against it
//   (`search.hit`): ten hits, one request;
// - a proposal detail: its evidence is its bundle but the proposal (PROTOCOL 6.6, 8.4), so the
//   two together are checked as a bundle (verifyBundle: content, judgments, credentials, log,
//   status);
// - an attestation: verifyLogProof, under the pinned log key or the one the pinned issuer
//   endorses in its evidence, with the witnesses' quorum when given.
// The same pins for all (NodeOptions: a trust file's issuer and log keys, or --issuer, and the
// witness policy). Free of Node built-ins: `verifyRead` drives the checks at once (Node),
// `verifyReadAsync` awaits WebCrypto (the browser build); both inflate stapled status lists
// with the platform's DecompressionStream unless an `inflate` is given. A reader that checks
// read after read passes one `memo` (memo.ts) to all: a signature it already checked (a
// node's judges and credentials, a checkpoint, a status list) is not checked again.
import { runAsync, runNow } from '../src/core/checking.js';
import { BUNDLE_FORMAT, verifyBundle, verifyBundleAsync, type BundleReport } from './bundle.js';
import { trustChecking, type IssuerTrust } from './issuer-keys.js';
import { verifyLogProof, verifyLogProofAsync } from './log.js';
import { parseNodeRead, stapledInflate, verifyNode, verifyNodeAsync, type NodeOptions, type NodeReport } from './node.js';
import { SignatureMemo } from './memo.js';
import { preinflated } from './status-list.js';
import { Checks, NotCheckableError, readJsonInput, unanchoredOf, type Check, type Report } from './report.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a read is: the kind of document the reader was answered. */
export type ReadShape = 'node' | 'brief' | 'search' | 'proposal' | 'attestation';

/** One hit of a search answer, with the report of the read it carries. */
export interface HitReport {
  path: string;
  kind: string;
  title: string;
  report: Report;
}

/** The report of a read: its checks (a search's: every hit's, each subject prefixed by the hit's path) and, for a search, each hit's own. */
export interface ReadReport extends Report {
  shape: ReadShape;
  /** A search answer's hits, in its order, each with its own report. */
  hits?: HitReport[];
  /** The report of the kind's own verifier (a NodeReport, a BundleReport), for what it adds (status, proposalId, ...). */
  detail?: NodeReport | BundleReport | Report;
}

/** The shape of a read, or NotCheckableError when it is none of them. */
export function readShape(doc: unknown): ReadShape {
  if (isObject(doc) && typeof doc.query === 'string' && Array.isArray(doc.items)) return 'search';
  if (isObject(doc) && isObject(doc.entry) && isObject(doc.inclusion) && typeof doc.checkpoint === 'string') return 'attestation';
  if (isObject(doc) && typeof doc.proposalId === 'string' && typeof doc.status === 'string' && doc.contentSha256 !== undefined && doc.version === undefined)
    return 'proposal';
  return parseNodeRead(doc).shape;
}

interface Driver {
  node(doc: unknown, o: NodeOptions): Promise<NodeReport>;
  bundle: typeof verifyBundle;
  logProof: typeof verifyLogProofAsync;
  trust(issuer: string, o: NodeOptions): Promise<IssuerTrust>;
}

const NOW: Driver = {
  node: async (doc, o) => verifyNode(doc, { ...o, inflate: o.inflate ?? (await stapledInflate(doc)) }),
  bundle: verifyBundle,
  logProof: async (...a) => verifyLogProof(...a),
  trust: async (issuer, o) => runNow(trustChecking(issuer, o.issuerKeys)),
};
const ASYNC: Driver = {
  node: verifyNodeAsync,
  bundle: verifyBundleAsync,
  logProof: verifyLogProofAsync,
  trust: (issuer, o) => runAsync(trustChecking(issuer, o.issuerKeys)),
};

/**
 * Checks a read (its text, bytes or parsed value) offline under the pins given. Node: signatures
 * checked at once. Throws NotCheckableError for input that is no read.
 */
export function verifyRead(input: unknown, options: NodeOptions = {}): Promise<ReadReport> {
  return readChecking(input, { ...options, memo: options.memo ?? new SignatureMemo(1024) }, NOW);
}

/** verifyRead where Ed25519 is asynchronous (WebCrypto in a browser). */
export function verifyReadAsync(input: unknown, options: NodeOptions = {}): Promise<ReadReport> {
  return readChecking(input, { ...options, memo: options.memo ?? new SignatureMemo(1024) }, ASYNC);
}

async function readChecking(input: unknown, options: NodeOptions, d: Driver): Promise<ReadReport> {
  const doc = readJsonInput(input, 'a read') as Json;
  const shape = readShape(doc);
  if (shape === 'node' || shape === 'brief') {
    const r = await d.node(doc, options);
    return { ...own(r), shape, detail: r };
  }
  if (shape === 'search') return searchChecking(doc, options, d);
  if (shape === 'proposal') return proposalChecking(doc, options, d);
  // An attestation: under the pinned log key, else the one the pinned issuer endorses.
  const keys = options.logKey ? [options.logKey] : options.logKeys;
  const trust = options.trust ?? (options.issuer && !keys ? await d.trust(options.issuer, options) : undefined);
  const r = await d.logProof(doc, keys, options.witnesses, { trust });
  return { ...own(r), shape, detail: r };
}

const own = (r: Report): Report => ({ verified: r.verified, anchored: r.anchored, unanchored: r.unanchored, checks: r.checks });

// A proposal detail with its evidence is a bundle cut in two: checked as the one bundle it is.
async function proposalChecking(doc: Json, options: NodeOptions, d: Driver): Promise<ReadReport> {
  const { evidence, ...proposal } = doc;
  if (!isObject(evidence)) {
    const c = new Checks();
    c.add({
      id: 'evidence',
      what: 'the detail carries its evidence (its bundle)',
      valid: false,
      why: 'the read carries no evidence: read it with ?evidence=full',
    });
    return { ...c.report(), shape: 'proposal' };
  }
  const r = await d.bundle({ ...evidence, format: BUNDLE_FORMAT, proposal }, options);
  return { ...own(r), shape: 'proposal', detail: r };
}

// A search answer: each hit's read checked as a node read, and the hit's own fields against it.
async function searchChecking(doc: Json, options: NodeOptions, d: Driver): Promise<ReadReport> {
  const hits: HitReport[] = [];
  const all: Check[] = [];
  const items = (doc.items as unknown[]).map((i) => (isObject(i) ? i : {}));
  // The hits' status lists are mostly the same lists: each inflated once for the page.
  const lists = items.flatMap((i) => {
    const ev = isObject(i.read) && isObject(i.read.evidence) ? i.read.evidence : {};
    return isObject(ev.status) && Array.isArray(ev.status.lists) ? ev.status.lists.map((l) => (isObject(l) ? l.credential : undefined)) : [];
  });
  if (!options.inflate && lists.length) options = { ...options, inflate: await preinflated(lists) };
  for (const item of items) {
    const path = String(item.path);
    const c = new Checks();
    let base: Report = c.report();
    const read = item.read;
    const what = "the hit's path, kind, title and brief are those of the node read it carries";
    if (!isObject(read)) {
      c.add({
        id: 'search.hit',
        what,
        valid: false,
        why: read === null ? 'the node is gone: the hit carries no read' : 'the hit carries no read: search with evidence=full',
      });
    } else {
      try {
        base = await d.node(read, options);
        // A hit names a brief only where it carries one (a brief's leaf); what it names must be the read's.
        const differ = ['path', 'kind', 'title', 'briefId'].filter((k) => (k !== 'briefId' || k in item) && item[k] !== read[k]);
        c.add({ id: 'search.hit', what, valid: differ.length === 0, why: differ.length ? `the hit's ${differ.join(', ')} differ from the read's` : undefined });
      } catch (e) {
        if (!NotCheckableError.is(e)) throw e;
        c.add({ id: 'search.hit', what, valid: false, why: `the hit's read is no node read: ${e.message}` });
      }
    }
    const checks = [...base.checks, ...c.list];
    const report: Report = { verified: !checks.some((k) => k.valid === false), anchored: base.anchored, unanchored: base.unanchored, checks };
    hits.push({ path, kind: String(item.kind), title: String(item.title), report });
    for (const k of checks) all.push({ ...k, subject: k.subject ? `${path}: ${k.subject}` : path });
  }
  const unanchored = unanchoredOf(all);
  return { verified: hits.every((h) => h.report.verified), anchored: unanchored.length === 0, unanchored, checks: all, shape: 'search', hits };
}
