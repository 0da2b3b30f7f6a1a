// What a witness keeps of the checkpoints it refuses (issue 30, finding 2), over real HTTP
// against the built binary: `akas witness`, and a node that is a witness too (`akas serve
// --witness-log`). The honest checkpoint sent back with a junk proof and ~750 KiB of
// signature lines under unknown keys is answered 422 and kept nowhere, so GET / lists an
// honest log with no refusal; a checkpoint the log signed that contradicts what was cosigned
// (another root at the size cosigned, or a proof from the signed root to another root there)
// is kept, with the log's signature line and the proof only. A checkpoint cosigned keeps the
// log's line once, however often it was sent.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAddCheckpoint, formatCheckpoint, generateKeyPair, signNote } from '../../src/core/index.js';
import { MemoryTree } from '../../src/core/merkle.js';
import { verifierKeyString } from '../../src/core/note.js';
import { openLevelStore } from '../../src/store/index.js';
import { originHash, WitnessRefused, WitnessRefusedSummary, type RefusedCheckpoint } from '../../src/witness/index.js';
import { startServe, startWitness } from '../helpers/e2e.js';

/** A log of our own, and a fork of it: the same key over other entries from leaf 3 on. */
function ownLog(origin: string) {
  const key = generateKeyPair();
  const tree = new MemoryTree();
  const fork = new MemoryTree();
  for (let i = 0; i < 32; i++) {
    tree.append(Buffer.from(`leaf ${i}`));
    fork.append(Buffer.from(i < 3 ? `leaf ${i}` : `forked ${i}`));
  }
  const checkpoint = (size: number, t = tree) => signNote(formatCheckpoint({ origin, size, rootHash: t.root(size) }), origin, key.privateKey);
  return { vkey: verifierKeyString(origin, key.publicKey), tree, fork, checkpoint };
}

/** 97 signature lines under keys no witness knows, ~750 KiB in all (a note holds at most 100 lines). */
const unknownKeyLines = () => Array.from({ length: 97 }, (_, i) => `\u2014 junk.example/k${i} ${randomBytes(6000).toString('base64')}\n`).join('');
const JUNK_PROOF = [Buffer.alloc(32, 9)];

/**
 * Drives one witness (its add-checkpoint and monitoring URLs) through an honest log, replaying
 * each checkpoint it cosigned with a junk proof and the unknown-key lines, then sends it two
 * checkpoints of a fork. Answers the two forked notes and the proof of the second.
 */
async function attack(addUrl: string, checkpointUrl: string, log: ReturnType<typeof ownLog>) {
  const post = async (body: string) => (await fetch(addUrl, { method: 'POST', body })).status;
  let old = 0;
  for (const size of [6, 10, 13]) {
    const proof = old === 0 ? [] : log.tree.consistencyProof(old, size);
    expect(await post(formatAddCheckpoint(old, proof, log.checkpoint(size)))).toBe(200);
    old = size;
    // The witness's own public checkpoint (the log's line and its cosignature), sent back.
    const published = await (await fetch(checkpointUrl)).text();
    const replay = formatAddCheckpoint(size, JUNK_PROOF, `${published}${unknownKeyLines()}`);
    expect(replay.length).toBeGreaterThan(750 * 1024);
    for (let i = 0; i < 2; i++) expect(await post(replay)).toBe(422);
  }
  // The log's next checkpoint, honest, with a proof that leads nowhere.
  expect(await post(formatAddCheckpoint(13, JUNK_PROOF, `${log.checkpoint(20)}${unknownKeyLines()}`))).toBe(422);

  // What the log signed against what was cosigned: another root at size 13, and a checkpoint of
  // size 20 whose proof leads from its signed root to another root at 13.
  const forked13 = log.checkpoint(13, log.fork);
  const forked20 = log.checkpoint(20, log.fork);
  const forkProof = log.fork.consistencyProof(13, 20);
  expect(await post(formatAddCheckpoint(13, JUNK_PROOF, `${forked13}${unknownKeyLines()}`))).toBe(422);
  expect(await post(formatAddCheckpoint(13, forkProof, `${forked20}${unknownKeyLines()}`))).toBe(422);
  // The same fork again adds nothing.
  expect(await post(formatAddCheckpoint(13, forkProof, forked20))).toBe(422);
  return { forked13, forked20, forkProof };
}

/** Checks the refusal records of a stopped witness's data folder, then answers its count of them. */
async function kept(dataDir: string, origin: string, check: (records: RefusedCheckpoint[]) => void) {
  const store = await openLevelStore(dataDir);
  try {
    check((await store.list(WitnessRefused)).map(([, r]) => r));
    return (await store.get(WitnessRefusedSummary, origin))?.count ?? 0;
  } finally {
    await store.close();
  }
}

