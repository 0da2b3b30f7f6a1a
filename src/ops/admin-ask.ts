// Asking the local admin channel of a running node (admin-channel.ts answers it): what
// `akas admin revoke` does first. A door of the CLI's own into src/ops (ARCHITECTURE 1), apart
// from index.ts so that asking loads node:net and nothing of the domain or the store: importing
// index.ts cost about 170 ms of CPU here, more than the rest of the command.
//
// Where the socket lives is decided here, for both sides (PROTOCOL 8.7): DATA/admin.sock when
// that path fits a Unix socket address, else a file named by a hash of the data folder's real
// path in a short folder of this user's alone. A longer path is not refused by the kernel: Node
// cuts it silently and binds somewhere else (issue 54: a stray socket in the parent folder).
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { connect } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import type { StatusChangeRequest, StatusChangeResult } from '../domain/credentials/status-lists.js';

// The running nodes' records (node-registry.ts): `akas serve` writes its own, `akas admin` reads
// them to find the node meant; named here so that the CLI's door into asking stays this one file.
export { liveNodes, type LiveNode, NodeRegistryError, nodeRegistryFolder, realDataFolder, recordNode } from './node-registry.js';

export const ADMIN_SOCKET = 'admin.sock';

/** The longest socket path a bind takes whole, in bytes: sun_path less its NUL (108 on Linux, 104 on macOS and the BSDs). */
export const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103;

export type AdminAnswer =
  | { ok: true; result: StatusChangeResult }
  | { ok: false; error: { code: string; message: string; status: number; errors?: Array<{ field: string; reason: string }> } };

/** The admin socket cannot be placed or opened: `akas serve` refuses to start, before anything is written. */
export class AdminSocketError extends Error {
  override readonly name = 'AdminSocketError';
}

const fits = (path: string) => Buffer.byteLength(path) <= MAX_SOCKET_PATH;

/** The real path of a folder, one not made yet too (its nearest existing parent's real path, then the rest): the same before and after the node makes it. */
function realFolder(dir: string): string {
  const rest: string[] = [];
  let head = resolve(dir);
  for (;;) {
    try {
      return join(realpathSync(head), ...rest);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(head) === head) return resolve(dir);
      rest.unshift(basename(head));
      head = dirname(head);
    }
  }
}

/** The short folders of this user's alone a socket may go in when DATA/admin.sock is too long, in the order they are tried. */
function runtimeFolders(env: NodeJS.ProcessEnv): string[] {
  const user = typeof process.getuid === 'function' ? String(process.getuid()) : 'user';
  const xdg = env.XDG_RUNTIME_DIR;
  return [...(xdg?.startsWith('/') ? [join(xdg, 'akas')] : []), join('/tmp', `akas-${user}`)];
}

/**
 * Every place the admin socket of the node in `dataDir` may be, in the order the node tries
 * them: DATA/admin.sock alone when its path fits; else <folder>/<sha256 of the data folder's real
 * path, 32 hex>.sock in $XDG_RUNTIME_DIR/akas, then /tmp/akas-<uid> (a node and an operator's
 * shell may not share XDG_RUNTIME_DIR, so the asking side tries each). Empty: nowhere fits.
 */
export function adminSocketPlaces(dataDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const real = realFolder(dataDir);
  if (fits(join(real, ADMIN_SOCKET))) return [join(real, ADMIN_SOCKET)];
  const name = hashedSocketName(real);
  return runtimeFolders(env)
    .map((folder) => join(folder, name))
    .filter(fits);
}

/** The name of a data folder's socket in a runtime folder: the first 32 hex of the sha256 of its real path. */
const hashedSocketName = (real: string) => `${createHash('sha256').update(real).digest('hex').slice(0, 32)}.sock`;

/** Why a runtime folder may not hold the socket (a link, another owner, others may enter), or undefined when it may. */
function unsafeFolder(folder: string): string | undefined {
  let st;
  try {
    st = lstatSync(folder);
  } catch (e) {
    return `${folder} cannot be read (${(e as NodeJS.ErrnoException).code})`;
  }
  if (!st.isDirectory()) return `${folder} is not a folder (a link or a file is there)`;
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return `${folder} belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o077) !== 0) return `${folder} has mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}, not 0700`;
  return undefined;
}

/**
 * Where `akas serve` binds the admin socket of the node in `dataDir`, checked before the node
 * writes anything or binds its port: DATA/admin.sock when it fits, else the first runtime folder
 * (made 0700 when missing) that is this user's alone. AdminSocketError when there is none.
 */
export function prepareAdminSocket(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const places = adminSocketPlaces(dataDir, env);
  const inData = join(realFolder(dataDir), ADMIN_SOCKET);
  if (places[0] === inData) return inData;
  // The folder is private; the socket's name is the data folder's, whose lock the node holds.
  const refused: string[] = [];
  for (const place of places) {
    const folder = dirname(place);
    try {
      mkdirSync(folder, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        refused.push(`${folder} cannot be made (${(e as NodeJS.ErrnoException).code})`);
        continue;
      }
    }
    const why = unsafeFolder(folder);
    if (!why) return place;
    refused.push(why);
  }
  throw new AdminSocketError(
    `the admin socket cannot be placed: ${inData} is ${Buffer.byteLength(inData)} bytes, more than the ${MAX_SOCKET_PATH} a Unix socket path ` +
      `may have, and ${refused.length ? refused.join('; ') : 'no runtime folder has a path short enough'}: give --data a shorter path` +
      `${refused.length ? ', or make that folder mode 0700 and your own' : ''}`,
  );
}

/**
 * Asks the node running in dataDir; undefined when none listens there (no socket, or a dead
 * one's). `bound`: the socket the node's record names (node-registry.ts), asked first: the node
 * and this shell may not share XDG_RUNTIME_DIR. It is asked only when it is this data folder's
 * (DATA/admin.sock or its hashed name) in a folder of this user's alone.
 */
export async function askAdminChannel(
  dataDir: string,
  request: StatusChangeRequest,
  env: NodeJS.ProcessEnv = process.env,
  bound?: string,
): Promise<AdminAnswer | undefined> {
  const real = realFolder(dataDir);
  const inData = join(real, ADMIN_SOCKET);
  const recorded = bound && (bound === inData || basename(bound) === hashedSocketName(real)) ? [bound] : [];
  for (const path of [...new Set([...recorded, ...adminSocketPlaces(dataDir, env)])]) {
    // A runtime folder that is not this user's alone may hold anyone's socket: never asked.
    if (!existsSync(path) || ((path !== inData || recorded.includes(path)) && unsafeFolder(dirname(path)))) continue;
    const answer = await askAt(path, request);
    if (answer) return answer;
  }
  return undefined;
}

function askAt(path: string, request: StatusChangeRequest): Promise<AdminAnswer | undefined> {
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
