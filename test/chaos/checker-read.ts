// How the checker reads the final state (issue 49, 3): the processes' public routes over HTTP,
// spread over the processes, waiting out a 429 as its Retry-After says (the checker's reads
// draw tokens like any client's: PROTOCOL 1.4); and the built CLI, run as a child, for the
// node's own audit (`akas log check --store URL --json`) and `akas monitor`.
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { ProcessView } from './types.js';

/** The built CLI (npm run build). */
export const BUILT_CLI = fileURLToPath(new URL('../../dist/bin/main.cjs', import.meta.url));

/** A read's guard against a hang, not a measure: the run is healed and quiet when the checker reads. */
const READ_GUARD_MS = 30_000;
/** How many times a read is tried again after a 429, a 5xx or a broken connection. */
const RETRIES = 20;

export interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

export class Reader {
  private turn = 0;
  constructor(readonly processes: readonly ProcessView[]) {
    if (!processes.length) throw new Error('the final state names no process');
  }

  private readonly address = auditorAddresses();

  private urlOf(name?: string): string {
    const p = name === undefined ? this.processes[this.turn++ % this.processes.length] : this.processes.find((x) => x.name === name);
    if (!p) throw new Error(`no process ${name}`);
    return p.url.replace(/\/+$/, '');
  }

  /** GET path from the named process (else the next in turn); a 429, a 5xx or a dropped connection is tried again. */
  async get(path: string, name?: string): Promise<Answer> {
    const base = this.urlOf(name);
    let last = '';
    for (let attempt = 0; attempt <= RETRIES; attempt++) {
      try {
        const r = await fetch(`${base}${path}`, { headers: { 'x-forwarded-for': this.address() }, signal: AbortSignal.timeout(READ_GUARD_MS) });
        const bytes = Buffer.from(await r.arrayBuffer());
        if (r.status !== 429 && r.status < 500) return { status: r.status, headers: r.headers, bytes };
        last = `HTTP ${r.status} ${bytes.toString('utf8').slice(0, 200)}`;
        const wait = r.status === 429 ? Number(r.headers.get('retry-after') ?? 1) : 0.2 * (attempt + 1);
        await sleep(Math.min(Math.max(wait, 0.1), 10) * 1000);
      } catch (e) {
        last = (e as Error).message;
        await sleep(200 * (attempt + 1));
      }
    }
    throw new Error(`GET ${base}${path}: no answer after ${RETRIES} tries (${last})`);
  }

  /** GET as JSON, which must be 200. */
  async json(path: string, name?: string): Promise<unknown> {
    const r = await this.get(path, name);
    if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status} ${r.bytes.toString('utf8').slice(0, 200)}`);
    return JSON.parse(r.bytes.toString('utf8'));
  }

  /** GET as text, which must be 200. */
  async text(path: string, name?: string): Promise<string> {
    const r = await this.get(path, name);
    if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status}`);
    return r.bytes.toString('utf8');
  }
}

/**
 * The addresses the checker's reads say they are for, in turn from 198.18.0.0/16 (RFC 2544's
 * benchmarking range): a node behind --trust-proxy (the chaos run's) then draws each read from a
 * bucket of its own, so the audit neither waits out the clients' buckets (the run's limits are
 * small on purpose) nor drains them; a node that trusts no proxy ignores the header, and a 429
 * is waited out.
 */
function auditorAddresses(): () => string {
  let n = 0;
  return () => {
    const k = n++ % 65_536;
    return `198.18.${k >> 8}.${k & 255}`;
  };
}

/**
 * A local forwarder to `target` that sends each request on with an auditor's address
 * (auditorAddresses): the built `akas monitor` reads through it, since its API reads do not wait
 * out a 429 (its tile reads do) and the node would otherwise count them all against 127.0.0.1.
 * The bytes pass unchanged both ways.
 */
export async function forwarder(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  const to = new URL(target);
  const address = auditorAddresses();
  const server = createServer((req, res) => {
    const up = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host, 'x-forwarded-for': address() } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.once('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs fn over items, `width` at a time. */
export async function eachLimited<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A run of the built CLI: the environment without the caller's AKAS_* settings, plus `env`. */
export function runCli(cli: string, args: string[], env: Record<string, string>): Promise<CliRun> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AKAS_')) clean[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...clean, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}