/** Each record holds the log's signed note (text and its one line) and the proof, nothing the submitter added. */
function expectEvidence(records: RefusedCheckpoint[], forked: Awaited<ReturnType<typeof attack>>) {
  const bySize = new Map(records.map((r) => [r.size, r]));
  expect([...bySize.keys()].sort((a, b) => a - b)).toEqual([13, 20]);
  expect(bySize.get(13)).toMatchObject({ checkpoint: forked.forked13, oldSize: 13, reason: expect.stringMatching(/fork/) });
  expect(bySize.get(20)).toMatchObject({
    checkpoint: forked.forked20,
    oldSize: 13,
    proof: forked.forkProof.map((h) => h.toString('base64')),
    reason: expect.stringMatching(/fork/),
  });
  for (const r of records) {
    expect(JSON.stringify(r)).not.toContain('junk.example');
    expect(JSON.stringify(r).length).toBeLessThan(4096);
  }
}

describe('a witness keeps only evidence (issue 30, finding 2)', () => {
  let work: string;
  beforeAll(() => void (work = mkdtempSync(join(tmpdir(), 'akas-refusals-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it(
    'akas witness: the honest checkpoint replayed with a junk proof and 750 KiB of unknown-key lines is kept nowhere; a fork is kept with ' +
      'the log line and the proof',
    async () => {
      const log = ownLog('example.com/replayed');
      const dataDir = join(work, 'witness');
      const w = await startWitness(dataDir, 'w.example/witness', log.vkey);
      let forked;
      try {
        const status = async () =>
          ((await (await fetch(`${w.url}/`)).json()) as { logs: Array<{ size: number; refused: number; lastRefused: string | null }> }).logs[0];
        forked = await attack(`${w.url}/add-checkpoint`, `${w.url}/${originHash('example.com/replayed')}/checkpoint`, log);
        expect(await status()).toMatchObject({ size: 13, refused: 2, lastRefused: expect.stringMatching(/fork/) });
      } finally {
        await w.stop();
      }
      expect(await kept(dataDir, 'example.com/replayed', (records) => expectEvidence(records, forked))).toBe(2);
    },
  );

  it('akas witness: GET / lists an honest log, replayed at every size, with no refusal', async () => {
    const log = ownLog('example.com/honest');
    const dataDir = join(work, 'honest');
    const w = await startWitness(dataDir, 'w.example/witness', log.vkey);
    try {
      const post = async (body: string) => (await fetch(`${w.url}/add-checkpoint`, { method: 'POST', body })).status;
      expect(await post(formatAddCheckpoint(0, [], log.checkpoint(6)))).toBe(200);
      const published = await (await fetch(`${w.url}/${originHash('example.com/honest')}/checkpoint`)).text();
      for (let i = 0; i < 3; i++) expect(await post(formatAddCheckpoint(6, JUNK_PROOF, `${published}${unknownKeyLines()}`))).toBe(422);
      expect(await post(formatAddCheckpoint(0, JUNK_PROOF, log.checkpoint(6)))).toBe(409);
      // Cosigned again (the same size and root), sent with the log's own line 60 times: the
      // checkpoint it keeps and serves holds that line once, beside its cosignature.
      const signed = log.checkpoint(6);
      const logLine = signed.slice(signed.lastIndexOf('\n\n') + 2);
      expect(await post(formatAddCheckpoint(6, [], `${signed}${logLine.repeat(59)}`))).toBe(200);
      const served = await (await fetch(`${w.url}/${originHash('example.com/honest')}/checkpoint`)).text();
      expect(served.split('\n').filter((l) => l.startsWith('\u2014 '))).toHaveLength(2);
      expect(served.startsWith(signed)).toBe(true);
      const listed = (await (await fetch(`${w.url}/`)).json()) as { logs: Array<{ refused: number; lastRefused: string | null }> };
      expect(listed.logs[0]).toMatchObject({ refused: 0, lastRefused: null });
    } finally {
      await w.stop();
    }
    expect(await kept(dataDir, 'example.com/honest', (records) => expect(records).toEqual([]))).toBe(0);
  });

  it('akas serve --witness-log: the same replays are kept nowhere; the fork is kept with the log line and the proof', async () => {
    const log = ownLog('example.com/node-witnessed');
    const node = await startServe(['--witness-log', log.vkey]);
    let forked;
    try {
      forked = await attack(`${node.url}/witness/add-checkpoint`, `${node.url}/witness/${originHash('example.com/node-witnessed')}/checkpoint`, log);
    } finally {
      await node.stop({ keepData: true });
    }
    try {
      expect(await kept(node.dataDir, 'example.com/node-witnessed', (records) => expectEvidence(records, forked))).toBe(2);
    } finally {
      rmSync(node.dataDir, { recursive: true, force: true });
    }
  });
});
