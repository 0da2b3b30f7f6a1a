// Runs an MCP tool (PROTOCOL 12.3) by calling its route in-process (through fastify's routing:
// inner-call.ts) with the caller's own Authorization, IP and host: the route validates,
// authorizes and answers as it does over HTTP, so a tool has one source of truth. The POST to /api/mcp drew the caller's
// token; the route draws none again (inner-call.ts). A 2xx answer is the tool's
// result; any refusal comes back as an MCP tool error carrying the route's envelope and its
// code (PROTOCOL 13).
import type { FastifyInstance } from 'fastify';
import { ServiceError, type ErrorCode } from '../../core/index.js';
import { innerCall } from '../../http-kit/inner-call.js';
import { SIGN_LOCALLY, UNTRUSTED_NOTE, type Tool } from './tools.js';

/** Who called /api/mcp, as the routes a tool calls must see them. */
export interface McpCaller {
  ip: string;
  /** The /api/mcp request came over TLS (the route's request.protocol). */
  encrypted: boolean;
  /** The agent's tag when a Bearer key was sent (and authenticated). */
  tag?: string;
  /** Request headers passed on to the route: authorization, host, tenant and idempotency headers. */
  headers: Record<string, string>;
}

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * The headers of the /api/mcp request a tool's route sees (PROTOCOL 12.1). Not X-Forwarded-For:
 * the route is called from the client address the /api/mcp request was already resolved to
 * (--trust-proxy), which a second reading of the header could only get wrong.
 */
export const FORWARDED_HEADERS = [
  'authorization',
  'host',
  'x-forwarded-host',
  'x-forwarded-proto',
  'idempotency-key',
  'x-proxy-tenant-id',
  'x-idempotency-inherit-tenant-id',
  'x-idempotency-caller-hint',
  'x-idempotency-tenant-suffix-apikey',
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A tool error with the envelope of PROTOCOL 1.3: the text an LLM reads and the same object structured. */
export function toolError(envelope: Record<string, unknown>): ToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope };
}

function refusal(code: ErrorCode, message: string, extra: Record<string, unknown> = {}): ToolResult {
  const e = new ServiceError(code, message, extra);
  return toolError({ error: e.message, code: e.code, ...e.extra });
}

/**
 * The judge tool takes no private key (PROTOCOL 12.3; the security review's finding 9): one
 * passed anyway is refused before anything is called, without quoting it, so the agent learns
 * that the node does not sign for it instead of seeing the argument silently dropped.
 */
function refusePrivateKey(args: Record<string, unknown>): ToolResult | undefined {
  if (!('privateKey' in args)) return undefined;
  return refusal(
    'validation_failed',
    'The judge tool takes no privateKey: the node never signs for an agent, since a key sent here crosses the network and stays in this transcript.',
    {
      errors: [{ field: 'privateKey', reason: 'is not accepted' }],
      hint: `${SIGN_LOCALLY} If what you sent was your real key, rotate it with a recovery (akas recover).`,
    },
  );
}

const queryString = (pairs: Array<[string, unknown]>) => {
  const q = new URLSearchParams();
  for (const [k, v] of pairs) if (v !== undefined && v !== null) q.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};

/** Calls the tool's route with these arguments as the caller. */
export async function callTool(app: FastifyInstance, tool: Tool, argsIn: unknown, caller: McpCaller): Promise<ToolResult> {
  if (argsIn !== undefined && !isObject(argsIn))
    return refusal('validation_failed', 'Tool arguments must be an object.', { errors: [{ field: 'arguments', reason: 'must be object' }] });
  const args: Record<string, unknown> = { ...(argsIn ?? {}) };
  if (tool.name === 'judge') {
    const refused = refusePrivateKey(args);
    if (refused) return refused;
  }
  const proposing = tool.name.startsWith('propose_');
  const includeClaimSecret = proposing && args.includeClaimSecret === true;
  delete args.includeClaimSecret;
  const renamed = (name: string) => tool.rename?.[name] ?? name;
  let url = tool.urlFor ? tool.urlFor(args) : tool.url;
  const missing: Array<{ field: string; reason: string }> = [];
  for (const name of tool.parts.path) {
    const value = args[renamed(name)];
    delete args[renamed(name)];
    if (typeof value !== 'string' || value === '') {
      missing.push({ field: renamed(name), reason: 'is required' });
      continue;
    }
    // The tree wildcard takes a node path as it is ("/a/b" -> /api/knowledge/node/a/b).
    url = name === '*' ? url.slice(0, -1) + value.replace(/^\/+/, '') : url.replace(`:${name}`, encodeURIComponent(value));
  }
  if (missing.length) return refusal('validation_failed', 'The tool arguments failed validation.', { errors: missing });
  const query: Array<[string, unknown]> = Object.entries(tool.fixedQuery ?? {});
  for (const name of tool.parts.query) {
    if (args[name] !== undefined) query.push([name, args[name]]);
    delete args[name];
  }
  let payload: string | undefined;
  if (tool.hasBody) payload = JSON.stringify(args);
  else for (const [k, v] of Object.entries(args)) query.push([k, v]); // unknown arguments: the route drops them, as over HTTP (PROTOCOL 1.1)
  const res = await innerCall(app, {
    method: tool.method,
    url: url + queryString(query),
    headers: caller.headers,
    ip: caller.ip,
    encrypted: caller.encrypted,
    payload,
  });
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    body = { text: res.body };
  }
  const structured = isObject(body) ? body : { value: body };
  if (res.statusCode >= 400) {
    // Over MCP, the route's hint (sign signingPayload) gains where to sign: on the agent's side.
    if (tool.name === 'judge' && structured.code === 'signature_required')
      structured.hint = `Sign signingPayload (its UTF-8 bytes) with your Ed25519 key and call judge again with signature and contentSha256. ${SIGN_LOCALLY}`;
    return toolError(structured);
  }
  // A claimSecret recovers the whole identity: it goes into a transcript only when asked for.
  if (proposing && !includeClaimSecret && 'claimSecret' in structured) {
    delete structured.claimSecret;
    structured.claimSecretWithheld = true;
    structured.claimSecretNote =
      'The claimSecret of this proposal (recover channel B) is left out of MCP results unless the call passes includeClaimSecret: true. ' +
      'Your recovery token recovers you anyway.';
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }
  // Other agents' words are marked before the result (the top of tools.ts): first in the
  // object, so a model reading the text meets the warning before what it warns about.
  const fields = tool.untrusted?.filter((f) => structured[f] !== undefined) ?? [];
  if (fields.length) {
    const marked = { untrustedContent: { authoredBy: 'other agents', fields, note: UNTRUSTED_NOTE }, ...structured };
    return { content: [{ type: 'text', text: JSON.stringify(marked) }], structuredContent: marked };
  }
  return { content: [{ type: 'text', text: res.body }], structuredContent: structured };
}
