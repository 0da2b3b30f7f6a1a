// What a chaos run deploys (issue 49): a throwaway PostgreSQL cluster (src/store/postgres/
// cluster.ts, the test cluster's own tooling), the schema made by `akas store migrate`, and three
// `akas serve --store URL --port 0` processes of the built binary sharing one node secret, each
// reaching the database through a link of its own (link.ts) and listening on a port of its own.
// The nemesis acts on it through the methods below; a process that exits without being asked
// is a crash, which the history records (the run then starts it again, and the report counts it).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startTempCluster, type TempCluster } from '../../src/store/postgres/cluster.js';
import type { History } from './history.js';
import { Link } from './link.js';
import type { RunLimits } from './types.js';

/** The three processes of a run. */
export const NODE_NAMES = ['n1', 'n2', 'n3'] as const;
export type ProcessName = (typeof NODE_NAMES)[number];

/** The built CLI (npm run build). */
export const CLI = fileURLToPath(new URL('../../dist/bin/main.cjs', import.meta.url));

/** The limits every process runs with (passed as flags, handed to the checker). */
export const LIMITS: Required<Pick<RunLimits, 'burst' | 'refillPerSecond' | 'registrationCap' | 'casQuotaMiB' | 'maxSkewMs'>> = {
  burst: 40,
  refillPerSecond: 4,
  registrationCap: 20,
  casQuotaMiB: 1,
  maxSkewMs: 90_000,
};

/** Where a start may wait for the "listening on" line (a guard against a hang, not a measure). */
const START_GUARD_MS = 60_000;
/** How long a start is retried while the database is away (a restart of PostgreSQL under it). */
const START_RETRY_MS = 120_000;

/** Debian's libfaketime, which faketime(1) preloads: set on node itself (see skewEnv). */
export function faketimeLibrary(): string | undefined {
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib']) {
    const lib = join(dir, 'faketime', 'libfaketime.so.1');
    if (existsSync(lib)) return lib;
  }
  for (const dir of existsSync('/usr/lib') ? readdirSync('/usr/lib') : []) {
    const lib = join('/usr/lib', dir, 'faketime', 'libfaketime.so.1');
    if (existsSync(lib)) return lib;
  }
  return undefined;
}

/**
 * The environment of a process run under a skewed clock: what `faketime -f "+90s"` sets before
 * it runs its command. faketime(1) forks and waits for the command, so a signal to the pid the
 * harness spawned would stop faketime and never reach node; set on node itself, SIGKILL and
 * SIGSTOP reach the process that serves.
 */
function skewEnv(offset: string): NodeJS.ProcessEnv {
  const lib = faketimeLibrary();
  if (!lib) throw new Error("Debian's faketime is not installed (libfaketime.so.1): apt-get install faketime");
  return { LD_PRELOAD: lib, FAKETIME: offset };
}

export interface Proc {
  name: ProcessName;
  /** Its base URL (the last one it listened on: a refused connection while it is down). */
  url: string;
  child: ChildProcess | undefined;
  pid: number | undefined;
  /** The clock offset it runs under ('+90s', '-90s'), or undefined. */
  skew: string | undefined;
  paused: boolean;
  /** Set before the harness stops or kills it: its exit is then no crash. */
  stopping: boolean;
  /** The tail of what it wrote to stderr (its log at warn). */
  stderr: string;
  /** Its link to the database. */
  link: Link;
}

export class Deployment {
  readonly procs = new Map<ProcessName, Proc>();
  /** The store's URL straight to the server (the CLI, the checker and the nemesis use it). */
  readonly store: string;
  readonly secret = `chaos-${randomBytes(16).toString('hex')}`;
  readonly secretFile: string;
  readonly stateDir: string;
  readonly configDir: string;
  private closed = false;
  /** A harness that ends without close() (Ctrl-C, an uncaught error) takes its processes along (the cluster goes by itself). */
  private readonly onExit = () => {
    for (const p of this.procs.values()) p.child?.kill('SIGKILL');
  };
  /** Called with a process that exited unasked (after the crash line is written). */
  onCrash: (p: Proc) => void = () => undefined;

