import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyRequest } from 'fastify';

/**
 * The origin of the address a server listens on: what the node's documents name when no
 * --public-url is given. A wildcard bind (0.0.0.0, ::) is named by the loopback address of its
 * family, the one address sure to reach it; an address clients elsewhere use is the operator's
 * to give (--public-url). Undefined before the server listens (fastify's inject in tests).
 */
export function listenOrigin(address: AddressInfo | string | null | undefined): string | undefined {
  if (!address || typeof address === 'string') return undefined;
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

const listening = new WeakMap<Server, string>();

/**
 * The public origin of this node: --public-url when set, else the address it listens on. Never
 * a request header: Host, X-Forwarded-Host and X-Forwarded-Proto are the client's to write,
 * and the documents that name this origin (the descriptor, the guide, the OpenAPI servers, the
 * error catalog ...) are cached by whatever sits in front of the node (PROTOCOL 11.1).
 */
export function originOf(request: FastifyRequest): string {
  const configured = request.server.akas?.appConfig.publicUrl;
  if (configured) return configured.replace(/\/$/, '');
  const server = request.server.server;
  let origin = listening.get(server);
  if (origin === undefined) {
    origin = listenOrigin(server.address());
    // Not listening: a request injected in-process, which has no address to be named by.
    if (origin === undefined) return 'http://localhost';
    listening.set(server, origin);
  }
  return origin;
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
