// The content of a proposal and its hash (PROTOCOL 6.10): exactly what the proposer submitted
// and the node publishes, as one JSON object, and contentSha256, the sha256 of its JCS bytes.
// Defined once, here: the node computes it at propose and stores it, judges sign it (the v2
// payload of PROTOCOL 7.2), the node's credentials and log events carry it, and the CLI and
// the offline verifier recompute it from what they were shown. Pure: no I/O.
//
// This is a new definition beside the conflict key `content:${kind}:...` of PROTOCOL 6.5
// (the hash of the request body as sent, which keeps its meaning): contentSha256 hashes the
// content object below, in which the node path a brief takes by default is filled in and the
// derived title is named, so that a reader can rebuild it from a proposal's detail.
import { canonicalize } from './jcs.js';
import { sha256Hex } from './hash.js';
import type { ProposalKind } from './kinds.js';

/** What contentSha256 hashes. `spec` is present only for the kinds that have one. */
export interface ProposalContent {
  kind: ProposalKind;
  /** The node path it publishes at (a brief's default filled in); null for an eval result. */
  path: string | null;
  /** The title the node shows (a brief's title; derived for eval results, expansions and sharpenings). */
  title: string;
  /** capability, graph, artifact, spec-sharpening. */
  spec?: string;
  /** The kind's own payload (PROTOCOL 6.10's table). */
  payload: unknown;
}

// biome-ignore lint/suspicious/noExplicitAny: a payload is read by its kind after its schema has checked it
type Body = Record<string, any>;

/** A path segment made from free text (a brief's domain and topic): lowercase, hyphens, at most 60 characters. */
export const slugOf = (s: string) =>
  s
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60) || 'topic';

/** The knowledge-tree path a proposal targets (PROTOCOL 6.1): null for eval results, which attach to an artifact. */
export function targetPathOf(kind: ProposalKind, body: Body): string | null {
  switch (kind) {
    case 'brief':
      return body.path ?? `/${slugOf(body.brief.domain)}/${slugOf(body.brief.topic)}`;
    case 'tree-expansion':
      return body.parentPath;
    case 'eval-result':
      return null;
    default:
      return body.path;
  }
}

/** The title queues, details and nodes show. */
export function titleOfBody(kind: ProposalKind, body: Body): string {
  switch (kind) {
    case 'brief':
      return body.brief.title;
    case 'eval-result':
      return `${body.metric} = ${body.score} on ${body.artifactPath}`;
    case 'tree-expansion':
      return `expand ${body.parentPath} with ${(body.children as Array<{ slug: string }>).map((c) => c.slug).join(', ')}`;
    case 'spec-sharpening':
      return `sharpen the spec of ${body.path}`;
    default:
      return body.title;
  }
}

/**
 * The content of a proposal from the body its proposer submitted (PROTOCOL 6.2): kind, the path
 * and title the node shows, the spec where the kind has one, and the kind's payload. Throws a
 * TypeError when the body is not one of the kind (a reader shown a broken proposal).
 */
export function proposalContent(kind: ProposalKind, body: Body): ProposalContent {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new TypeError('a proposal body is an object');
  const path = targetPathOf(kind, body);
  const title = titleOfBody(kind, body);
  if (typeof title !== 'string' || (path !== null && typeof path !== 'string')) throw new TypeError(`not a ${kind} proposal body`);
  const spec = () => {
    if (typeof body.spec !== 'string') throw new TypeError(`a ${kind} proposal has a spec`);
    return body.spec as string;
  };
  switch (kind) {
    case 'brief':
      return { kind, path, title, payload: body.brief };
    case 'capability':
    case 'graph':
    case 'artifact':
      return { kind, path, title, spec: spec(), payload: body.payload };
    case 'tree-expansion':
      return { kind, path, title, payload: { children: body.children } };
    case 'spec-sharpening':
      return { kind, path, title, spec: spec(), payload: { rationale: body.rationale } };
    case 'eval-result':
      return { kind, path, title, payload: body };
  }
}

/** sha256 hex of the JCS (RFC 8785) bytes of a proposal's content. */
export function contentSha256(content: ProposalContent): string {
  for (const [field, value] of Object.entries(content)) if (value === undefined) throw new TypeError(`the content lacks ${field}`);
  return sha256Hex(canonicalize(content));
}

/** contentSha256 of the body a proposer submitted. */
export const contentSha256Of = (kind: ProposalKind, body: Body) => contentSha256(proposalContent(kind, body));

/**
 * The body a proposal's detail (PROTOCOL 6.6) shows: its `payload` for every kind but the
 * decision graph, whose DgProposal shape lifts path, title and spec beside its payload.
 */
export function bodyOfProposalView(kind: ProposalKind, view: Body): Body {
  if (kind !== 'graph') return view.payload;
  return { path: view.path, title: view.title, spec: view.spec, payload: view.payload };
}

export type ShownContent = { ok: true; content: ProposalContent; contentSha256: string; problems: string[] } | { ok: false; reason: string };

/**
 * Rebuilds the content of a proposal from its detail as shown (GET /api/knowledge/proposals/{id},
 * a bundle's `proposal`, a queue item's `proposal`), and lists where the fields shown beside the
 * body (path, title) disagree with it. Used by the CLI before it signs and by the offline verifier.
 */
export function contentOfProposalView(kind: ProposalKind, view: Body): ShownContent {
  let content: ProposalContent;
  let hash: string;
  try {
    content = proposalContent(kind, bodyOfProposalView(kind, view));
    hash = contentSha256(content);
  } catch (e) {
    return { ok: false, reason: `the proposal's body cannot be read as a ${kind}: ${(e as Error).message}` };
  }
  const problems: string[] = [];
  if (view.path !== content.path) problems.push(`it shows path ${JSON.stringify(view.path)}, its body publishes at ${JSON.stringify(content.path)}`);
  if (view.title !== content.title) problems.push(`it shows title ${JSON.stringify(view.title)}, its body says ${JSON.stringify(content.title)}`);
  if (view.kind !== undefined && view.kind !== kind) problems.push(`it shows kind ${JSON.stringify(view.kind)}, its id is a ${kind} proposal`);
  return { ok: true, content, contentSha256: hash, problems };
}

/** A content hash a proposal's content names (its bytes live elsewhere), with what it stands for. */
export interface NamedHash {
  sha256: string;
  role: 'artifact' | 'dataset' | 'samples';
  /** Where the bytes are (artifacts). */
  uri?: string;
  bytes?: number;
}

/**
 * The content hashes a proposal's content names (PROTOCOL 8.4's `cas`): an artifact's bytes, an
 * eval's dataset and samples. Checked through the content: a hash named here is bound by
 * contentSha256, so other bytes can only pass for the artifact if the content hash changes too.
 */
export function hashesNamedBy(content: ProposalContent): NamedHash[] {
  const payload = content.payload as Body;
  if (content.kind === 'artifact') return [{ sha256: payload.sha256, role: 'artifact', uri: payload.uri, bytes: payload.bytes }];
  if (content.kind === 'eval-result') {
    return [
      { sha256: payload.datasetSha256, role: 'dataset' },
      ...(payload.samplesSha256 ? [{ sha256: payload.samplesSha256 as string, role: 'samples' as const }] : []),
    ];
  }
  return [];
}
