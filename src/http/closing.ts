// A node that is closing (SIGTERM, `akas serve` stopping) answers what still reaches it in the
// error envelope (PROTOCOL 1.3): 503 shutting_down with Connection: close, and nothing done.
// fastify's own answer while it drains (return503OnClosing) is a body of its own with no
// `code`, which a client cannot tell from any other failure: the chaos harness met it on
// processes restarted under load (seeds 2 and 3 of test/chaos/regressions.json).
import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../core/index.js';

/** Refuses, in the envelope, every request that arrives once the app has begun to close. */
export function registerClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A callback hook: an async one costs every request a promise (bench/http.ts).
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    done(
      new ServiceError('shutting_down', 'This node is shutting down: nothing was done. Retry; the node, or another process of it, answers again.', {
        hint: 'Send the same request again (with the same Idempotency-Key for a write) once the node is back, or to another of its processes.',
      }),
    );
  });
}
