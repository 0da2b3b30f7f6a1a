// The explorer's pages, one step per page or group of pages (registered in this order by
// explorerRoutes, index.ts): each reads what its page shows (data.ts: the API routes
// in-process, or the domain's spaces where no route lists it), reads that do not depend on each
// other at once, and renders the page (pages/).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { isServiceError, PROPOSAL_KINDS, ServiceError } from '../core/index.js';
import { childrenOf } from '../domain/knowledge/tree.js';
import { attestationKinds, seqOfId } from '../domain/log/index.js';
import { type App, innerCall, Media, originOf } from '../http-kit/index.js';
import { Credentials } from '../domain/credentials/credentials.js';
import { api, checkpoints, type Counts, decidedProposals, entriesNewestFirst, entryStatuses, nodeStatuses, pendingProposals } from './data.js';
import { FORM_BYTES, walkInputs } from './form.js';
import type { Assets } from './layout.js';
import { agentPage, agentsPage, type LeaderboardData, type ProfileData } from './pages/agents.js';
import { homePage, type HomeData } from './pages/home.js';
import { judgmentOf } from './pages/entries.js';
import { consistencyPage, entryPage, logPage, type EntryData } from './pages/log.js';
import { proposalPage, type ProposalDetail } from './pages/proposal.js';
import { proposalsPage } from './pages/proposals.js';
import { NODE_KINDS, searchPage, type SearchData } from './pages/search.js';
import { traversalPage, type TraversalData } from './pages/traversal.js';
import { treePage, type NodeView } from './pages/tree.js';
import { verifyPage } from './pages/verify.js';

/** What every page step uses: the app (its API routes are read in-process), the built files' URLs, the home page's counts. */
export interface Pages {
  app: App;
  urls: Assets;
  counts: Counts;
}

const Page = (description: string) => ({ 200: Media('text/html', { type: 'string' }, description) });
export const tags = ['explorer'];
const PER_PAGE = 25;
const Cursor = Type.Optional(Type.String({ pattern: '^[0-9]{1,15}(:[a-z]+_[0-9a-f]{16})?$', maxLength: 64 }));
const KindOf = (kinds: readonly string[]) => Type.Optional(Type.Union([Type.Literal(''), ...kinds.map((k) => Type.Literal(k))]));
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const send = (reply: FastifyReply, body: string) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(body);

/** GET /: the node's identity, counts, latest checkpoint, recent decisions and attestations, read at once. */
export function homeRoute({ app, urls, counts }: Pages) {
  const ctx = app.akas;
  app.get(
    '/',
    {
      schema: {
        operationId: 'explorerHome',
        summary: "The explorer's home page: the node's identity, counts, latest checkpoint, recent decisions and attestations",
        tags,
        response: Page('The home page.'),
      },
      config: { section: 'home' },
    },
    async (request, reply) => {
      const [descriptor, board, head, cp, decided, recent, c] = await Promise.all([
        api<HomeData['descriptor']>(app, request, '/.well-known/akas.json'),
        api<{ total: number }>(app, request, '/api/agents?limit=1'),
        ctx.log.head(),
        ctx.log.latestCheckpoint(),
        decidedProposals(ctx.store, 8),
        entriesNewestFirst(ctx.store, 15),
        counts.get(),
      ]);
      const data: HomeData = {
        origin: originOf(request),
        descriptor,
        counts: { ...c, agents: board.total, entries: head.size },
        checkpoint: cp ?? null,
        decisions: decided.items,
        entries: recent.items,
        statuses: await entryStatuses(ctx.store, recent.items),
      };
      return send(reply, homePage(data, urls));
    },
  );
}

const TreeQuery = Type.Object({
  level: Type.Optional(Type.Union([Type.Literal('tldr'), Type.Literal('core'), Type.Literal('deep')])),
  version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
});

const nodeUrl = (path: string) => `/api/knowledge/node${path === '/' ? '' : path.split('/').map(encodeURIComponent).join('/')}`;

/**
 * The tree's shape below a node: each child (the first 12) with how many children it has, up
 * to 25: a bounded number of reads whatever the size of the tree.
 */
function shapeOf(app: App, node: NodeView) {
  return Promise.all(
    (node.children ?? []).slice(0, 12).map(async (c) => {
      const page = await childrenOf(app.akas.store, c, 25);
      return { path: c, count: page.children.length, more: page.nextCursor !== null };
    }),
  );
}

