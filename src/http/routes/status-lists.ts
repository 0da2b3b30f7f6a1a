// PROTOCOL 8.7: the node's status lists (W3C Bitstring Status List v1.0). The stable URL answers
// the newest version, cacheable for the list's ttl; ?version=N answers a past one, which never
// changes; /versions lists what each version changed and why; a credential's status says
// whether it was revoked or suspended, when and why.
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { isStatusPurpose, ServiceError, STATUS_HEAD_PATH, STATUS_LIST_TTL_MS, STATUS_PURPOSES, type StatusPurpose } from '../../core/index.js';
import { Credentials } from '../../domain/credentials/credentials.js';
import { statusHeadAt } from '../../domain/credentials/status-head.js';
import { credentialStatusOf, statusListVersion, statusListVersions, versionView } from '../../domain/credentials/status-lists.js';
import { Credential } from './log-schemas.js';
import { Open } from '../schemas.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';
// One spelling per number (PROTOCOL 8.7): base-10 digits, no sign, no leading zero, no space, no
// fraction, no hex. A cached answer is keyed by its URL, so `?version=01` answering as
// `?version=1` would be a second immutable name for one version; anything else is a 400.
const Decimal = (description: string) => Type.String({ pattern: '^(0|[1-9][0-9]{0,15})$', maxLength: 16, description });
const Purpose = Type.Object({ purpose: Type.String({ maxLength: 40 }) });

function purposeOf(purpose: string): StatusPurpose {
  if (!isStatusPurpose(purpose)) {
    throw new ServiceError('not_found', `No status list ${purpose}.`, { hint: `The lists are: ${STATUS_PURPOSES.join(', ')}.` });
  }
  return purpose;
}

const StatusListRoute = {
  schema: {
    operationId: 'statusList',
    summary: 'A status list (W3C BitstringStatusListCredential, eddsa-jcs-2022): the newest version, or ?version=N',
    tags: ['credentials'],
    params: Purpose,
    querystring: Type.Object({ version: Type.Optional(Decimal('a version number, in its one spelling (0, 1, 2, ...)')) }, { additionalProperties: false }),
    response: { 200: Credential },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const VersionsRoute = {
  schema: {
    operationId: 'statusListVersions',
    summary: 'What each version of a status list changed, when and why (from version `from`, at most 100)',
    tags: ['credentials'],
    params: Purpose,
    querystring: Type.Object(
      {
        from: Type.Optional(Decimal('the first version listed (default 0)')),
        limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|100)$', description: 'at most this many (1 to 100, default 100)' })),
      },
      { additionalProperties: false },
    ),
    response: { 200: Type.Object({ purpose: Type.String(), versions: Type.Array(Open()) }) },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const CredentialStatusRoute = {
  schema: {
    operationId: 'credentialStatus',
    summary: "A judgment credential's standing in the status lists: revoked or suspended, when, why, in which version",
    tags: ['credentials'],
    params: Type.Object({ judgmentId: Type.String({ maxLength: 64 }) }),
    response: { 200: Type.Object({ judgmentId: Type.String(), revocation: Type.Optional(Open()), suspension: Type.Optional(Open()) }) },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const StatusHeadRoute = {
  schema: {
    operationId: 'statusHead',
    summary: "The status head: the newest version of each list logged at the node's newest checkpoint, signed by the issuer (PROTOCOL 8.7)",
    tags: ['credentials'],
    response: { 200: Open() },
  },
} satisfies RouteOptions;

export async function statusListRoutes(app: App) {
  app.get('/credentials/status/:purpose', StatusListRoute, statusList);
  app.get('/credentials/status/:purpose/versions', VersionsRoute, statusListVersionsOf);
  app.get('/api/credentials/status/:judgmentId', CredentialStatusRoute, credentialStatus);
  app.get(STATUS_HEAD_PATH, StatusHeadRoute, statusHead);
}

/** A list's newest version, cacheable for its ttl, or a past one (?version=N), which never changes. */
async function statusList(request: Req<typeof StatusListRoute.schema>, reply: FastifyReply) {
  const purpose = purposeOf(request.params.purpose);
  const asked = request.query.version;
  const version = asked === undefined ? undefined : Number(asked);
  const v = await statusListVersion(request.server.akas, purpose, version);
  if (!v)
    throw new ServiceError(
      'not_found',
      version === undefined ? `The ${purpose} list is not made yet: no credential names it.` : `The ${purpose} list has no version ${version} in its log.`,
      {
        hint: 'GET /credentials/status/{purpose}/versions lists them.',
      },
    );
  // A past version never changes; the newest may at any time, and is cached for the list's ttl (§2.2).
  reply.header('cache-control', version === undefined ? `public, max-age=${STATUS_LIST_TTL_MS / 1000}` : IMMUTABLE);
  reply.header('x-status-list-version', String(v.version));
  return v.credential;
}

/** What each version of a list changed, when and why. */
async function statusListVersionsOf(request: Req<typeof VersionsRoute.schema>, reply: FastifyReply) {
  const purpose = purposeOf(request.params.purpose);
  const { from, limit } = request.query;
  reply.header('cache-control', `public, max-age=${STATUS_LIST_TTL_MS / 1000}`);
  return { purpose, versions: (await statusListVersions(request.server.akas, purpose, Number(from ?? 0), Number(limit ?? 100))).map(versionView) };
}

/** A credential's standing: revoked or suspended, when, why, in which version. */
async function credentialStatus(request: Req<typeof CredentialStatusRoute.schema>) {
  const ctx = request.server.akas;
  const { judgmentId } = request.params;
  // An id no credential has is a 404, never an answer that reads like an unchanged credential.
  if (!/^jdg_[0-9a-f]{16}$/.test(judgmentId) || !(await ctx.store.get(Credentials, judgmentId)))
    throw new ServiceError('not_found', `No judgment credential ${judgmentId} on this node.`);
  return { judgmentId, ...(await credentialStatusOf(ctx, judgmentId)) };
}

/** The status head at the node's newest checkpoint, every append before the request in it. */
async function statusHead(request: Req<typeof StatusHeadRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  await ctx.log.drain();
  const { head } = await statusHeadAt(ctx, await ctx.log.checkpoint());
  reply.header('cache-control', 'no-cache');
  return head;
}
