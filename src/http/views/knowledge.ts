// The answers of the knowledge reads (PROTOCOL 10): the unified node response (10.2), with a
// brief's signed manifest and texts (10.3), an artifact's signed manifest, the standing of its
// bytes and its evals (10.4), and the evidence binding what is served to the proposal that
// published it (10.7).
import { briefTexts } from '../../core/index.js';
import type { Ctx } from '../../domain/context.js';
import type { ArtifactChecks, ArtifactStanding } from '../../domain/knowledge/artifact-check.js';
import { artifactManifest, briefManifest, type BriefLevel } from '../../domain/knowledge/manifests.js';
import { briefOf, childrenOf, evalsOf, type KnowledgeNode } from '../../domain/knowledge/tree.js';
import type { TransparencyLog } from '../../domain/log/index.js';
import { evidenceOf, fullEvidenceOf, type Evidence, type Served } from '../evidence.js';

/** What a v2 brief manifest names of the proposal that published the brief (PROTOCOL 10.3). */
export const bindingOf = (e: Evidence | undefined) =>
  e ? { proposalId: e.proposalId, proposalContentSha256: e.contentSha256, publicationEventId: e.publication?.id ?? null } : undefined;

/** What a node view reads beside the tree: the node's keys and clock, the log (evidence), the check of artifact bytes. */
export interface NodeReads {
  ctx: Ctx;
  log: TransparencyLog;
  artifacts: ArtifactChecks;
  /** Where a full read's checkpoint comes from (?evidence=full, PROTOCOL 10.7). */
  served: Served;
}

/** A node read's page and brief level (PROTOCOL 10.2). */
export interface NodeQuery {
  level?: BriefLevel;
  limit?: number;
  cursor?: string;
  /** `full`: the evidence with the decision's parts (PROTOCOL 10.7). */
  evidence?: 'full';
}

/** An artifact node's payload (PROTOCOL 10.4). */
type ArtifactPayload = {
  uri: string;
  mediaType: string;
  sha256: string;
  artifactKind: string;
  provenance: Record<string, unknown>;
  bytes: number;
};

/** The unified node response of PROTOCOL 10.2. */
export async function nodeView(reads: NodeReads, node: KnowledgeNode, q: NodeQuery, origin: string) {
  const { ctx, log } = reads;
  const now = ctx.clock.now();
  const evidenceFor = (proposalId: string) => (q.evidence === 'full' ? fullEvidenceOf(ctx, log, proposalId, reads.served) : evidenceOf(ctx, log, proposalId));
  const page = await childrenOf(ctx.store, node.path, q.limit ?? 100, q.cursor);
  const view: Record<string, unknown> = {
    path: node.path,
    title: node.title,
    spec: node.spec,
    kind: node.kind,
    ...(node.refinedAt ? { refinedAt: node.refinedAt } : {}),
    version: node.version,
    ...(node.proposalId ? { proposalId: node.proposalId, publishedAt: node.publishedAt } : {}),
    ...(page.children.length || node.kind === 'branch' ? { children: page.children, childrenNextCursor: page.nextCursor } : {}),
  };
  // PROTOCOL 10.7: what binds this version to the proposal that published it. A brief's is
  // that of its brief version (a sharpened brief node still serves the brief its proposal published).
  let evidence: Evidence | undefined;
  if (node.kind === 'leaf-brief' && node.briefId) {
    const b = await briefOf(ctx.store, node.briefId, node.briefVersion);
    const level = q.level ?? 'core';
    evidence = await evidenceFor(b.proposalId);
    const { brief, manifest } = briefManifest(ctx.keys, b.brief, level, now, bindingOf(evidence));
    // The texts of the levels served, from the cut the manifest hashes: nothing served is unsigned.
    Object.assign(view, { briefId: node.briefId, brief, ...briefTexts(brief, level), manifest });
  } else if (node.proposalId) evidence = await evidenceFor(node.proposalId);
  if (node.kind === 'leaf-capability') view.payload = node.payload;
  if (node.kind === 'leaf-decision') Object.assign(view, decisionParts(node));
  if (node.kind === 'leaf-artifact') Object.assign(view, await artifactParts(reads, node, now, origin));
  if (evidence) view.evidence = evidence;
  return view;
}

/** A decision node's payload, and its branches, each with priors (null when the proposer declared none: PROTOCOL 10.2). */
function decisionParts(node: KnowledgeNode) {
  return {
    payload: node.payload,
    branches: ((node.payload?.branches as Array<Record<string, unknown>>) ?? []).map((b) => ({
      id: b.id,
      condition: b.condition,
      to: b.to,
      priors: b.priors ?? null,
    })),
  };
}

/** An artifact node's parts (PROTOCOL 10.4): its payload, the node's signed manifest, the standing of its bytes, its evals. */
async function artifactParts(reads: NodeReads, node: KnowledgeNode, fetchedAt: number, origin: string) {
  const { ctx } = reads;
  const p = node.payload as ArtifactPayload;
  const { evals, summary } = await evalsOf(ctx.store, node.path, p.sha256);
  const { status, blob } = await reads.artifacts.standing(p, origin);
  return {
    payload: { kind: 'leaf-artifact', ...p },
    manifest: artifactManifest(ctx.keys, {
      artifactPath: node.path,
      uri: p.uri,
      mediaType: p.mediaType,
      sha256: p.sha256,
      artifactKind: p.artifactKind,
      provenance: p.provenance,
      bytes: p.bytes,
      fetchedAt,
    }),
    sha256Verification: verificationView(status, p, blob, origin),
    // Each eval links to its own signed manifest (PROTOCOL 6.6).
    independentEvals: evals.map((e) => ({ ...e, manifestUrl: `/api/knowledge/eval/proposals/${e.proposalId}` })),
    evalSummary: summary,
    note:
      "payload.provenance.metrics are the proposer's own; independentEvals are published eval results by others. Check the manifest with " +
      'POST /api/knowledge/artifact/verify.',
  };
}

/** sha256Verification (PROTOCOL 10.4): the standing of an artifact's bytes, how it was found, and what to do. */
function verificationView(status: ArtifactStanding, p: ArtifactPayload, blob: string | undefined, origin: string) {
  const casUploadHint = `POST the bytes to ${origin}/api/cas and propose the artifact with uri /api/cas/<sha256>: the node then checks them itself.`;
  if (status === 'self-reported') {
    return {
      status,
      method: "none: the bytes are outside this node's content store",
      note: `The sha256 is the proposer's claim. Fetch ${p.uri} and check that sha256(bytes) equals ${p.sha256} before trusting it (akas verify cas).`,
      casUploadHint,
    };
  }
  return status === 'platform-verified'
    ? {
        status,
        method: "sha256 of the blob in this node's content store, checked on read",
        note: `The node holds these bytes and they hash to ${p.sha256}.`,
        casUploadHint,
      }
    : {
        status,
        method: "sha256 of the blob in this node's content store",
        note: `The blob ${blob} is missing or no longer hashes to its name: do not trust these bytes.`,
        casUploadHint,
      };
}
