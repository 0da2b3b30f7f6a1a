// Reads held against the log's record of them (issue 51, 2; PROTOCOL 9.3, 9.10, 12.5): a read
// lists what the node says it holds, and only the log says what it recorded. One module for the
// verified reads of the CLI (cli/commands/read) and the browser build (the explorer's artifact
// page), so both hold a read to the log by one implementation.
//
// provenLookupEntries reads the lookup of a key with its entries, page by page, each page checked
// under the pinned log key (verifier/lookup.ts: the map proof, the logged root under a
// checkpoint, each entry with its own inclusion proof under that checkpoint).
//
// "All evals of" an artifact (artifactEvalsComplete): an eval's publication (its
// proposal.published event) names the artifact's path and the bytes the tree attached it to
// (artifactPath, artifactSha256), so the index files it under `sha256:<bytes>`. A leaf-artifact
// read's independentEvals are held against the lookup of its payload's sha256 (bound to the
// published content by content.hash):
// - index.complete: every eval publication the log records of this path and these bytes is shown;
// - index.recorded: each eval shown is one the log records of them, as recorded (its fields hash
//   to the contentSha256 the publication names: no eval invented, none changed).
// The summary is recomputed from the evals shown by the offline check (verifier/node.ts
// content.evals), so together the read's evals and summary are the log's. An eval published
// before its publication named the artifact is looked up by its own proposal (`proposal:ID`):
// recorded as shown, but outside what the artifact's lookup can prove complete (said so).
import { contentSha256Of } from '../src/core/content.js';
import { verifyLookupAsync } from './lookup.js';
import type { Check } from './report.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads a route of the node as JSON: the answer, or a string saying why the node gave none (a
 * refusal, a node that serves no index). What is thrown is the caller's own failure.
 */
export type ReadJson = (route: string) => Promise<unknown>;

/** An entry a lookup showed: its kind and body. */
export interface ShownEntry {
  kind: unknown;
  body: Json;
}

/** The entries the log files under a key, proven: complete as of the map's `size`, under a checkpoint of `checkpoint` entries. */
export interface ProvenEntries {
  size: number;
  checkpoint: number;
  entries: ShownEntry[];
}

/** What a completeness check found: the checks to add to the read's, and what they proved. */
export interface Completeness {
  checks: Array<Omit<Check, 'layer'>>;
  /** Proven complete as of this log size, with this many judgments (a proposal) or evals (an artifact) recorded; absent when not proven. */
  asOf?: { size: number; judgments?: number; evals?: number };
  /** The checkpoint (its tree size) the lookup that proved it is anchored under, when proven. */
  checkpoint?: number;
}

/** Entries a lookup page carries at most (the route's bound). */
const PAGE = 100;
/** Pages read at most: 10,000 entries about one proposal or one artifact's bytes is far past any real one. */
const MAX_PAGES = 100;

/** The entries the log files under a key, by its lookup proven under the pinned log key(s); a string says why it could not be read. */
export async function provenLookupEntries(get: ReadJson, logKeys: string | string[] | undefined, key: string): Promise<ProvenEntries | string> {
  const shown: ShownEntry[] = [];
  const route = `/api/index/${encodeURIComponent(key)}`;
  let size: number | undefined;
  for (let page = 0, offset = 0; page < MAX_PAGES; page++) {
    const answer = await get(`${route}?entries=true&proofs=true&offset=${offset}&limit=${PAGE}`);
    if (typeof answer === 'string') return `the node answers no lookup (${answer})`;
    const report = await verifyLookupAsync(answer, logKeys);
    if (!report.verified || !report.anchored) {
      const failed = report.checks.filter((c) => c.valid !== true).map((c) => `${c.id}: ${c.why ?? ''}`);
      return `the lookup of ${key} does not hold (${failed.join('; ').slice(0, 300)})`;
    }
    // Each entry must be the log's own at its index (its inclusion proof), not only one that hashes to itself.
    if (!report.entriesIncluded) return `the lookup of ${key} shows its entries without their inclusion proofs`;
    if (size !== undefined && report.size !== size) return 'the lookup moved while it was read: read it again';
    size = report.size ?? 0;
    const doc = answer as Json;
    const entries = Array.isArray(doc.entries) ? doc.entries : [];
    for (const e of entries) shown.push({ kind: isObject(e) ? e.kind : undefined, body: isObject(e) && isObject(e.body) ? e.body : {} });
    offset += entries.length;
    if (entries.length === 0 || offset >= (report.indices?.length ?? 0)) {
      // log.inclusion held: the root entry is in the tree of this size, the one the checkpoint signs.
      const inclusion = isObject(doc.root) && isObject(doc.root.inclusion) ? doc.root.inclusion : {};
      return { size, checkpoint: Number(inclusion.size), entries: shown };
    }
  }
  return `more than ${MAX_PAGES * PAGE} entries mention ${key}`;
}

