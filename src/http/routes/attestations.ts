// PROTOCOL 9.1 to 9.4: the attestation catalog and schemas, the dry run, attesting, and
// reading attestations with their inclusion proofs.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ServiceError, type LogEntry } from '../../core/index.js';
import { attest, attestationKinds, cosignedNote, dryRun, kindOf, servedCheckpoint } from '../../domain/log/index.js';
import { agentOf } from '../caller.js';
import { originOf } from '../kit/urls.js';
import { entryView } from '../views.js';
import { AttestAnswer, CatalogAnswer, DryRunAnswer, EntryList, EntryWithProof, LogHead } from './log-schemas.js';
import { Open } from '../schemas.js';
import { Media } from '../kit/media.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The catalog as served at /credentials/index.json. */
function catalog(origin: string) {
  return {
    schemaVersion: '1.0.0',
    dryRunUrl: `${origin}/api/credentials/dry-run`,
    attestUrl: `${origin}/api/attestations`,
    kinds: [...attestationKinds().values()].map((k) => ({
      kind: k.kind,
      tier: k.tier,
      schemaVersion: k.schemaVersion,
      schemaUrl: `${origin}/credentials/schemas/${k.kind}.json`,
      description: k.description,
    })),
  };
}

function catalogPage(origin: string): string {
  const rows = catalog(origin)
    .kinds.map(
      (k) =>
        `<tr><td><a href="/credentials/schemas/${escapeHtml(k.kind)}.json"><code>${escapeHtml(k.kind)}</code></a></td><td>` +
        `${escapeHtml(k.tier)}</td><td>${escapeHtml(k.schemaVersion)}</td><td>${escapeHtml(k.description)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>akas attestation kinds</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.4rem .6rem;text-align:left;vertical-align:top}
code{font-size:.9em}
</style>
</head><body>
<h1>Attestation kinds</h1>
<p>Each kind has a JSON Schema. Check a candidate with <code>POST /api/credentials/dry-run {"kind", "body"}</code> (no key needed),
record one with <code>POST /api/attestations {"kind", "body"}</code> (Bearer, calibrated). Every attestation is an entry of this node's
transparency log: <code>GET /api/attestations/{id}</code> answers it with its inclusion proof and a signed checkpoint.
The same list as JSON: <a href="/credentials/index.json">/credentials/index.json</a>.</p>
<table><thead><tr><th>kind</th><th>tier</th><th>version</th><th>what it attests</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}

// An attestation's body is free-form in the route's schema and checked against its kind's
// (PROTOCOL 9.1): it holds at most what the largest kind's schema allows.
const anyKindBody = () => ({
  type: 'object',
  properties: { kind: { type: 'string', maxLength: 80 }, body: { anyOf: [...attestationKinds().values()].map((k) => k.schema) } },
});

const AttestBody = Type.Object(
  { kind: Type.String({ maxLength: 80 }), body: Type.Object({}, { additionalProperties: true, maxProperties: 100 }) },
  { additionalProperties: false },
);
const ListQuery = Type.Object(
  {
    kind: Type.Optional(Type.String({ maxLength: 80 })),
    subject: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
    agent: Type.Optional(Type.String({ maxLength: 64 })),
    proposalId: Type.Optional(Type.String({ maxLength: 64 })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,16}$' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false },
);

export async function attestationRoutes(app: FastifyInstance) {
  const ctx = app.akas;
  const log = ctx.log;

  const pageSchema = {
    operationId: 'attestationKindsPage',
    summary: 'The attestation kinds, as a page',
    tags: ['attestations'],
    response: { 200: Media('text/html', { type: 'string' }, 'An HTML page listing every kind.') },
  };
  app.get('/credentials', { schema: pageSchema }, async (request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(catalogPage(originOf(request))),
  );
  app.get(
    '/credentials/index.json',
    {
      schema: {
        operationId: 'attestationKinds',
        summary: 'The attestation kinds with their schemas',
        tags: ['attestations'],
        response: { 200: CatalogAnswer },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return catalog(originOf(request));
    },
  );
  const schemaSchema = {
    operationId: 'attestationSchema',
    summary: 'The JSON Schema of one attestation kind',
    tags: ['attestations'],
    params: Type.Object({ file: Type.String({ maxLength: 120, description: '<kind>.json' }) }),
    response: { 200: Media('application/schema+json', Open(), 'The JSON Schema of the kind.') },
  };
  app.get('/credentials/schemas/:file', { schema: schemaSchema, config: { errors: ['not_found'] } }, async (request, reply) => {
    const { file } = request.params as { file: string };
    if (!file.endsWith('.json') || !attestationKinds().has(file.slice(0, -5))) {
      throw new ServiceError('not_found', `No schema ${file}.`, { hint: 'GET /credentials/index.json lists each kind with its schemaUrl.' });
    }
    reply.header('cache-control', 'public, max-age=300').type('application/schema+json');
    return JSON.stringify(kindOf(file.slice(0, -5)).schema);
  });

  app.post(
    '/api/credentials/dry-run',
    {
      schema: {
        operationId: 'dryRun',
        summary: 'Check a candidate attestation against its kind, with no side effect',
        tags: ['attestations'],
        body: Type.Object({ kind: Type.String({ maxLength: 80 }), body: Type.Unknown() }, { additionalProperties: false }),
        response: { 200: DryRunAnswer },
      },
      config: { body: { shape: anyKindBody() }, errors: ['invalid_kind'] },
    },
    async (request) => {
      const { kind, body } = request.body as { kind: string; body: unknown };
      const r = dryRun(kind, body);
      return r.valid ? { ...r, schemaUrl: `${originOf(request)}/credentials/schemas/${r.kind}.json` } : r;
    },
  );

  const attestSchema = {
    operationId: 'attest',
    summary: 'Record an attestation in the transparency log',
    tags: ['attestations'],
    body: AttestBody,
    response: { 200: AttestAnswer },
  };
  app.post(
    '/api/attestations',
    {
      schema: attestSchema,
      config: { auth: 'required', idempotency: 'attest', body: { shape: anyKindBody() }, errors: ['invalid_kind', 'calibration_required', 'entry_too_large'] },
    },
    async (request) => {
      const { kind, body } = request.body as { kind: string; body: Record<string, unknown> };
      const entry = await attest(log, agentOf(request), kind, body);
      return {
        ...entryView(entry),
        url: `/api/attestations/${entry.id}`,
        note: 'Appended to the log; GET url for its inclusion proof against a signed checkpoint.',
      };
    },
  );

  app.get(
    '/api/attestations/head',
    { schema: { operationId: 'logHead', summary: 'The size and last entry of the log', tags: ['attestations'], response: { 200: LogHead } } },
    async () => {
      const head = await log.head();
      const cp = await log.checkpoint();
      const last = head.size ? await log.entry(head.size - 1) : undefined;
      return {
        size: head.size,
        lastHash: head.lastHash,
        lastId: last?.id ?? null,
        checkpoint: cosignedNote(cp),
        origin: ctx.keys.log.origin,
        logKey: ctx.keys.log.verifierKey,
      };
    },
  );

  const entrySchema = {
    operationId: 'attestation',
    summary: 'One log entry with its inclusion proof',
    tags: ['attestations'],
    params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
    response: { 200: EntryWithProof },
  };
  app.get('/api/attestations/:id', { schema: entrySchema, config: { errors: ['not_found'] } }, async (request) => {
    const { id } = request.params as { id: string };
    const entry = /^att_[0-9a-f]{16}$/.test(id) ? await log.entryById(id) : undefined;
    if (!entry) throw new ServiceError('not_found', `No attestation ${id} in this log.`, { hint: 'GET /api/attestations lists them.' });
    return withProof(entry);
  });

  app.get(
    '/api/attestations',
    { schema: { operationId: 'attestations', summary: 'Log entries, filtered', tags: ['attestations'], querystring: ListQuery, response: { 200: EntryList } } },
    async (request) => {
      const q = request.query as { kind?: string; subject?: string; agent?: string; proposalId?: string; cursor?: string; limit: number };
      const after = q.cursor === undefined ? undefined : Number(q.cursor);
      // The most selective index the query names; the other filters are applied on its rows.
      const prefix = q.subject
        ? `subject:${q.subject}:`
        : q.proposalId
          ? `proposal:${q.proposalId}:`
          : q.agent
            ? `agent:${q.agent}:`
            : q.kind
              ? `kind:${q.kind}:`
              : undefined;
      const keep = (e: LogEntry) =>
        (!q.kind || e.kind === q.kind) &&
        (!q.agent || e.agent === q.agent) &&
        (!q.subject || e.body.subjectSha256 === q.subject) &&
        (!q.proposalId || e.body.proposalId === q.proposalId);
      const items: LogEntry[] = [];
      let cursor = after;
      for (;;) {
        const page = prefix
          ? await log.byIndex(prefix, q.limit * 2, cursor)
          : await log.entries(cursor === undefined ? 0 : cursor + 1, (cursor === undefined ? 0 : cursor + 1) + q.limit * 2);
        if (page.length === 0) break;
        for (const e of page) {
          cursor = e.seq;
          if (keep(e)) items.push(e);
          if (items.length === q.limit) break;
        }
        if (items.length === q.limit) break;
      }
      const more = items.length === q.limit;
      return { items: items.map(entryView), nextCursor: more ? String(items[items.length - 1].seq) : null };
    },
  );

  /**
   * An entry with its inclusion proof against a checkpoint that covers it: with witnesses, the
   * newest witnessed one (waiting for the round at most witnessWaitMs), else the newest (made
   * now if it does not cover the entry). The checkpoint carries its cosignatures.
   */
  async function withProof(entry: LogEntry) {
    let { cp, note } = await servedCheckpoint(log, ctx.witnesses, entry.seq + 1, ctx.appConfig.witnessWaitMs);
    // A checkpoint being made while the entry was appended may not cover it: the next one does.
    for (let i = 0; i < 3 && cp.size <= entry.seq; i++) {
      cp = await log.checkpoint();
      note = cosignedNote(cp);
    }
    const proof = await log.inclusion(entry.seq, cp.size);
    return {
      entry: entryView(entry),
      inclusion: { index: entry.seq, size: cp.size, proof: proof.map((b) => b.toString('base64')) },
      checkpoint: note,
      logKey: ctx.keys.log.verifierKey,
    };
  }
}
