// The explorer (issue 25): a node seen in a browser, served by `akas serve` at / and /explore/...
// Pages are rendered here as plain HTML (one file per page under pages/, escaping by
// construction in html.ts) from what the API routes answer (data.ts); a small script
// (client/, bundled at build time) adds search as you type, live updates and verification in
// the browser with the verifier's own browser build. Registered by src/http/app.ts, which hands
// it its Content-Security-Policy: scripts and styles from the node only, no inline script, no
// eval, connections to the node only.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HelmetOptions } from 'helmet';
import { Type } from 'typebox';
import { decodeUtf8Strict, PROPOSAL_KINDS, ServiceError, isServiceError, type LogEntry } from '../core/index.js';
import { attestationKinds } from '../domain/log/attestations.js';
import { childrenOf } from '../domain/knowledge/tree.js';
import { seqOfId } from '../domain/log/log.js';
import { bodyBoundsOf, errorHandler, helmetHeaders, innerCall, Media, originOf, tooManyMembers, wantsHtml } from '../http/kit/index.js';
import { ASSET_PREFIX, encodingFor, loadAssets } from './assets.js';
import { api, checkpoints, Counts, decidedProposals, entriesNewestFirst, pendingProposals } from './data.js';
import type { Section } from './layout.js';
import { agentPage, agentsPage, type LeaderboardData, type ProfileData } from './pages/agents.js';
import { errorPage } from './pages/error.js';
import { homePage, type HomeData } from './pages/home.js';
import { consistencyPage, entryPage, logPage, type EntryData } from './pages/log.js';
import { proposalPage, type ProposalDetail } from './pages/proposal.js';
import { proposalsPage } from './pages/proposals.js';
import { NODE_KINDS, searchPage, type SearchData } from './pages/search.js';
import { traversalPage, type TraversalData } from './pages/traversal.js';
import { treePage, type NodeView } from './pages/tree.js';
import { verifyPage } from './pages/verify.js';

export interface ExplorerOptions {
  /** The explorer pages' own policy (app.ts), computed once with helmet like the API's. */
  contentSecurityPolicy: HelmetOptions['contentSecurityPolicy'];
}

const Page = (description: string) => ({ 200: Media('text/html', { type: 'string' }, description) });
const tags = ['explorer'];
const PER_PAGE = 25;
/** The walk form's byte limit: a path and up to 64 inputs. */
const FORM_BYTES = 64 * 1024;
const Cursor = Type.Optional(Type.String({ pattern: '^[0-9]{1,15}(:[a-z]+_[0-9a-f]{16})?$', maxLength: 64 }));
const KindOf = (kinds: readonly string[]) => Type.Optional(Type.Union([Type.Literal(''), ...kinds.map((k) => Type.Literal(k))]));

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The explorer section a page belongs to (its error page shows that tab). */
    section?: Section;
  }
}