const EVENT_KIND = 'attestation.event.v1';
const SHA256 = /^[0-9a-f]{64}$/;
/** Evals published before the artifact was named, each looked up by its proposal, at most (more are left unchecked, said). */
const MAX_LEGACY_LOOKUPS = 20;
/** How long a reader waits before asking a lookup again for an eval the map did not cover yet (a map is at most a second behind: PROTOCOL 9.10). */
const FRESHER_MS = 1100;

const isEvalPublication = (e: ShownEntry) => e.kind === EVENT_KIND && e.body.event === 'proposal.published' && e.body.kind === 'eval-result';

/** The contentSha256 an eval shown beside the artifact at `path` hashes to (PROTOCOL 6.10: its proposal's content), or why it cannot. */
function evalContentSha256(path: string, e: Json): string | { problem: string } {
  const body: Json = {
    artifactPath: path,
    metric: e.metric,
    score: e.score,
    datasetSha256: e.datasetSha256,
    harnessVersionSha: e.harnessVersionSha,
    runner: e.runner,
    ...(e.samplesSha256 !== undefined && e.samplesSha256 !== null ? { samplesSha256: e.samplesSha256 } : {}),
  };
  try {
    return contentSha256Of('eval-result', body);
  } catch {
    return { problem: `eval ${String(e.proposalId)} is not an eval (its fields do not make one)` };
  }
}

/** What the log says of an eval shown that the artifact's lookup does not file, by its own proposal's lookup. */
type Standing = 'recorded' | 'newer' | { problem: string } | { unchecked: string };

interface Artifact {
  sha256: string;
  path: string;
  get: ReadJson;
  logKeys: string | string[] | undefined;
}

async function standingOf(at: Artifact, size: number, id: string, hash: string): Promise<Standing> {
  const logged = await provenLookupEntries(at.get, at.logKeys, `proposal:${id}`);
  if (typeof logged === 'string') return { unchecked: logged };
  const pub = logged.entries.find((e) => isEvalPublication(e) && e.body.proposalId === id);
  // Published after the artifact's lookup was mapped (a map is at most a second behind the log: PROTOCOL 9.10), or never.
  if (!pub) return 'newer';
  const b = pub.body;
  // Published before content binding (PROTOCOL 9.3, schema 1.0.0): the event names no content to hold the eval to.
  if (b.contentSha256 === undefined) return { unchecked: `eval ${id} was published before its event named its content` };
  if (b.contentSha256 !== hash) return { problem: `eval ${id} as shown hashes to ${hash}; the log records ${String(b.contentSha256)}: it was changed` };
  // Published before its publication named the artifact (PROTOCOL 9.3): recorded, outside what the artifact's lookup proves.
  if (b.artifactSha256 === undefined && b.artifactPath === undefined) return 'recorded';
  if (b.artifactSha256 !== at.sha256 || b.artifactPath !== at.path)
    return { problem: `the log records eval ${id} of ${String(b.artifactPath)} (${String(b.artifactSha256 ?? 'no bytes')}), not of these bytes here` };
  // It names these bytes, so the artifact's lookup files it once its map covers it.
  return logged.size > size ? 'newer' : { problem: `the index leaves eval ${id} out of sha256:${at.sha256} (its proposal's lookup shows it)` };
}

interface Held {
  size: number;
  checkpoint: number;
  /** The evals the artifact's lookup files, by proposal id. */
  logged: number;
  missing: string[];
  problems: string[];
  unchecked: string[];
  /** Shown evals recorded before their publication named the artifact. */
  older: number;
  /** Shown evals the log does not record as of the lookup's size. */
  newer: string[];
}

