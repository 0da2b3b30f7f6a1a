// A node may be a witness too (`akas serve --witness-log KEY`, PROTOCOL 9.9): the C2SP
// tlog-witness of src/witness, mounted at /witness with its own key and the node's store, so
// that two nodes can witness each other. The witness decides every answer; this plugin only
// carries the bytes (its bodies are text, not the JSON every other route reads).
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Witness } from '../../witness/index.js';
import { MAX_BODY_BYTES } from '../../witness/index.js';
import { Media } from '../../http-kit/media.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';

const text = (what: string) => Media('text/plain', { type: 'string' }, what);

const AddCheckpointRoute = {
  schema: {
    operationId: 'witnessAddCheckpoint',
    summary: 'C2SP tlog-witness add-checkpoint: cosign a checkpoint of a log this node witnesses',
    tags: ['attestations'],
    response: {
      200: text('The cosignature line(s) (C2SP tlog-cosignature).'),
      400: text('A malformed body, or an old size above the checkpoint size.'),
      403: text('No trusted signature of the log verifies.'),
      404: text('This node witnesses no log of that origin.'),
      409: Media('text/x.tlog.size', { type: 'string' }, 'The size this witness holds, and a newline.'),
      422: text('The checkpoint is not consistent with the one cosigned before.'),
    },
  },
} satisfies RouteOptions;

const CheckpointRoute = {
  schema: {
    operationId: 'witnessCheckpoint',
    summary: 'The latest checkpoint this witness cosigned for a log (by the hex SHA-256 of its origin)',
    tags: ['attestations'],
    params: Type.Object({ hash: Type.String({ pattern: '^[0-9a-f]{64}$' }) }),
    response: { 200: text('The checkpoint with the log signature and the cosignature.'), 404: text('Never cosigned one for that log.') },
  },
} satisfies RouteOptions;

export async function witnessRoutes(app: App, opts: { witness: Witness }) {
  const witness = new WitnessDoor(opts.witness);
  // This plugin's own body parser: add-checkpoint bodies are text, read as bytes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_req, body, done) => done(null, body));

  app.post('/witness/add-checkpoint', AddCheckpointRoute, witness.addCheckpoint);
  app.get('/witness/:hash/checkpoint', CheckpointRoute, witness.checkpoint);
}

/** The witness's answers carried as they are: status, media type and text. */
class WitnessDoor {
  constructor(private readonly witness: Witness) {}

  /** C2SP tlog-witness add-checkpoint: the body is the checkpoint, its old size and its proof, as text. */
  addCheckpoint = async (request: Req<typeof AddCheckpointRoute.schema>, reply: FastifyReply) => {
    const body = request.body;
    const a = await this.witness.addCheckpoint(Buffer.isBuffer(body) ? body : Buffer.alloc(0));
    return reply
      .code(a.status as 200)
      .header('cache-control', 'no-store')
      .type(a.contentType)
      .send(a.body);
  };

  /** The latest checkpoint cosigned for the log whose origin hashes to :hash. */
  checkpoint = async (request: Req<typeof CheckpointRoute.schema>, reply: FastifyReply) => {
    const a = await this.witness.latest(request.params.hash);
    return reply
      .code(a.status as 200)
      .header('cache-control', 'no-cache')
      .type(a.contentType)
      .send(a.body);
  };
}
