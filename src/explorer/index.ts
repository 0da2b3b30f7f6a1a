// The explorer (issue 25): a node seen in a browser, served by `akas serve` at / and /explore/...
// Pages are rendered as plain HTML (routes.ts, one step per page; one file per page under
// pages/, escaping by construction in html.ts) from what the API routes answer (data.ts); a
// small script (client/, bundled at build time) adds search as you type, live updates and
// verification in the browser with the verifier's own browser build. Registered by
// src/http/app.ts, which hands it its Content-Security-Policy: scripts and styles from the node
// only, no inline script, no eval, connections to the node only. This plugin reads as its
// steps: the built files, the page scope (policy, form bodies, errors), the pages, the files.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { HelmetOptions } from 'helmet';
import { Type } from 'typebox';
import { isServiceError, ServiceError } from '../core/index.js';
import { type App, bodyBoundsOf, errorHandler, helmetHeaders, tooManyMembers, wantsHtml } from '../http-kit/index.js';
import { ASSET_PREFIX, encodingFor, loadAssets, type LoadedAssets } from './assets.js';
import { Counts } from './data.js';
import { FORM_BYTES, formFields, parseFormStrict } from './form.js';
import type { Assets, Section } from './layout.js';
import { errorPage } from './pages/error.js';
import {
  agentRoutes,
  credentialsRoute,
  homeRoute,
  logRoutes,
  proofsRoute,
  proposalRoutes,
  searchRoute,
  tags,
  traverseRoutes,
  treeRoutes,
  verifyRoute,
  type Pages,
} from './routes.js';

export interface ExplorerOptions {
  /** The explorer pages' own policy (app.ts), computed once with helmet like the API's. */
  contentSecurityPolicy: HelmetOptions['contentSecurityPolicy'];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The explorer section a page belongs to (its error page shows that tab). */
    section?: Section;
  }
}

export async function explorerRoutes(app: App, options: ExplorerOptions) {
  const assets = builtFiles(app);
  const counts = new Counts(app.akas.store, () => app.akas.clock.now());
  app.addHook('onClose', async () => counts.close());
  ownPolicy(app, options);
  formBodies(app);
  pageErrors(app, assets.urls);

  const pages: Pages = { app, urls: assets.urls, counts };
  homeRoute(pages);
  treeRoutes(pages);
  searchRoute(pages);
  proposalRoutes(pages);
  agentRoutes(pages);
  logRoutes(pages);
  verifyRoute(pages);
  traverseRoutes(pages);
  proofsRoute(pages);
  credentialsRoute(pages);
  assetRoute(app, assets);
}

/** The built files, read once; the pages read without them, so what is missing or altered is only warned of. */
function builtFiles(app: FastifyInstance): LoadedAssets {
  const assets = loadAssets();
  if (assets.missing.length)
    app.log.warn({ missing: assets.missing }, 'explorer: built files missing (npm run build makes them); pages are served without them');
  if (assets.altered.length)
    app.log.warn(
      { altered: assets.altered },
      'explorer: files changed since the build recorded their integrity (dist/explorer/integrity.json): browsers will refuse them; reinstall the package',
    );
  return assets;
}

/**
 * This scope's own policy replaces the API's on every answer of its routes (set after the
 * node-wide headers, on the raw response as they are).
 */
function ownPolicy(app: FastifyInstance, options: ExplorerOptions) {
  const csp = helmetHeaders({ contentSecurityPolicy: options.contentSecurityPolicy }).find(([name]) => name.toLowerCase() === 'content-security-policy');
  if (!csp) throw new Error('explorer: helmet made no Content-Security-Policy');
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header(csp[0], csp[1]);
    done();
  });
}

/**
 * The traverse form posts application/x-www-form-urlencoded (this scope only: the API reads
 * JSON), read strictly (form.ts). Its fields are counted against the route's bound before any
 * is decoded, as a JSON body's members are (src/http-kit/bodies.ts).
 */
function formBodies(app: FastifyInstance) {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: FORM_BYTES }, (req, body, done) => {
    const bounds = bodyBoundsOf(req);
    if (formFields(body as Buffer) > bounds.keys) return done(tooManyMembers(bounds, true), undefined);
    try {
      done(null, parseFormStrict(body as Buffer));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
}

/** A browser gets a page; an API caller the envelope of PROTOCOL 1.3, as everywhere else. */
function pageErrors(app: FastifyInstance, urls: Assets) {
  app.setErrorHandler((error, request, reply) => {
    if (!wantsHtml(request)) return errorHandler(error, request, reply);
    const se = isServiceError(error) ? error : null;
    const status = se?.status ?? (typeof (error as { statusCode?: number }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500);
    if (status >= 500 && se?.code !== 'search_busy') request.log.error({ err: error }, 'explorer page failed');
    if (status === 429 && se?.extra.retryAfter) reply.header('retry-after', String(Math.max(1, Math.ceil(Number(se.extra.retryAfter)))));
    // A search stopped at its timeout (PROTOCOL 10.6) says so; any other 5xx names the request only.
    const busy = se?.code === 'search_busy';
    if (busy) reply.header('retry-after', '1');
    const message = status >= 500 && !busy ? `The node failed to build this page (request ${request.id}).` : (error as Error).message;
    const errors =
      (se?.extra.errors as Array<{ field: string; reason: string }> | undefined) ??
      (error as { validation?: Array<{ instancePath: string; message?: string }> }).validation?.map((v) => ({
        field: v.instancePath.replace(/^\//, '') || 'query',
        reason: v.message ?? 'invalid',
      })) ??
      [];
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(errorPage(status, message, errors, urls, request.routeOptions.config?.section));
  });
}

/** GET /explore/assets/:file: the stylesheet and scripts, named by their hash, cached for a year. */
function assetRoute(app: App, assets: LoadedAssets) {
  app.get(
    `${ASSET_PREFIX}:file`,
    {
      schema: {
        operationId: 'explorerAsset',
        summary: "The explorer's stylesheet and scripts (named by their hash, cached for a year)",
        tags,
        params: Type.Object({ file: Type.String({ maxLength: 100 }) }),
        response: {
          200: {
            description: 'The file (brotli or gzip when accepted).',
            content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } },
          },
          304: { description: 'Not modified.', type: 'null' },
        },
      },
      config: { errors: ['not_found'] },
    },
    async (request, typed) => {
      // The reply as fastify's own: a file goes out as bytes, compressed or not, which the schema's string describes for OpenAPI only.
      const reply = typed as FastifyReply;
      const a = assets.files.get(request.params.file);
      if (!a) throw new ServiceError('not_found', 'No such explorer file (they are named by hash: reload the page).');
      reply.header('cache-control', 'public, max-age=31536000, immutable').header('etag', a.etag).header('vary', 'accept-encoding').type(a.type);
      if (request.headers['if-none-match'] === a.etag) return reply.code(304).send();
      const enc = encodingFor(request.headers['accept-encoding'] as string | undefined);
      if (enc) reply.header('content-encoding', enc);
      return reply.send(enc === 'br' ? a.br() : enc === 'gzip' ? a.gzip() : a.body);
    },
  );
}
