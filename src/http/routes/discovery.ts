// PROTOCOL 11.3 to 11.5: the error catalog, the agent guide (as text and as a page) and the
// well-known descriptor. None takes a key; all draw from the token bucket like any route.
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { descriptor } from '../discovery/descriptor.js';
import { errorCatalog, errorCatalogPage } from '../discovery/error-catalog.js';
import { guide } from '../discovery/guide.js';
import { guideHtml, guideText } from '../discovery/render.js';
import { MCP_PATH } from '../mcp/route.js';
import { buildTools } from '../mcp/tools.js';
import { OPENAPI_VERSION } from '../openapi.js';
import { Media, wantsHtml } from '../../http-kit/media.js';
import { originOf } from '../../http-kit/urls.js';
import { Closed, Open } from '../schemas.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';

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

const ErrorsRoute = {
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
} satisfies RouteOptions;

const LlmsTxtRoute = {
  schema: {
    operationId: 'llmsTxt',
    summary: 'The agent guide as text: from zero to a signed judgment, with curl examples that run against this node',
    tags: ['discovery'],
    response: { 200: Media('text/plain', { type: 'string' }, 'Markdown, per the llms.txt convention.') },
  },
} satisfies RouteOptions;

const AgentDocsRoute = {
  schema: {
    operationId: 'agentDocs',
    summary: 'The agent guide as a page (sections are anchors: /agent-docs#verify)',
    tags: ['discovery'],
    response: { 200: Media('text/html', { type: 'string' }, 'The agent guide.') },
  },
} satisfies RouteOptions;

const DescriptorRoute = {
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
} satisfies RouteOptions;

export async function discoveryRoutes(app: App) {
  const guides = new Guides(app);
  app.get('/errors', ErrorsRoute, errors);
  app.get('/llms.txt', LlmsTxtRoute, guides.text);
  app.get('/agent-docs', AgentDocsRoute, guides.page);
  app.get('/.well-known/akas.json', DescriptorRoute, wellKnown);
}

/** PROTOCOL 11.3: the error catalog, as a page for a browser and as JSON for an agent. */
async function errors(request: Req<typeof ErrorsRoute.schema>, reply: FastifyReply) {
  reply.header('vary', 'accept').header('cache-control', 'public, max-age=300');
  const origin = originOf(request);
  if (wantsHtml(request)) return reply.type('text/html; charset=utf-8').send(errorCatalogPage(origin));
  return errorCatalog(origin);
}

/** PROTOCOL 11.5: the node described, with its keys. */
async function wellKnown(request: Req<typeof DescriptorRoute.schema>, reply: FastifyReply) {
  const { keys, appConfig } = request.server.akas;
  reply.header('cache-control', 'public, max-age=60');
  return descriptor({ origin: originOf(request), keys, nodeVersion: appConfig.version, openapiVersion: OPENAPI_VERSION, mcpPath: MCP_PATH });
}

/** PROTOCOL 11.4: the agent guide, as text and as a page, made once per origin from the node's own document and tools. */
class Guides {
  private readonly byOrigin = new Map<string, { text: string; html: string }>();
  constructor(private readonly app: App) {}

  private guideFor(origin: string) {
    let g = this.byOrigin.get(origin);
    if (!g) {
      const config = this.app.akas.config;
      const sections = guide({
        origin,
        doc: this.app.swagger() as never,
        tools: buildTools(this.app.akasRoutes),
        limits: {
          registrationCapPerIp: config.registrationCapPerIp,
          burst: config.rateLimit.burst,
          refillPerSecond: config.rateLimit.refillPerSecond,
          requiredJudgments: config.requiredJudgments,
          sameIpCollusionCheck: config.sameIpCollusionCheck,
        },
        version: OPENAPI_VERSION,
      });
      g = { text: guideText(sections), html: guideHtml(sections) };
      if (this.byOrigin.size > 16) this.byOrigin.clear(); // keyed by origin, which is one per node (PROTOCOL 1.1)
      this.byOrigin.set(origin, g);
    }
    return g;
  }

  /** GET /llms.txt: the guide as Markdown. */
  text = async (request: Req<typeof LlmsTxtRoute.schema>, reply: FastifyReply) =>
    reply
      .type('text/plain; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(this.guideFor(originOf(request)).text);

  /** GET /agent-docs: the guide as a page. */
  page = async (request: Req<typeof AgentDocsRoute.schema>, reply: FastifyReply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(this.guideFor(originOf(request)).html);
}