/** One reading of the artifact's lookup, and what it says of the evals shown. */
async function hold(at: Artifact, shown: Json[]): Promise<Held | string> {
  const { sha256, path } = at;
  const logged = await provenLookupEntries(at.get, at.logKeys, `sha256:${sha256}`);
  if (typeof logged === 'string') return logged;
  // The log's evals of these bytes at this path: proposal id -> the contentSha256 its publication names.
  const inLog = new Map<string, unknown>();
  for (const e of logged.entries)
    if (isEvalPublication(e) && e.body.artifactSha256 === sha256 && e.body.artifactPath === path && typeof e.body.proposalId === 'string')
      inLog.set(e.body.proposalId, e.body.contentSha256);
  const shownIds = new Set(shown.map((e) => e.proposalId));
  const held: Held = {
    size: logged.size,
    checkpoint: logged.checkpoint,
    logged: inLog.size,
    missing: [...inLog.keys()].filter((id) => !shownIds.has(id)),
    problems: [],
    unchecked: [],
    older: 0,
    newer: [],
  };
  let asked = 0;
  for (const e of shown) {
    const id = e.proposalId;
    const hash = evalContentSha256(path, e);
    if (typeof id !== 'string') held.problems.push('an eval shown names no proposal');
    else if (typeof hash !== 'string') held.problems.push(hash.problem);
    else if (e.artifactSha256 !== undefined && e.artifactSha256 !== sha256) held.problems.push(`eval ${id} is shown as one of ${String(e.artifactSha256)}`);
    else if (inLog.has(id)) {
      if (inLog.get(id) !== hash) held.problems.push(`eval ${id} as shown hashes to ${hash}; the log records ${String(inLog.get(id))}: it was changed`);
    } else if (++asked > MAX_LEGACY_LOOKUPS) held.unchecked.push(id);
    else {
      const r = await standingOf(at, logged.size, id, hash);
      if (r === 'recorded') held.older++;
      else if (r === 'newer') held.newer.push(id);
      else if ('problem' in r) held.problems.push(r.problem);
      else held.unchecked.push(id);
    }
  }
  return held;
}

/**
 * Holds a leaf-artifact read's evals against every one the log records of its bytes, reading the
 * lookups through `get` and checking them under the pinned log key(s) (null for a read that is no
 * artifact's). Proven, it answers as of which log size and under which checkpoint.
 */
export async function artifactEvalsComplete(doc: unknown, get: ReadJson, logKeys: string | string[] | undefined): Promise<Completeness | null> {
  const d = isObject(doc) ? doc : {};
  const sha256 = isObject(d.payload) ? d.payload.sha256 : undefined;
  const path = d.path;
  if (d.kind !== 'leaf-artifact' || !Array.isArray(d.independentEvals) || typeof sha256 !== 'string' || !SHA256.test(sha256) || typeof path !== 'string')
    return null;
  const complete = { id: 'index.complete' as const, what: `every eval the log records of the artifact's bytes (sha256:${sha256}) at ${path} is in the read` };
  const recorded = { id: 'index.recorded' as const, what: 'each eval shown is one the log records of the artifact, as recorded' };
  const at: Artifact = { sha256, path, get, logKeys };
  const shown = d.independentEvals.map((e) => (isObject(e) ? e : {}));
  let held = await hold(at, shown);
  // An eval newer than the map: asked once more when the node has mapped it.
  if (typeof held !== 'string' && held.newer.length) {
    await new Promise((resolve) => setTimeout(resolve, FRESHER_MS));
    held = await hold(at, shown);
  }
  if (typeof held === 'string') return { checks: [complete, recorded].map((c) => ({ ...c, valid: null, why: `not checked: ${held}` })) };
  const h = held;
  const problems = [...h.problems, ...h.newer.map((id) => `the log records no publication of eval ${id} (as of log size ${h.size})`)];
  const olderNote = h.older ? `; ${h.older} shown published before the log named the artifact, each recorded by its own proposal` : '';
  const checks: Completeness['checks'] = [
    h.missing.length
      ? { ...complete, valid: false, why: `the log records eval(s) ${h.missing.join(', ')}, which the read leaves out (as of log size ${h.size})` }
      : { ...complete, valid: true, why: `all ${h.logged} eval(s) the log records of these bytes as of size ${h.size}${olderNote}` },
    problems.length
      ? { ...recorded, valid: false, why: problems.slice(0, 3).join('; ') }
      : h.unchecked.length
        ? { ...recorded, valid: null, why: `not checked: eval(s) ${h.unchecked.slice(0, 5).join(', ')}, which the artifact's lookup does not file` }
        : { ...recorded, valid: true, why: `${shown.length} eval(s), each as the log records it` },
  ];
  return { checks, ...(h.missing.length || problems.length ? {} : { asOf: { size: h.size, evals: h.logged }, checkpoint: h.checkpoint }) };
}
