// A start or an audit that could not run, said in one line naming the cause and the fix.
import { join, resolve } from 'node:path';
import { redact, storageCause, storageDetail, type StorageCause } from '../store/index.js';

/** A port another process listens on (or this user may not take): the start is refused before anything is made. */
export class PortError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
    readonly code: string,
  ) {
    super(
      code === 'EADDRINUSE'
        ? `port ${port} on ${host} is already in use (another akas serve?): stop it, or choose another port with --port`
        : code === 'EACCES'
          ? `this user may not listen on port ${port} on ${host} (ports below 1024 need privileges): choose another with --port`
          : `cannot listen on ${host} (${code}): give an address of this machine with --host`,
    );
    this.name = 'PortError';
  }
}

/** The codes startError answers with (the CLI's --json codes: CLI_CODES in cli/kit/errors.ts has each). */
export type StartErrorCode = 'data_in_use' | 'port_unavailable' | 'no_node' | 'admin_socket' | 'storage';

/** The errors known by name (the classes live in rooms this one does not load: the store's lock, the admin channel). */
const NAMED: Record<string, StartErrorCode> = {
  StoreInUseError: 'data_in_use',
  PortError: 'port_unavailable',
  NoNodeError: 'no_node',
  AdminSocketError: 'admin_socket',
};

/**
 * A start or an audit that could not run, in one line naming the cause and the fix (`akas
 * serve` and `akas log check` exit 2 with it), or undefined for an error that is not one of
 * these (a bug: reported as it is).
 */
export function startError(e: unknown, where: { dataDir: string; store?: string }): { code: StartErrorCode; message: string } | undefined {
  const name = (e as Error)?.name;
  if (name && Object.hasOwn(NAMED, name)) return { code: NAMED[name], message: (e as Error).message };
  const cause = storageCause(e);
  if (!cause) return undefined;
  const errno = (e as NodeJS.ErrnoException).code;
  const why = `(${errno && /^E[A-Z]+$/.test(errno) ? errno : storageDetail(e)})`;
  if (where.store) {
    return { code: 'storage', message: `the database ${redact(where.store)} cannot be used ${why}: start PostgreSQL, or check the URL given with --store` };
  }
  const dir = resolve(where.dataDir);
  const message: Record<StorageCause, string> = {
    read_only: `the data folder ${dir} is on a read-only file system ${why}: make it writable, or choose another folder with --data`,
    permission_denied: `this user may not write the data folder ${dir} ${why}: give it write access (chown or chmod), or choose another folder with --data`,
    disk_full: `the disk holding the data folder ${dir} is full ${why}: free some space, or choose another folder with --data`,
    io_error: `the disk holding the data folder ${dir} reported an I/O error ${why}: check the disk (dmesg) before anything else`,
    unavailable: `the data folder ${dir} cannot be used ${why}: check where it lives, or choose another folder with --data`,
    failed: `the store in ${dir} did not open ${why}: look at ${join(dir, 'level', 'LOG')}, or choose another folder with --data`,
  };
  return { code: 'storage', message: message[cause] };
}
