// The witness quorum of verifier/log.ts (PROTOCOL 9.9), offline: a checkpoint counts only with
// K valid cosignatures of the given witnesses; a bad line under a given key fails it; keys and
// quorums that cannot be met are refused; a bundle's checkpoint is held to the same rule.
import { describe, expect, it } from 'vitest';
import { cosign, cosignerVerifierKey, formatCheckpoint, generateKeyPair, signNote } from '../../src/core/index.js';
import { checkWitnesses, Checks, verifyBundle } from '../../verifier/index.js';
import { BUNDLE_FORMAT } from '../../verifier/bundle.js';

const log = generateKeyPair();
const text = formatCheckpoint({ origin: 'example.com/log', size: 9, rootHash: Buffer.alloc(32, 3) });
const witness = (name: string) => {
  const k = generateKeyPair();
  return { name, seed: k.privateKey, vkey: cosignerVerifierKey(name, k.publicKey) };
};
const [w1, w2, w3] = [witness('w1.example/w'), witness('w2.example/w'), witness('w3.example/w')];
const note = signNote(text, 'example.com/log', log.privateKey) + cosign(text, w1, 100) + cosign(text, w2, 100);

const check = (n: unknown, keys: string[], quorum?: number, now?: number) => {
  const c = new Checks();
  const ok = checkWitnesses(c, n, { keys, quorum, now });
  return { ok, check: c.list[0] };
};

describe('the witness quorum (verifier/log.ts)', () => {
  it('holds with K valid cosignatures of the given witnesses, and names them', () => {
    expect(check(note, [w1.vkey, w2.vkey], 2)).toMatchObject({ ok: true, check: { id: 'log.witnesses', layer: 'L3', valid: true } });
    expect(check(note, [w1.vkey, w2.vkey]).ok).toBe(true); // default: all given
    expect(check(note, [w1.vkey, w3.vkey], 1).ok).toBe(true);
  });

  it('fails short of the quorum, saying which witnesses did not cosign', () => {
    const r = check(note, [w1.vkey, w3.vkey], 2);
    expect(r.ok).toBe(false);
    expect(r.check.why).toMatch(/only 1 of the 2 required/);
    expect(r.check.why).toContain('w3.example/w');
  });

  it('fails on a line under a given key that does not verify, even with the quorum met otherwise', () => {
    const forged = signNote(text, 'example.com/log', log.privateKey) + cosign(text, w1, 100) + cosign(text.replace('\n9\n', '\n10\n'), w2, 100);
    const r = check(forged, [w1.vkey, w2.vkey], 1);
    expect(r.ok).toBe(false);
    expect(r.check.why).toMatch(/does not verify/);
  });

  it('refuses a cosignature dated in the future, malformed keys and quorums out of range', () => {
    const future = signNote(text, 'example.com/log', log.privateKey) + cosign(text, w1, 1_000_000);
    expect(check(future, [w1.vkey], 1, 999_500).ok).toBe(true);
    expect(check(future, [w1.vkey], 1, 900_000).check.why).toMatch(/future/);
    expect(check(note, [w1.vkey, 'not-a-key'], 1).check.why).toMatch(/not a witness key/);
    expect(check(note, [w1.vkey], 2).check.why).toMatch(/cannot be met/);
    expect(check(undefined, [w1.vkey]).ok).toBe(false);
  });

  it("holds a bundle's checkpoint to the same rule", async () => {
    const bundle = { format: BUNDLE_FORMAT, proposal: { proposalId: 'cprop_0123456789abcdef', judgments: [] }, log: { checkpoint: note, entries: [] } };
    const ok = await verifyBundle(bundle, { witnesses: { keys: [w1.vkey, w2.vkey], quorum: 2 } });
    expect(ok.checks.find((c) => c.id === 'log.witnesses')).toMatchObject({ valid: true });
    const short = await verifyBundle(bundle, { witnesses: { keys: [w1.vkey, w3.vkey], quorum: 2 } });
    expect(short.checks.find((c) => c.id === 'log.witnesses')).toMatchObject({ valid: false });
    expect(short.verified).toBe(false);
    // Without witnesses given, no witness check runs.
    expect((await verifyBundle(bundle)).checks.find((c) => c.id === 'log.witnesses')).toBeUndefined();
  });
});
