// PROTOCOL 8: judgment credentials (L1) as issued and stored at judgment time, and the
// node's public keys (issuer keys with their windows and signed rotations, HMAC key ids,
// the log key).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { canonicalize, PROPOSAL_KINDS, ServiceError, sha256Hex } from '../../core/index.js';
import { Credentials } from '../../domain/credentials/credentials.js';
import { JudgmentIndex } from '../../domain/records.js';
import { nodeKeysView } from '../views.js';
import { Credential, NodeKeysAnswer } from './log-schemas.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

export async function credentialRoutes(app: FastifyInstance) {
  const ctx = app.akas;

  app.get(
    '/api/credentials/judgment/:kind/:proposalId/:judgmentId',
    {
      schema: {
        operationId: 'judgmentCredential',
        summary: 'The credential of a judgment (W3C VC 2.0, eddsa-jcs-2022)',
        tags: ['credentials'],
        params: Type.Object({ kind: Type.String({ maxLength: 40 }), proposalId: Type.String({ maxLength: 64 }), judgmentId: Type.String({ maxLength: 64 }) }),
        response: { 200: Credential, 304: { description: 'Not modified (If-None-Match matched the ETag).', type: 'null' } },
      },
      config: { errors: ['invalid_kind', 'not_found'] },
    },
    async (request, reply) => {
      const { kind, proposalId, judgmentId } = request.params as { kind: string; proposalId: string; judgmentId: string };
      if (!(PROPOSAL_KINDS as readonly string[]).includes(kind)) {
        throw new ServiceError('invalid_kind', `No proposal kind ${kind}.`, { field: 'kind', hint: `One of: ${PROPOSAL_KINDS.join(', ')}.` });
      }
      const where = /^jdg_[0-9a-f]{16}$/.test(judgmentId) ? await ctx.store.get(JudgmentIndex, judgmentId) : undefined;
      const credential = where && where.proposalId === proposalId && where.kind === kind ? await ctx.store.get(Credentials, judgmentId) : undefined;
      if (!credential) {
        throw new ServiceError('not_found', `No judgment credential ${kind}/${proposalId}/${judgmentId}.`, {
          hint: 'The credentialUrl of a judgment is in the judge answer and in GET /api/knowledge/proposals/{id}.',
        });
      }
      // Issued once and never changed: the ETag is its content's hash.
      const etag = `"${sha256Hex(canonicalize(credential)).slice(0, 32)}"`;
      reply.header('etag', etag).header('cache-control', IMMUTABLE);
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return credential;
    },
  );

  const keysSchema = {
    operationId: 'nodeKeys',
    summary: 'The public node keys: issuer did:keys, HMAC key ids, the log key',
    tags: ['credentials'],
    response: { 200: NodeKeysAnswer },
  };
  app.get('/api/node/keys', { schema: keysSchema }, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=60');
    return nodeKeysView(ctx.keys);
  });
}
