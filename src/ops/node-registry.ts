// Where the running nodes of this user are found (PROTOCOL 8.7; issue 47, 3): `akas serve` records
// itself in $XDG_STATE_HOME/akas/nodes (else ~/.local/state/akas/nodes) once it listens, and
// removes the record when it stops; `akas admin revoke` with no --data reads the live ones, so an
// operator's revocation goes to the node that runs, not to whatever ./.akas holds.
//
// One small JSON file a node, written whole (a temporary file renamed in place, mode 0600, in a
// folder of 0700), named by a hash of where the node keeps its data and by its pid: two nodes never
// share a file, and a record left by a node that was killed is told apart from its successor's. A
// record whose process is gone, or whose admin socket no longer answers, is stale: skipped and
// removed when listing. The registry only points; nothing is trusted from it that the operator's
// own files do not confirm (a record is read only from a folder of this user's alone, and its
// socket asked only when it is this user's, admin-ask.ts).
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** What a running node says of itself. `dataDir` or `store`: a LevelDB node's folder, or a shared database (its URL without password). */
export interface NodeRecord {
  pid: number;
  /** The address it listens on, e.g. http://127.0.0.1:7373. */
  url: string;
  /** The origin its documents name (--public-url), when it is not `url`. */
  publicUrl?: string;
  /** The data folder's real path (LevelDB). */
  dataDir?: string;
  /** The postgres:// URL without its password (PostgreSQL: no data folder of its own). */
  store?: string;
  /** The admin socket the node bound (absent on PostgreSQL: its admin goes to the database). */
  socket?: string;
  startedAt: string;
}

/** A live node as listed: its record and the file that holds it. */
export interface LiveNode extends NodeRecord {
  file: string;
}

/** Record files read when listing, and the bytes of each (a record is a few hundred bytes). */
export const MAX_RECORDS = 256;
export const MAX_RECORD_BYTES = 16 * 1024;
/** How long a socket that neither accepts nor refuses is waited for before the node is taken as live (it exists; it may be busy). */
const PROBE_GUARD_MS = 2000;

/** The folder records live in: $XDG_STATE_HOME/akas/nodes when XDG_STATE_HOME is absolute (the XDG rule), else ~/.local/state/akas/nodes. */
export function nodeRegistryFolder(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME?.startsWith('/') ? env.XDG_STATE_HOME : join(env.HOME || homedir(), '.local', 'state');
  return join(state, 'akas', 'nodes');
}

