// PROTOCOL 8: judgment credentials (L1) as issued and stored at judgment time, and the
// node's public keys (issuer keys with their windows and signed rotations, HMAC key ids,
// the log key).
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { canonicalize, PROPOSAL_KINDS, ServiceError, sha256Hex } from '../../core/index.js';
import { Credentials } from '../../domain/credentials/credentials.js';
import { JudgmentIndex } from '../../domain/records.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';
import { didWebDocument, didWebOf } from '../../core/did-web.js';
import { originOf } from '../../http-kit/urls.js';
import { Open } from '../schemas.js';
import { nodeKeysView } from '../views/records.js';
import { Credential, NodeKeysAnswer } from './log-schemas.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

const CredentialRoute = {
  schema: {
    operationId: 'judgmentCredential',
    summary: 'The credential of a judgment (W3C VC 2.0, eddsa-jcs-2022)',
    tags: ['credentials'],
    params: Type.Object({ kind: Type.String({ maxLength: 40 }), proposalId: Type.String({ maxLength: 64 }), judgmentId: Type.String({ maxLength: 64 }) }),
    response: { 200: Credential, 304: { description: 'Not modified (If-None-Match matched the ETag).', type: 'null' } },
  },
  config: { errors: ['invalid_kind', 'not_found'] },
} satisfies RouteOptions;

const KeysRoute = {
  schema: {
    operationId: 'nodeKeys',
    summary: 'The public node keys: issuer did:keys, HMAC key ids, the log key',
    tags: ['credentials'],
    response: { 200: NodeKeysAnswer },
  },
} satisfies RouteOptions;

const DidRoute = {
  schema: {
    operationId: 'didDocument',
    summary: 'The node as a did:web: its issuer keys as Multikey methods with their windows, its log key and witness policy as services',
    tags: ['credentials'],
    response: { 200: Open({ id: Type.String(), verificationMethod: Type.Array(Open()), service: Type.Array(Open()) }, 'A DID document (PROTOCOL 8.10).') },
  },
} satisfies RouteOptions;

export async function credentialRoutes(app: App) {
  app.get('/.well-known/did.json', DidRoute, didDocument);
  app.get('/api/credentials/judgment/:kind/:proposalId/:judgmentId', CredentialRoute, judgmentCredential);
  app.get('/api/node/keys', KeysRoute, nodeKeys);
}

/** PROTOCOL 8.1: a judgment's credential, as issued; immutable, so its ETag is its hash. */
async function judgmentCredential(request: Req<typeof CredentialRoute.schema>, reply: FastifyReply) {
  const { store } = request.server.akas;
  const { kind, proposalId, judgmentId } = request.params;
  if (!(PROPOSAL_KINDS as readonly string[]).includes(kind)) {
    throw new ServiceError('invalid_kind', `No proposal kind ${kind}.`, { field: 'kind', hint: `One of: ${PROPOSAL_KINDS.join(', ')}.` });
  }
  const where = /^jdg_[0-9a-f]{16}$/.test(judgmentId) ? await store.get(JudgmentIndex, judgmentId) : undefined;
  const credential = where && where.proposalId === proposalId && where.kind === kind ? await store.get(Credentials, judgmentId) : undefined;
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
}

/** PROTOCOL 8.3: the public half of the node's keys. */
async function nodeKeys(request: Req<typeof KeysRoute.schema>, reply: FastifyReply) {
  reply.header('cache-control', 'public, max-age=60');
  return nodeKeysView(request.server.akas.keys);
}

/** PROTOCOL 8.10: the node's did:web document, for the origin its documents name (--public-url, else its listen address). */
async function didDocument(request: Req<typeof DidRoute.schema>, reply: FastifyReply) {
  const ctx = request.server.akas;
  const origin = ctx.config.publicUrl ?? ctx.config.listenOrigin ?? originOf(request);
  const { keys } = ctx;
  const witnesses = ctx.appConfig.witnesses;
  // C2SP tlog-policy: the log, each witness the node asks, and the quorum it waits for (all of them).
  const policy = [
    `log ${keys.log.verifierKey}`,
    ...witnesses.map((w, i) => `witness w${i + 1} ${w.verifierKey} ${w.url}`),
    ...(witnesses.length > 1 ? [`group node-witnesses all ${witnesses.map((_, i) => `w${i + 1}`).join(' ')}`] : []),
    `quorum ${witnesses.length === 0 ? 'none' : witnesses.length === 1 ? 'w1' : 'node-witnesses'}`,
  ].join('\n');
  reply.header('cache-control', 'public, max-age=60').type('application/did+json');
  return didWebDocument({
    did: didWebOf(origin),
    origin: origin.replace(/\/$/, ''),
    issuers: keys.issuers.map((k) => ({ publicKeyMultibase: k.publicKeyMultibase, validFrom: k.validFrom, validUntil: k.validUntil })),
    log: { origin: keys.log.origin, verifierKey: keys.log.verifierKey },
    policy: `${policy}\n`,
  });
}