/** The kind of the node each branch leads to (null where it cannot be read): at most 32 reads at once, as a graph has at most 32 branches. */
async function branchTargets(app: App, request: FastifyRequest, node: NodeView): Promise<Record<string, string | null>> {
  const branches = node.branches ?? [];
  const kinds = await Promise.all(
    branches.map((b) =>
      api<{ kind: string }>(app, request, `${nodeUrl(b.to)}?limit=1`).then(
        (n) => n.kind,
        () => null,
      ),
    ),
  );
  const targets: Record<string, string | null> = {};
  for (const [i, b] of branches.entries()) targets[b.to] = kinds[i];
  return targets;
}

/** GET /explore/tree and /explore/tree/*: a node read as the API answers it, then its shape and its branches' targets at once. */
export function treeRoutes({ app, urls }: Pages) {
  async function tree(request: FastifyRequest, q: Static<typeof TreeQuery>, reply: FastifyReply, path: string) {
    const p = new URLSearchParams();
    if (q.level) p.set('level', q.level);
    if (q.version) p.set('version', String(q.version));
    if (q.cursor) p.set('cursor', q.cursor);
    p.set('limit', '100');
    const read = `${nodeUrl(path)}?${p}`;
    const node = await api<NodeView>(app, request, read);
    const [shape, targets] = await Promise.all([shapeOf(app, node), branchTargets(app, request, node)]);
    return send(reply, treePage({ node, level: q.level ?? 'core', versionAsked: q.version, shape, targets, read }, urls));
  }
  app.get(
    '/explore/tree',
    {
      schema: {
        operationId: 'explorerTreeRoot',
        summary: 'The root of the knowledge tree, as a page',
        tags,
        querystring: TreeQuery,
        response: Page('The root node.'),
      },
      config: { section: 'tree', errors: ['not_found'] },
    },
    (request, reply) => tree(request, request.query, reply, '/'),
  );
  app.get(
    '/explore/tree/*',
    {
      schema: {
        operationId: 'explorerNode',
        summary: 'A node of the knowledge tree, as a page: its content, children and evidence',
        tags,
        params: Type.Object({ '*': Type.String({ maxLength: 400, description: 'The node path without its leading slash.' }) }),
        querystring: TreeQuery,
        response: Page('The node.'),
      },
      config: { section: 'tree', errors: ['not_found'] },
    },
    (request, reply) => {
      const rest = request.params['*'];
      const path = '/' + rest.split('/').filter(Boolean).join('/');
      if (!/^(\/[a-z0-9][a-z0-9-]*)+$|^\/$/.test(path) || path.length > 200)
        throw new ServiceError('not_found', `Not a tree path: ${path}.`, { field: 'path' });
      return tree(request, request.query, reply, path);
    },
  );
}

/** GET /explore/search: the API's search, matches highlighted, by kind. */
export function searchRoute({ app, urls }: Pages) {
  app.get(
    '/explore/search',
    {
      schema: {
        operationId: 'explorerSearch',
        summary: 'Search the knowledge tree, as a page (matches highlighted, kind filters)',
        tags,
        querystring: Type.Object({
          q: Type.Optional(Type.String({ maxLength: 200 })),
          kind: KindOf(NODE_KINDS),
          cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
        }),
        response: Page('The search page with its hits.'),
      },
      config: { section: 'search', errors: ['search_busy'] },
    },
    async (request, reply) => {
      const q = request.query;
      const words = (q.q ?? '').trim();
      const kind = q.kind || undefined;
      let result: SearchData['result'] = null;
      if (words) {
        const p = new URLSearchParams({ q: words, limit: '20' });
        if (kind) p.set('kind', kind);
        if (q.cursor) p.set('cursor', q.cursor);
        result = await api(app, request, `/api/knowledge/search?${p}`);
      }
      return send(reply, searchPage({ q: words, kind, result, cursor: q.cursor }, urls));
    },
  );
}