/** The real path of a folder (as the node named it when it does not resolve). */
export function realDataFolder(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

/** Why the registry folder may not be trusted (a link, another owner, others may enter), or undefined when it may. */
function unsafeFolder(folder: string): string | undefined {
  const st = lstatSync(folder);
  if (!st.isDirectory()) return `${folder} is not a folder (a link or a file is there)`;
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return `${folder} belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o077) !== 0) return `${folder} has mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}, not 0700`;
  return undefined;
}

/** The registry's error: the folder cannot be made, or others may write in it. */
export class NodeRegistryError extends Error {
  override readonly name = 'NodeRegistryError';
}

/**
 * Records a node that listens (`akas serve`, once listening): answers the file and what removes
 * it (idempotent, synchronous: it runs from signal and exit handlers). NodeRegistryError when the
 * folder cannot be made or is not this user's alone: the node runs all the same, unrecorded.
 */
export function recordNode(node: Omit<NodeRecord, 'pid' | 'startedAt'>, env: NodeJS.ProcessEnv = process.env): { file: string; remove: () => void } {
  const folder = nodeRegistryFolder(env);
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new NodeRegistryError(`the node registry ${folder} cannot be made (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const why = unsafeFolder(folder);
  if (why) throw new NodeRegistryError(`the node registry is not used: ${why}`);
  const record: NodeRecord = {
    pid: process.pid,
    url: node.url,
    ...(node.publicUrl && node.publicUrl !== node.url ? { publicUrl: node.publicUrl } : {}),
    ...(node.dataDir ? { dataDir: realDataFolder(node.dataDir) } : {}),
    ...(node.store ? { store: node.store } : {}),
    ...(node.socket ? { socket: node.socket } : {}),
    startedAt: new Date().toISOString(),
  };
  const where = record.dataDir ?? `store ${record.store ?? ''}`;
  const file = join(folder, `${createHash('sha256').update(where).digest('hex').slice(0, 16)}-${process.pid}.json`);
  const temp = join(folder, `.${randomBytes(6).toString('hex')}.tmp`);
  try {
    // O_EXCL: a name someone placed first is never written through; then renamed whole into place.
    const fd = openSync(temp, 'wx', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(record)}\n`);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (e) {
    try {
      unlinkSync(temp);
    } catch {
      // never made
    }
    throw new NodeRegistryError(`the node record ${file} cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let removed = false;
  return {
    file,
    remove: () => {
      if (removed) return;
      removed = true;
      try {
        unlinkSync(file);
      } catch {
        // gone already (a lister took it for stale)
      }
    },
  };
}

/** A record as read from a file, or undefined when it is not one (then it is stale too). */
function parseRecord(text: string): NodeRecord | undefined {
  let r: Record<string, unknown>;
  try {
    r = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const str = (v: unknown) => v === undefined || (typeof v === 'string' && v.length > 0 && v.length <= 4096);
  if (typeof r !== 'object' || r === null || !Number.isInteger(r.pid) || (r.pid as number) <= 0 || typeof r.url !== 'string') return undefined;
  if (![r.publicUrl, r.dataDir, r.store, r.socket, r.startedAt].every(str) || (r.dataDir === undefined) === (r.store === undefined)) return undefined;
  return r as unknown as NodeRecord;
}

/** Whether a process of this pid runs (a pid of another user's process: ours is gone, and the pid was reused). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether the socket accepts a connection (closed at once, nothing sent: the channel answers nothing). */
function answers(socket: string): Promise<boolean> {
  return new Promise((done) => {
    const probe = connect(socket);
    const guard = setTimeout(() => {
      probe.destroy();
      done(true);
    }, PROBE_GUARD_MS);
    guard.unref();
    probe.once('connect', () => {
      clearTimeout(guard);
      probe.destroy();
      done(true);
    });
    probe.once('error', () => {
      clearTimeout(guard);
      done(false);
    });
  });
}

/**
 * The nodes of this user that run now, oldest first; stale records (the process gone, its socket
 * not answering, not a record) are removed on the way. An empty list when there is no registry;
 * NodeRegistryError when its folder is not this user's alone (a record there could send a
 * revocation anywhere).
 */
export async function liveNodes(env: NodeJS.ProcessEnv = process.env): Promise<LiveNode[]> {
  const folder = nodeRegistryFolder(env);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  const why = unsafeFolder(folder);
  if (why) throw new NodeRegistryError(`the node registry is not read: ${why}: remove it, or make it 0700 and yours`);
  const live: LiveNode[] = [];
  for (const name of names.filter((n) => /^[0-9a-f]{16}-\d+\.json$/.test(n)).slice(0, MAX_RECORDS)) {
    const file = join(folder, name);
    let record: NodeRecord | undefined;
    try {
      const st = lstatSync(file);
      // A file of another user's, or a link, is not a record of ours: left alone, never read.
      if (!st.isFile() || (typeof process.getuid === 'function' && st.uid !== process.getuid())) continue;
      if (st.size <= MAX_RECORD_BYTES) record = parseRecord(readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    const live_ = record && String(record.pid) === /-(\d+)\.json$/.exec(name)![1] && alive(record.pid) && (!record.socket || (await answers(record.socket)));
    if (!live_) {
      try {
        unlinkSync(file);
      } catch {
        // removed by another lister, or by the node itself
      }
      continue;
    }
    live.push({ ...record!, file });
  }
  return live.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}