export async function explorerRoutes(app: FastifyInstance, options: ExplorerOptions) {
  const ctx = app.akas;
  const assets = loadAssets();
  if (assets.missing.length) app.log.warn({ missing: assets.missing }, 'explorer: built files missing (npm run build makes them); pages are served without them');
  if (assets.altered.length) app.log.warn({ altered: assets.altered }, "explorer: files changed since the build recorded their integrity (dist/explorer/integrity.json): browsers will refuse them; reinstall the package");
  const counts = new Counts(ctx.store, () => ctx.clock.now());
  app.addHook('onClose', async () => counts.close());

  // This scope's own policy replaces the API's on every answer of its routes (set after the
  // node-wide headers, on the raw response as they are).
  const csp = helmetHeaders({ contentSecurityPolicy: options.contentSecurityPolicy }).find(([name]) => name.toLowerCase() === 'content-security-policy');
  if (!csp) throw new Error('explorer: helmet made no Content-Security-Policy');
  app.addHook('onRequest', (_request, reply, done) => {
    reply.raw.setHeader(csp[0], csp[1]);
    done();
  });

  // The traverse form posts application/x-www-form-urlencoded (this scope only: the API reads JSON).
  // Read as strictly as a JSON body (PROTOCOL 1.1): URLSearchParams would put U+FFFD in place of
  // bytes (raw or percent-escaped) that are not UTF-8, a lone surrogate's among them.
  // Its fields are counted against the route's bound before any is decoded, as a JSON body's
  // members are (src/http/kit/bodies.ts).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: FORM_BYTES }, (req, body, done) => {
    const bounds = bodyBoundsOf(req);
    if (formFields(body as Buffer) > bounds.keys) return done(tooManyMembers(bounds, true), undefined);
    try {
      done(null, parseFormStrict(body as Buffer));
    } catch (e) {
      done(e as Error, undefined);
    }
  });

  // A browser gets a page; an API caller the envelope of PROTOCOL 1.3, as everywhere else.
  app.setErrorHandler((error, request, reply) => {
    if (!wantsHtml(request)) return errorHandler(error, request, reply);
    const se = isServiceError(error) ? error : null;
    const status = se?.status ?? (typeof (error as { statusCode?: number }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500);
    if (status >= 500) request.log.error({ err: error }, 'explorer page failed');
    if (status === 429 && se?.extra.retryAfter) reply.header('retry-after', String(Math.max(1, Math.ceil(Number(se.extra.retryAfter)))));
    const message = status >= 500 ? `The node failed to build this page (request ${request.id}).` : (error as Error).message;
    const errors = (se?.extra.errors as Array<{ field: string; reason: string }> | undefined) ?? (error as { validation?: Array<{ instancePath: string; message?: string }> }).validation?.map((v) => ({ field: v.instancePath.replace(/^\//, '') || 'query', reason: v.message ?? 'invalid' })) ?? [];
    return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(errorPage(status, message, errors, assets.urls, request.routeOptions.config?.section));
  });

  const send = (reply: FastifyReply, body: string) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(body);

  app.get(
    '/',
    { schema: { operationId: 'explorerHome', summary: "The explorer's home page: the node's identity, counts, latest checkpoint, recent decisions and attestations", tags, response: Page('The home page.') }, config: { section: 'home' } },
    async (request, reply) => {
      const [descriptor, board, head, cp, decided, recent] = await Promise.all([
        api<HomeData['descriptor']>(app, request, '/.well-known/akas.json'),
        api<{ total: number }>(app, request, '/api/agents?limit=1'),
        ctx.log.head(),
        ctx.log.latestCheckpoint(),
        decidedProposals(ctx.store, 8),
        entriesNewestFirst(ctx.store, 15),
      ]);
      const c = await counts.get();
      return send(
        reply,
        homePage(
          { origin: originOf(request), descriptor, counts: { ...c, agents: board.total, entries: head.size }, checkpoint: cp ?? null, decisions: decided.items, entries: recent.items },
          assets.urls,
        ),
      );
    },
  );

  const TreeQuery = Type.Object({
    level: Type.Optional(Type.Union([Type.Literal('tldr'), Type.Literal('core'), Type.Literal('deep')])),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  });
  async function tree(request: FastifyRequest, reply: FastifyReply, path: string) {
    const q = request.query as { level?: string; version?: number; cursor?: string };
    const p = new URLSearchParams();
    if (q.level) p.set('level', q.level);
    if (q.version) p.set('version', String(q.version));
    if (q.cursor) p.set('cursor', q.cursor);
    p.set('limit', '100');
    const read = `/api/knowledge/node${path === '/' ? '' : path.split('/').map(encodeURIComponent).join('/')}?${p}`;
    const node = await api<NodeView>(app, request, read);
    // The shape below: each child (the first 12) with how many children it has, up to 25: a
    // bounded number of reads whatever the size of the tree.
    const shape = await Promise.all(
      (node.children ?? []).slice(0, 12).map(async (c) => {
        const page = await childrenOf(ctx.store, c, 25);
        return { path: c, count: page.children.length, more: page.nextCursor !== null };
      }),
    );
    const targets: Record<string, string | null> = {};
    for (const b of node.branches ?? []) {
      const kind = await api<{ kind: string }>(app, request, `/api/knowledge/node${b.to.split('/').map(encodeURIComponent).join('/')}?limit=1`).then(
        (n) => n.kind,
        () => null,
      );
      targets[b.to] = kind;
    }
    return send(reply, treePage({ node, level: q.level ?? 'core', versionAsked: q.version, shape, targets, read }, assets.urls));
  }
  app.get('/explore/tree', { schema: { operationId: 'explorerTreeRoot', summary: 'The root of the knowledge tree, as a page', tags, querystring: TreeQuery, response: Page('The root node.') }, config: { section: 'tree', errors: ['not_found'] } }, (request, reply) =>
    tree(request, reply, '/'),
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
      const rest = (request.params as { '*': string })['*'];
      const path = '/' + rest.split('/').filter(Boolean).join('/');
      if (!/^(\/[a-z0-9][a-z0-9-]*)+$|^\/$/.test(path) || path.length > 200) throw new ServiceError('not_found', `Not a tree path: ${path}.`, { field: 'path' });
      return tree(request, reply, path);
    },
  );

  app.get(
    '/explore/search',
    {
      schema: {
        operationId: 'explorerSearch',
        summary: 'Search the knowledge tree, as a page (matches highlighted, kind filters)',
        tags,
        querystring: Type.Object({ q: Type.Optional(Type.String({ maxLength: 200 })), kind: KindOf(NODE_KINDS), cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })) }),
        response: Page('The search page with its hits.'),
      },
      config: { section: 'search' },
    },
    async (request, reply) => {
      const q = request.query as { q?: string; kind?: string; cursor?: string };
      const words = (q.q ?? '').trim();
      const kind = q.kind || undefined;
      let result: SearchData['result'] = null;
      if (words) {
        const p = new URLSearchParams({ q: words, limit: '20' });
        if (kind) p.set('kind', kind);
        if (q.cursor) p.set('cursor', q.cursor);
        result = await api(app, request, `/api/knowledge/search?${p}`);
      }
      return send(reply, searchPage({ q: words, kind, result, cursor: q.cursor }, assets.urls));
    },
  );

  app.get(
    '/explore/proposals',
    {
      schema: {
        operationId: 'explorerProposals',
        summary: 'Pending and decided proposals, as a page',
        tags,
        querystring: Type.Object({ status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('decided')])), kind: KindOf(PROPOSAL_KINDS), before: Cursor }),
        response: Page('A page of proposals.'),
      },
      config: { section: 'proposals' },
    },
    async (request, reply) => {
      const q = request.query as { status?: 'pending' | 'decided'; kind?: string; before?: string };
      const status = q.status ?? 'pending';
      const kind = q.kind || undefined;
      const list =
        status === 'pending'
          ? await pendingProposals(ctx.store, PER_PAGE, q.before && q.before.includes(':') ? q.before : undefined, kind)
          : await decidedProposals(ctx.store, PER_PAGE, q.before && /^[0-9]+$/.test(q.before) ? Number(q.before) : undefined, kind);
      return send(reply, proposalsPage({ status, kind, list, paged: Boolean(q.before) }, assets.urls));
    },
  );

  const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
  app.get(
    '/explore/proposals/:id',
    { schema: { operationId: 'explorerProposal', summary: 'A proposal with its judgments and decision, as a page', tags, params: IdParams, response: Page('The proposal.') }, config: { section: 'proposals', errors: ['not_found'] } },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const p = await api<ProposalDetail>(app, request, `/api/knowledge/proposals/${encodeURIComponent(id)}`);
      const kind = p.kind ?? 'graph';
      return send(reply, proposalPage(p, kind, assets.urls));
    },
  );

  app.get(
    '/explore/agents',
    {
      schema: { operationId: 'explorerAgents', summary: 'The leaderboard, as a page', tags, querystring: Type.Object({ cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })) }), response: Page('The leaderboard.') },
      config: { section: 'agents' },
    },
    async (request, reply) => {
      const { cursor } = request.query as { cursor?: string };
      const board = await api<LeaderboardData>(app, request, `/api/agents?limit=50${cursor ? `&cursor=${cursor}` : ''}`);
      return send(reply, agentsPage({ ...board, cursor }, assets.urls));
    },
  );

  app.get(
    '/explore/agents/:tag',
    {
      schema: { operationId: 'explorerAgent', summary: "An agent's public profile, as a page", tags, params: Type.Object({ tag: Type.String({ maxLength: 64 }) }), querystring: Type.Object({ before: Cursor }), response: Page('The profile.') },
      config: { section: 'agents', errors: ['not_found'] },
    },
    async (request, reply) => {
      const { tag } = request.params as { tag: string };
      const { before } = request.query as { before?: string };
      const profile = await api<ProfileData['profile']>(app, request, `/api/agents/${encodeURIComponent(tag)}`);
      const log = await entriesNewestFirst(ctx.store, PER_PAGE, before ? Number(before) : undefined, { agent: profile.tag });
      return send(reply, agentPage({ profile, entries: log.items, next: log.next }, assets.urls));
    },
  );

  const logKinds = [...attestationKinds().keys()].sort();
  app.get(
    '/explore/log',
    {
      schema: { operationId: 'explorerLog', summary: 'The log: checkpoints over time and entries by kind, as a page', tags, querystring: Type.Object({ kind: KindOf(logKinds), before: Cursor }), response: Page('The log.') },
      config: { section: 'log' },
    },
    async (request, reply) => {
      const q = request.query as { kind?: string; before?: string };
      const kind = q.kind || undefined;
      const [head, cps, list] = await Promise.all([ctx.log.head(), checkpoints(ctx.store, 60), entriesNewestFirst(ctx.store, PER_PAGE, q.before ? Number(q.before) : undefined, { kind })]);
      return send(reply, logPage({ size: head.size, checkpoints: cps, entries: list.items, next: list.next, kind, kinds: logKinds, paged: Boolean(q.before) }, assets.urls));
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
      const q = request.query as { old: number; new: number };
      const proof = await api<{ proof: string[] }>(app, request, `/api/log/proof/consistency?old=${q.old}&new=${q.new}`);
      const [o, n] = await Promise.all([ctx.log.checkpointAt(q.old), ctx.log.checkpointAt(q.new)]);
      return send(reply, consistencyPage({ old: q.old, new: q.new, proof: proof.proof, oldNote: o?.note ?? null, newNote: n?.note ?? null }, assets.urls));
    },
  );

  app.get(
    '/explore/log/:id',
    { schema: { operationId: 'explorerEntry', summary: 'A log entry with its inclusion proof, as a page', tags, params: IdParams, response: Page('The entry.') }, config: { section: 'log', errors: ['not_found'] } },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const doc = await api<EntryData['doc']>(app, request, `/api/attestations/${encodeURIComponent(id)}`);
      return send(reply, entryPage({ doc }, assets.urls));
    },
  );

  app.get('/explore/verify', { schema: { operationId: 'explorerVerify', summary: 'Check a credential, a bundle, a log proof or a file in the browser', tags, response: Page('The verify page.') }, config: { section: 'verify' } }, async (request, reply) => {
    const d = await api<{ issuer: { did: string }; log: { verifierKey: string } }>(app, request, '/.well-known/akas.json');
    return send(reply, verifyPage({ issuer: d.issuer.did, logKey: d.log.verifierKey }, assets.urls));
  });

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
      const body = request.body as Record<string, unknown>;
      const inputs: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(body)) {
        if (!k.startsWith('in.')) continue;
        const s = String(v).trim();
        // A number, true or false as such; anything else as text.
        inputs[k.slice(3)] = s === 'true' ? true : s === 'false' ? false : s !== '' && Number.isFinite(Number(s)) ? Number(s) : s;
      }
      const res = await innerCall(app, { method: 'POST', url: '/api/knowledge/dg/traverse', headers: { host: request.headers.host ?? '127.0.0.1' }, ip: request.ip, payload: JSON.stringify({ path: String(body.path), inputs }) });
      const answer = JSON.parse(res.body) as { traversalId?: string; code?: string; error?: string; errors?: unknown };
      if (res.statusCode !== 200 || !answer.traversalId) throw new ServiceError((answer.code as never) ?? 'validation_failed', answer.error ?? 'The graph could not be walked.', answer.errors ? { errors: answer.errors } : {});
      return reply.code(303).header('location', `/explore/traversals/${answer.traversalId}`).send();
    },
  );

  app.get(
    '/explore/traversals/:id',
    { schema: { operationId: 'explorerTraversal', summary: 'A walk of a decision graph, as a page', tags, params: IdParams, response: Page('The traversal.') }, config: { section: 'tree', errors: ['not_found'] } },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const t = await api<TraversalData>(app, request, `/api/knowledge/dg/traversals/${encodeURIComponent(id)}`);
      return send(reply, traversalPage(t, assets.urls));
    },
  );

  app.get(
    '/explore/proofs',
    {
      schema: {
        operationId: 'explorerProofs',
        summary: 'Log entries with their inclusion proofs, several at once (what an explorer page checks in the browser)',
        tags,
        querystring: Type.Object({ ids: Type.String({ pattern: '^att_[0-9a-f]{16}(,att_[0-9a-f]{16}){0,49}$', description: 'Up to 50 attestation ids, comma-separated.' }) }),
        response: {
          200: Type.Object(
            { items: Type.Array(Type.Object({ entry: Type.Object({}, { additionalProperties: true }), inclusion: Type.Object({}, { additionalProperties: true }), checkpoint: Type.String() }, { additionalProperties: true })), missing: Type.Array(Type.String()) },
            { additionalProperties: false, description: 'Each entry as GET /api/attestations/{id} answers it; ids the log does not hold in missing.' },
          ),
        },
      },
      config: { section: 'log' },
    },
    async (request, reply) => {
      const ids = [...new Set((request.query as { ids: string }).ids.split(','))];
      const items: unknown[] = [];
      const missing: string[] = [];
      for (const id of ids) {
        if (seqOfId(id) === undefined) continue;
        const doc = await api(app, request, `/api/attestations/${id}`).catch((e) => {
          if (isServiceError(e) && e.code === 'not_found') return null;
          throw e;
        });
        if (doc) items.push(doc);
        else missing.push(id);
      }
      reply.header('cache-control', 'no-cache');
      return { items, missing };
    },
  );

  app.get(
    `${ASSET_PREFIX}:file`,
    {
      schema: {
        operationId: 'explorerAsset',
        summary: "The explorer's stylesheet and scripts (named by their hash, cached for a year)",
        tags,
        params: Type.Object({ file: Type.String({ maxLength: 100 }) }),
        response: { 200: { description: 'The file (brotli or gzip when accepted).', content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } } }, 304: { description: 'Not modified.', type: 'null' } },
      },
      config: { errors: ['not_found'] },
    },
    async (request, reply) => {
      const a = assets.files.get((request.params as { file: string }).file);
      if (!a) throw new ServiceError('not_found', 'No such explorer file (they are named by hash: reload the page).');
      reply.header('cache-control', 'public, max-age=31536000, immutable').header('etag', a.etag).header('vary', 'accept-encoding').type(a.type);
      if (request.headers['if-none-match'] === a.etag) return reply.code(304).send();
      const enc = encodingFor(request.headers['accept-encoding'] as string | undefined);
      if (enc) reply.header('content-encoding', enc);
      return reply.send(enc === 'br' ? a.br : enc === 'gzip' ? a.gzip : a.body);
    },
  );
}

