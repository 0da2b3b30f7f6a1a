// PROTOCOL 10: reading the knowledge tree (the unified node response, briefs with signed
// manifests, artifacts with their verification status and evals), decision-graph
// traversal, search and suggest, and the manifest checks.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { briefTexts, canonicalize, ServiceError, sha256Hex } from '../../core/index.js';
import { blobInfo, openVerifiedBlob } from '../../domain/cas/cas.js';
import { briefOf, childrenOf, evalsOf, nodeAt, normalizePath, type KnowledgeNode, type NodeKind } from '../../domain/knowledge/tree.js';
import {
  artifactManifest,
  briefManifest,
  BRIEF_LEVELS,
  checkArtifactManifest,
  checkBriefManifest,
  checkEvalManifest,
  isEvalManifest,
  type BriefLevel,
} from '../../domain/knowledge/manifests.js';
import { casHashOfUri } from '../../domain/proposals/kinds.js';
import { openKnowledgeSearch } from '../../domain/knowledge/search.js';
import { getTraversal, traverse } from '../../domain/knowledge/traversal.js';
import { Any, Closed, Hex64, Ms, Nullable, Open } from '../schemas.js';
import { NodeViewCache } from '../node-cache.js';
import { originOf } from '../kit/urls.js';
import { evidenceOf, stableEvidence, type Evidence } from '../evidence.js';
import { bucketOf } from '../caller.js';
import { CallerGate, chargeSearch } from '../search-budget.js';

const Str = Type.String();
const NodeKindSchema = Type.String({ enum: ['branch', 'leaf-brief', 'leaf-capability', 'leaf-decision', 'leaf-artifact'] });
const BriefManifestSchema = Closed({
  briefId: Str,
  level: Str,
  version: Str,
  tokenCount: Type.Integer(),
  fetchedAt: Ms(),
  contentSha256: Hex64,
  proposalId: Type.Optional(Str),
  proposalContentSha256: Type.Optional(Hex64),
  publicationEventId: Type.Optional(Nullable(Str)),
  signature: Hex64,
  signingKeyId: Str,
  nodeSignature: Type.Optional(Closed({ algorithm: Type.Literal('Ed25519'), issuer: Str, signature: Type.String({ pattern: '^[0-9a-f]{128}$' }) })),
});
/** What binds a read to the proposal that published it (PROTOCOL 10.7). */
const EvidenceSchema = Open(
  {
    proposalId: Str,
    kind: Str,
    contentSha256: Hex64,
    contentBinding: Type.String({ enum: ['log', 'store'] }),
    content: Type.Optional(Open()),
    publication: Nullable(Open({ id: Str, entry: Open(), inclusion: Open(), checkpoint: Str })),
    log: Open({ verifierKey: Str, endorsement: Open() }),
  },
  'The proposal that published what is served, its contentSha256, and its proposal.published event in the log with an inclusion proof and a ' +
    'signed checkpoint (PROTOCOL 10.7): `akas verify node` checks it offline.',
);

