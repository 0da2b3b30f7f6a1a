// Witnesses with the built binary (PROTOCOL 9.8, 9.9): a node configured with two
// `akas witness` processes serves checkpoints with two cosignatures; `akas verify log-proof
// --witness-quorum 2` exits 0 on its proofs and 1 when a witness key is wrong or a witness saw a
// fork (the same log key over another log); `akas log watch` checks the quorum, and follows the
// log through its tiles alone.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cosignerVerifierKey, generateKeyPair } from '../../src/core/index.js';
import { calibratedProfiles, runCli, startServe, startWitness, tempDir, type RunningNode, type RunningWitness } from '../helpers/e2e.js';
import { eventually } from '../helpers/written.js';

let work: string;
let dataDir: string;
let node: RunningNode;
let logKey: string;
const witnesses: RunningWitness[] = [];
const akas = (args: string[], profile = 'p1', url = node.url) => runCli(['--base-url', url, '--profile', profile, ...args], { cwd: work });
const facet = (i: number, tag = 'a') =>
  JSON.stringify({
    schemaVersion: '1.0.0',
    stepId: `${tag}${i}`,
    pipeline: 'ingest',
    step: 'copy',
    transform: 'copied',
    inputs: [{ sha256: 'a'.repeat(64) }],
    outputs: [{ sha256: 'b'.repeat(64) }],
    actor: 'cron',
    finishedAt: 1767268800000,
  });

