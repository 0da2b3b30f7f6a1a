// PROTOCOL 9.10: lookups in the verifiable index over the log (docs/INDEX.md). An answer proves
// itself: every index of the key with the map proof, the root and the index.root.v1 entry that
// commits it, that entry's inclusion proof under a signed checkpoint, and the log key's
// endorsement by the issuer; `akas verify lookup` checks it offline.
import { Type } from 'typebox';
import { lookupKeyProblem, MAX_LOOKUP_KEY, ServiceError } from '../../core/index.js';
import { inclusionOf } from '../../domain/log/index.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';
import { Closed, Open } from '../schemas.js';
import { entryView, nodeKeysView } from '../views/records.js';
import { LogEntrySchema } from './log-schemas.js';

/** Entries an answer carries at most (?entries=true), from `offset` among the key's indices. */
export const MAX_LOOKUP_ENTRIES = 100;

const Str = Type.String();
const Int = Type.Integer({ minimum: 0 });

export const LookupAnswer = Closed(
  {
    key: Str,
    keyHash: Type.String({ description: 'K: hex SHA-256 of the key (INDEX.md 3.1).' }),
    found: Type.Boolean(),
    indices: Type.Array(Int, { description: 'Every log index below map.size whose entry mentions the key, in order.' }),
    entries: Type.Optional(Type.Array(LogEntrySchema, { description: 'With ?entries=true: the entries at indices[offset..offset+limit].' })),
    inclusions: Type.Optional(
      Type.Array(Closed({ index: Int, size: Int, proof: Type.Array(Str) }), {
        description: "With ?entries=true&proofs=true: each entry's inclusion proof under root.checkpoint (PROTOCOL 9.5), in the order of entries.",
      }),
    ),
    offset: Type.Optional(Int),
    map: Closed({
      size: Type.Integer({ description: 'The map covers log entries 0 to size-1.' }),
      root: Type.String({ description: 'The map root, hex.' }),
      keys: Int,
      proof: Type.String({ description: 'base64 of the proof bytes (INDEX.md 5).' }),
    }),
    root: Closed(
      { entry: LogEntrySchema, inclusion: Closed({ index: Int, size: Int, proof: Type.Array(Str) }), checkpoint: Str },
      'The index.root.v1 entry that commits map.root, with its inclusion proof under a signed checkpoint (PROTOCOL 9.4).',
    ),
    logKey: Str,
    evidence: Closed({ log: Open({ origin: Str, verifierKey: Str, endorsement: Open() }) }, "The log key with the issuer's endorsement of it (PROTOCOL 8.3)."),
  },
  'Every index of a key in the log up to map.size, proven complete (PROTOCOL 9.10).',
);

const LookupRoute = {
  schema: {
    operationId: 'lookup',
    summary: 'Every log entry about a key, proven complete by the verifiable index',
    tags: ['attestations'],
    params: Type.Object({
      key: Type.String({ maxLength: MAX_LOOKUP_KEY, description: 'agent:TAG, key:DID, proposal:ID, path:/PATH, sha256:HEX or credential:ID' }),
    }),
    querystring: Type.Object(
      {
        entries: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
        offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LOOKUP_ENTRIES })),
        proofs: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
      },
      { additionalProperties: false },
    ),
    response: { 200: LookupAnswer },
  },
  config: { errors: ['invalid_lookup_key'] },
} satisfies RouteOptions;

export async function lookupRoutes(app: App) {
  app.get('/api/index/:key', LookupRoute, lookup);
}

/** PROTOCOL 9.10: the indices of a key, its map proof and the logged root, proven under a checkpoint. */
async function lookup(request: Req<typeof LookupRoute.schema>) {
  const { log, lookup: index, witnesses, appConfig, keys } = request.server.akas;
  const { key } = request.params;
  const problem = lookupKeyProblem(key);
  if (problem) {
    throw new ServiceError('invalid_lookup_key', `${JSON.stringify(key.slice(0, 80))} is not a lookup key: ${problem}.`, {
      field: 'key',
      hint: 'Keys are agent:TAG, key:did:key:..., proposal:ID, path:/PATH, sha256:<64 hex> or credential:jdg_..., percent-encoded as one path segment.',
    });
  }
  const a = await index.lookup(key);
  const { entry } = a.published;
  const proven = await inclusionOf(log, witnesses, entry, appConfig.witnessWaitMs);
  const offset = request.query.offset ?? 0;
  let shown = {};
  if (request.query.entries === 'true') {
    const seqs = a.indices.slice(offset, offset + (request.query.limit ?? MAX_LOOKUP_ENTRIES));
    const entries = (await Promise.all(seqs.map((seq) => log.entry(seq)))).flatMap((e) => (e ? [e] : []));
    // Each entry's own inclusion under the checkpoint the root entry is proven under: a reader then
    // holds every entry shown to the log itself, not only to its hash (PROTOCOL 9.10).
    const { size } = proven.inclusion;
    const inclusions =
      request.query.proofs === 'true'
        ? {
            inclusions: await Promise.all(
              entries.map(async (e) => ({ index: e.seq, size, proof: (await log.inclusion(e.seq, size)).map((b) => b.toString('base64')) })),
            ),
          }
        : {};
    shown = { offset, entries: entries.map(entryView), ...inclusions };
  }
  const { origin, verifierKey, endorsement } = nodeKeysView(keys).log;
  return {
    key,
    keyHash: a.keyHash,
    found: a.found,
    indices: a.indices,
    ...shown,
    map: { size: a.published.size, root: a.published.root, keys: a.published.keys, proof: a.proof },
    root: { entry: entryView(entry), ...proven },
    logKey: keys.log.verifierKey,
    evidence: { log: { origin, verifierKey, endorsement } },
  };
}
