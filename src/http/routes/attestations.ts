// PROTOCOL 9.1 to 9.4: the attestation catalog and schemas, the dry run, attesting, and
// reading attestations with their inclusion proofs.
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { ServiceError } from '../../core/index.js';
import { attest, attestationKinds, cosignedNote, dryRun, findEntries, inclusionOf, kindOf } from '../../domain/log/index.js';
import { agentOf } from '../caller.js';
import { originOf } from '../../http-kit/urls.js';
import { entryView, nodeKeysView } from '../views/records.js';
import { catalogPage, catalogView } from '../views/attestations.js';
import { AttestAnswer, CatalogAnswer, DryRunAnswer, EntryList, EntryWithProof, LogHead } from './log-schemas.js';
import { Closed, FreeObject, Open } from '../schemas.js';
import { EvidenceQuery } from './knowledge-schemas.js';
import { Media } from '../../http-kit/media.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';

// An attestation's body is free-form in the route's schema and checked against its kind's
// (PROTOCOL 9.1): it holds at most what the largest kind's schema allows.
const anyKindBody = () => ({
  type: 'object',
  properties: { kind: { type: 'string', maxLength: 80 }, body: { anyOf: [...attestationKinds().values()].map((k) => k.schema) } },
});

const AttestBody = Type.Object({ kind: Type.String({ maxLength: 80 }), body: FreeObject({ maxProperties: 100 }) }, { additionalProperties: false });
/** Entries a listing page holds when it does not say (ajv fills it in; the handler's type does not know that). */
const PAGE = 50;
const ListQuery = Type.Object(
  {
    kind: Type.Optional(Type.String({ maxLength: 80 })),
    subject: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
    agent: Type.Optional(Type.String({ maxLength: 64 })),
    proposalId: Type.Optional(Type.String({ maxLength: 64 })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,16}$' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: PAGE })),
  },
  { additionalProperties: false },
);

const PageRoute = {
  schema: {
    operationId: 'attestationKindsPage',
    summary: 'The attestation kinds, as a page',
    tags: ['attestations'],
    response: { 200: Media('text/html', { type: 'string' }, 'An HTML page listing every kind.') },
  },
} satisfies RouteOptions;

const CatalogRoute = {
  schema: { operationId: 'attestationKinds', summary: 'The attestation kinds with their schemas', tags: ['attestations'], response: { 200: CatalogAnswer } },
} satisfies RouteOptions;

