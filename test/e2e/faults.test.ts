// Faults under a running node (the built `akas serve`, real HTTP, a mixed write load): a disk
// that fills up and is freed, a data folder turned read-only under load, blob files removed or
// truncated underneath. The node answers 503 storage_unavailable (never 500, never a 200 it
// cannot keep) while its storage fails, says so on /healthz, keeps serving reads, and takes
// writes again by itself once its storage does. Each test ends with a restart, a check that
// every write the node acknowledged is there, and the node's own audit (`akas log check`).
import { randomBytes } from 'node:crypto';
import { rmSync, truncateSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/index.js';
import { FAULT_MIX, seeded, Workload } from '../../bench/workload.js';
import { startServe, tempDir, type RunningNode } from '../helpers/e2e.js';
import { assertAcknowledgedPresent, assertAuditClean, bindReadOnly, fillDisk, logCheck, mountSmallFs, until, type SmallFs } from '../helpers/faults.js';
import { call } from '../helpers/remote.js';

const SERVE_ARGS = ['--trust-proxy', '--public-url', 'https://akas.example.org', '--registration-cap', '100000'];
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1e9);
const work = tempDir('akas-e2e-faults-');

let node: RunningNode | undefined;
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await node?.stop({ keepData: true });
  node = undefined;
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  cleanups = [];
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** What the node answered under the fault: 200s, 429s, 409s of judging, and 503 storage_unavailable; never a 500. */
function assertNoFailureButStorage(load: Workload) {
  const bad = load.answers.filter((a) => a.status >= 500 && a.code !== 'storage_unavailable');
  expect(
    bad.map((a) => `${a.op} ${a.status} ${a.code ?? ''}`),
    'answers other than 503 storage_unavailable among the 5xx',
  ).toEqual([]);
}

// Any refusal of the server's: the checks that follow are soft, so that a node that answers
// the wrong thing still runs on to the restart and shows what it lost.
const refusedForStorage = (load: Workload) => load.answers.filter((a) => a.status >= 500).length;
const ackedCount = (load: Workload) => Object.values(load.acked).reduce((s, xs) => s + xs.length, 0);

async function health(n: RunningNode) {
  const r = await call(n, 'GET', '/healthz');
  return { status: r.status, body: r.body };
}

/** Stops the node, restarts it on the same folder, checks every acknowledged write, stops it and audits the folder. */
async function restartAndCheck(dataDir: string, load: Workload) {
  await node!.stop({ keepData: true });
  node = await startServe(SERVE_ARGS, { dataDir });
  expect.soft((await health(node)).body.storage).toEqual({ ok: true });
  const agent = load.acked.agents.at(-1)!;
  expect.soft((await call(node, 'GET', '/api/agent/v1/me', { key: agent.apiKey })).status, 'the last agent acknowledged, after a restart').toBe(200);
  await node.stop({ keepData: true });
  node = undefined;
  await assertAcknowledgedPresent(dataDir, load.acked);
  await assertAuditClean(dataDir, load.acked);
}

