// PROTOCOL 8.7: the node's status lists (W3C Bitstring Status List v1.0). The stable URL answers
// the newest version, cacheable for the list's ttl; ?version=N answers a past one, which never
// changes; /versions lists what each version changed and why; a credential's status says
// whether it was revoked or suspended, when and why.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isStatusPurpose, ServiceError, STATUS_LIST_TTL_MS, STATUS_PURPOSES, type StatusPurpose } from '../../core/index.js';
import { credentialStatusOf, statusListVersion, statusListVersions, versionView } from '../../domain/credentials/status-lists.js';
import { Credential } from './log-schemas.js';
import { Open } from '../schemas.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const Int = (o: object = {}) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...o });
const Purpose = Type.Object({ purpose: Type.String({ maxLength: 40 }) });

function purposeOf(purpose: string): StatusPurpose {
  if (!isStatusPurpose(purpose)) {
    throw new ServiceError('not_found', `No status list ${purpose}.`, { hint: `The lists are: ${STATUS_PURPOSES.join(', ')}.` });
  }
  return purpose;
}

export async function statusListRoutes(app: FastifyInstance) {
  const ctx = app.akas;

  app.get(
    '/credentials/status/:purpose',
    {
      schema: {
        operationId: 'statusList',
        summary: 'A status list (W3C BitstringStatusListCredential, eddsa-jcs-2022): the newest version, or ?version=N',
        tags: ['credentials'],
        params: Purpose,
        querystring: Type.Object({ version: Type.Optional(Int()) }, { additionalProperties: false }),
        response: { 200: Credential },
      },
      config: { errors: ['not_found'] },
    },
    async (request, reply) => {
      const purpose = purposeOf((request.params as { purpose: string }).purpose);
      const { version } = request.query as { version?: number };
      const v = await statusListVersion(ctx, purpose, version);
      if (!v)
        throw new ServiceError('not_found', `The ${purpose} list has no version ${version}.`, {
          hint: 'GET /credentials/status/{purpose}/versions lists them.',
        });
      // A past version never changes; the newest may at any time, and is cached for the list's ttl (§2.2).
      reply.header('cache-control', version === undefined ? `public, max-age=${STATUS_LIST_TTL_MS / 1000}` : IMMUTABLE);
      reply.header('x-status-list-version', String(v.version));
      return v.credential;
    },
  );

  app.get(
    '/credentials/status/:purpose/versions',
    {
      schema: {
        operationId: 'statusListVersions',
        summary: 'What each version of a status list changed, when and why (from version `from`, at most 100)',
        tags: ['credentials'],
        params: Purpose,
        querystring: Type.Object(
          { from: Type.Optional(Int({ minimum: 1 })), limit: Type.Optional(Int({ minimum: 1, maximum: 100 })) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ purpose: Type.String(), versions: Type.Array(Open()) }) },
      },
      config: { errors: ['not_found'] },
    },
    async (request, reply) => {
      const purpose = purposeOf((request.params as { purpose: string }).purpose);
      const { from, limit } = request.query as { from?: number; limit?: number };
      reply.header('cache-control', `public, max-age=${STATUS_LIST_TTL_MS / 1000}`);
      return { purpose, versions: (await statusListVersions(ctx, purpose, from ?? 1, limit ?? 100)).map(versionView) };
    },
  );

  app.get(
    '/api/credentials/status/:judgmentId',
    {
      schema: {
        operationId: 'credentialStatus',
        summary: "A judgment credential's standing in the status lists: revoked or suspended, when, why, in which version",
        tags: ['credentials'],
        params: Type.Object({ judgmentId: Type.String({ maxLength: 64 }) }),
        response: { 200: Type.Object({ judgmentId: Type.String(), revocation: Type.Optional(Open()), suspension: Type.Optional(Open()) }) },
      },
    },
    async (request) => {
      const { judgmentId } = request.params as { judgmentId: string };
      return { judgmentId, ...(await credentialStatusOf(ctx, judgmentId)) };
    },
  );
}
