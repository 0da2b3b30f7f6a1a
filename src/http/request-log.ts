// The node's log (pino through fastify, on stderr): one line per request, carrying no header,
// body or query value, so secrets never reach it.
//
// Written asynchronously: a line per request written to stderr synchronously cost a system call
// per request; pino's asynchronous destination (sonic-boom) gathers the lines that come while a
// write is in flight into the next one, and is flushed when the process exits. At a low rate each
// line still goes out at once.
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { prettyDestination } from './log-lines.js';

/**
 * The node's logger at `level`, writing to the file descriptor `fd` (stderr) asynchronously:
 * pino's JSON lines, or with format `pretty` each as one line a person reads (log-lines.ts),
 * leaving out fastify's "Server listening at" lines, which `akas serve`'s banner says whole.
 */
export function nodeLogger(level: string, fd = 2, format: 'json' | 'pretty' = 'json'): Logger {
  const out = pino.destination({ dest: fd, sync: false });
  if (format === 'json') return pino({ level }, out);
  return pino(
    { level },
    prettyDestination(out, (line) => line.includes('"msg":"Server listening at ')),
  );
}

/** One line per answered request (a callback hook: no promise per request), when the logger takes info lines. */
export function registerRequestLog(app: FastifyInstance) {
  if (!(app.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info')) return;
  app.addHook('onResponse', (request, reply, done) => {
    const url = request.url;
    const q = url.indexOf('?');
    request.log.info(
      {
        method: request.method,
        path: q === -1 ? url : url.slice(0, q),
        route: request.routeOptions.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ip: request.ip,
        agent: request.caller?.agent?.tag,
      },
      'request',
    );
    done();
  });
}
