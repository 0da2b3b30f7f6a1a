// The local admin channel (PROTOCOL 8.7; ARCHITECTURE 1): what `akas admin` asks of a running
// node. A Unix socket in the node's data folder (or, when that path is too long for a socket, in
// a runtime folder of the node user's alone: admin-ask.ts), mode 0600 inside a 0700 folder, never
// TCP: only the node's own user reaches it, so it needs no key of its own. One JSON line asked,
// checked against the channel's schema, one JSON line answered, in the channel's own codes; a
// connection is bounded in its line, its idleness and their number (issue 54). With no node
// running the same change runs directly on the store (applyStatusChange); on PostgreSQL, directly
// on the database while the nodes run, which read the list from the database on every request
// and so serve the new version at once.
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { cryptoRandom, isServiceError, systemClock, TAG_RE, type NodeKeys } from '../core/index.js';
import { defaultDomainConfig, type Ctx, type Strategies } from '../domain/context.js';
import { changeStatus, MAX_REASON_LENGTH, type StatusChangeRequest } from '../domain/credentials/status-lists.js';
import { TransparencyLog } from '../domain/log/index.js';
import type { Store } from '../store/index.js';
import { AdminSocketError, type AdminAnswer } from './admin-ask.js';

/** Longest request line the channel reads, in bytes (a revoke names ids and a reason: far less). */
export const MAX_LINE_BYTES = 64 * 1024;
/** Ids one request may name, and the length of each (a credential URL as the node serves it is far shorter). */
export const MAX_IDS = 1000;
export const MAX_ID_LENGTH = 512;
/** A connection that sends no whole line for this long is answered idle_timeout and closed. */
export const ADMIN_IDLE_MS = 10_000;
/** Connections open at once; one more is answered busy and closed. */
export const ADMIN_MAX_CONNECTIONS = 16;

const ACTIONS = ['revoke', 'suspend', 'unsuspend'] as const;

/** The channel's refusals (PROTOCOL 8.7): its own codes, never an exception's text. */
function refusal(code: string, status: number, message: string, errors?: Array<{ field: string; reason: string }>): AdminAnswer {
  return { ok: false, error: { code, message, status, ...(errors ? { errors } : {}) } };
}

/** A change the node refused keeps the node's code (not_found, validation_failed); anything else is internal_error, its text for the node's log only. */
function answerOf(e: unknown, onInternalError?: (e: unknown) => void): AdminAnswer {
  if (isServiceError(e))
    return { ok: false, error: { code: e.code, message: e.message, status: e.status, ...(e.extra.errors ? { errors: e.extra.errors as never } : {}) } };
  onInternalError?.(e);
  return refusal('internal_error', 500, "the change failed inside the node: the node's log says why");
}

/**
 * The one request the channel takes, checked field by field (PROTOCOL 8.7): {op: "status",
 * request: {action: revoke|suspend|unsuspend, reason: 1..500 characters, ids?: [1..1000 strings
 * of 1..512], judge?: ak_ tag}}, nothing else. Answers the request, or the refusal that lists
 * each field that does not fit.
 */
export function checkAdminLine(line: string): { request: StatusChangeRequest } | { refused: AdminAnswer } {
  let ask: unknown;
  try {
    ask = JSON.parse(line);
  } catch {
    return { refused: refusal('malformed_line', 400, 'the line is not JSON: send one JSON object on one line, ended by a newline') };
  }
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(ask)) return { refused: refusal('malformed_line', 400, 'the line is not a JSON object') };
  const errors: Array<{ field: string; reason: string }> = [];
  for (const k of Object.keys(ask)) if (k !== 'op' && k !== 'request') errors.push({ field: k, reason: 'unknown' });
  if (ask.op !== 'status') errors.push({ field: 'op', reason: 'one of: status' });
  const r = ask.request;
  if (!isObject(r)) errors.push({ field: 'request', reason: 'an object' });
  else {
    for (const k of Object.keys(r)) if (!['action', 'reason', 'ids', 'judge'].includes(k)) errors.push({ field: `request.${k}`, reason: 'unknown' });
    if (!(ACTIONS as readonly unknown[]).includes(r.action)) errors.push({ field: 'request.action', reason: `one of: ${ACTIONS.join(', ')}` });
    if (typeof r.reason !== 'string' || !r.reason.trim() || r.reason.trim().length > MAX_REASON_LENGTH)
      errors.push({ field: 'request.reason', reason: `text of 1 to ${MAX_REASON_LENGTH} characters` });
    if (
      r.ids !== undefined &&
      !(Array.isArray(r.ids) && r.ids.length <= MAX_IDS && r.ids.every((id) => typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_LENGTH))
    )
      errors.push({ field: 'request.ids', reason: `up to ${MAX_IDS} strings of 1 to ${MAX_ID_LENGTH} characters` });
    if (r.judge !== undefined && !(typeof r.judge === 'string' && TAG_RE.test(r.judge)))
      errors.push({ field: 'request.judge', reason: 'an agent tag (ak_ and 8 letters or digits)' });
    if (errors.length === 0 && !(Array.isArray(r.ids) && r.ids.length) && r.judge === undefined)
      errors.push({ field: 'request.ids', reason: 'name a credential, or a judge' });
  }
  if (errors.length)
    return {
      refused: refusal(
        'invalid_request',
        400,
        `the request does not fit the channel's schema: ${errors.map((e) => `${e.field} (${e.reason})`).join(', ')}`,
        errors,
      ),
    };
  return { request: ask.request as unknown as StatusChangeRequest };
}

