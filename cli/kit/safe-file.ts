// Files the CLI writes where someone else may have been first (a shared folder, a path or a
// name that came from a node): never through a symbolic link planted at the path or at its
// temporary file, never with a mode the file had before. A whole file is written to a fresh
// temporary name opened with O_EXCL | O_NOFOLLOW (a link or file already there makes the open
// fail, never followed), fsynced, renamed over the path (rename replaces a link itself, never
// its target), and the folder fsynced: a crash leaves the old file or the new one. An appended
// line goes through O_NOFOLLOW too, and a file whose owner or mode is not what this process
// would have made is refused rather than written to.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fstatSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const octal = (mode: number) => mode.toString(8).padStart(4, '0');
// Another user owns the file (never on a platform without uids).
const foreignOwner = (uid: number) => typeof process.getuid === 'function' && uid !== process.getuid();

/** Why a file was refused: a link where a file should be, or a file others could read or write. */
export class UnsafeFileError extends Error {
  readonly code = 'unsafe_file';
}

// fsync of a folder, so a rename or a new name in it survives a crash (not on Windows: no such call).
function fsyncDir(dir: string) {
  if (process.platform === 'win32') return;
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

// The open, with ELOOP (a link at the path: O_NOFOLLOW refused it) said as what it is.
function openNoFollow(path: string, flags: number, mode: number): number {
  try {
    return openSync(path, flags | NOFOLLOW, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new UnsafeFileError(`${path} is a symbolic link: refused (it is never followed)`);
    throw e;
  }
}

/**
 * Writes `data` as the whole of `path` (mode `mode`, 0600 by default), atomically and durably,
 * never through a link. The folder is made (0700) when missing.
 */
export function writeFileSafely(path: string, data: string | Uint8Array, mode = 0o600): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openNoFollow(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  try {
    // The mode asked for, whatever the umask made of it.
    fchmodSync(fd, mode);
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDir(dir);
}

/**
 * Appends `line` to `path` and fsyncs it (and the folder, when the file is new), never through a
 * link; a file that exists with other permissions than `mode`, or owned by another user, is
 * refused (UnsafeFileError) rather than written to: what it holds may be read or forged by others.
 */
export function appendLineSafely(path: string, line: string, mode = 0o600): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let fresh = false;
  let fd: number;
  try {
    fd = openNoFollow(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL, mode);
    fresh = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    fd = openNoFollow(path, constants.O_WRONLY | constants.O_APPEND, mode);
  }
  try {
    const st = fstatSync(fd);
    if (fresh) fchmodSync(fd, mode);
    else if (!st.isFile()) throw new UnsafeFileError(`${path} is not a regular file: refused`);
    else if ((st.mode & 0o777) !== mode || foreignOwner(st.uid)) {
      const foreign = foreignOwner(st.uid);
      throw new UnsafeFileError(
        `${path} has mode ${octal(st.mode & 0o777)}${foreign ? ` and another owner (uid ${st.uid})` : ''}, not ${octal(mode)}: ` +
          `refused (chmod ${mode.toString(8)} it if it is yours)`,
      );
    }
    writeSync(fd, line.endsWith('\n') ? line : `${line}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (fresh) fsyncDir(dir);
}
