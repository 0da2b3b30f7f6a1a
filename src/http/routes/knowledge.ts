// PROTOCOL 10: reading the knowledge tree (the unified node response, briefs with signed
// manifests, artifacts with their verification status and evals), decision-graph
// traversal, search and suggest, and the manifest checks.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { canonicalize, ServiceError, sha256Hex } from '../../core/index.js';
import { ArtifactChecks } from '../../domain/knowledge/artifact-check.js';
import { briefOf, nodeAt, normalizePath, type NodeKind } from '../../domain/knowledge/tree.js';
import { briefManifest, checkArtifactManifest, checkBriefManifest, checkEvalManifest, isEvalManifest } from '../../domain/knowledge/manifests.js';
import type { KnowledgeSearch, SearchHit, SearchPage } from '../../domain/knowledge/search.js';
import { getTraversal, traverse } from '../../domain/knowledge/traversal.js';
import { Any, Closed, FreeObject, Nullable, OneOf, Open } from '../schemas.js';
import { NodeViewCache } from '../node-cache.js';
import { originOf } from '../../http-kit/urls.js';
import { coveringCheckpoint, evidenceOf, fullEvidenceOf, stableEvidence, type Evidence } from '../evidence.js';
import { bucketOf } from '../caller.js';
import { CallerGate, chargeSearch } from '../search-budget.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';
import { bindingOf, nodeView, type NodeQuery as NodeViewQuery, type NodeReads } from '../views/knowledge.js';
import {
  BriefManifestSchema,
  ByPathQuery,
  Check,
  EvidenceQuery,
  EvidenceSchema,
  Level,
  ManifestBody,
  NodeAnswer,
  NodeQuery,
  NotModified,
  TraversalAnswer,
} from './knowledge-schemas.js';

const Str = Type.String();
const nodeResponses = { 200: NodeAnswer, 304: NotModified };

