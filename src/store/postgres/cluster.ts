// A throwaway PostgreSQL cluster in a temp folder on a free port (tests and benchmarks), like
// openTempStore is for LevelDB. It needs the server's programs (initdb, pg_ctl): on the PATH,
// or in Debian's /usr/lib/postgresql/<version>/bin. PostgreSQL refuses to run as root, so as
// root they run as the `postgres` user (runuser), in a folder given to that user.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TempCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication, local only). */
  url: string;
  port: number;
  dir: string;
  /** Stops the server (immediate shutdown) and removes its folder. */
  stop(): Promise<void>;
  /** Stops the server as a crash would (immediate shutdown: no checkpoint), keeping its folder (fault tests). */
  kill(): Promise<void>;
  /**
   * Restarts the server on the same folder and port (`pg_ctl restart`), stopping it first when it
   * runs: `fast` (the default) rolls back open transactions and closes every connection, then
   * checkpoints; `immediate` stops as a crash would, and the start recovers from the WAL. After
   * kill() it just starts it. Answers once the server accepts connections again.
   */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** The postmaster's pid (from postmaster.pid), or undefined while the server is stopped. */
  postmasterPid(): number | undefined;
}

export interface ClusterOptions {
  /**
   * fsync of the WAL (default true). Tests may turn it off: they kill akas processes, never
   * the machine, so what COMMIT acknowledged is in the server either way; benchmarks keep it.
   */
  fsync?: boolean;
}

/** Where a PostgreSQL server program is: the PATH first, then the newest Debian install. */
export function findPgProgram(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(root, v, 'bin', name))) return join(root, v, 'bin', name);
  return undefined;
}

/** The uid and gid of a local user, from /etc/passwd. */
function userIds(name: string): { uid: number; gid: number } | undefined {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) return undefined;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts a fresh cluster; throws with the reason when it cannot (no server installed, no postgres user, ...). */
export async function startTempCluster(options: ClusterOptions = {}): Promise<TempCluster> {
  const initdb = findPgProgram('initdb');
  const pgCtl = findPgProgram('pg_ctl');
  if (!initdb || !pgCtl) throw new Error('PostgreSQL server programs (initdb, pg_ctl) not found on the PATH or in /usr/lib/postgresql/*/bin');
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? userIds('postgres') : undefined;
  if (asRoot && !ids) throw new Error('running as root, and there is no `postgres` user to run the server as (PostgreSQL refuses root)');
  const runuser = asRoot ? (findPgProgram('runuser') ?? '/usr/sbin/runuser') : undefined;
  const exec = (cmd: string, args: string[]) => (runuser ? run(runuser, ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args));

  const dir = mkdtempSync(join(tmpdir(), 'akas-pg-'));
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const data = join(dir, 'data');
  try {
    await exec(initdb, ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const port = await freePort();
    const settings = [
      `-p ${port}`,
      `-k ${dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c max_connections=400',
      '-c shared_buffers=64MB',
      ...(options.fsync === false ? ['-c fsync=off', '-c full_page_writes=off'] : []),
    ];
    const start = () => exec(pgCtl, ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', settings.join(' '), 'start']);
    await start();
    const postmasterPid = () => {
      try {
        const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
        return Number.isInteger(pid) && pid > 0 ? pid : undefined;
      } catch {
        return undefined;
      }
    };
    let stopped = false;
    // A process that ends without stop() (an uncaught error, a closed pipe) takes its cluster along.
    const onExit = () => {
      if (stopped) return;
      stopped = true;
      try {
        const args = ['-D', data, '-m', 'immediate', '-w', 'stop'];
        if (runuser) execFileSync(runuser, ['-u', 'postgres', '--', pgCtl, ...args], { stdio: 'ignore' });
        else execFileSync(pgCtl, args, { stdio: 'ignore' });
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    };
    process.once('exit', onExit);
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      dir,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        process.off('exit', onExit);
        await exec(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      },
      kill: async () => {
        await exec(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']);
      },
      restart: async (mode = 'fast') => {
        // A stopped server (after kill()) is started; a running one stopped in `mode` first.
        if (!postmasterPid()) return void (await start());
        await exec(pgCtl, ['-D', data, '-l', join(dir, 'server.log'), '-m', mode, '-w', '-t', '60', '-o', settings.join(' '), 'restart']);
      },
      postmasterPid,
    };
  } catch (e) {
    const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8').slice(-2000) : '';
    rmSync(dir, { recursive: true, force: true });
    const err = e as Error & { stderr?: string };
    throw new Error(`could not start a PostgreSQL cluster: ${err.message}${err.stderr ? `\n${err.stderr}` : ''}${log ? `\n${log}` : ''}`);
  }
}