/** The unified node response (PROTOCOL 10.2). */
const NodeAnswer = Closed(
  {
    path: Str,
    title: Str,
    spec: Str,
    kind: NodeKindSchema,
    refinedAt: Type.Optional(Str),
    version: Type.Integer(),
    proposalId: Type.Optional(Str),
    publishedAt: Type.Optional(Nullable(Ms())),
    children: Type.Optional(Type.Array(Str)),
    childrenNextCursor: Type.Optional(Nullable(Str)),
    briefId: Type.Optional(Str),
    brief: Type.Optional(Open()),
    tldr: Type.Optional(Str),
    core: Type.Optional(Str),
    deep: Type.Optional(Str),
    manifest: Type.Optional(Open({ signature: Hex64, signingKeyId: Str }, 'A BriefManifest, or an artifact manifest (HMAC-SHA256 by the node).')),
    payload: Type.Optional(Open()),
    branches: Type.Optional(Type.Array(Any)),
    sha256Verification: Type.Optional(
      Closed({ status: Type.String({ enum: ['self-reported', 'platform-verified', 'integrity-failed'] }), method: Str, note: Str, casUploadHint: Str }),
    ),
    independentEvals: Type.Optional(Type.Array(Open())),
    evalSummary: Type.Optional(Open({ count: Type.Integer(), distinctRunners: Type.Integer(), byMetric: Open() })),
    note: Type.Optional(Str),
    evidence: Type.Optional(EvidenceSchema),
  },
  'A node of the published tree: branch, brief, capability, decision or artifact (PROTOCOL 10.2). ETag; 304 on If-None-Match.',
);
const NotModified = { description: 'Not modified (If-None-Match matched the ETag).', type: 'null' };
const ManifestBody = Type.Object({ manifest: Type.Object({}, { additionalProperties: true, maxProperties: 20 }) }, { additionalProperties: false });
const Check = { valid: Type.Boolean(), reason: Type.Optional(Str) };
const TraversalAnswer = Closed(
  {
    traversalId: Str,
    path: Str,
    inputs: Type.Optional(Open({}, 'The inputs: in the answer to POST /api/knowledge/dg/traverse only (the node keeps their hash alone).')),
    inputsSha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 of the JCS of the inputs.' }),
    complete: Type.Boolean(),
    stopped: Type.Optional(
      Closed({ reason: Type.String({ enum: ['depth-limit', 'step-limit', 'logic-budget'] }), at: Str, depth: Type.Integer(), limit: Type.Integer() }),
    ),
    steps: Type.Array(Closed({ path: Str, question: Str, depth: Type.Integer(), branches: Type.Array(Closed({ id: Str, holds: Type.Boolean(), to: Str })) })),
    leaves: Type.Array(
      Closed({
        to: Str,
        depth: Type.Integer(),
        via: Type.Array(Closed({ path: Str, branch: Str })),
        node: Type.Optional(Closed({ path: Str, kind: Str, title: Str })),
      }),
    ),
    forks: Type.Integer(),
    deadEnds: Type.Array(Str),
    at: Ms(),
  },
  'The walk of a decision graph: every step, the leaves it reached, its forks (PROTOCOL 10.5).',
);

const Level = Type.Optional(Type.Union(BRIEF_LEVELS.map((l) => Type.Literal(l))));
const NodeQuery = Type.Object(
  {
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    level: Level,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
const ByPathQuery = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 200 }),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    level: Level,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

/** What a v2 brief manifest names of the proposal that published the brief (PROTOCOL 10.3). */
const bindingOf = (e: Evidence | undefined) =>
  e ? { proposalId: e.proposalId, proposalContentSha256: e.contentSha256, publicationEventId: e.publication?.id ?? null } : undefined;

/** How long a full re-hash of a platform-verified artifact's blob stands before the next read does it again. */
const REHASH_MS = 60_000;

