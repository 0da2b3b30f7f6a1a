// Crash consistency: a real `akas serve` (a child process) under a bounded mixed write load
// (register, calibrate, use-tool, propose, judge, attest, cas put) is killed with SIGKILL at
// a random point, several rounds over, and restarted on the same folder each time. After
// every kill: the folder passes the node's own audit (log chain, MACs, tree and checkpoints;
// ledger; proposals; agents and blobs against the store's own indexes, and nothing dropped
// from LevelDB's log at the open), every write the node acknowledged is in the store, every acknowledged
// blob hashes to its name, and once restarted, the log is consistent with the last checkpoint
// the node handed out before it died. CRASH_SEED reruns one sequence of kill points.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkNode } from '../../src/node/index.js';
import { consistent, openCheckpoint } from '../../verifier/index.js';
import { seeded, WRITE_MIX, Workload } from '../../bench/workload.js';
import { startServe, tempDir, type RunningNode } from '../helpers/e2e.js';
import { assertAcknowledgedPresent } from '../helpers/faults.js';

const ROUNDS = 4;
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1e9);
const SERVE_ARGS = ['--trust-proxy', '--public-url', 'https://akas.example.org', '--registration-cap', '100000'];

let node: RunningNode | undefined;
const work = tempDir('akas-e2e-crash-');
afterAll(async () => {
  await node?.stop({ keepData: true });
  rmSync(work, { recursive: true, force: true });
});

/** Kills the node where it stands: no close, no flush, no goodbye. */
async function kill(n: RunningNode) {
  const exited = new Promise((r) => n.process.once('exit', r));
  n.process.kill('SIGKILL');
  await exited;
}

/** The restarted node's log extends the last checkpoint handed out before the kill. */
async function assertLogExtends(url: string, lastNote: string | undefined) {
  const keys = (await (await fetch(`${url}/api/node/keys`)).json()) as { log: { verifierKey: string } };
  const now = await (await fetch(`${url}/api/log/checkpoint`)).text();
  const fresh = openCheckpoint(now, [keys.log.verifierKey]);
  expect(fresh.ok, JSON.stringify(fresh)).toBe(true);
  if (!lastNote || !fresh.ok) return;
  const old = openCheckpoint(lastNote, [keys.log.verifierKey]);
  expect(old.ok, "the last checkpoint handed out verifies under the restarted node's log key").toBe(true);
  if (!old.ok) return;
  expect(fresh.checkpoint.size).toBeGreaterThanOrEqual(old.checkpoint.size);
  if (old.checkpoint.size === 0) return;
  const r = (await (await fetch(`${url}/api/log/proof/consistency?old=${old.checkpoint.size}&new=${fresh.checkpoint.size}`)).json()) as { proof: string[] };
  expect(
    consistent(old.checkpoint.size, old.checkpoint.rootHash, fresh.checkpoint.size, fresh.checkpoint.rootHash, r.proof),
    'the log after the crash extends the last checkpoint before it',
  ).toBe(true);
}

describe('crash consistency (SIGKILL under a mixed write load)', () => {
  it(`loses nothing acknowledged over ${ROUNDS} kills (seed ${SEED})`, async () => {
    console.log(`crash test seed ${SEED} (rerun with CRASH_SEED=${SEED})`);
    const random = seeded(SEED);
    const dataDir = join(work, 'data');
    node = await startServe(SERVE_ARGS, { dataDir });
    const load = new Workload(node.url, random, 16);
    try {
      for (let i = 0; i < 6; i++) await load.seedAgent();
      let written = 0;
      const ackedSoFar = () => Object.values(load.acked).reduce((s, xs) => s + xs.length, 0);
      for (let round = 1; round <= ROUNDS; round++) {
        const run = load.run(WRITE_MIX, 12);
        let ended = false;
        void run.done.finally(() => (ended = true));
        // Kill once the node has acknowledged a write of this round, then 0 to 1.2 s later:
        // mid-batch, mid-upload, mid-append. Not a fixed pause from the start: beside two busy
        // loops, a node just restarted answered nothing in 1.5 s once, and the round then
        // tested no write (issue 31, 6).
        // The last round also waits for a judgment, an attestation and a blob to have been
        // acknowledged in some round, which the end asserts: on a loaded machine four early
        // kills once came before any judgment was (the kinds take the longest to reach).
        const covered = () => round < ROUNDS || (load.acked.judgments.length > 0 && load.acked.attestations.length > 0 && load.acked.blobs.length > 0);
        while ((ackedSoFar() <= written || !covered()) && !ended) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, random() * 1200));
        await kill(node);
        run.stop();
        await run.done;
        const acked = ackedSoFar();
        expect(acked, `round ${round} acknowledged writes`).toBeGreaterThan(written);
        written = acked;

        const audit = await checkNode(dataDir);
        expect(
          [...audit.log.problems, ...audit.ledger.problems, ...audit.proposals.problems, ...audit.records.problems],
          `round ${round}: the node's own audit`,
        ).toEqual([]);
        expect(audit.records.agents, `round ${round}: agents counted by the audit`).toBeGreaterThanOrEqual(load.acked.agents.length);
        expect(audit.records.blobs.acknowledged, `round ${round}: blobs counted by the audit`).toBeGreaterThanOrEqual(
          new Set(load.acked.blobs.map((b) => b.sha256)).size,
        );
        await assertAcknowledgedPresent(dataDir, load.acked);

        node = await startServe(SERVE_ARGS, { dataDir });
        load.retarget(node.url);
        await assertLogExtends(node.url, load.acked.checkpoints.at(-1));
      }
      const counts = Object.fromEntries(Object.entries(load.acked).map(([k, v]) => [k, v.length]));
      console.log(`crash test: ${ROUNDS} kills, acknowledged ${JSON.stringify(counts)}`);
      expect(load.acked.judgments.length).toBeGreaterThan(0);
      expect(load.acked.attestations.length).toBeGreaterThan(0);
      expect(load.acked.blobs.length).toBeGreaterThan(0);
    } finally {
      await load.close();
    }
  }, 180_000);
});
