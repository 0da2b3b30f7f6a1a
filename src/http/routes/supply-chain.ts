// PROTOCOL 16.3: an attestation, or a decided proposal, as an in-toto Statement in a DSSE
// envelope signed by the node's issuer key. The CLI wraps it in a Sigstore bundle itself
// (`akas export ID --format sigstore`): the bundle adds no signature, only its frame.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { PROPOSAL_ID_RE, ServiceError } from '../../core/index.js';
import { attestationStatement } from '../../domain/log/index.js';
import { decisionStatement } from '../../domain/proposals/statement.js';
import { signStatement } from '../../domain/common/dsse-sign.js';
import { originOf } from '../kit/urls.js';

const DsseEnvelope = Type.Object(
  {
    payload: Type.String({ description: 'base64 of the in-toto Statement v1 (JSON, UTF-8)' }),
    payloadType: Type.Literal('application/vnd.in-toto+json'),
    signatures: Type.Array(
      Type.Object({
        keyid: Type.String({ description: "the issuer key's id in GET /api/node/keys (its did:key)" }),
        sig: Type.String({ description: 'base64 of the Ed25519 signature over the DSSE PAE' }),
      }),
      { minItems: 1, maxItems: 1 },
    ),
  },
  { description: 'A DSSE v1 envelope (PROTOCOL 16.3).' },
);

const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export async function supplyChainRoutes(app: FastifyInstance) {
  const ctx = app.akas;
  const log = ctx.log;

  app.get(
    '/api/attestations/:id/dsse',
    {
      schema: {
        operationId: 'attestationDsse',
        summary: 'One attestation as an in-toto Statement in a DSSE envelope signed by the issuer key',
        tags: ['attestations'],
        params: IdParams,
        response: { 200: DsseEnvelope },
      },
      config: { errors: ['not_found', 'not_exportable'] },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const entry = /^att_[0-9a-f]{16}$/.test(id) ? await log.entryById(id) : undefined;
      if (!entry) throw new ServiceError('not_found', `No attestation ${id} in this log.`, { hint: 'GET /api/attestations lists them.' });
      reply.header('content-disposition', `attachment; filename="${id}.dsse.json"`);
      return signStatement(ctx.keys, attestationStatement(entry, ctx.keys.log.origin));
    },
  );

  app.get(
    '/api/knowledge/proposals/:id/dsse',
    {
      schema: {
        operationId: 'proposalDsse',
        summary: "A decided proposal's decision as an in-toto Statement in a DSSE envelope signed by the issuer key",
        tags: ['credentials'],
        params: IdParams,
        response: { 200: DsseEnvelope },
      },
      config: { errors: ['not_found', 'not_exportable'] },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      if (!PROPOSAL_ID_RE.test(id)) throw new ServiceError('not_found', `No proposal ${id}.`);
      const statement = await decisionStatement(ctx, log, id, originOf(request));
      reply.header('content-disposition', `attachment; filename="${id}.dsse.json"`).header('cache-control', 'no-cache');
      return signStatement(ctx.keys, statement);
    },
  );
}
