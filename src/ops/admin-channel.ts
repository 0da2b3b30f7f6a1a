// The local admin channel (PROTOCOL 8.7; ARCHITECTURE 1): what `akas admin` asks of a running
// node. A Unix socket in the node's data folder, mode 0600 inside a 0700 folder, never TCP: only
// the node's own user reaches it, so it needs no key of its own. One JSON line asked, one JSON
// line answered. With no node running the same change runs directly on the store
// (applyStatusChange); on PostgreSQL, directly on the database while the nodes run, which read
// the list from the database on every request and so serve the new version at once.
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { cryptoRandom, isServiceError, systemClock, type NodeKeys } from '../core/index.js';
import { defaultDomainConfig, type Ctx } from '../domain/context.js';
import { changeStatus, type StatusChangeRequest } from '../domain/credentials/status-lists.js';
import { TransparencyLog } from '../domain/log/index.js';
import type { Store } from '../store/index.js';
import { adminSocketPath, type AdminAnswer } from './admin-ask.js';

/** Longest request line the channel reads (a revoke names ids and a reason: far less). */
const MAX_LINE = 1024 * 1024;

function answerOf(e: unknown): AdminAnswer {
  if (isServiceError(e)) return { ok: false, error: { code: e.code, message: e.message, status: e.status } };
  return { ok: false, error: { code: 'internal_error', message: (e as Error).message ?? String(e), status: 500 } };
}

/**
 * Opens the channel of a running node in its data folder. A socket file left by a node that
 * died is removed first: this node holds the folder's lock, so no other node listens there.
 */
export function openAdminChannel(dataDir: string, ctx: Ctx): Promise<{ path: string; close: () => Promise<void> }> {
  const path = adminSocketPath(dataDir);
  if (existsSync(path)) unlinkSync(path);
  const server: Server = createServer((socket) => {
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      if (buffered.length > MAX_LINE) return socket.end(`${JSON.stringify(answerOf(new Error('request too long')))}\n`);
      const end = buffered.indexOf('\n');
      if (end < 0) return;
      const line = buffered.slice(0, end);
      buffered = '';
      void (async () => {
        let answer: AdminAnswer;
        try {
          const ask = JSON.parse(line) as { op: string; request: StatusChangeRequest };
          if (ask.op !== 'status') throw new Error(`unknown operation ${String(ask.op)}`);
          answer = { ok: true, result: await changeStatus(ctx, ask.request) };
        } catch (e) {
          answer = answerOf(e);
        }
        socket.end(`${JSON.stringify(answer)}\n`);
      })();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      // The folder is 0700 already; the socket itself is the node user's alone too.
      chmodSync(path, 0o600);
      server.unref();
      resolve({
        path,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            if (existsSync(path)) unlinkSync(path);
          }),
      });
    });
  });
}

/**
 * Runs a status change directly on a store no node serves from this folder (a stopped LevelDB
 * node, or a shared database): the change and its log entry commit together, then this process
 * appends the entry to the log itself rather than leave it for the next node to start.
 */
export async function applyStatusChange(opened: { store: Store; keys: NodeKeys }, request: StatusChangeRequest): Promise<AdminAnswer> {
  const ctx: Ctx = { store: opened.store, keys: opened.keys, clock: systemClock, random: cryptoRandom, config: { ...defaultDomainConfig } };
  const log = new TransparencyLog(ctx, { checkpointEveryMs: 0 });
  try {
    return { ok: true, result: await changeStatus(ctx, request) };
  } catch (e) {
    return answerOf(e);
  } finally {
    await log.drain().catch(() => undefined);
    await log.close();
  }
}
