import type { FastifyRequest } from 'fastify';

/** The public origin of this node as the caller sees it (config.publicUrl wins when set). */
export function originOf(request: FastifyRequest): string {
  const configured = request.server.akas?.appConfig.publicUrl;
  if (configured) return configured.replace(/\/$/, '');
  return `${request.protocol}://${request.host}`;
}

/** Absolute URLs of the places an agent is oriented to (the 401 envelope, wakeup, register). */
export function orientationUrls(origin: string) {
  return {
    register_url: `${origin}/api/agent/v1/register`,
    calibrate_url: `${origin}/api/agent/v1/calibrate`,
    me_url: `${origin}/api/agent/v1/me`,
    schemas_url: `${origin}/api/agent/v1/schemas`,
    openapi_url: `${origin}/openapi.json`,
    llms_txt_url: `${origin}/llms.txt`,
    descriptor_url: `${origin}/.well-known/akas.json`,
    docs_url: `${origin}/agent-docs`,
    example_curl: `curl -s -X POST ${origin}/api/agent/v1/register`,
  };
}