describe('storage faults under load (e2e)', () => {
  it(`refuses writes while the disk is full, keeps reading, resumes once space is freed, and loses nothing it acknowledged (seed ${SEED})`, async (ctx) => {
    const fs = await mountSmallFs(join(work, 'full'), 48);
    if ('skip' in fs) {
      console.warn(`disk-full test skipped: ${fs.skip}`);
      return ctx.skip();
    }
    cleanups.push(() => (fs as SmallFs).unmount());
    const dataDir = join(fs.dir, 'data');
    node = await startServe(SERVE_ARGS, { dataDir });
    const load = new Workload(node.url, seeded(SEED), 16);
    cleanups.push(() => load.close());
    for (let i = 0; i < 6; i++) await load.seedAgent();
    const reader = load.acked.agents[0];
    const run = load.run(FAULT_MIX, 8);
    try {
      await until(() => ackedCount(load) > 40, 30_000, 'writes before the disk fills');
      const ballast = fillDisk(fs.dir);
      await until(() => refusedForStorage(load) > 0, 30_000, 'a write refused with 503 storage_unavailable');

      const h = await health(node);
      expect.soft(h.status).toBe(503);
      expect.soft(h.body).toMatchObject({ ok: false, storage: { ok: false, cause: 'disk_full', recovery: 'automatic' } });
      expect.soft(h.body.storage?.action).toMatch(/free space/i);
      // A write is refused with the cause and what to do; a read is served.
      const put = await call(node, 'POST', '/api/cas', { raw: randomBytes(2000) });
      expect.soft(put.status).toBe(503);
      expect.soft(put.body).toMatchObject({ code: 'storage_unavailable', storage: { cause: 'disk_full' } });
      expect.soft(put.body.hint).toMatch(/free space/i);
      expect((await call(node, 'GET', '/api/agent/v1/me', { key: reader.apiKey })).status).toBe(200);

      rmSync(ballast);
      await until(async () => (await health(node!)).status === 200, 30_000, '/healthz ok once space is freed');
      // Writes acknowledged after the disk was freed: those a failed LevelDB log used to lose at the next open.
      const before = ackedCount(load);
      await until(() => ackedCount(load) > before + 30, 30_000, 'writes acknowledged after the disk was freed');
    } finally {
      run.stop();
      await run.done;
    }
    await restartAndCheck(dataDir, load);
    assertNoFailureButStorage(load);
  }, 180_000);

  it(`refuses writes once the data folder turns read-only under load, resumes when it is writable again, and loses nothing it acknowledged ` +
    `(seed ${SEED})`, async (ctx) => {
    const dataDir = join(work, 'ro-data');
    node = await startServe(SERVE_ARGS, { dataDir });
    const load = new Workload(node.url, seeded(SEED + 1), 16);
    cleanups.push(() => load.close());
    for (let i = 0; i < 6; i++) await load.seedAgent();
    const reader = load.acked.agents[0];
    const run = load.run(FAULT_MIX, 8);
    try {
      await until(() => ackedCount(load) > 40, 30_000, 'writes before the folder turns read-only');
      const undo = await bindReadOnly(dataDir);
      if ('skip' in undo) {
        console.warn(`read-only test skipped: ${undo.skip}`);
        return ctx.skip();
      }
      let writable = false;
      cleanups.push(async () => void (writable || (await undo())));
      // The first write that needs a new file (a blob file, a new LevelDB file) fails: from then on every write is refused.
      await until(() => refusedForStorage(load) > 0, 30_000, 'a write refused with 503 storage_unavailable');
      const h = await health(node);
      expect.soft(h.status).toBe(503);
      expect.soft(h.body.storage).toMatchObject({ ok: false, cause: 'read_only' });
      const put = await call(node, 'POST', '/api/cas', { raw: randomBytes(2000) });
      expect.soft(put).toMatchObject({ status: 503, body: { code: 'storage_unavailable', storage: { cause: 'read_only' } } });
      expect((await call(node, 'GET', '/api/agent/v1/me', { key: reader.apiKey })).status).toBe(200);

      await undo();
      writable = true;
      await until(async () => (await health(node!)).status === 200, 30_000, '/healthz ok once the folder is writable');
      const before = ackedCount(load);
      await until(() => ackedCount(load) > before + 30, 30_000, 'writes acknowledged after the folder is writable again');
    } finally {
      run.stop();
      await run.done;
    }
    await restartAndCheck(dataDir, load);
    assertNoFailureButStorage(load);
  }, 180_000);

  it('answers a blob file removed or truncated underneath as damaged (not as never stored), has the audit name it, and repairs it from a ' +
    're-upload', async () => {
    const dataDir = join(work, 'blob-data');
    node = await startServe(SERVE_ARGS, { dataDir });
    const load = new Workload(node.url, seeded(SEED + 2), 8);
    cleanups.push(() => load.close());
    for (let i = 0; i < 3; i++) await load.seedAgent();
    const [gone, short, kept] = [randomBytes(100_000), randomBytes(200_000), randomBytes(90_000)];
    for (const b of [gone, short, kept]) {
      const r = await call(node, 'POST', '/api/cas', { raw: b });
      expect(r.status).toBe(200);
      load.acked.blobs.push({ sha256: r.body.sha256, bytes: r.body.bytes });
    }
    const fileOf = (b: Buffer) => {
      const sha = sha256Hex(b);
      return join(dataDir, 'blobs', sha.slice(0, 2), sha.slice(2));
    };
    unlinkSync(fileOf(gone));
    truncateSync(fileOf(short), 1000);
    for (const b of [gone, short]) {
      const r = await call(node, 'GET', `/api/cas/${sha256Hex(b)}`);
      expect(r.status, 'a lost blob is damaged, not unknown').toBe(500);
      expect(r.body.code).toBe('integrity_violation');
      expect((await call(node, 'GET', `/api/cas/${sha256Hex(b)}?head=1`)).body.exists).toBe(true);
    }
    expect((await call(node, 'GET', `/api/cas/${sha256Hex(kept)}`)).status).toBe(200);

    await node.stop({ keepData: true });
    node = undefined;
    const audit = await logCheck(dataDir);
    expect(audit.code, audit.stdout).toBe(1);
    const problems: string[] = audit.report.records.problems;
    expect(problems.find((p) => p.includes(sha256Hex(gone)))).toMatch(/file is gone/);
    expect(problems.find((p) => p.includes(sha256Hex(short)))).toMatch(/holds 1000 bytes, 200000 were acknowledged/);
    expect(problems).toHaveLength(2);

    node = await startServe(SERVE_ARGS, { dataDir });
    for (const b of [gone, short]) {
      const r = await call(node, 'POST', '/api/cas', { raw: b });
      expect(r.status).toBe(200);
      expect(r.body.deduplicated).toBe(false);
      const back = await call(node, 'GET', `/api/cas/${sha256Hex(b)}`);
      expect(back.status).toBe(200);
      expect(back.raw.equals(b)).toBe(true);
    }
    await restartAndCheck(dataDir, load);
  }, 120_000);
});
