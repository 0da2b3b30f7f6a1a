// A stopped node's commands load no HTTP server (issue 48, item 5; ARCHITECTURE 1): `akas log
// check` and `akas admin revoke` on a stopped node open its store and keys through src/node,
// and fastify (inlined in the HTTP app's chunk of the build, scripts/bundle.mjs) is never
// loaded. Every module the built binary loads is recorded by a preloaded hook
// (test/fixtures/record-loads.mjs), and each loaded chunk of the build is read for fastify's
// own code, so a chunk that carries fastify inside counts as much as node_modules/fastify.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe, tempDir } from '../helpers/e2e.js';
import { eventually } from '../helpers/written.js';

const HOOK = new URL('../fixtures/record-loads.mjs', import.meta.url).href;
const LAZY = fileURLToPath(new URL('../../dist/bin/lazy/', import.meta.url));
/** The HTTP app as the build keeps it (an entry of its own: scripts/bundle.mjs). */
const APP_CHUNK = join(LAZY, 'src/http/app.js');
/** fastify's own error code for a content type parser added twice: in fastify's code, in nobody else's. */
const FASTIFY_MARK = 'FST_ERR_CTP_ALREADY_PRESENT';

let work: string;
let dataDir: string;
let judgmentId: string;

/** The files and URLs a run loaded, as the hook recorded them. */
function loadsOf(record: string): string[] {
  return readFileSync(record, 'utf8').split('\n').filter(Boolean);
}

/** Of what a run loaded: fastify's package files, and the build's chunks that carry fastify's code. */
function fastifyIn(loads: string[]): string[] {
  const paths = loads.map((l) => (l.startsWith('file://') ? fileURLToPath(l) : l));
  return paths.filter(
    (p) => /[/\\]node_modules[/\\](fastify|@fastify)[/\\]/.test(p) || (p.startsWith(LAZY) && existsSync(p) && readFileSync(p, 'utf8').includes(FASTIFY_MARK)),
  );
}

/** Runs the built akas with the recording hook preloaded; answers the run and what it loaded. */
async function recorded(name: string, args: string[]) {
  const record = join(work, `${name}.loads`);
  const run = await runCli(args, { env: { NODE_OPTIONS: `--import=${HOOK}`, RECORD_LOADS_FILE: record } });
  return { run, loads: loadsOf(record) };
}

beforeAll(async () => {
  work = tempDir('akas-e2e-node-room-');
  dataDir = join(work, 'data');
  // A node with judgments to revoke (the demo session), stopped before the commands run.
  const node = await startServe(['--demo'], { dataDir });
  await eventually(async () => (await fetch(`${node.url}/healthz`)).status === 200, 200);
  const entries = (await (await fetch(`${node.url}/api/log/entries?start=0&end=1000`)).json()) as { entries: Array<{ body: Record<string, unknown> }> };
  judgmentId = entries.entries.map((e) => e.body).find((b) => b.event === 'judgment.recorded')?.judgmentId as string;
  expect(judgmentId).toBeTruthy();
  await node.stop({ keepData: true });
}, 180_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the recording hook', () => {
  it('sees fastify when the HTTP app is loaded (the check below can fail)', () => {
    const record = join(work, 'app.loads');
    const r = spawnSync(process.execPath, [`--import=${HOOK}`, '--input-type=module', '-e', `await import(${JSON.stringify(APP_CHUNK)})`], {
      env: { ...process.env, RECORD_LOADS_FILE: record },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(fastifyIn(loadsOf(record))).not.toEqual([]);
  });
});

describe('a stopped node opened by a command', () => {
  it('is audited by akas log check with no fastify loaded', async () => {
    const { run, loads } = await recorded('check', ['--json', 'log', 'check', '--data', dataDir]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, log: { ok: true } });
    // The store was opened (LevelDB's binding loaded) from the build's lazy chunks.
    expect(loads.some((l) => l.includes('classic-level'))).toBe(true);
    expect(loads.some((l) => l.startsWith('file://') && fileURLToPath(l).startsWith(LAZY))).toBe(true);
    expect(fastifyIn(loads)).toEqual([]);
  });

  it('has a credential revoked by akas admin revoke with no fastify loaded', async () => {
    const { run, loads } = await recorded('revoke', ['--json', 'admin', 'revoke', judgmentId, '--reason', 'the key was stolen', '--data', dataDir]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ changed: true, via: 'the stopped node', node: { running: false } });
    expect(loads.some((l) => l.includes('classic-level'))).toBe(true);
    expect(fastifyIn(loads)).toEqual([]);
  });
});
