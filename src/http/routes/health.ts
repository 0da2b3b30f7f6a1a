import type { FastifyInstance } from 'fastify';

/** GET /healthz: the node answers and its store reads. */
export async function healthRoutes(app: FastifyInstance) {
  app.get('/healthz', { config: { rateLimit: false } }, async () => {
    const { store, clock, keys, appConfig } = app.akas;
    await store.get({ name: 'agents' }, '\u0000healthz');
    return { ok: true, version: appConfig.version, time: clock.now(), issuer: keys.issuer.did };
  });
}
