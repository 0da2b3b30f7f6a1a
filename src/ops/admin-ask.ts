// Asking the local admin channel of a running node (admin-channel.ts answers it): what
// `akas admin revoke` does first. A door of the CLI's own into src/ops (ARCHITECTURE 1), apart
// from index.ts so that asking loads node:net and nothing of the domain or the store: importing
// index.ts cost about 170 ms of CPU here, more than the rest of the command.
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { StatusChangeRequest, StatusChangeResult } from '../domain/credentials/status-lists.js';

export const ADMIN_SOCKET = 'admin.sock';

export type AdminAnswer = { ok: true; result: StatusChangeResult } | { ok: false; error: { code: string; message: string; status: number } };

export const adminSocketPath = (dataDir: string) => join(dataDir, ADMIN_SOCKET);

/** Asks the node running in dataDir; undefined when none listens there (no socket, or a dead one's). */
export function askAdminChannel(dataDir: string, request: StatusChangeRequest): Promise<AdminAnswer | undefined> {
  const path = adminSocketPath(dataDir);
  if (!existsSync(path)) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ op: 'status', request })}\n`));
    socket.on('data', (chunk: string) => (buffered += chunk));
    socket.on('end', () => {
      try {
        resolve(JSON.parse(buffered) as AdminAnswer);
      } catch (e) {
        reject(new Error(`the node's admin channel answered something that is not JSON: ${(e as Error).message}`));
      }
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNREFUSED' || e.code === 'ENOENT' ? resolve(undefined) : reject(e)));
  });
}
