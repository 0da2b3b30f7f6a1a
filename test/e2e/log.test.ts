// The transparency log with the built binary against a real `akas serve`: attest, monitor,
// stream, then stop the node and audit its folder; a stored entry edited while the node was
// down is caught by `akas log check`, by `akas serve --check` (which then will not start), and
// by the monitor.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogEntries, seqKey } from '../../src/domain/log/index.js';
import { openLevelStore } from '../../src/store/index.js';
import { calibratedProfiles, runCli, startServe, tempDir, type RunningNode } from '../helpers/e2e.js';

let node: RunningNode;
let work: string;
let dataDir: string;
const akas = (args: string[], profile = 'p1') => runCli(['--base-url', node.url, '--profile', profile, ...args], { cwd: work });

beforeAll(async () => {
  work = tempDir('akas-e2e-log-');
  dataDir = join(work, 'data');
  node = await startServe([], { dataDir });
  await calibratedProfiles(node.url, work, ['p1']);
}, 60_000);
afterAll(async () => {
  await node?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the log (e2e)', () => {
  it('records attestations, streams them, and the monitor follows; an edit made while the node was down is caught everywhere', async () => {
    const body = {
      schemaVersion: '1.0.0',
      stepId: 's1',
      pipeline: 'ingest',
      step: 'copy',
      transform: 'copied',
      inputs: [{ sha256: 'a'.repeat(64) }],
      outputs: [{ sha256: 'b'.repeat(64) }],
      actor: 'cron',
      finishedAt: 1767268800000,
    };
    writeFileSync(join(work, 'facet.json'), JSON.stringify(body));
    const dry = await akas(['attest', 'pipeline.facet.v1', '--file', join(work, 'facet.json'), '--dry-run']);
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    for (let i = 0; i < 3; i++) {
      const r = await akas(['--json', 'attest', 'pipeline.facet.v1', '--body', JSON.stringify({ ...body, stepId: `s${i}` })]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    }
    const bad = await akas(['attest', 'pipeline.facet.v1', '--body', JSON.stringify({ ...body, inputs: [] }), '--dry-run']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('/inputs must NOT have fewer than 1 items');

    // The log holds the agent's calibration (agent.event.v1, PROTOCOL 8.9) and the three attestations.
    const events = await akas(['log', 'events']);
    expect(events.code).toBe(0);
    const lines = events.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines.filter((l) => l.includes('pipeline.facet.v1'))).toHaveLength(3);
    const watch = await akas(['--json', 'log', 'watch', '--once']);
    expect(watch.code, watch.stdout + watch.stderr).toBe(0);
    expect(JSON.parse(watch.stdout)).toMatchObject({ ok: true, size: 4 });

    await node.stop({ keepData: true });
    const clean = await runCli(['log', 'check', '--data', dataDir]);
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    expect(clean.stdout).toContain('log: 4 entries');

    // Someone with access to the folder edits an entry.
    const store = await openLevelStore(dataDir);
    await store.transact(['x'], async (tx) => {
      const e = (await tx.get(LogEntries, seqKey(2)))!; // an attestation
      tx.put(LogEntries, seqKey(2), { ...e, body: { ...e.body, actor: 'someone else' } });
    });
    await store.close();
    const caught = await runCli(['log', 'check', '--data', dataDir]);
    expect(caught.code).toBe(1);
    expect(caught.stdout).toMatch(/entry 2 .* was edited/);
    const refused = await runCli(['serve', '--data', dataDir, '--port', '0', '--check', '--log-level', 'silent']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('failed its check; not starting');

    node = await startServe([], { dataDir });
    const watched = await akas(['--json', 'log', 'watch', '--once', '--full']);
    expect(watched.code).toBe(1);
    expect(JSON.parse(watched.stdout).message).toMatch(/REWRITE/);
  }, 60_000);
});