  private constructor(
    readonly cluster: TempCluster,
    readonly workDir: string,
    private readonly history: History,
  ) {
    this.store = `${cluster.url}?schema=chaos`;
    this.secretFile = join(workDir, 'node-secret');
    writeFileSync(this.secretFile, this.secret, { mode: 0o600 });
    this.stateDir = join(workDir, 'state');
    this.configDir = join(workDir, 'config');
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    mkdirSync(this.configDir, { recursive: true, mode: 0o700 });
    process.once('exit', this.onExit);
  }

  /** Starts the cluster, migrates the schema, and starts the three processes. */
  static async start(workDir: string, history: History): Promise<Deployment> {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    // fsync off: the nemesis kills processes and PostgreSQL's server, never the machine, so
    // what COMMIT acknowledged is in the server's files (the OS's page cache) either way.
    const cluster = await startTempCluster({ fsync: false });
    const d = new Deployment(cluster, workDir, history);
    try {
      const migrate = await d.cli(['store', 'migrate', '--store', d.store]);
      if (migrate.code !== 0) throw new Error(`akas store migrate failed (${migrate.code}): ${migrate.stdout}${migrate.stderr}`);
      for (const name of NODE_NAMES) {
        const link = new Link(cluster.port);
        await link.open();
        d.procs.set(name, { name, url: '', child: undefined, pid: undefined, skew: undefined, paused: false, stopping: false, stderr: '', link });
      }
      // Started together on the migrated schema: one makes the node keys, the others open them.
      await Promise.all(NODE_NAMES.map((name) => d.startProcess(name)));
      return d;
    } catch (e) {
      await d.close();
      throw e;
    }
  }

