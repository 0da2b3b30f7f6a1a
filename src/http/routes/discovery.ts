// PROTOCOL 11.3 to 11.5: the error catalog, the agent guide (as text and as a page) and the
// well-known descriptor. None takes a key; all draw from the token bucket like any route.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { descriptor } from '../discovery/descriptor.js';
import { errorCatalog, errorCatalogPage } from '../discovery/error-catalog.js';
import { guide } from '../discovery/guide.js';
import { guideHtml, guideText } from '../discovery/render.js';
import { MCP_PATH } from '../mcp/route.js';
import { buildTools } from '../mcp/tools.js';
import { OPENAPI_VERSION } from '../openapi.js';
import { Media, wantsHtml } from '../kit/media.js';
import { originOf } from '../kit/urls.js';
import { Closed, Open } from '../schemas.js';

const CatalogSchema = Closed(
  {
    url: Type.String(),
    envelope: Type.String(),
    codes: Type.Array(
      Closed({
        code: Type.String(),
        status: Type.Integer(),
        title: Type.String(),
        type: Type.String({ description: '<origin>/errors#<code>: the type URI of problem+json bodies.' }),
        meaning: Type.String(),
        action: Type.String(),
      }),
    ),
  },
  'Every error code with its status, meaning, what to do and its type URI.',
);

export async function discoveryRoutes(app: FastifyInstance) {
  const ctx = app.akas;
  const guides = new Map<string, { text: string; html: string }>();
  const guideFor = (origin: string) => {
    let g = guides.get(origin);
    if (!g) {
      const sections = guide({
        origin,
        doc: app.swagger() as never,
        tools: buildTools(app.akasRoutes),
        limits: {
          registrationCapPerIp: ctx.config.registrationCapPerIp,
          burst: ctx.config.rateLimit.burst,
          refillPerSecond: ctx.config.rateLimit.refillPerSecond,
          requiredJudgments: ctx.config.requiredJudgments,
          sameIpCollusionCheck: ctx.config.sameIpCollusionCheck,
        },
        version: OPENAPI_VERSION,
      });
      g = { text: guideText(sections), html: guideHtml(sections) };
      if (guides.size > 16) guides.clear(); // keyed by origin, which is one per node (PROTOCOL 1.1)
      guides.set(origin, g);
    }
    return g;
  };

  app.get(
    '/errors',
    {
      schema: {
        operationId: 'errors',
        summary: 'Every error code: status, meaning, what to do (HTML for a browser, JSON for Accept: application/json)',
        tags: ['discovery'],
        response: {
          200: {
            description: 'The error catalog; each code is also an anchor: /errors#<code>.',
            content: { 'application/json': { schema: CatalogSchema }, 'text/html': { schema: { type: 'string' } } },
          },
        },
      },
    },
    async (request, reply) => {
      reply.header('vary', 'accept').header('cache-control', 'public, max-age=300');
      const origin = originOf(request);
      if (wantsHtml(request)) return reply.type('text/html; charset=utf-8').send(errorCatalogPage(origin));
      return errorCatalog(origin);
    },
  );

  app.get(
    '/llms.txt',
    {
      schema: {
        operationId: 'llmsTxt',
        summary: 'The agent guide as text: from zero to a signed judgment, with curl examples that run against this node',
        tags: ['discovery'],
        response: { 200: Media('text/plain', { type: 'string' }, 'Markdown, per the llms.txt convention.') },
      },
    },
    async (request, reply) =>
      reply
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .send(guideFor(originOf(request)).text),
  );

  app.get(
    '/agent-docs',
    {
      schema: {
        operationId: 'agentDocs',
        summary: 'The agent guide as a page (sections are anchors: /agent-docs#verify)',
        tags: ['discovery'],
        response: { 200: Media('text/html', { type: 'string' }, 'The agent guide.') },
      },
    },
    async (request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .send(guideFor(originOf(request)).html),
  );

  app.get(
    '/.well-known/akas.json',
    {
      schema: {
        operationId: 'descriptor',
        summary: 'This node described: versions, endpoints, discovery links, trust layers, keys, MCP endpoint',
        tags: ['discovery'],
        response: {
          200: Closed(
            {
              platform: Type.Literal('akas'),
              name: Type.String(),
              origin: Type.String(),
              auth: Open(),
              version: Closed({ node: Type.String(), api: Type.Literal('v1'), openapi: Type.String() }),
              endpoints: Open(),
              discovery: Open(),
              mcp: Open({ endpoint: Type.String() }),
              trustLayers: Open(),
              issuer: Closed({ did: Type.String(), history: Type.Array(Open()), rotations: Type.Array(Open()) }),
              hmac: Closed({ signingKeyIds: Type.Array(Type.String()), current: Type.Union([Type.String(), Type.Null()]) }),
              log: Closed({ origin: Type.String(), verifierKey: Type.String(), publicKey: Type.String(), endorsement: Open(), checkpoint: Type.String() }),
            },
            'The node descriptor (PROTOCOL 11.5).',
          ),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'public, max-age=60');
      return descriptor({ origin: originOf(request), keys: ctx.keys, nodeVersion: ctx.appConfig.version, openapiVersion: OPENAPI_VERSION, mcpPath: MCP_PATH });
    },
  );
}