beforeAll(async () => {
  work = tempDir('akas-e2e-witness-');
  dataDir = join(work, 'data');
  // The log key is made at the node's first start; the witnesses are given it.
  const first = await startServe([], { dataDir });
  logKey = ((await (await fetch(`${first.url}/api/node/keys`)).json()) as { log: { verifierKey: string } }).log.verifierKey;
  await first.stop({ keepData: true });
  for (const n of [1, 2]) witnesses.push(await startWitness(join(work, `w${n}`), `w${n}.example/witness`, logKey));
  node = await startServe(
    witnesses.flatMap((w) => ['--cosigner', `${w.verifierKey}@${w.url}`]),
    { dataDir },
  );
  await calibratedProfiles(node.url, work, ['p1']);
}, 120_000);
afterAll(async () => {
  await node?.stop({ keepData: true });
  for (const w of witnesses) await w.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('a node with two akas witness processes (e2e)', () => {
  it('serves proofs whose checkpoint two witnesses cosigned; verify log-proof --witness-quorum 2 exits 0, and 1 with a wrong witness key', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await akas(['--json', 'attest', 'pipeline.facet.v1', '--body', facet(i)]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    }
    const proof = await akas(['--json', 'show', 'att_0000000000000002']);
    expect(proof.code, proof.stderr).toBe(0);
    writeFileSync(join(work, 'proof.json'), proof.stdout);
    const [k1, k2] = witnesses.map((w) => w.verifierKey);
    const ok = await runCli([
      'verify',
      'log-proof',
      join(work, 'proof.json'),
      '--log-key',
      logKey,
      '--witness',
      k1,
      '--witness',
      k2,
      '--witness-quorum',
      '2',
      '--verbose',
    ]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/log\.witnesses/);

    const stranger = cosignerVerifierKey('w2.example/witness', generateKeyPair().publicKey);
    const wrong = await runCli([
      '--json',
      'verify',
      'log-proof',
      join(work, 'proof.json'),
      '--log-key',
      logKey,
      '--witness',
      k1,
      '--witness',
      stranger,
      '--witness-quorum',
      '2',
    ]);
    expect(wrong.code, wrong.stdout + wrong.stderr).toBe(1);
    expect(JSON.parse(wrong.stdout).checks.find((c: { id: string }) => c.id === 'log.witnesses')).toMatchObject({ result: 'failed' });
    // One of the two is enough when the quorum says so.
    const one = await runCli([
      'verify',
      'log-proof',
      join(work, 'proof.json'),
      '--log-key',
      logKey,
      '--witness',
      k1,
      '--witness',
      stranger,
      '--witness-quorum',
      '1',
    ]);
    expect(one.code, one.stdout + one.stderr).toBe(0);

    const health = (await (await fetch(`${node.url}/healthz`)).json()) as { witnesses: Array<{ lag: number; lastError: string | null }> };
    expect(health.witnesses).toHaveLength(2);
    for (const w of health.witnesses) expect(w.lastError).toBeNull();
  });

  it('log watch checks the quorum of each checkpoint, and follows the log through its tiles alone', async () => {
    const [k1, k2] = witnesses.map((w) => w.verifierKey);
    const watch = await akas(['--json', 'log', 'watch', '--once', '--witness', k1, '--witness', k2]);
    expect(watch.code, watch.stdout + watch.stderr).toBe(0);
    // The agent's calibration is an entry too (agent.event.v1, PROTOCOL 8.9), beside the attestations.
    const size = JSON.parse(watch.stdout).size as number;
    const tiles = await akas(['--json', 'log', 'watch', '--once', '--tiles', `${node.url}/log`, '--log-key', logKey, '--witness', k1, '--witness', k2]);
    expect(tiles.code, tiles.stdout + tiles.stderr).toBe(0);
    expect(JSON.parse(tiles.stdout)).toMatchObject({ ok: true, size, audited: size });
    // The next round audits only what is new.
    const r = await akas(['--json', 'attest', 'pipeline.facet.v1', '--body', facet(9)]);
    expect(r.code).toBe(0);
    await akas(['show', String(JSON.parse(r.stdout).id)]); // waits for the witnesses' round
    const again = await akas(['--json', 'log', 'watch', '--once', '--tiles', `${node.url}/log`, '--witness', k1, '--witness', k2]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, size: size + 1, previousSize: size, audited: 1 });
  });

  it('a node that forks its log (the same log key over other entries) gets no cosignature: verify exits 1', async () => {
    await node.stop({ keepData: true });
    // Another data folder with the same node keys: the same origin and log key, another log.
    const forkDir = join(work, 'fork');
    mkdirSync(forkDir, { mode: 0o700 });
    copyFileSync(join(dataDir, 'node-keys.json'), join(forkDir, 'node-keys.json'));
    const fork = await startServe(
      witnesses.flatMap((w) => ['--cosigner', `${w.verifierKey}@${w.url}`]),
      { dataDir: forkDir },
    );
    try {
      const config = tempDir('akas-e2e-witness-cfg-');
      await calibratedProfiles(fork.url, work, ['f1'], config);
      const on = (args: string[]) => runCli(['--base-url', fork.url, '--profile', 'f1', ...args], { cwd: work, configDir: config });
      for (let i = 0; i < 6; i++) expect((await on(['--json', 'attest', 'pipeline.facet.v1', '--body', facet(i, 'fork')])).code).toBe(0);
      const proof = await on(['--json', 'show', 'att_0000000000000005']);
      expect(proof.code, proof.stderr).toBe(0);
      writeFileSync(join(work, 'fork-proof.json'), proof.stdout);
      // Its own signature holds: only the witnesses can tell the fork.
      const alone = await runCli(['verify', 'log-proof', join(work, 'fork-proof.json'), '--log-key', logKey]);
      expect(alone.code, alone.stdout + alone.stderr).toBe(0);
      const [k1, k2] = witnesses.map((w) => w.verifierKey);
      const quorum = await runCli([
        '--json',
        'verify',
        'log-proof',
        join(work, 'fork-proof.json'),
        '--log-key',
        logKey,
        '--witness',
        k1,
        '--witness',
        k2,
        '--witness-quorum',
        '2',
      ]);
      expect(quorum.code, quorum.stdout + quorum.stderr).toBe(1);
      const health = (await (await fetch(`${fork.url}/healthz`)).json()) as { witnesses: Array<{ lastError: string | null }> };
      for (const w of health.witnesses) expect(w.lastError).toMatch(/refused with 422/);
      rmSync(config, { recursive: true, force: true });
    } finally {
      await fork.stop({ keepData: true });
    }
  });

  it('exports bundles whose checkpoint both witnesses cosigned: verify bundle --witness-quorum 2 exits 0, and 1 with a wrong witness key', async () => {
    // The fork test stopped the node: it starts again on its own log, which the witnesses follow.
    node = await startServe(
      witnesses.flatMap((w) => ['--cosigner', `${w.verifierKey}@${w.url}`]),
      { dataDir },
    );
    const seeded = await runCli(['--base-url', node.url, '--json', 'demo', 'seed'], { cwd: work });
    expect(seeded.code, seeded.stdout + seeded.stderr).toBe(0);
    const { proposals } = JSON.parse(seeded.stdout) as { proposals: Array<{ proposalId: string; kind: string; status: string }> };
    const artifact = proposals.find((p) => p.kind === 'artifact' && p.status === 'published')!;
    // The witnesses' round follows each checkpoint: wait until neither lags, then export.
    const size = async () => ((await (await fetch(`${node.url}/api/attestations/head`)).json()) as { size: number }).size;
    const target = await size();
    await eventually(async () => {
      const health = (await (await fetch(`${node.url}/healthz`)).json()) as { witnesses: Array<{ cosignedSize: number }> };
      return health.witnesses.every((w) => w.cosignedSize >= target);
    }, 200);
    const bundle = join(work, 'bundle.json');
    const exported = await akas(['export', artifact.proposalId, '-o', bundle, '--blobs', join(work, 'blobs')]);
    expect(exported.code, exported.stderr).toBe(0);
    const issuer = ((await (await fetch(`${node.url}/healthz`)).json()) as { issuer: string }).issuer;
    const [k1, k2] = witnesses.map((w) => w.verifierKey);
    const both = await runCli([
      '--json',
      'verify',
      'bundle',
      bundle,
      '--blobs',
      join(work, 'blobs'),
      '--issuer',
      issuer,
      '--witness',
      k1,
      '--witness',
      k2,
      '--witness-quorum',
      '2',
    ]);
    expect(both.code, both.stdout + both.stderr).toBe(0);
    expect(JSON.parse(both.stdout).checks.find((c: { id: string }) => c.id === 'log.witnesses')).toMatchObject({ result: 'held' });
    const stranger = cosignerVerifierKey('w2.example/witness', generateKeyPair().publicKey);
    const wrong = await runCli([
      '--json',
      'verify',
      'bundle',
      bundle,
      '--blobs',
      join(work, 'blobs'),
      '--issuer',
      issuer,
      '--witness',
      k1,
      '--witness',
      stranger,
      '--witness-quorum',
      '2',
    ]);
    expect(wrong.code, wrong.stdout + wrong.stderr).toBe(1);
    expect(JSON.parse(wrong.stdout).checks.find((c: { id: string }) => c.id === 'log.witnesses')).toMatchObject({ result: 'failed' });
  });
});