  /** The CLI's environment: the run's own state and config folders, the node secret's file, none of the caller's AKAS_*. */
  cliEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AKAS_') && v !== undefined) env[k] = v;
    return { ...env, NO_COLOR: '1', XDG_STATE_HOME: this.stateDir, AKAS_CONFIG_DIR: this.configDir, AKAS_NODE_SECRET_FILE: this.secretFile };
  }

  /** Runs the built CLI; answers its exit code and output (killed past timeoutMs: code -1). */
  cli(args: string[], timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [CLI, ...args], { env: this.cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    return new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('error', (e) => resolve({ code: -1, stdout, stderr: `${stderr}${e.message}` }));
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr });
      });
    });
  }

  proc(name: ProcessName): Proc {
    const p = this.procs.get(name);
    if (!p) throw new Error(`no process ${name}`);
    return p;
  }

  /** The store URL a process is given: through its link, with small pools (three processes on a 2-core machine). */
  private storeVia(p: Proc): string {
    return `postgres://postgres@127.0.0.1:${p.link.port}/postgres?schema=chaos&pool=6&readers=3&search=2`;
  }

  /** Spawns the process once; resolves when it listens, rejects when it exits first. */
  private spawnOnce(p: Proc): Promise<void> {
    const args = [
      CLI,
      'serve',
      '--store',
      this.storeVia(p),
      '--port',
      '0',
      '--log-level',
      'warn',
      // One deployment behind a balancer: one public origin, clients told apart by X-Forwarded-For.
      '--trust-proxy',
      '--public-url',
      'https://chaos.akas.test',
      '--allow-demo-calibration',
      '--rate-limit',
      `${LIMITS.burst}:${LIMITS.refillPerSecond}`,
      '--registration-cap',
      String(LIMITS.registrationCap),
      '--cas-quota',
      String(LIMITS.casQuotaMiB),
    ];
    const env = { ...this.cliEnv(), ...(p.skew ? skewEnv(p.skew) : {}) };
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    p.child = child;
    p.pid = child.pid;
    p.stopping = false;
    p.paused = false;
    let out = '';
    child.stderr!.on('data', (c: Buffer) => (p.stderr = (p.stderr + c.toString()).slice(-8000)));
    return new Promise((resolve, reject) => {
      let listening = false;
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`${p.name} did not listen within ${START_GUARD_MS} ms: ${out.slice(-500)} ${p.stderr.slice(-1500)}`));
      }, START_GUARD_MS);
      child.stdout!.on('data', (c: Buffer) => {
        if (listening) return;
        out += c.toString();
        const m = /listening on (https?:\/\/\S+)/.exec(out);
        if (m) {
          listening = true;
          clearTimeout(timer);
          p.url = m[1];
          resolve();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (p.child === child) {
          p.child = undefined;
          p.pid = undefined;
        }
        if (!listening) return reject(new Error(`${p.name} exited (${code ?? signal}) before listening: ${p.stderr.slice(-1500)}`));
        if (!p.stopping && !this.closed) {
          this.history.crash(p.name, { code, signal, pid: child.pid, stderr: p.stderr.slice(-4000) });
          this.onCrash(p);
        }
      });
    });
  }

  /**
   * Starts a process (under `skew` when given), again and again while it exits before listening
   * (the database restarting under it refuses the start, exit 2): answers how many tries it took.
   */
  async startProcess(name: ProcessName, skew?: string): Promise<{ attempts: number; pid: number | undefined; url: string }> {
    const p = this.proc(name);
    if (p.child) throw new Error(`${name} runs already`);
    p.skew = skew;
    const deadline = performance.now() + START_RETRY_MS;
    for (let attempts = 1; ; attempts++) {
      try {
        await this.spawnOnce(p);
        return { attempts, pid: p.pid, url: p.url };
      } catch (e) {
        if (this.closed || performance.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Waits until the process's child has exited. */
  private exited(p: Proc): Promise<void> {
    const child = p.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** SIGKILL: answers the pid killed (undefined when it was not running). */
  async kill(name: ProcessName): Promise<number | undefined> {
    const p = this.proc(name);
    const pid = p.pid;
    if (!p.child) return undefined;
    p.stopping = true;
    p.child.kill('SIGKILL');
    await this.exited(p);
    p.paused = false;
    return pid;
  }

  /** SIGTERM, then SIGKILL past 5 s (a paused process is resumed first, or SIGTERM would wait). */
  async stop(name: ProcessName): Promise<void> {
    const p = this.proc(name);
    if (!p.child) return;
    p.stopping = true;
    if (p.paused) this.resume(name);
    p.child.kill('SIGTERM');
    const killer = setTimeout(() => p.child?.kill('SIGKILL'), 5000);
    await this.exited(p);
    clearTimeout(killer);
  }

  pause(name: ProcessName): number | undefined {
    const p = this.proc(name);
    if (!p.child || p.paused) return undefined;
    p.child.kill('SIGSTOP');
    p.paused = true;
    return p.pid;
  }

  resume(name: ProcessName): number | undefined {
    const p = this.proc(name);
    if (!p.child || !p.paused) return undefined;
    p.child.kill('SIGCONT');
    p.paused = false;
    return p.pid;
  }

  /** A plain connection to the server for the nemesis and the harness (never counted as akas's). */
  async sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.cluster.url, application_name: 'chaos-harness', connectionTimeoutMillis: 10_000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * Terminates akas's backends (application_name akas, akas-read, akas-search, akas-watch, ...):
   * of one process (its link's connections) or of every process and the CLI ('all'). Answers how many.
   */
  async terminateBackends(target: ProcessName | 'all'): Promise<number> {
    const ports = target === 'all' ? undefined : this.proc(target).link.clientPorts();
    if (ports && !ports.length) return 0;
    const rows = await this.sql<{ ok: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
        WHERE application_name LIKE 'akas%' AND pid <> pg_backend_pid() ${ports ? 'AND client_port = ANY($1::int[])' : ''}`,
      ports ? [ports] : [],
    );
    return rows.filter((r) => r.ok).length;
  }

  /** Items waiting in the log's outbox (0 once the log has caught up with every write). */
  async outboxSize(): Promise<number> {
    const rows = await this.sql<{ n: string }>(`SELECT count(*) AS n FROM chaos.akas_kv WHERE space = 'log-outbox'`);
    return Number(rows[0]?.n ?? 0);
  }

  /** Stops everything and removes the cluster's folder. */
  async close(): Promise<void> {
    this.closed = true;
    process.off('exit', this.onExit);
    await Promise.all([...this.procs.keys()].map((name) => this.stop(name).catch(() => undefined)));
    for (const p of this.procs.values()) await p.link.close();
    await this.cluster.stop();
  }
}
