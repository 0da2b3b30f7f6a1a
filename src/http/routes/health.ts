import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { calibrationSetOf } from '../../domain/calibration/set.js';
import { storageCause, type StorageStatus } from '../../store/index.js';
import { Closed, Ms, Nullable } from '../schemas.js';
import type { App, Req, RouteOptions } from '../../http-kit/typed.js';

const Storage = Type.Object(
  {
    ok: Type.Boolean({ description: 'true: the store accepts writes.' }),
    cause: Type.Optional(
      Type.Union(
        [
          Type.Literal('disk_full'),
          Type.Literal('read_only'),
          Type.Literal('io_error'),
          Type.Literal('permission_denied'),
          Type.Literal('unavailable'),
          Type.Literal('failed'),
        ],
        { description: 'What failed underneath.' },
      ),
    ),
    detail: Type.Optional(Type.String({ description: "The system's own words for the failure (no paths)." })),
    where: Type.Optional(Type.Union([Type.Literal('store'), Type.Literal('blobs'), Type.Literal('database')])),
    since: Type.Optional(Ms('When writes stopped being accepted.')),
    recovery: Type.Optional(Type.Literal('automatic', { description: 'The node accepts writes again by itself once a probe write succeeds (every second).' })),
    action: Type.Optional(Type.String({ description: 'What the operator should do.' })),
    probes: Type.Optional(Type.Integer({ description: 'Probe writes tried since the failure.' })),
  },
  { additionalProperties: false, description: 'Whether the store accepts writes (PROTOCOL 11.1).' },
);

const Answer = {
  ok: Type.Boolean(),
  version: Type.String(),
  time: Ms(),
  issuer: Type.String({ description: 'The current issuer did:key.' }),
  witnesses: Type.Optional(
    Type.Array(
      Closed({
        name: Type.String(),
        url: Type.String(),
        cosignedSize: Type.Integer({ description: 'The largest checkpoint size the witness cosigned for this node.' }),
        lag: Type.Integer({ description: 'Entries of the newest checkpoint it has not cosigned.' }),
        cosignedAt: Nullable(Ms()),
        lastError: Nullable(Type.String()),
      }),
      { description: 'With witnesses configured: how far each lags (PROTOCOL 9.9).' },
    ),
  ),
  sameIpRule: Closed(
    { enforced: Type.Boolean(), reason: Type.String() },
    'Whether a proposal takes one judge per client IP here (PROTOCOL 7.5), and why: a node that can tell its clients apart by IP enforces it.',
  ),
  calibration: Type.String({
    enum: ['demo', 'private'],
    description:
      "The calibration set in use: demo (the public one shipped in the package: its answers are known) or private (the operator's own, " +
      'akas serve --calibration DIR).',
  }),
  storage: Storage,
  seeding: Type.Optional(
    Closed(
      { what: Type.String(), since: Ms('When seeding began.') },
      'Present while `akas serve --demo` seeds its demo tree: the node answers 503 until the tree is in, so a script waiting for health reads it whole.',
    ),
  ),
};

const HealthRoute = {
  schema: {
    operationId: 'health',
    summary: 'The node answers, its store reads, and whether it accepts writes',
    tags: ['discovery'],
    response: {
      200: Closed({ ...Answer, ok: Type.Literal(true) }),
      503: Closed(
        { ...Answer, ok: Type.Literal(false) },
        'The store does not accept writes (storage says why and what to do), or does not read; reads may still work. ' +
          'Or the demo tree is being seeded (seeding).',
      ),
    },
  },
  // No token: a probe answers whatever the caller's bucket holds (PROTOCOL 1.4). One point
  // read of the store and no scan, so it costs what a 429 would.
  config: { healthProbe: true },
} satisfies RouteOptions;

export async function healthRoutes(app: App) {
  app.get('/healthz', HealthRoute, health);
}

/** GET /healthz (PROTOCOL 11.1): the node answers, its store reads, and whether it accepts writes. */
async function health(request: Req<typeof HealthRoute.schema>, reply: FastifyReply) {
  const { store, clock, keys, appConfig, witnesses, seeding } = request.server.akas;
  let storage: StorageStatus = store.health.status();
  try {
    await store.get({ name: 'agents' }, '\u0000healthz');
  } catch (e) {
    // The store does not even read (a database gone): that is what the answer says.
    storage = store.health.status();
    if (storage.ok) storage = { ok: false, cause: storageCause(e) ?? 'failed', detail: 'the store failed a read' };
  }
  const enforced = appConfig.sameIpCollusionCheck;
  const reason =
    appConfig.sameIpReason ??
    (enforced ? 'one judge per client IP for each proposal' : 'turned off by the operator: agents on one IP may judge the same proposal');
  const body = {
    ok: storage.ok,
    version: appConfig.version,
    time: clock.now(),
    issuer: keys.issuer.did,
    sameIpRule: { enforced, reason },
    calibration: calibrationSetOf(appConfig).source,
    ...(witnesses ? { witnesses: await witnesses.status() } : {}),
    storage,
    ...(seeding ? { seeding } : {}),
  };
  return storage.ok && !seeding ? body : reply.code(503).send({ ...body, ok: false });
}
