// The node's log (pino through fastify, on stderr): one line per request, carrying no header,
// body or query value, so secrets never reach it.
//
// What a line costs (bench/http.ts prints it beside pino's own setups): pino's asynchronous
// destination (sonic-boom) wrote each line with its own write when none was in flight, which on
// a pipe, a file or /dev/null is nearly always: a write through libuv's thread pool (a hand-off
// to a worker thread and back) per request, more CPU than the whole bare route. The node's lines
// are now gathered over one turn of the event loop and written at the end of it, in one
// synchronous write (TurnBatch): the answers of the turn have gone out by then, a line still
// leaves within the turn it was logged in, and nothing waits in memory for a worker thread, so
// nothing is lost at exit. A synchronous write to stderr is what Node itself does for
// process.stderr on Linux (files, pipes and terminals alike). The request line is written by
// hand in pino's own format (the same bytes pino writes for it), not through pino's generic
// serializer.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { prettyDestination } from './log-lines.js';

/** Where a turn's lines go: a synchronous destination (pino.destination with sync: true). */
interface LineSink {
  write(lines: string): unknown;
}

/** Every TurnBatch of the process, written out at its exit (one listener, however many nodes a process starts). */
const batches = new Set<TurnBatch>();

/**
 * pino's destination for the node: lines written during one turn of the event loop are joined
 * and written to `out` in one write at the end of the turn (a setImmediate); a process that
 * exits before then (process.exit) writes them at its exit.
 */
export class TurnBatch {
  private pending = '';

  constructor(private readonly out: LineSink) {
    if (batches.size === 0)
      process.once('exit', () => {
        for (const b of batches) b.flush();
      });
    batches.add(this);
  }

  write(line: string): boolean {
    if (this.pending === '') setImmediate(this.flushTurn);
    this.pending += line;
    return true;
  }

  private readonly flushTurn = () => {
    const lines = this.pending;
    this.pending = '';
    if (lines !== '') this.out.write(lines);
  };

  /** pino's logger.flush() and the process's exit: what waits is written now. */
  flush(cb?: (err?: Error) => void) {
    try {
      this.flushTurn();
    } catch {
      // A closed or broken stderr: nothing left to write to.
    }
    cb?.();
  }
}

/** The node's loggers, each with where its lines go and its bindings (pid, hostname): their request line is written by hand (requestLine). */
const nodeLoggers = new WeakMap<object, { stream: LineSink; bindings: string }>();

/**
 * The node's logger at `level`, writing to the file descriptor `fd` (stderr) a turn's lines in
 * one write at the end of the turn (TurnBatch): pino's JSON lines, or with format `pretty` each
 * as one line a person reads (log-lines.ts), leaving out fastify's "Server listening at" lines,
 * which `akas serve`'s banner says whole. pino is loaded here, by a node that logs: one started
 * with --log-level silent loads none of it (fastify loads it only for a logger it is given).
 */
export async function nodeLogger(level: string, fd = 2, format: 'json' | 'pretty' = 'json'): Promise<Logger> {
  const { default: pino } = await import('pino');
  const out = new TurnBatch(pino.destination({ dest: fd, sync: true }));
  const logger =
    format === 'json'
      ? pino({ level }, out)
      : pino(
          { level },
          prettyDestination(out, (line) => line.includes('"msg":"Server listening at ')),
        );
  const own = logger as unknown as Record<symbol, unknown>;
  nodeLoggers.set(logger, { stream: own[pino.symbols.streamSym] as LineSink, bindings: own[pino.symbols.chindingsSym] as string });
  return logger;
}

type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger, made when something first logs through it. fastify gives every request a
 * child of the node's logger (`request.log`, bound to its reqId) before any hook runs, and
 * pino's child is a new logger with its bindings serialized: more CPU per request than the
 * node's whole request line (bench/http.ts), for a logger that most requests never use (the
 * request line is written by hand: requestLine). This one makes pino's child on first use,
 * with the same bindings and options, so what a request logs is the same line.
 */
class RequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: ChildOptions,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  private log(method: Method, args: unknown[]) {
    const real = this.real;
    (real[method] as (...a: unknown[]) => void).apply(real, args);
  }

  get level(): string {
    return this.made?.level ?? this.options?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  child(bindings: Record<string, unknown>, options?: ChildOptions) {
    return this.real.child(bindings, options);
  }
  fatal(...args: unknown[]) {
    this.log('fatal', args);
  }
  error(...args: unknown[]) {
    this.log('error', args);
  }
  warn(...args: unknown[]) {
    this.log('warn', args);
  }
  info(...args: unknown[]) {
    this.log('info', args);
  }
  debug(...args: unknown[]) {
    this.log('debug', args);
  }
  trace(...args: unknown[]) {
    this.log('trace', args);
  }
  silent() {}
}

/** fastify's childLoggerFactory for the node: each request's logger made on first use (RequestLogger). */
export function requestLoggerOnFirstUse(logger: FastifyBaseLogger, bindings: Record<string, unknown>, options: ChildOptions): FastifyBaseLogger {
  return new RequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}

/** The request's path, without its query (whose values may be secrets). */
const pathOf = (url: string) => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

const ms = (reply: FastifyReply) => Math.round(reply.elapsedTime * 10) / 10;

// Most strings of a line need no escaping (request ids, methods, addresses, tags, most paths):
// those are quoted as they are, the rest by JSON.stringify. Printable ASCII but " and \.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const quoted = (text: string) => (PLAIN.test(text) ? `"${text}"` : JSON.stringify(text));

/** `,"route":"…"` of each route pattern, made once: a node has a few hundred routes, each in many lines. */
const routeFields = new Map<string, string>();
function routeField(route: string | undefined): string {
  if (route === undefined) return '';
  let field = routeFields.get(route);
  if (field === undefined) routeFields.set(route, (field = `,"route":${JSON.stringify(route)}`));
  return field;
}

/**
 * The request line exactly as pino writes `request.log.info({method, path, route, status, ms,
 * ip, agent}, 'request')` for a logger made by nodeLogger: level, time, the logger's bindings
 * (pid, hostname), the request's reqId, the fields (an undefined one left out), msg.
 */
export function requestLine(bindings: string, request: FastifyRequest, reply: FastifyReply): string {
  const route = request.routeOptions.url;
  const agent = request.caller?.agent?.tag;
  const id: unknown = request.id;
  const ip: string | undefined = request.ip;
  return (
    `{"level":30,"time":${Date.now()}${bindings},"reqId":${typeof id === 'string' ? quoted(id) : JSON.stringify(id)},` +
    `"method":${quoted(request.method)},"path":${quoted(pathOf(request.url))}${routeField(route)},"status":${reply.statusCode},"ms":${ms(reply)}` +
    `${ip === undefined ? '' : `,"ip":${quoted(ip)}`}${agent === undefined ? '' : `,"agent":${quoted(agent)}`},"msg":"request"}\n`
  );
}

/** One line per answered request (a callback hook: no promise per request), when the logger takes info lines. */
export function registerRequestLog(app: FastifyInstance) {
  if (!(app.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info')) return;
  // fastify logs through a child of the logger it is given (its serializers added): the node's, or another.
  const node = nodeLoggers.get(app.log) ?? nodeLoggers.get(Object.getPrototypeOf(app.log));
  if (node) {
    const { stream, bindings } = node;
    app.addHook('onResponse', (request, reply, done) => {
      stream.write(requestLine(bindings, request, reply));
      done();
    });
    return;
  }
  // Any other logger (a test's, fastify's own from options): through pino's serializer.
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        path: pathOf(request.url),
        route: request.routeOptions.url,
        status: reply.statusCode,
        ms: ms(reply),
        ip: request.ip,
        agent: request.caller?.agent?.tag,
      },
      'request',
    );
    done();
  });
}
