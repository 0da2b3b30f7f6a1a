// src/domain/log/checkpoints.ts on a real LevelDB store, tests named after the C2SP MUSTs it
// honours: checkpoints a log signs never contradict one another, each carries the log's own
// Ed25519 signature, and cosignatures are kept one per key.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  cosign,
  cosignerKeyId,
  cryptoRandom,
  FakeClock,
  freshNodeKeys,
  generateKeyPair,
  openNote,
  parseCheckpoint,
  parseNote,
  publicKeyFromPrivate,
  verifyConsistency,
  type NodeKeys,
} from '../../../src/core/index.js';
import { LogCheckpoints, TransparencyLog, type StoredCheckpoint } from '../../../src/domain/log/index.js';
import { openTempStore, type Store } from '../../../src/store/index.js';

let store: Store;
let dispose: () => Promise<void>;
let keys: NodeKeys;
let log: TransparencyLog;

beforeEach(async () => {
  ({ store, dispose } = await openTempStore());
  keys = freshNodeKeys(cryptoRandom);
  log = new TransparencyLog({ store, clock: new FakeClock(), keys }, { checkpointEveryMs: 0 });
});
afterEach(async () => {
  await log.close();
  await dispose();
});

const submit = (n: number) =>
  Promise.all(Array.from({ length: n }, (_, i) => log.submit({ kind: 'review.attestation.v1', tier: 'review', agent: null, body: { reviewId: `r${i}` } })));
/** The root a checkpoint signs, read from its note opened under the log key. */
const rootOf = (cp: StoredCheckpoint) => parseCheckpoint(openNote(cp.note, [keys.log.verifierKey]).text!)!.rootHash;

describe('checkpoints (C2SP tlog-checkpoint)', () => {
  it('a log MUST not sign any checkpoint which is inconsistent with any checkpoint it previously signed', async () => {
    // Two appenders on one store, as two processes on a shared database: both checkpoint every size.
    const other = new TransparencyLog({ store, clock: new FakeClock(), keys }, { checkpointEveryMs: 0 });
    for (const n of [1, 2, 5, 8, 13]) {
      await submit(n);
      const [a, b] = await Promise.all([log.checkpoint(), other.checkpoint()]);
      // One note per size, whichever process made it.
      expect(b.note).toBe(a.note);
    }
    await other.close();
    const signed = (await store.list(LogCheckpoints)).map(([, cp]) => cp);
    expect(signed.map((cp) => cp.size)).toEqual([1, 3, 8, 16, 29]);
    for (const [i, older] of signed.entries()) {
      for (const newer of signed.slice(i + 1)) {
        expect(verifyConsistency(older.size, newer.size, await log.consistency(older.size, newer.size), rootOf(older), rootOf(newer))).toBe(true);
      }
    }
  });

  it('the checkpoint MUST carry at least one Ed25519 signature by the log, whose key name matches the origin line', async () => {
    await submit(3);
    const cp = await log.checkpoint();
    const parsed = parseNote(cp.note);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.text.split('\n')[0]).toBe(keys.log.origin);
    expect(parsed.signatures.map((s) => [s.name, s.signature.length])).toEqual([[keys.log.origin, 64]]);
    // The log's verifier key is an Ed25519 note key (signature type 0x01) and opens the note.
    expect(Buffer.from(keys.log.verifierKey.split('+')[2], 'base64')[0]).toBe(0x01);
    expect(openNote(cp.note, [keys.log.verifierKey])).toMatchObject({ ok: true, verifiedBy: [keys.log.origin] });
  });
});

describe('cosignatures kept on a checkpoint (C2SP signed-note, tlog-cosignature)', () => {
  const witness = (name: string) => {
    const seed = generateKeyPair().privateKey;
    return { name, seed, id: `${name}+${cosignerKeyId(name, publicKeyFromPrivate(seed))}` };
  };
  const text = (cp: StoredCheckpoint) => cp.note.slice(0, cp.note.indexOf('\n\n') + 1);

  it('keeps one line per key: "the tuple of key name and key ID uniquely identifies the key that performed the signature"', async () => {
    await submit(2);
    const cp = await log.checkpoint();
    const a = witness('a.example/witness');
    const b = witness('b.example/witness');
    // Another key under a's name: its key ID differs, so it is another key.
    const a2 = witness('a.example/witness');
    const line = (w: typeof a, ts: number) => ({ id: w.id, line: cosign(text(cp), w, ts).replace(/\n$/, '') });
    const [first, other, fromB] = [line(a, 100), line(a2, 100), line(b, 100)];
    await log.addCosignatures(cp.size, [first]);
    await log.addCosignatures(cp.size, [other]);
    expect((await log.addCosignatures(cp.size, [fromB]))!.cosignatures).toEqual([first.line, other.line, fromB.line]);
    // A newer cosignature by a's key takes the place of its older one.
    const later = line(a, 200);
    const kept = (await log.addCosignatures(cp.size, [later]))!;
    expect(kept.cosignatures).toEqual([later.line, other.line, fromB.line]);
    expect(await log.checkpointAt(cp.size)).toEqual(kept);
  });

  it('marks a checkpoint witnessed once, at the first round that ends, and keeps nothing for a size never signed', async () => {
    await submit(2);
    const cp = await log.checkpoint();
    expect(await log.latestWitnessed()).toBeUndefined();
    expect((await log.addCosignatures(cp.size, [], 1_000))!.witnessed).toBe(1_000);
    expect((await log.addCosignatures(cp.size, [], 2_000))!.witnessed).toBe(1_000);
    expect((await log.latestWitnessed())!.size).toBe(cp.size);
    expect(await log.addCosignatures(cp.size + 1, [], 3_000)).toBeUndefined();
    expect(await log.checkpointAt(cp.size + 1)).toBeUndefined();
  });
});
