// A route called in-process on behalf of a request that already drew its token (an MCP tool call
// runs its route through app.inject: PROTOCOL 12.3). The marker is a header whose value is a
// random secret of this process, so no request from outside can carry it.
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { safeEqual } from '../core/index.js';

export const INNER_CALL_HEADER = 'x-akas-inner-call';
const secret = randomBytes(32).toString('hex');

/** The header an in-process call sends. */
export const innerCallHeaders = () => ({ [INNER_CALL_HEADER]: secret });

/** True for a request made in-process with innerCallHeaders(). */
export const isInnerCall = (request: FastifyRequest) => {
  const h = request.headers[INNER_CALL_HEADER];
  return typeof h === 'string' && safeEqual(h, secret);
};