const KindSchemaRoute = {
  schema: {
    operationId: 'attestationSchema',
    summary: 'The JSON Schema of one attestation kind',
    tags: ['attestations'],
    params: Type.Object({ file: Type.String({ maxLength: 120, description: '<kind>.json' }) }),
    response: { 200: Media('application/schema+json', Open(), 'The JSON Schema of the kind.') },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const DryRunSchema = {
  operationId: 'dryRun',
  summary: 'Check a candidate attestation against its kind, with no side effect',
  tags: ['attestations'],
  body: Type.Object({ kind: Type.String({ maxLength: 80 }), body: Type.Unknown() }, { additionalProperties: false }),
  response: { 200: DryRunAnswer },
};

const AttestSchema = {
  operationId: 'attest',
  summary: 'Record an attestation in the transparency log',
  tags: ['attestations'],
  body: AttestBody,
  response: { 200: AttestAnswer },
};

// The candidates' bounds come from the kinds' schemas (anyKindBody), read from data/ as the node
// starts rather than when this file loads.
const dryRunRoute = () => ({ schema: DryRunSchema, config: { body: { shape: anyKindBody() }, errors: ['invalid_kind'] } }) satisfies RouteOptions;

const attestRoute = () =>
  ({
    schema: AttestSchema,
    config: { auth: 'required', idempotency: 'attest', body: { shape: anyKindBody() }, errors: ['invalid_kind', 'calibration_required', 'entry_too_large'] },
  }) satisfies RouteOptions;

const HeadRoute = {
  schema: { operationId: 'logHead', summary: 'The size and last entry of the log', tags: ['attestations'], response: { 200: LogHead } },
} satisfies RouteOptions;

/**
 * An entry read with ?evidence=full (PROTOCOL 9.4): the log key's endorsement by the issuer and the
 * issuer's keys, so a reader that pinned the issuer anchors the log key.
 */
const EntryRead = Closed(
  {
    ...EntryWithProof.properties,
    evidence: Type.Optional(
      Closed(
        { log: Open({ origin: Type.String(), verifierKey: Type.String(), endorsement: Open() }), issuerKeys: Open() },
        "With ?evidence=full: the log key with the issuer's endorsement of it, and the issuer's keys and signed rotations (PROTOCOL 8.3).",
      ),
    ),
  },
  'The entry with its inclusion proof against a signed checkpoint that covers it (PROTOCOL 9.4); with ?evidence=full, what anchors the log key.',
);

const EntryRoute = {
  schema: {
    operationId: 'attestation',
    summary: 'One log entry with its inclusion proof',
    tags: ['attestations'],
    params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
    querystring: Type.Object({ evidence: EvidenceQuery }, { additionalProperties: false }),
    response: { 200: EntryRead },
  },
  config: { errors: ['not_found'] },
} satisfies RouteOptions;

const ListRoute = {
  schema: { operationId: 'attestations', summary: 'Log entries, filtered', tags: ['attestations'], querystring: ListQuery, response: { 200: EntryList } },
} satisfies RouteOptions;

export async function attestationRoutes(app: App) {
  app.get('/credentials', PageRoute, kindsPage);
  app.get('/credentials/index.json', CatalogRoute, kinds);
  app.get('/credentials/schemas/:file', KindSchemaRoute, kindSchema);
  app.post('/api/credentials/dry-run', dryRunRoute(), dryRunCandidate);
  app.post('/api/attestations', attestRoute(), attestation);
  app.get('/api/attestations/head', HeadRoute, head);
  app.get('/api/attestations/:id', EntryRoute, entryWithProof);
  app.get('/api/attestations', ListRoute, list);
}

/** PROTOCOL 9.1: the catalog as a page. */
async function kindsPage(request: Req<typeof PageRoute.schema>, reply: FastifyReply) {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'public, max-age=300')
    .send(catalogPage(originOf(request)));
}

/** PROTOCOL 9.1: every kind with its tier, version and schema URL. */
async function kinds(request: Req<typeof CatalogRoute.schema>, reply: FastifyReply) {
  reply.header('cache-control', 'public, max-age=300');
  return catalogView(originOf(request));
}

/** PROTOCOL 9.1: one kind's JSON Schema, by <kind>.json. */
async function kindSchema(request: Req<typeof KindSchemaRoute.schema>, reply: FastifyReply) {
  const { file } = request.params;
  if (!file.endsWith('.json') || !attestationKinds().has(file.slice(0, -5))) {
    throw new ServiceError('not_found', `No schema ${file}.`, { hint: 'GET /credentials/index.json lists each kind with its schemaUrl.' });
  }
  reply.header('cache-control', 'public, max-age=300').type('application/schema+json');
  return JSON.stringify(kindOf(file.slice(0, -5)).schema);
}

/** PROTOCOL 9.2: a candidate checked against its kind's schema, recording nothing. */
async function dryRunCandidate(request: Req<typeof DryRunSchema>) {
  const { kind, body } = request.body;
  const r = dryRun(kind, body);
  return r.valid ? { ...r, schemaUrl: `${originOf(request)}/credentials/schemas/${r.kind}.json` } : r;
}

/** PROTOCOL 9.3: an attestation appended to the log. */
async function attestation(request: Req<typeof AttestSchema>) {
  const { kind, body } = request.body;
  const entry = await attest(request.server.akas.log, agentOf(request), kind, body);
  return {
    ...entryView(entry),
    url: `/api/attestations/${entry.id}`,
    note: 'Appended to the log; GET url for its inclusion proof against a signed checkpoint.',
  };
}

/** PROTOCOL 9.4: the log's size, its last entry and its newest checkpoint. */
async function head(request: Req<typeof HeadRoute.schema>) {
  const { log, keys } = request.server.akas;
  const h = await log.head();
  const cp = await log.checkpoint();
  const last = h.size ? await log.entry(h.size - 1) : undefined;
  return {
    size: h.size,
    lastHash: h.lastHash,
    lastId: last?.id ?? null,
    checkpoint: cosignedNote(cp),
    origin: keys.log.origin,
    logKey: keys.log.verifierKey,
  };
}

/** PROTOCOL 9.4: one attestation with its inclusion proof against a checkpoint that covers it. */
async function entryWithProof(request: Req<typeof EntryRoute.schema>) {
  const { log, witnesses, appConfig, keys } = request.server.akas;
  const { id } = request.params;
  const entry = /^att_[0-9a-f]{16}$/.test(id) ? await log.entryById(id) : undefined;
  if (!entry) throw new ServiceError('not_found', `No attestation ${id} in this log.`, { hint: 'GET /api/attestations lists them.' });
  const read = { entry: entryView(entry), ...(await inclusionOf(log, witnesses, entry, appConfig.witnessWaitMs)), logKey: keys.log.verifierKey };
  if (request.query.evidence !== 'full') return read;
  const { origin, verifierKey, endorsement } = nodeKeysView(keys).log;
  return { ...read, evidence: { log: { origin, verifierKey, endorsement }, issuerKeys: nodeKeysView(keys).issuer } };
}

/** PROTOCOL 9.4: entries by kind, subject, agent or proposal, a page at a time. */
async function list(request: Req<typeof ListRoute.schema>) {
  const { cursor, limit = PAGE, ...filter } = request.query;
  const { items, more } = await findEntries(request.server.akas.log, filter, limit, cursor === undefined ? undefined : Number(cursor));
  return { items: items.map(entryView), nextCursor: more ? String(items[items.length - 1].seq) : null };
}
