import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { calibrationSetOf } from '../../domain/calibration-set.js';
import { Closed, Ms, Nullable } from '../schemas.js';

/** GET /healthz (PROTOCOL 11.1): the node answers and its store reads. */
export async function healthRoutes(app: FastifyInstance) {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'health',
        summary: 'The node answers and its store reads',
        tags: ['discovery'],
        response: {
          200: Closed({
            ok: Type.Literal(true),
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
              description: 'The calibration set in use: demo (the public one shipped in the package: its answers are known) or private (the operator\'s own, akas serve --calibration DIR).',
            }),
          }),
        },
      },
    },
    async () => {
      const { store, clock, keys, appConfig, witnesses } = app.akas;
      await store.get({ name: 'agents' }, '\u0000healthz');
      const enforced = appConfig.sameIpCollusionCheck;
      const reason = appConfig.sameIpReason ?? (enforced ? 'one judge per client IP for each proposal' : 'turned off by the operator: agents on one IP may judge the same proposal');
      return {
        ok: true,
        version: appConfig.version,
        time: clock.now(),
        issuer: keys.issuer.did,
        sameIpRule: { enforced, reason },
        calibration: calibrationSetOf(appConfig).source,
        ...(witnesses ? { witnesses: await witnesses.status() } : {}),
      };
    },
  );
}
