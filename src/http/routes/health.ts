import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { calibrationSetOf } from '../../domain/calibration-set.js';
import { Closed, Ms } from '../schemas.js';

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
            calibration: Type.String({
              enum: ['demo', 'private'],
              description: 'The calibration set in use: demo (the public one shipped in the package: its answers are known) or private (the operator\'s own, akas serve --calibration DIR).',
            }),
          }),
        },
      },
    },
    async () => {
      const { store, clock, keys, appConfig } = app.akas;
      await store.get({ name: 'agents' }, '\u0000healthz');
      return { ok: true, version: appConfig.version, time: clock.now(), issuer: keys.issuer.did, calibration: calibrationSetOf(appConfig).source };
    },
  );
}