export type { LogEntry };

/**
 * An application/x-www-form-urlencoded body as fields, refused (400 invalid_json, as a JSON body
 * would be) when its bytes or a percent-escape are not UTF-8, or when a field comes twice.
 */
/** How many fields a form holds (its '&'-separated pairs, empty ones too), counted on the bytes. */
function formFields(body: Buffer): number {
  let n = 1;
  for (let i = body.indexOf(0x26); i !== -1; i = body.indexOf(0x26, i + 1)) n++;
  return n;
}

export function parseFormStrict(body: Buffer): Record<string, string> {
  const refuse = (why: string) => new ServiceError('invalid_json', `The form is not strict: ${why}.`, { hint: 'Send UTF-8 text, each field once.' });
  const text = decodeUtf8Strict(body);
  if (text === undefined) throw refuse('its bytes are not UTF-8');
  const fields: Record<string, string> = Object.create(null);
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent((at === -1 ? pair : pair.slice(0, at)).replace(/\+/g, ' '));
      value = at === -1 ? '' : decodeURIComponent(pair.slice(at + 1).replace(/\+/g, ' '));
    } catch {
      throw refuse('a percent-escape is not UTF-8 (or is malformed)');
    }
    if (Object.hasOwn(fields, name)) throw refuse(`the field ${JSON.stringify(name.slice(0, 40))} comes twice`);
    fields[name] = value;
  }
  return { ...fields };
}
