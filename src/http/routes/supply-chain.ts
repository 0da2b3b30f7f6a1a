// PROTOCOL 16.3: an attestation, or a decided proposal, as an in-toto Statement in a DSSE
// envelope signed by the node's issuer key. The CLI wraps it in a Sigstore bundle itself
// (`akas export ID --format sigstore`): the bundle adds no signature, only its frame.
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { PROPOSAL_ID_RE, ServiceError } from '../../core/index.js';
import { attestationStatement } from '../../domain/log/index.js';
import { decisionStatement } from '../../domain/proposals/statement.js';
import { signStatement } from '../../domain/common/dsse-sign.js';
import { originOf } from '../../http-kit/urls.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';

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

const AttestationDsseRoute = {
  schema: {
    operationId: 'attestationDsse',
    summary: 'One attestation as an in-toto Statement in a DSSE envelope signed by the issuer key',
    tags: ['attestations'],
    params: IdParams,
    response: { 200: DsseEnvelope },
  },
  config: { errors: ['not_found', 'not_exportable'] },
} satisfies RouteOptions;

const ProposalDsseRoute = {
  schema: {
    operationId: 'proposalDsse',
    summary: "A decided proposal's decision as an in-toto Statement in a DSSE envelope signed by the issuer key",
    tags: ['credentials'],
    params: IdParams,
    response: { 200: DsseEnvelope },
  },
  config: { errors: ['not_found', 'not_exportable'] },
} satisfies RouteOptions;

export async function supplyChainRoutes(app: App) {
  app.get('/api/attestations/:id/dsse', AttestationDsseRoute, attestationDsse);
  app.get('/api/knowledge/proposals/:id/dsse', ProposalDsseRoute, proposalDsse);
}

/** PROTOCOL 16.3: an attestation of the log as a signed in-toto Statement. */
async function attestationDsse(request: Req<typeof AttestationDsseRoute.schema>, reply: FastifyReply) {
  const { keys, log } = request.server.akas;
  const { id } = request.params;
  const entry = /^att_[0-9a-f]{16}$/.test(id) ? await log.entryById(id) : undefined;
  if (!entry) throw new ServiceError('not_found', `No attestation ${id} in this log.`, { hint: 'GET /api/attestations lists them.' });
  reply.header('content-disposition', `attachment; filename="${id}.dsse.json"`);
  return signStatement(keys, attestationStatement(entry, keys.log.origin));
}

/** PROTOCOL 16.3: a decided proposal's decision as a signed in-toto Statement. */
async function proposalDsse(request: Req<typeof ProposalDsseRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  const { id } = request.params;
  if (!PROPOSAL_ID_RE.test(id)) throw new ServiceError('not_found', `No proposal ${id}.`);
  const statement = await decisionStatement(ctx, ctx.log, id, originOf(request));
  reply.header('content-disposition', `attachment; filename="${id}.dsse.json"`).header('cache-control', 'no-cache');
  return signStatement(ctx.keys, statement);
}