/** GET /explore/proposals (pending or decided, by kind) and /explore/proposals/:id (the API's detail). */
export function proposalRoutes({ app, urls }: Pages) {
  const ctx = app.akas;
  app.get(
    '/explore/proposals',
    {
      schema: {
        operationId: 'explorerProposals',
        summary: 'Pending and decided proposals, as a page',
        tags,
        querystring: Type.Object({
          status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('decided')])),
          kind: KindOf(PROPOSAL_KINDS),
          before: Cursor,
        }),
        response: Page('A page of proposals.'),
      },
      config: { section: 'proposals' },
    },
    async (request, reply) => {
      const q = request.query;
      const status = q.status ?? 'pending';
      const kind = q.kind || undefined;
      const list =
        status === 'pending'
          ? await pendingProposals(ctx.store, PER_PAGE, q.before?.includes(':') ? q.before : undefined, kind)
          : await decidedProposals(ctx.store, PER_PAGE, q.before && /^[0-9]+$/.test(q.before) ? Number(q.before) : undefined, kind);
      return send(reply, proposalsPage({ status, kind, list, paged: Boolean(q.before) }, urls));
    },
  );
  app.get(
    '/explore/proposals/:id',
    {
      schema: {
        operationId: 'explorerProposal',
        summary: 'A proposal with its judgments and decision, as a page',
        tags,
        params: IdParams,
        response: Page('The proposal.'),
      },
      config: { section: 'proposals', errors: ['not_found'] },
    },
    async (request, reply) => {
      const { id } = request.params;
      const p = await api<ProposalDetail>(app, request, `/api/knowledge/proposals/${encodeURIComponent(id)}`);
      const kind = p.kind ?? 'graph';
      const statuses = await nodeStatuses(
        ctx.store,
        (p.judgments ?? []).map((j) => j.judgmentId),
      );
      return send(reply, proposalPage(p, kind, urls, statuses));
    },
  );
}

