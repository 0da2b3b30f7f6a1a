// The knowledge tree (PROTOCOL 10): what publishing makes, and how it is read. A published
// proposal becomes (or refreshes) a node at its path in the same transaction that publishes
// it; every ancestor along the path exists implicitly and lists its children; a refresh keeps
// the previous version readable; eval results attach to their artifact; spec sharpening
// replaces a node's spec. Nothing here is written for a rejected or withdrawn proposal.
import { ServiceError, type ProposalKind } from '../../core/index.js';
import { space, type Store, type Tx } from '../../store/index.js';
import type { PayloadOf } from '../proposals/kinds.js';
import { PendingKeys, Proposals, type ProposalRecord } from '../records.js';
import type { SearchPlace } from './search.js';

export type NodeKind = 'branch' | 'leaf-brief' | 'leaf-capability' | 'leaf-decision' | 'leaf-artifact';

/** A stored node of the tree (one per path; earlier versions in NodeVersions). */
export interface KnowledgeNode {
  path: string;
  kind: NodeKind;
  title: string;
  spec: string;
  /** When the spec was last sharpened (ISO 8601). */
  refinedAt?: string;
  /** The kind's own payload (capability, decision graph, artifact). */
  payload?: Record<string, unknown>;
  briefId?: string;
  briefVersion?: string;
  /** The proposal that made this version; null for a branch no proposal made. */
  proposalId: string | null;
  /** 1 for the first publication, then one more at each refresh. */
  version: number;
  publishedAt: number;
}

/** A published brief, one record per version (`id@version`), the current one under `id`. */
export interface BriefRecord {
  brief: PayloadOf<'brief'>['brief'];
  path: string;
  proposalId: string;
  publishedAt: number;
}

/** An eval result attached to an artifact (PROTOCOL 10.4 independentEvals). */
export interface EvalRecord {
  proposalId: string;
  /**
   * The sha256 of the artifact bytes the eval was published against (the published artifact
   * at its path, else the pending one it was proposed for; null when neither exists any more).
   * An artifact node shows only the evals of its own bytes.
   */
  artifactSha256: string | null;
  metric: string;
  score: number;
  datasetSha256: string;
  harnessVersionSha: string;
  runner: string;
  samplesSha256?: string;
  proposer: string | null;
  publishedAt: number;
}

export const KnowledgeNodes = space<KnowledgeNode>('knowledge-nodes');
/** `${path}@${version padded}` -> an earlier version of a node. */
export const NodeVersions = space<KnowledgeNode>('knowledge-node-versions');
/**
 * `${parent}\u0000${segment}` -> the child exists (implicitly or as a node). The value is
 * always the same empty object: publishers under one parent write these keys blindly and
 * identically, so they need no lock (and do not serialize every publication on `/`).
 */
export const NodeChildren = space<Record<string, never>>('knowledge-children');
export const Briefs = space<BriefRecord>('knowledge-briefs');
/** `${artifactPath}\u0000${proposalId}` -> an eval result of that artifact. */
export const Evals = space<EvalRecord>('knowledge-evals');

const SEP = '\u0000';
/** The tree path a key of NodeChildren (the parent) or of Evals (the artifact) belongs to. */
export const pathOfKey = (key: string) => key.slice(0, key.indexOf(SEP));
const padVersion = (v: number) => String(v).padStart(6, '0');
export const treeLock = (path: string) => `tree:${path}`;

/** The ancestors of a path, root first: /a/b/c -> ['/', '/a', '/a/b']. */
export function ancestors(path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  return ['/', ...parts.slice(0, -1).map((_, i) => '/' + parts.slice(0, i + 1).join('/'))];
}

const lastSegment = (path: string) => path.split('/').filter(Boolean).pop() ?? '';

/** The tree paths a proposal writes when it publishes (for its locks). */
export function publishedPaths(p: Pick<ProposalRecord, 'kind' | 'path' | 'payload'>): string[] {
  switch (p.kind) {
    case 'tree-expansion': {
      const t = p.payload as PayloadOf<'tree-expansion'>;
      const base = t.parentPath === '/' ? '' : t.parentPath;
      return [t.parentPath, ...t.children.map((c) => `${base}/${c.slug}`)];
    }
    case 'eval-result':
      return [(p.payload as PayloadOf<'eval-result'>).artifactPath];
    default:
      return p.path ? [p.path] : [];
  }
}

/** The lock keys that cover the nodes publishing a proposal writes (children links need none). */
export function treeLocks(p: Pick<ProposalRecord, 'kind' | 'path' | 'payload'>): string[] {
  return [...new Set(publishedPaths(p))].map(treeLock);
}