export async function knowledgeRoutes(app: FastifyInstance) {
  const ctx = app.akas;
  const log = app.akas.log;
  // MiniSearch's index rebuilds in the background (seconds at 100,000 nodes, longer than
  // fastify lets a plugin start): the node listens at once, and search and suggest wait for it
  // (settled()). A store with its own text index (PostgreSQL) needs no rebuild.
  const search = openKnowledgeSearch(ctx.store);
  // A caller's searches and suggests, two at a time (search-budget.ts): one address's burst never fills the index's queue.
  const gate = new CallerGate();
  const views = new NodeViewCache(ctx.store);
  app.addHook('onClose', async () => {
    views.close();
    await search.close();
  });
  const rehashed = new Map<string, { ok: boolean; at: number }>();

  /** sha256Verification (PROTOCOL 10.4): platform-verified only while the blob is here and hashes right. */
  async function verification(node: KnowledgeNode, origin: string) {
    const p = node.payload as { uri: string; sha256: string; bytes: number };
    const named = casHashOfUri(p.uri, origin);
    const uploadHint = `POST the bytes to ${origin}/api/cas and propose the artifact with uri /api/cas/<sha256>: the node then checks them itself.`;
    if (named !== p.sha256) {
      return {
        status: 'self-reported',
        method: "none: the bytes are outside this node's content store",
        note: `The sha256 is the proposer's claim. Fetch ${p.uri} and check that sha256(bytes) equals ${p.sha256} before trusting it (akas verify cas).`,
        casUploadHint: uploadHint,
      };
    }
    const info = await blobInfo(ctx, named);
    let ok = info.exists && info.bytes === p.bytes;
    if (ok) {
      const last = rehashed.get(named);
      const now = ctx.clock.now();
      if (!last || now - last.at > REHASH_MS) {
        const blob = await openVerifiedBlob(ctx, named, { atRest: true }).then(
          async (b) => {
            await b.close();
            return true;
          },
          () => false,
        );
        rehashed.set(named, { ok: blob, at: now });
        if (rehashed.size > 10_000) rehashed.clear();
      }
      ok = rehashed.get(named)!.ok;
    }
    return ok
      ? {
          status: 'platform-verified',
          method: "sha256 of the blob in this node's content store, checked on read",
          note: `The node holds these bytes and they hash to ${p.sha256}.`,
          casUploadHint: uploadHint,
        }
      : {
          status: 'integrity-failed',
          method: "sha256 of the blob in this node's content store",
          note: `The blob ${named} is missing or no longer hashes to its name: do not trust these bytes.`,
          casUploadHint: uploadHint,
        };
  }

  /** The unified node response of PROTOCOL 10.2. */
  async function nodeView(request: FastifyRequest, node: KnowledgeNode, q: { level?: BriefLevel; limit?: number; cursor?: string }) {
    const now = ctx.clock.now();
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
      evidence = await evidenceOf(ctx, log, b.proposalId);
      const { brief, manifest } = briefManifest(ctx.keys, b.brief, level, now, bindingOf(evidence));
      // The texts of the levels served, from the cut the manifest hashes: nothing served is unsigned.
      Object.assign(view, { briefId: node.briefId, brief, ...briefTexts(brief, level), manifest });
    } else if (node.proposalId) evidence = await evidenceOf(ctx, log, node.proposalId);
    if (node.kind === 'leaf-capability') view.payload = node.payload;
    if (node.kind === 'leaf-decision') {
      view.payload = node.payload;
      // Every branch carries priors (PROTOCOL 10.2): null when the proposer declared none.
      view.branches = ((node.payload?.branches as Array<Record<string, unknown>>) ?? []).map((b) => ({
        id: b.id,
        condition: b.condition,
        to: b.to,
        priors: b.priors ?? null,
      }));
    }
    if (node.kind === 'leaf-artifact') {
      const p = node.payload as { uri: string; mediaType: string; sha256: string; artifactKind: string; provenance: Record<string, unknown>; bytes: number };
      const { evals, summary } = await evalsOf(ctx.store, node.path, p.sha256);
      view.payload = { kind: 'leaf-artifact', ...p };
      view.manifest = artifactManifest(ctx.keys, {
        artifactPath: node.path,
        uri: p.uri,
        mediaType: p.mediaType,
        sha256: p.sha256,
        artifactKind: p.artifactKind,
        provenance: p.provenance,
        bytes: p.bytes,
        fetchedAt: now,
      });
      view.sha256Verification = await verification(node, originOf(request));
      // Each eval links to its own signed manifest (PROTOCOL 6.6).
      view.independentEvals = evals.map((e) => ({ ...e, manifestUrl: `/api/knowledge/eval/proposals/${e.proposalId}` }));
      view.evalSummary = summary;
      view.note =
        "payload.provenance.metrics are the proposer's own; independentEvals are published eval results by others. Check the manifest with " +
        'POST /api/knowledge/artifact/verify.';
    }
    if (evidence) view.evidence = evidence;
    return view;
  }

  /**
   * Sends a node with an ETag over what it holds (not over fetchedAt), 304 when unchanged.
   * The serialized answer is kept (src/http/node-cache.ts) until a write to what it reads, a
   * second at most.
   */
  async function sendNode(
    request: FastifyRequest,
    reply: FastifyReply,
    path: string | null,
    q: { version?: number; level?: BriefLevel; limit?: number; cursor?: string },
    want?: NodeKind,
  ) {
    if (!path) throw new ServiceError('not_found', 'Not a tree path: / followed by lowercase slug segments.', { field: 'path' });
    const variant = `${originOf(request)}\u0000${q.version ?? ''}\u0000${q.level ?? ''}\u0000${q.limit ?? ''}\u0000${q.cursor ?? ''}`;
    const answer = await views.get(path, variant, ctx.clock.now(), async () => {
      const node = await nodeAt(ctx.store, path, q.version);
      const view = await nodeView(request, node, q);
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

  const nodeResponses = { 200: NodeAnswer, 304: NotModified };
  app.get(
    '/api/knowledge/node',
    {
      schema: { operationId: 'treeRoot', summary: 'The root of the published tree', tags: ['knowledge'], querystring: NodeQuery, response: nodeResponses },
      config: { errors: ['not_found'] },
    },
    (request, reply) => sendNode(request, reply, '/', request.query as never),
  );
  const nodeSchema = {
    operationId: 'node',
    summary: 'A node of the published tree by its path',
    tags: ['knowledge'],
    params: Type.Object({ '*': Type.String({ maxLength: 400, description: 'The node path without its leading slash, e.g. testing/flaky-tests.' }) }),
    querystring: NodeQuery,
    response: nodeResponses,
  };
  // fastify has already percent-decoded the wildcard (a malformed escape is its 400).
  app.get('/api/knowledge/node/*', { schema: nodeSchema, config: { errors: ['not_found'] } }, (request, reply) =>
    sendNode(request, reply, normalizePath((request.params as { '*': string })['*']), request.query as never),
  );
  for (const [route, kind] of [
    ['/api/knowledge/cap/by-path', 'leaf-capability'],
    ['/api/knowledge/dg/by-path', 'leaf-decision'],
    ['/api/knowledge/artifact/by-path', 'leaf-artifact'],
  ] as const) {
    const name = route.split('/')[3];
    const byPathSchema = {
      operationId: `${name === 'dg' ? 'decision' : name === 'cap' ? 'capability' : name}ByPath`,
      summary: `A ${kind} node by its path`,
      tags: ['knowledge'],
      querystring: ByPathQuery,
      response: nodeResponses,
    };
    app.get(route, { schema: byPathSchema, config: { errors: ['not_found'] } }, (request, reply) => {
      const q = request.query as { path: string };
      return sendNode(request, reply, normalizePath(q.path), q as never, kind);
    });
  }

  app.get(
    '/api/knowledge/briefs/:id',
    {
      schema: {
        operationId: 'brief',
        summary: 'A published brief at a level, with its signed manifest',
        tags: ['knowledge'],
        params: Type.Object({ id: Type.String({ maxLength: 120 }) }),
        querystring: Type.Object(
          { level: Level, version: Type.Optional(Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' })) },
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
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const q = request.query as { level?: BriefLevel; version?: string };
      const b = await briefOf(ctx.store, id, q.version);
      const evidence = await evidenceOf(ctx, log, b.proposalId);
      return { ...briefManifest(ctx.keys, b.brief, q.level ?? 'core', ctx.clock.now(), bindingOf(evidence)), path: b.path, ...(evidence ? { evidence } : {}) };
    },
  );

  const verifySchema = {
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
  };
  app.post('/api/knowledge/verify', { schema: verifySchema }, async (request) => {
    const { manifest } = request.body as { manifest: Record<string, unknown> };
    // The node's other HMAC manifest, of an eval result (PROTOCOL 10.4), is checked here too.
    if (isEvalManifest(manifest))
      return { ...checkEvalManifest(ctx.keys, manifest), proposalId: manifest.proposalId, signingKeyId: manifest.signingKeyId ?? null };
    const brief =
      typeof manifest.briefId === 'string' && typeof manifest.version === 'string'
        ? await briefOf(ctx.store, manifest.briefId, manifest.version).catch(() => undefined)
        : undefined;
    const r = checkBriefManifest(ctx.keys, manifest, brief?.brief);
    return { ...r, briefId: manifest.briefId ?? null, signingKeyId: manifest.signingKeyId ?? null };
  });

  const verifyArtifactSchema = {
    operationId: 'verifyArtifactManifest',
    summary: 'Check an artifact manifest signature',
    tags: ['knowledge'],
    body: ManifestBody,
    response: { 200: Closed({ ...Check, artifactPath: Any, signingKeyId: Any, note: Str }, 'Whether the node signed this manifest (PROTOCOL 10.4).') },
  };
  app.post('/api/knowledge/artifact/verify', { schema: verifyArtifactSchema }, async (request) => {
    const { manifest } = request.body as { manifest: Record<string, unknown> };
    const r = checkArtifactManifest(ctx.keys, manifest);
    return {
      ...r,
      artifactPath: manifest.artifactPath ?? null,
      signingKeyId: manifest.signingKeyId ?? null,
      note: 'The signature says this node served this record; whether the bytes at uri hash to sha256 is checked by fetching them (akas verify cas).',
    };
  });

  app.post(
    '/api/knowledge/dg/traverse',
    {
      schema: {
        operationId: 'traverse',
        summary: 'Walk a decision graph from a node with your inputs',
        tags: ['knowledge'],
        body: Type.Object(
          { path: Type.String({ minLength: 1, maxLength: 200 }), inputs: Type.Object({}, { additionalProperties: true, maxProperties: 64 }) },
          { additionalProperties: false },
        ),
        response: { 200: TraversalAnswer },
      },
      config: { errors: ['not_found', 'graph_cycle'] },
    },
    async (request) => {
      const { path, inputs } = request.body as { path: string; inputs: Record<string, unknown> };
      return traverse(ctx, path, inputs);
    },
  );
  const traversalSchema = {
    operationId: 'traversal',
    summary: 'A traversal by its id',
    tags: ['knowledge'],
    params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
    response: { 200: TraversalAnswer },
  };
  app.get('/api/knowledge/dg/traversals/:id', { schema: traversalSchema, config: { errors: ['not_found', 'expired'] } }, async (request) =>
    getTraversal(ctx, (request.params as { id: string }).id),
  );

  app.get(
    '/api/knowledge/search',
    {
      schema: {
        operationId: 'search',
        summary: 'Search the published tree and briefs',
        tags: ['knowledge'],
        response: {
          200: Closed(
            {
              query: Str,
              items: Type.Array(
                Closed({ path: Str, kind: Str, title: Str, score: Type.Number(), match: Type.Record(Str, Type.Array(Str)), briefId: Type.Optional(Str) }),
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
            kind: Type.Optional(Type.Union(['branch', 'leaf-brief', 'leaf-capability', 'leaf-decision', 'leaf-artifact'].map((k) => Type.Literal(k)))),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
            cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
          },
          { additionalProperties: false },
        ),
      },
      config: { errors: ['search_busy'] },
    },
    async (request) => {
      const q = request.query as { q: string; kind?: string; limit: number; cursor?: string };
      // A costly query draws its surcharge first (PROTOCOL 1.4): a refusal costs no search.
      await chargeSearch(app.akas.buckets, request, q.q);
      await search.settled();
      const page = await gate.run(bucketOf(request.caller).key, () => search.search(q.q, { kind: q.kind, limit: q.limit, cursor: q.cursor }));
      return { query: q.q, ...page };
    },
  );
  app.get(
    '/api/knowledge/suggest',
    {
      schema: {
        operationId: 'suggest',
        summary: 'Completions of paths and titles',
        tags: ['knowledge'],
        querystring: Type.Object(
          { q: Type.String({ minLength: 1, maxLength: 200 }), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })) },
          { additionalProperties: false },
        ),
        response: {
          200: Closed(
            { query: Str, suggestions: Type.Array(Closed({ path: Str, title: Str, kind: Str })) },
            'Paths and titles that complete q (PROTOCOL 10.6).',
          ),
        },
      },
      config: { errors: ['search_busy'] },
    },
    async (request) => {
      const q = request.query as { q: string; limit: number };
      await search.settled();
      return { query: q.q, suggestions: await gate.run(bucketOf(request.caller).key, () => search.suggest(q.q, q.limit)) };
    },
  );
}