/** GET /explore/agents (the leaderboard) and /explore/agents/:tag (a profile, then that agent's entries). */
export function agentRoutes({ app, urls }: Pages) {
  const ctx = app.akas;
  app.get(
    '/explore/agents',
    {
      schema: {
        operationId: 'explorerAgents',
        summary: 'The leaderboard, as a page',
        tags,
        querystring: Type.Object({ cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })) }),
        response: Page('The leaderboard.'),
      },
      config: { section: 'agents' },
    },
    async (request, reply) => {
      const { cursor } = request.query;
      const board = await api<LeaderboardData>(app, request, `/api/agents?limit=50${cursor ? `&cursor=${cursor}` : ''}`);
      return send(reply, agentsPage({ ...board, cursor }, urls));
    },
  );
  app.get(
    '/explore/agents/:tag',
    {
      schema: {
        operationId: 'explorerAgent',
        summary: "An agent's public profile, as a page",
        tags,
        params: Type.Object({ tag: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({ before: Cursor }),
        response: Page('The profile.'),
      },
      config: { section: 'agents', errors: ['not_found'] },
    },
    async (request, reply) => {
      const { tag } = request.params;
      const { before } = request.query;
      // The entries are the profile's agent's (its tag as the API names it): read after it.
      const profile = await api<ProfileData['profile']>(app, request, `/api/agents/${encodeURIComponent(tag)}`);
      const log = await entriesNewestFirst(ctx.store, PER_PAGE, before ? Number(before) : undefined, { agent: profile.tag });
      const statuses = await entryStatuses(ctx.store, log.items);
      return send(reply, agentPage({ profile, entries: log.items, next: log.next, statuses }, urls));
    },
  );
}

/** GET /explore/log (checkpoints and entries by kind), /explore/log/consistency and /explore/log/:id. */
export function logRoutes({ app, urls }: Pages) {
  const ctx = app.akas;
  const logKinds = [...attestationKinds().keys()].sort();
  app.get(
    '/explore/log',
    {
      schema: {
        operationId: 'explorerLog',
        summary: 'The log: checkpoints over time and entries by kind, as a page',
        tags,
        querystring: Type.Object({ kind: KindOf(logKinds), before: Cursor }),
        response: Page('The log.'),
      },
      config: { section: 'log' },
    },
    async (request, reply) => {
      const q = request.query;
      const kind = q.kind || undefined;
      const [head, cps, list] = await Promise.all([
        ctx.log.head(),
        checkpoints(ctx.store, 60),
        entriesNewestFirst(ctx.store, PER_PAGE, q.before ? Number(q.before) : undefined, { kind }),
      ]);
      const statuses = await entryStatuses(ctx.store, list.items);
      return send(
        reply,
        logPage({ size: head.size, checkpoints: cps, entries: list.items, next: list.next, kind, kinds: logKinds, paged: Boolean(q.before), statuses }, urls),
      );
    },
  );
  app.get(
    '/explore/log/consistency',
    {
      schema: {
        operationId: 'explorerConsistency',
        summary: 'A consistency proof between two checkpoints, as a page',
        tags,
        querystring: Type.Object({ old: Type.Integer({ minimum: 1 }), new: Type.Integer({ minimum: 1 }) }),
        response: Page('The two checkpoints and the proof between them.'),
      },
      config: { section: 'log' },
    },
    async (request, reply) => {
      const q = request.query;
      // The proof first: its route refuses sizes the log cannot prove (400), before any
      // checkpoint is looked up by them.
      const proof = await api<{ proof: string[] }>(app, request, `/api/log/proof/consistency?old=${q.old}&new=${q.new}`);
      const [o, n] = await Promise.all([ctx.log.checkpointAt(q.old), ctx.log.checkpointAt(q.new)]);
      return send(reply, consistencyPage({ old: q.old, new: q.new, proof: proof.proof, oldNote: o?.note ?? null, newNote: n?.note ?? null }, urls));
    },
  );
  app.get(
    '/explore/log/:id',
    {
      schema: {
        operationId: 'explorerEntry',
        summary: 'A log entry with its inclusion proof, as a page',
        tags,
        params: IdParams,
        response: Page('The entry.'),
      },
      config: { section: 'log', errors: ['not_found'] },
    },
    async (request, reply) => {
      const { id } = request.params;
      const doc = await api<EntryData['doc']>(app, request, `/api/attestations/${encodeURIComponent(id)}`);
      const judgment = judgmentOf(doc.entry);
      const statuses = judgment ? await nodeStatuses(ctx.store, [judgment.judgmentId]) : undefined;
      return send(reply, entryPage({ doc, statuses }, urls));
    },
  );
}

/** GET /explore/verify: the page that checks what a reader drops or pastes, with the node's keys as defaults. */
export function verifyRoute({ app, urls }: Pages) {
  app.get(
    '/explore/verify',
    {
      schema: {
        operationId: 'explorerVerify',
        summary: 'Check a credential, a bundle, a log proof or a file in the browser',
        tags,
        response: Page('The verify page.'),
      },
      config: { section: 'verify' },
    },
    async (request, reply) => {
      const d = await api<{ issuer: { did: string }; log: { verifierKey: string } }>(app, request, '/.well-known/akas.json');
      return send(reply, verifyPage({ issuer: d.issuer.did, logKey: d.log.verifierKey }, urls));
    },
  );
}

/** POST /explore/traverse (the node page's walk form, answered 303) and GET /explore/traversals/:id. */
export function traverseRoutes({ app, urls }: Pages) {
  app.post(
    '/explore/traverse',
    {
      schema: {
        operationId: 'explorerTraverse',
        summary: "Walk a decision graph from the node page's form (a form post; answers 303 to the traversal's page)",
        tags,
        body: Type.Object({ path: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: true, maxProperties: 65 }),
        response: { 303: { description: 'See the traversal: Location /explore/traversals/{id}.', type: 'null' } },
      },
      bodyLimit: FORM_BYTES,
      config: { section: 'tree', errors: ['not_found', 'graph_cycle'] },
    },
    async (request, reply) => {
      const body: Record<string, unknown> = request.body;
      const inputs = walkInputs(body);
      const res = await innerCall(app, {
        method: 'POST',
        url: '/api/knowledge/dg/traverse',
        headers: { host: request.headers.host ?? '127.0.0.1' },
        ip: request.ip,
        payload: JSON.stringify({ path: String(body.path), inputs }),
      });
      const answer = JSON.parse(res.body) as { traversalId?: string; code?: string; error?: string; errors?: unknown };
      if (res.statusCode !== 200 || !answer.traversalId)
        throw new ServiceError(
          (answer.code as never) ?? 'validation_failed',
          answer.error ?? 'The graph could not be walked.',
          answer.errors ? { errors: answer.errors } : {},
        );
      // A redirect has no body: the reply as fastify's own, not the page's typed one (whose schema names 200 only).
      return (reply as FastifyReply).code(303).header('location', `/explore/traversals/${answer.traversalId}`).send();
    },
  );
  app.get(
    '/explore/traversals/:id',
    {
      schema: { operationId: 'explorerTraversal', summary: 'A walk of a decision graph, as a page', tags, params: IdParams, response: Page('The traversal.') },
      config: { section: 'tree', errors: ['not_found'] },
    },
    async (request, reply) => {
      const { id } = request.params;
      const t = await api<TraversalData>(app, request, `/api/knowledge/dg/traversals/${encodeURIComponent(id)}`);
      return send(reply, traversalPage(t, urls));
    },
  );
}

/** An entry as GET /api/attestations/{id} answers it: the entry, its inclusion proof, the checkpoint. */
type ProvenEntry = { entry: object; inclusion: object; checkpoint: string };

/** GET /explore/proofs: what a page checks in the browser, up to 50 entries with their proofs (the query's bound), read at once. */
export function proofsRoute({ app }: Pages) {
  app.get(
    '/explore/proofs',
    {
      schema: {
        operationId: 'explorerProofs',
        summary: 'Log entries with their inclusion proofs, several at once (what an explorer page checks in the browser)',
        tags,
        querystring: Type.Object({
          ids: Type.String({ pattern: '^att_[0-9a-f]{16}(,att_[0-9a-f]{16}){0,49}$', description: 'Up to 50 attestation ids, comma-separated.' }),
        }),
        response: {
          200: Type.Object(
            {
              items: Type.Array(
                Type.Object(
                  {
                    entry: Type.Object({}, { additionalProperties: true }),
                    inclusion: Type.Object({}, { additionalProperties: true }),
                    checkpoint: Type.String(),
                  },
                  { additionalProperties: true },
                ),
              ),
              missing: Type.Array(Type.String()),
            },
            { additionalProperties: false, description: 'Each entry as GET /api/attestations/{id} answers it; ids the log does not hold in missing.' },
          ),
        },
      },
      config: { section: 'log' },
    },
    async (request, reply) => {
      const ids = [...new Set(request.query.ids.split(','))].filter((id) => seqOfId(id) !== undefined);
      const docs = await Promise.all(
        ids.map((id) =>
          api<ProvenEntry>(app, request, `/api/attestations/${id}`).catch((e) => {
            if (isServiceError(e) && e.code === 'not_found') return null;
            throw e;
          }),
        ),
      );
      const items = docs.filter((doc): doc is ProvenEntry => doc !== null);
      const missing = ids.filter((_, i) => !docs[i]);
      reply.header('cache-control', 'no-cache');
      return { items, missing };
    },
  );
}

/**
 * GET /explore/credentials: the judgment credentials a page shows (up to 50, the query's bound),
 * each with the node's records of its status, read at once: what the page script checks each
 * credential's status with (its entries read in the signed lists; the records name the reason
 * and time of a change: issue 47).
 */
export function credentialsRoute({ app }: Pages) {
  const ctx = app.akas;
  app.get(
    '/explore/credentials',
    {
      schema: {
        operationId: 'explorerCredentials',
        summary: "Judgment credentials with the node's records of their status, several at once (what an explorer page checks in the browser)",
        tags,
        querystring: Type.Object({
          ids: Type.String({ pattern: '^jdg_[0-9a-f]{16}(,jdg_[0-9a-f]{16}){0,49}$', description: 'Up to 50 judgment ids, comma-separated.' }),
        }),
        response: {
          200: Type.Object(
            {
              items: Type.Array(
                Type.Object(
                  {
                    judgmentId: Type.String(),
                    credential: Type.Object({}, { additionalProperties: true }),
                    status: Type.Object({}, { additionalProperties: true }),
                  },
                  { additionalProperties: false },
                ),
              ),
              missing: Type.Array(Type.String()),
            },
            {
              additionalProperties: false,
              description:
                'Each credential as GET /api/credentials/judgment/{kind}/{proposalId}/{judgmentId} answers it, with what GET ' +
                '/api/credentials/status/{judgmentId} answers of it; ids the node holds no credential of in missing.',
            },
          ),
        },
      },
      config: { section: 'log' },
    },
    async (request, reply) => {
      const ids = [...new Set(request.query.ids.split(','))];
      const [credentials, statuses] = await Promise.all([Promise.all(ids.map((id) => ctx.store.get(Credentials, id))), nodeStatuses(ctx.store, ids)]);
      const items = ids.flatMap((id, i) => (credentials[i] ? [{ judgmentId: id, credential: credentials[i], status: statuses[id] ?? {} }] : []));
      reply.header('cache-control', 'no-cache');
      return { items, missing: ids.filter((_, i) => !credentials[i]) };
    },
  );
}
