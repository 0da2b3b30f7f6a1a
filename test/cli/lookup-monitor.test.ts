// akas monitor --index and akas verify index (PROTOCOL 9.10, docs/INDEX.md 7), in-process against
// a node on 127.0.0.1: an honest index holds every root it logs; a node whose store was edited to
// drop an entry from a key logs a root the tiles' entries do not give, and the monitor says so with
// evidence that akas verify index proves under the log key alone.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LookupMap, lookupKeyHash } from '../../src/core/index.js';
import { enqueueLogEntry } from '../../src/domain/log/index.js';
import { LookupHead, LookupIndex, LookupLists } from '../../src/domain/log/lookup.js';
import { cliHarness, type CliHarness } from '../helpers/cli.js';

let h: CliHarness;
beforeEach(async () => {
  h = await cliHarness({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
});
afterEach(async () => h.close());

async function append(n: number, from = 0) {
  const ids = [];
  for (let i = from; i < from + n; i++)
    ids.push(
      await h.node.store.transact([`t:${i}`], async (tx) =>
        enqueueLogEntry(tx, h.node.app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: `ak_mon${i % 3}`, body: { step: `s${i}` } }),
      ),
    );
  for (const id of ids) await h.node.app.akas.log.appended(id);
}

/** A lookup that makes the node log a root of the log as it stands. */
async function logRoot(key = 'agent:ak_mon0') {
  h.node.clock.advance(1000);
  const r = await h.node.app.inject({ url: `/api/index/${encodeURIComponent(key)}` });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('akas monitor --index', () => {
  it('indexes the log again from its tiles and finds every root it logs held', async () => {
    await append(5);
    await logRoot();
    await append(4, 5);
    await logRoot();
    const r = await h.akas(['--json', 'monitor', '--index']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(lines(r.stdout).pop()).toMatchObject({ what: 'index-checked', roots: 2, alerts: 0, unchecked: 0 });
  });

  it('catches a node whose store was edited to drop an entry from a key, with evidence akas verify index proves', async () => {
    await append(6);
    const honest = await logRoot();
    expect(honest.indices).toEqual([0, 3]);
    // The operator edits the store: entry 3 dropped from agent:ak_mon0's list, the head made to agree so the node starts on it.
    const akas = h.node.app.akas as { lookup: LookupIndex };
    await akas.lookup.close();
    const khex = lookupKeyHash('agent:ak_mon0').toString('hex');
    const [chunkKey, seqs] = (await h.node.store.list(LookupLists)).find(([k, chunk]) => k.startsWith(khex) && chunk.includes(3))!;
    await h.node.store.transact(['lookup'], async (tx) =>
      tx.put(
        LookupLists,
        chunkKey,
        seqs.filter((seq) => seq !== 3),
      ),
    );
    const map = new LookupMap();
    for (const [k, chunk] of await h.node.store.list(LookupLists)) for (const seq of chunk) map.add(Buffer.from(k.slice(0, 64), 'hex'), seq);
    const head = (await h.node.store.get(LookupHead, 'head'))!;
    await h.node.store.transact(['lookup'], async (tx) => tx.put(LookupHead, 'head', { ...head, root: map.root().toString('hex') }));
    akas.lookup = new LookupIndex(h.node.app.akas.log, () => h.node.clock.now());
    await append(3, 6);
    const edited = await logRoot();
    expect(edited.indices).toEqual([0, 7]);

    const r = await h.akas(['--json', 'monitor', '--index']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const alert = lines(r.stdout).find((l) => l.type === 'alert');
    expect(alert).toMatchObject({ what: 'index-root', seq: edited.root.entry.seq, logged: edited.map.root });
    const logKey = h.node.keys.log.verifierKey;
    const proven = await h.akas(['--json', 'verify', 'index', alert.evidenceFile, '--log-key', logKey]);
    expect(proven.code, proven.stdout).toBe(0);
    expect(proven.json()).toMatchObject({ verdict: 'verified', logged: edited.map.root });

    // Evidence whose entries were changed to agree with the wrong root proves nothing.
    const evidence = JSON.parse(readFileSync(alert.evidenceFile, 'utf8'));
    evidence.leaves[3] = evidence.leaves[4];
    writeFileSync(alert.evidenceFile, JSON.stringify(evidence));
    const forged = await h.akas(['--json', 'verify', 'index', alert.evidenceFile, '--log-key', logKey]);
    expect(forged.code).toBe(1);
    expect(forged.json().checks.find((c: { id: string }) => c.id === 'index.log').result).toBe('failed');
  });
});