export interface AdminChannelOptions {
  /** How long a connection may stay without sending a whole line (ms; ADMIN_IDLE_MS). */
  idleMs?: number;
  /** Connections open at once (ADMIN_MAX_CONNECTIONS). */
  maxConnections?: number;
  /** Told of a failure inside the node (the node's log); the asker hears internal_error alone. */
  onInternalError?: (e: unknown) => void;
}

/**
 * Serves one connection: one line asked, one answered, then the connection closes. What comes
 * after the first line is not read; a connection idle for idleMs is answered and closed.
 */
function serveConnection(socket: Socket, ctx: Ctx, o: Required<Pick<AdminChannelOptions, 'idleMs'>> & AdminChannelOptions) {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let done = false;
  const finish = (answer: AdminAnswer) => {
    done = true;
    socket.setTimeout(o.idleMs);
    socket.end(`${JSON.stringify(answer)}\n`);
  };
  socket.on('error', () => undefined);
  socket.setTimeout(o.idleMs);
  socket.on('timeout', () => {
    // An answer the asker does not read holds the connection no longer than a silence does.
    if (done) return socket.destroy();
    finish(refusal('idle_timeout', 408, `no whole line within ${o.idleMs} ms: the connection is closed`));
    socket.destroySoon();
  });
  const onData = (chunk: Buffer) => {
    const end = chunk.indexOf(0x0a);
    const take = end < 0 ? chunk : chunk.subarray(0, end);
    bytes += take.length;
    if (bytes > MAX_LINE_BYTES) {
      socket.off('data', onData);
      finish(refusal('line_too_long', 413, `a line is at most ${MAX_LINE_BYTES} bytes: name fewer ids in one request`));
      return socket.destroySoon();
    }
    chunks.push(take);
    if (end < 0) return;
    socket.off('data', onData);
    socket.pause();
    // Nothing runs on the node's behalf while the change does: the idle clock waits for it.
    socket.setTimeout(0);
    const checked = checkAdminLine(Buffer.concat(chunks).toString('utf8'));
    if ('refused' in checked) return finish(checked.refused);
    void changeStatus(ctx, checked.request).then(
      (result) => finish({ ok: true, result }),
      (e: unknown) => finish(answerOf(e, o.onInternalError)),
    );
  };
  socket.on('data', onData);
}

/**
 * Opens the channel of a running node at `path` (prepareAdminSocket's place: in its data folder,
 * or in a private runtime folder when that path is too long for a socket). A socket file left by
 * a node that died is removed first: this node holds the data folder's lock, and the place is
 * that folder's alone, so no other node listens there. AdminSocketError when it cannot listen.
 */
export function openAdminChannel(path: string, ctx: Ctx, options: AdminChannelOptions = {}): Promise<{ path: string; close: () => Promise<void> }> {
  const o = { ...options, idleMs: options.idleMs ?? ADMIN_IDLE_MS };
  const max = options.maxConnections ?? ADMIN_MAX_CONNECTIONS;
  const open = new Set<Socket>();
  const server: Server = createServer((socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (open.size > max) {
      socket.on('error', () => undefined);
      socket.end(`${JSON.stringify(refusal('busy', 503, `${max} connections are open to the admin channel: ask again once one closes`))}\n`);
      socket.destroySoon();
      return;
    }
    serveConnection(socket, ctx, o);
  });
  return new Promise((resolve, reject) => {
    const failed = (e: NodeJS.ErrnoException) =>
      reject(new AdminSocketError(`the admin socket ${path} cannot be opened (${e.code ?? e.message}): stop what holds it, or give --data another folder`));
    try {
      if (existsSync(path)) unlinkSync(path);
    } catch (e) {
      return failed(e as NodeJS.ErrnoException);
    }
    server.once('error', failed);
    server.listen(path, () => {
      server.off('error', failed);
      // The folder is 0700 already; the socket itself is the node user's alone too.
      chmodSync(path, 0o600);
      server.unref();
      resolve({
        path,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // The node is stopping: a connection still open is not waited for.
            for (const socket of open) socket.destroy();
            if (existsSync(path)) unlinkSync(path);
          }),
      });
    });
  });
}

/**
 * Runs a status change directly on a store no node serves from this folder (a stopped LevelDB
 * node, or a shared database): the change and its log entry commit together, then this process
 * appends the entry to the log itself rather than leave it for the next node to start. The
 * request is held to the channel's schema too, so a running and a stopped node refuse alike; a
 * failure that is no refusal is thrown (this process is the operator's: its text is theirs).
 */
export async function applyStatusChange(
  opened: { store: Store; keys: NodeKeys; strategies: () => Promise<Strategies> },
  request: StatusChangeRequest,
): Promise<AdminAnswer> {
  const checked = checkAdminLine(JSON.stringify({ op: 'status', request }));
  if ('refused' in checked) return checked.refused;
  const ctx: Ctx = {
    store: opened.store,
    keys: opened.keys,
    clock: systemClock,
    random: cryptoRandom,
    config: { ...defaultDomainConfig },
    // This process's strategies on the store, as the node assembled on it would have them.
    strategies: await opened.strategies(),
  };
  const log = new TransparencyLog(ctx, { checkpointEveryMs: 0 });
  try {
    return { ok: true, result: await changeStatus(ctx, checked.request) };
  } catch (e) {
    if (!isServiceError(e)) throw e;
    return answerOf(e);
  } finally {
    await log.drain().catch(() => undefined);
    await log.close();
  }
}