/** Makes every ancestor of path list its child on the way down (idempotent blind writes). */
function linkAncestors(tx: Tx, path: string) {
  let child = path;
  for (const parent of ancestors(path).reverse()) {
    tx.put(NodeChildren, `${parent}${SEP}${lastSegment(child)}`, {});
    child = parent;
  }
}

/** Writes a node at its path, keeping the version it replaces. */
async function putNode(tx: Tx, node: Omit<KnowledgeNode, 'version'>, search: SearchPlace): Promise<KnowledgeNode> {
  const previous = await tx.get(KnowledgeNodes, node.path);
  if (previous) tx.put(NodeVersions, `${node.path}@${padVersion(previous.version)}`, previous);
  const next: KnowledgeNode = { ...node, version: (previous?.version ?? 0) + 1 };
  tx.put(KnowledgeNodes, node.path, next);
  linkAncestors(tx, node.path);
  // Where the node's search must find it once this commits (the store's own text index) gets
  // its document in this same batch; MiniSearch follows the store's watch instead.
  await search.index(tx, next);
  return next;
}

/**
 * Builds what a published proposal adds to the tree, inside the transaction that publishes
 * it (the caller holds treeLocks(proposal)).
 */
export async function publishToTree(tx: Tx, p: ProposalRecord, now: number, search: SearchPlace): Promise<void> {
  const base = { proposalId: p.proposalId, publishedAt: now };
  switch (p.kind) {
    case 'brief': {
      const { brief } = p.payload as PayloadOf<'brief'>;
      const path = p.path!;
      tx.put(Briefs, `${brief.id}@${brief.version}`, { brief, path, proposalId: p.proposalId, publishedAt: now });
      tx.put(Briefs, brief.id, { brief, path, proposalId: p.proposalId, publishedAt: now });
      await putNode(
        tx,
        { ...base, path, kind: 'leaf-brief', title: brief.title, spec: brief.levels.tldr, briefId: brief.id, briefVersion: brief.version },
        search,
      );
      return;
    }
    case 'capability':
    case 'graph':
    case 'artifact': {
      const x = p.payload as { path: string; title: string; spec: string; payload: Record<string, unknown> };
      const kind: NodeKind = p.kind === 'capability' ? 'leaf-capability' : p.kind === 'graph' ? 'leaf-decision' : 'leaf-artifact';
      await putNode(tx, { ...base, path: x.path, kind, title: x.title, spec: x.spec, payload: x.payload }, search);
      return;
    }
    case 'tree-expansion': {
      const t = p.payload as PayloadOf<'tree-expansion'>;
      const parent = t.parentPath === '/' ? '' : t.parentPath;
      for (const c of t.children) {
        const path = `${parent}/${c.slug}`;
        // A child that is already a published leaf keeps its node: the expansion only names it.
        const existing = await tx.get(KnowledgeNodes, path);
        if (existing && existing.kind !== 'branch') linkAncestors(tx, path);
        else await putNode(tx, { ...base, path, kind: 'branch', title: c.title, spec: c.spec }, search);
      }
      return;
    }
    case 'spec-sharpening': {
      const s = p.payload as PayloadOf<'spec-sharpening'>;
      const existing = await tx.get(KnowledgeNodes, s.path);
      const refinedAt = new Date(now).toISOString();
      if (existing) await putNode(tx, { ...existing, spec: s.spec, refinedAt, proposalId: p.proposalId, publishedAt: now }, search);
      else await putNode(tx, { ...base, path: s.path, kind: 'branch', title: lastSegment(s.path), spec: s.spec, refinedAt }, search);
      return;
    }
    case 'eval-result': {
      const e = p.payload as PayloadOf<'eval-result'>;
      tx.put(Evals, `${e.artifactPath}${SEP}${p.proposalId}`, {
        proposalId: p.proposalId,
        artifactSha256: await artifactBytesAt(tx, e.artifactPath),
        metric: e.metric,
        score: e.score,
        datasetSha256: e.datasetSha256,
        harnessVersionSha: e.harnessVersionSha,
        runner: e.runner,
        ...(e.samplesSha256 ? { samplesSha256: e.samplesSha256 } : {}),
        proposer: p.proposer?.tag ?? null,
        publishedAt: now,
      });
      return;
    }
  }
}

/**
 * The sha256 of the artifact an eval publishing now evaluates: the published artifact at the
 * path, else the pending artifact proposal that holds the path (an eval may be proposed and
 * judged before its artifact is), else null. Binding evals to bytes keeps the evals of a
 * rejected or replaced artifact off whatever is published at that path later.
 */