const TreeRootRoute = {
  schema: { operationId: 'treeRoot', summary: 'The root of the published tree', tags: ['knowledge'], querystring: NodeQuery, response: nodeResponses },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const NodeRoute = {
  schema: {
    operationId: 'node',
    summary: 'A node of the published tree by its path',
    tags: ['knowledge'],
    params: Type.Object({ '*': Type.String({ maxLength: 400, description: 'The node path without its leading slash, e.g. testing/flaky-tests.' }) }),
    querystring: NodeQuery,
    response: nodeResponses,
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

/** A node of one kind by its path (?path=): capability, decision graph or artifact. */
const byPathRoute = (name: 'cap' | 'dg' | 'artifact', kind: NodeKind) =>
  ({
    schema: {
      operationId: `${name === 'dg' ? 'decision' : name === 'cap' ? 'capability' : name}ByPath`,
      summary: `A ${kind} node by its path`,
      tags: ['knowledge'],
      querystring: ByPathQuery,
      response: nodeResponses,
    },
    config: { errors: ['not_found'] },
  }) satisfies RouteOptions;
type ByPathSchema = ReturnType<typeof byPathRoute>['schema'];

const BriefRoute = {
  schema: {
    operationId: 'brief',
    summary: 'A published brief at a level, with its signed manifest',
    tags: ['knowledge'],
    params: Type.Object({ id: Type.String({ maxLength: 120 }) }),
    querystring: Type.Object(
      { level: Level, version: Type.Optional(Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' })), evidence: EvidenceQuery },
      { additionalProperties: false },
    ),
    response: {
      200: Closed(
        { brief: Open(), manifest: BriefManifestSchema, path: Str, evidence: Type.Optional(EvidenceSchema) },
        'The brief cut to the level, its BriefManifest, its node path, and the evidence binding it to the proposal that published it ' +
          '(PROTOCOL 10.3, 10.7).',
      ),
    },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const VerifyRoute = {
  schema: {
    operationId: 'verifyBriefManifest',
    summary: 'Check a brief manifest signature',
    tags: ['knowledge'],
    body: ManifestBody,
    response: {
      200: Closed(
        { ...Check, briefId: Type.Optional(Any), proposalId: Type.Optional(Any), signingKeyId: Any },
        "Whether the node signed this manifest: a brief manifest, or an eval proposal's (PROTOCOL 10.3, 10.4).",
      ),
    },
  },
} satisfies RouteOptions;

const VerifyArtifactRoute = {
  schema: {
    operationId: 'verifyArtifactManifest',
    summary: 'Check an artifact manifest signature',
    tags: ['knowledge'],
    body: ManifestBody,
    response: { 200: Closed({ ...Check, artifactPath: Any, signingKeyId: Any, note: Str }, 'Whether the node signed this manifest (PROTOCOL 10.4).') },
  },
} satisfies RouteOptions;

const TraverseRoute = {
  schema: {
    operationId: 'traverse',
    summary: 'Walk a decision graph from a node with your inputs',
    tags: ['knowledge'],
    body: Type.Object({ path: Type.String({ minLength: 1, maxLength: 200 }), inputs: FreeObject({ maxProperties: 64 }) }, { additionalProperties: false }),
    response: { 200: TraversalAnswer },
  },
  config: { errors: ['not_found', 'graph_cycle'] },
} satisfies RouteOptions;

const TraversalRoute = {
  schema: {
    operationId: 'traversal',
    summary: 'A traversal by its id',
    tags: ['knowledge'],
    params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
    response: { 200: TraversalAnswer },
  },
  config: { errors: ['not_found', 'expired'] },
} satisfies RouteOptions;

/** Search hits a page holds when it does not say (ajv fills it in; the handler's type does not know that). */
const SEARCH_PAGE = 20;
/** Hits a page of a search with evidence=full holds at most (PROTOCOL 10.6). */
export const SEARCH_EVIDENCE_HITS = 20;
/** The node reads with full evidence a search page carries at most (bytes of their JSON, PROTOCOL 10.6). */
export const SEARCH_EVIDENCE_BYTES = 1024 * 1024;
/** Suggestions a suggest answers when it does not say. */
const SUGGESTIONS = 10;

const SearchRoute = {
  schema: {
    operationId: 'search',
    summary: 'Search the published tree and briefs',
    tags: ['knowledge'],
    response: {
      200: Closed(
        {
          query: Str,
          items: Type.Array(
            Closed({
              path: Str,
              kind: Str,
              title: Str,
              score: Type.Number(),
              match: Type.Record(Str, Type.Array(Str)),
              briefId: Type.Optional(Str),
              read: Type.Optional(
                Nullable(
                  Open(
                    {},
                    'With ?evidence=full: the node read of the hit (PROTOCOL 10.2) at level tldr without its children, with its full evidence (10.7); ' +
                      'null when the node is gone.',
                  ),
                ),
              ),
            }),
          ),
          total: Type.Integer(),
          totalIsEstimate: Type.Optional(Type.Literal(true)),
          nextCursor: Nullable(Str),
        },
        'Hits, best first (PROTOCOL 10.6).',
      ),
    },
    querystring: Type.Object(
      {
        q: Type.String({ minLength: 1, maxLength: 200 }),
        kind: Type.Optional(OneOf(['branch', 'leaf-brief', 'leaf-capability', 'leaf-decision', 'leaf-artifact'])),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: SEARCH_PAGE })),
        cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
        evidence: EvidenceQuery,
      },
      { additionalProperties: false },
    ),
  },
  config: { errors: ['search_busy'] },
} satisfies RouteOptions;

const SuggestRoute = {
  schema: {
    operationId: 'suggest',
    summary: 'Completions of paths and titles',
    tags: ['knowledge'],
    querystring: Type.Object(
      { q: Type.String({ minLength: 1, maxLength: 200 }), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: SUGGESTIONS })) },
      { additionalProperties: false },
    ),
    response: {
      200: Closed({ query: Str, suggestions: Type.Array(Closed({ path: Str, title: Str, kind: Str })) }, 'Paths and titles that complete q (PROTOCOL 10.6).'),
    },
  },
  config: { errors: ['search_busy'] },
} satisfies RouteOptions;

export async function knowledgeRoutes(app: App) {
  const k = new KnowledgeReads(app);
  app.get('/api/knowledge/node', TreeRootRoute, k.root);
  // fastify has already percent-decoded the wildcard (a malformed escape is its 400).
  app.get('/api/knowledge/node/*', NodeRoute, k.node);
  app.get('/api/knowledge/cap/by-path', byPathRoute('cap', 'leaf-capability'), k.byPath('leaf-capability'));
  app.get('/api/knowledge/dg/by-path', byPathRoute('dg', 'leaf-decision'), k.byPath('leaf-decision'));
  app.get('/api/knowledge/artifact/by-path', byPathRoute('artifact', 'leaf-artifact'), k.byPath('leaf-artifact'));
  app.get('/api/knowledge/briefs/:id', BriefRoute, brief);
  app.post('/api/knowledge/verify', VerifyRoute, verifyManifest);
  app.post('/api/knowledge/artifact/verify', VerifyArtifactRoute, verifyArtifactManifest);
  app.post('/api/knowledge/dg/traverse', TraverseRoute, walk);
  app.get('/api/knowledge/dg/traversals/:id', TraversalRoute, traversal);
  app.get('/api/knowledge/search', SearchRoute, k.search);
  app.get('/api/knowledge/suggest', SuggestRoute, k.suggest);
}

/** PROTOCOL 10.3: a brief at a level, with its signed manifest and the evidence of its publication. */
async function brief(request: Req<typeof BriefRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  const { id } = request.params;
  const q = request.query;
  const b = await briefOf(ctx.store, id, q.version);
  const evidence =
    q.evidence === 'full'
      ? await fullEvidenceOf(ctx, ctx.log, b.proposalId, { witnesses: ctx.witnesses, waitMs: ctx.appConfig.witnessWaitMs })
      : await evidenceOf(ctx, ctx.log, b.proposalId);
  if (q.evidence === 'full') reply.header('cache-control', 'no-store');
  return { ...briefManifest(ctx.keys, b.brief, q.level ?? 'core', ctx.clock.now(), bindingOf(evidence)), path: b.path, ...(evidence ? { evidence } : {}) };
}

/** PROTOCOL 10.3: whether the node signed a brief manifest; the node's other HMAC manifest, of an eval result (10.4), too. */
async function verifyManifest(request: Req<typeof VerifyRoute.schema>) {
  const { store, keys } = request.server.akas;
  const { manifest } = request.body;
  if (isEvalManifest(manifest)) return { ...checkEvalManifest(keys, manifest), proposalId: manifest.proposalId, signingKeyId: manifest.signingKeyId ?? null };
  const b =
    typeof manifest.briefId === 'string' && typeof manifest.version === 'string'
      ? await briefOf(store, manifest.briefId, manifest.version).catch(() => undefined)
      : undefined;
  const r = checkBriefManifest(keys, manifest, b?.brief);
  return { ...r, briefId: manifest.briefId ?? null, signingKeyId: manifest.signingKeyId ?? null };
}

/** PROTOCOL 10.4: whether the node signed an artifact manifest (not whether the bytes at its uri hash right). */
async function verifyArtifactManifest(request: Req<typeof VerifyArtifactRoute.schema>) {
  const { manifest } = request.body;
  const r = checkArtifactManifest(request.server.akas.keys, manifest);
  return {
    ...r,
    artifactPath: manifest.artifactPath ?? null,
    signingKeyId: manifest.signingKeyId ?? null,
    note: 'The signature says this node served this record; whether the bytes at uri hash to sha256 is checked by fetching them (akas verify cas).',
  };
}

/** PROTOCOL 10.5: a decision graph walked from a node with the caller's inputs. */
async function walk(request: Req<typeof TraverseRoute.schema>) {
  const { path, inputs } = request.body;
  return traverse(request.server.akas, path, inputs);
}

/** PROTOCOL 10.5: a traversal by its id, while the node keeps it. */
async function traversal(request: Req<typeof TraversalRoute.schema>) {
  return getTraversal(request.server.akas, request.params.id);
}

/**
 * The reads that keep state: node answers (kept serialized until a write to what they read:
 * node-cache.ts), the check of artifact bytes (artifact-check.ts), and search and suggest, two
 * at a time per caller (search-budget.ts) so one address's burst never fills the index's queue.
 */
class KnowledgeReads {
  private readonly reads: NodeReads;
  private readonly views: NodeViewCache;
  private readonly index: KnowledgeSearch;
  private readonly gate = new CallerGate();

  constructor(app: App) {
    const ctx = app.akas;
    this.reads = { ctx, log: ctx.log, artifacts: new ArtifactChecks(ctx), served: { witnesses: app.akas.witnesses, waitMs: app.akas.appConfig.witnessWaitMs } };
    this.views = new NodeViewCache(ctx.store);
    // MiniSearch's index rebuilds in the background (seconds at 100,000 nodes, longer than
    // fastify lets a plugin start): the node listens at once, and search and suggest wait for it
    // (settled()). A store with its own text index (PostgreSQL) needs no rebuild.
    this.index = ctx.strategies.search.open(ctx.store);
    app.addHook('onClose', async () => {
      this.views.close();
      this.reads.artifacts.close();
      await this.index.close();
    });
  }

  /** PROTOCOL 10.2: the root of the tree. */
  root = (request: Req<typeof TreeRootRoute.schema>, reply: FastifyReply) => this.send(request, reply, '/', request.query);

  /** PROTOCOL 10.2: a node by its path. */
  node = (request: Req<typeof NodeRoute.schema>, reply: FastifyReply) => this.send(request, reply, normalizePath(request.params['*']), request.query);

  /** PROTOCOL 10.2: a node of one kind by its path (?path=); another kind there is not found. */
  byPath = (kind: NodeKind) => {
    const nodeByPath = (request: Req<ByPathSchema>, reply: FastifyReply) => this.send(request, reply, normalizePath(request.query.path), request.query, kind);
    return nodeByPath;
  };

  /**
   * Sends a node with an ETag over what it holds (not over fetchedAt), 304 when unchanged.
   * The serialized answer is kept (src/http/node-cache.ts) until a write to what it reads, a
   * second at most.
   */
  private async send(request: FastifyRequest, reply: FastifyReply, path: string | null, q: NodeViewQuery & { version?: number }, want?: NodeKind) {
    const { ctx } = this.reads;
    if (!path) throw new ServiceError('not_found', 'Not a tree path: / followed by lowercase slug segments.', { field: 'path' });
    const origin = originOf(request);
    if (q.evidence === 'full') return reply.header('cache-control', 'no-store').send(await this.fullRead(path, q, origin, want));
    const variant = `${origin}\u0000${q.version ?? ''}\u0000${q.level ?? ''}\u0000${q.limit ?? ''}\u0000${q.cursor ?? ''}`;
    const answer = await this.views.get(path, variant, ctx.clock.now(), async () => {
      const node = await nodeAt(ctx.store, path, q.version);
      const view = await nodeView(this.reads, node, q, origin);
      const { manifest, evidence, ...stable } = view as { manifest?: Record<string, unknown>; evidence?: Evidence };
      const stableManifest = manifest ? { ...manifest, fetchedAt: 0, signature: '', nodeSignature: null } : null;
      const etag = `"${sha256Hex(canonicalize({ stable, manifest: stableManifest, evidence: stableEvidence(evidence) })).slice(0, 32)}"`;
      return { kind: node.kind, body: JSON.stringify(view), etag };
    });
    if (want && answer.kind !== want) throw new ServiceError('not_found', `${path} is a ${answer.kind}, not a ${want}.`, { field: 'path' });
    reply.header('etag', answer.etag).header('cache-control', 'no-cache');
    if (request.headers['if-none-match'] === answer.etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(answer.body);
  }

  /**
   * A node read with full evidence (PROTOCOL 10.7): made at each request, never kept with the
   * plain answers nor given an ETag, since its status and checkpoint speak for the log now.
   */
  private async fullRead(path: string, q: NodeViewQuery & { version?: number }, origin: string, want?: NodeKind) {
    const node = await nodeAt(this.reads.ctx.store, path, q.version);
    if (want && node.kind !== want) throw new ServiceError('not_found', `${path} is a ${node.kind}, not a ${want}.`, { field: 'path' });
    return nodeView(this.reads, node, { ...q, evidence: 'full' }, origin);
  }

  /** PROTOCOL 10.6: hits of the published tree and briefs, best first; a costly query draws its surcharge first (1.4), so a refusal costs no search. */
  search = async (request: Req<typeof SearchRoute.schema>, reply: FastifyReply) => {
    const { q, kind, limit = SEARCH_PAGE, cursor, evidence } = request.query;
    if (evidence === 'full' && limit > SEARCH_EVIDENCE_HITS)
      throw new ServiceError('validation_failed', `A search with evidence=full answers at most ${SEARCH_EVIDENCE_HITS} hits a page.`, {
        errors: [{ field: 'limit', reason: `at most ${SEARCH_EVIDENCE_HITS} with evidence=full` }],
      });
    await chargeSearch(request.server.akas.buckets, request, q);
    await this.index.settled();
    const page = await this.gate.run(bucketOf(request.caller).key, () => this.index.search(q, { kind, limit, cursor }));
    if (evidence !== 'full') return { query: q, ...page };
    reply.header('cache-control', 'no-store');
    return { query: q, ...(await this.withReads(page, cursor ? Number(cursor) : 0, originOf(request))) };
  };

  /**
   * A page of hits, each with its node read and full evidence (PROTOCOL 10.6, 10.7), so a reader
   * checks every hit with no other request. The reads are made in rank order, up to
   * SEARCH_EVIDENCE_BYTES of them: a page that would pass it ends at the hit before, and its
   * nextCursor resumes there (the first hit is always given).
   */
  private async withReads(page: SearchPage, offset: number, origin: string): Promise<SearchPage & { items: Array<SearchHit & { read: unknown }> }> {
    const items: Array<SearchHit & { read: unknown }> = [];
    let bytes = 0;
    // One checkpoint for the page: every hit's evidence is proven against it (those it covers).
    const { log, served } = this.reads;
    const reads = page.items.length ? { ...this.reads, served: { ...served, at: await coveringCheckpoint(log, served, -1) } } : this.reads;
    for (const hit of page.items) {
      const node = await nodeAt(this.reads.ctx.store, hit.path).catch((e: unknown) => {
        if (e instanceof ServiceError && e.code === 'not_found') return undefined; // removed since it was indexed
        throw e;
      });
      let read: Record<string, unknown> | null = null;
      if (node) {
        const { children: _c, childrenNextCursor: _n, ...view } = await nodeView(reads, node, { level: 'tldr', limit: 1, evidence: 'full' }, origin);
        read = view;
      }
      bytes += Buffer.byteLength(JSON.stringify(read));
      if (items.length && bytes > SEARCH_EVIDENCE_BYTES) return { ...page, items, nextCursor: String(offset + items.length) };
      items.push({ ...hit, read });
    }
    return { ...page, items };
  }

  /** PROTOCOL 10.6: paths and titles that complete q. */
  suggest = async (request: Req<typeof SuggestRoute.schema>) => {
    const { q, limit = SUGGESTIONS } = request.query;
    await this.index.settled();
    return { query: q, suggestions: await this.gate.run(bucketOf(request.caller).key, () => this.index.suggest(q, limit)) };
  };
}