export async function artifactBytesAt(tx: Tx, path: string): Promise<string | null> {
  const node = await tx.get(KnowledgeNodes, path);
  if (node?.kind === 'leaf-artifact') return String((node.payload as { sha256: string }).sha256);
  const pending = await tx.get(PendingKeys, `node:${path}`);
  const proposal = pending && (await tx.get(Proposals, pending.proposalId));
  if (proposal?.kind === 'artifact' && proposal.status === 'pending') return String((proposal.payload as PayloadOf<'artifact'>).payload.sha256);
  return null;
}

/** A normalized tree path from user input (leading slash, no trailing one, no empty segments); null when not a path. */
export function normalizePath(input: string): string | null {
  const trimmed = input.trim();
  if (trimmed === '' || trimmed === '/') return '/';
  const path = '/' + trimmed.split('/').filter(Boolean).join('/');
  return /^(\/[a-z0-9][a-z0-9-]*)+$/.test(path) && path.length <= 200 ? path : null;
}

export interface ChildrenPage {
  children: string[];
  nextCursor: string | null;
}

/** The children of a path (full paths, in name order), paged. */
export async function childrenOf(store: Store, path: string, limit: number, cursor?: string): Promise<ChildrenPage> {
  const prefix = `${path}${SEP}`;
  const rows = await store.list(NodeChildren, { gt: cursor ? `${prefix}${cursor}` : prefix, lt: `${prefix}\uffff`, limit: limit + 1 });
  const names = rows.map(([k]) => k.slice(prefix.length));
  const page = names.slice(0, limit);
  const base = path === '/' ? '' : path;
  return { children: page.map((n) => `${base}/${n}`), nextCursor: names.length > limit ? page[page.length - 1] : null };
}

/** The node at a path: a stored one (a version of it, when asked), or an implicit branch when the path has children. */
export async function nodeAt(store: Store, path: string, version?: number): Promise<KnowledgeNode> {
  const current = await store.get(KnowledgeNodes, path);
  if (version !== undefined && current && version !== current.version) {
    const old = await store.get(NodeVersions, `${path}@${padVersion(version)}`);
    if (old) return old;
    throw new ServiceError('not_found', `No version ${version} of ${path} (versions 1 to ${current.version}).`, { field: 'version' });
  }
  if (current) return current;
  if (path === '/' || (await childrenOf(store, path, 1)).children.length > 0) {
    return { path, kind: 'branch', title: path === '/' ? 'root' : lastSegment(path), spec: '', proposalId: null, version: 1, publishedAt: 0 };
  }
  throw new ServiceError('not_found', `Nothing is published at ${path}.`, {
    field: 'path',
    hint: 'GET /api/knowledge/node/ lists the top of the tree; GET /api/knowledge/search finds nodes.',
  });
}

/**
 * The eval results of the artifact bytes at a path (sha256), and their summary (count,
 * distinct runners, mean/min/max by metric).
 */
export async function evalsOf(store: Store, artifactPath: string, sha256: string) {
  const evals = (await store.list(Evals, { gte: `${artifactPath}${SEP}`, lt: `${artifactPath}${SEP}\uffff` }))
    .map(([, e]) => e)
    .filter((e) => e.artifactSha256 === sha256);
  const byMetric: Record<string, { count: number; mean: number; min: number; max: number }> = {};
  for (const e of evals) {
    const m = (byMetric[e.metric] ??= { count: 0, mean: 0, min: Infinity, max: -Infinity });
    m.count += 1;
    m.mean += (e.score - m.mean) / m.count;
    m.min = Math.min(m.min, e.score);
    m.max = Math.max(m.max, e.score);
  }
  for (const m of Object.values(byMetric)) m.mean = Math.round(m.mean * 1e6) / 1e6;
  return { evals, summary: { count: evals.length, distinctRunners: new Set(evals.map((e) => e.runner)).size, byMetric } };
}

/** A published brief (the current version, or the one asked). */
export async function briefOf(store: Store, id: string, version?: string): Promise<BriefRecord> {
  const b = await store.get(Briefs, version ? `${id}@${version}` : id);
  if (!b) throw new ServiceError('not_found', `No published brief ${id}${version ? ` of version ${version}` : ''}.`, { field: 'id' });
  return b;
}

/** The node kind a proposal kind publishes (PROTOCOL 10.1). */
export const NODE_KIND: Partial<Record<ProposalKind, NodeKind>> = {
  brief: 'leaf-brief',
  capability: 'leaf-capability',
  graph: 'leaf-decision',
  artifact: 'leaf-artifact',
};
