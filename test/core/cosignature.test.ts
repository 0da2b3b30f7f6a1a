// C2SP tlog-cosignature (cosignature/v1) in src/core/cosignature.ts, against public data
// (test/vectors/c2sp-tlog-cosignature): a Sigsum checkpoint cosigned by eight real witnesses,
// key IDs and timestamps from transparency-dev/formats; then each MUST of the format by name.
import { describe, expect, it } from 'vitest';
import { vectorJson } from '../helpers/vectors.js';
import { generateKeyPair, verifyBytes } from '../../src/core/ed25519.js';
import {
  addSignatureLines,
  cosign,
  cosignatureTimestamp,
  cosignedMessage,
  cosignerKeyId,
  cosignerSignerKey,
  cosignerVerifierKey,
  parseCosignerKey,
  parseCosignerSignerKey,
  verifyCosignatures,
} from '../../src/core/cosignature.js';
import { decodeBase64, formatCheckpoint, noteKeyHash, openNote, parseNote, parseVerifierKey, signNote, verifierKeyString } from '../../src/core/note.js';
import { sha256Hex } from '../../src/core/hash.js';

interface SigsumVector {
  signedData: string;
  proofAscii: string;
  policy: string;
}
interface FormatsVector {
  cosignatureV1Verifier: string;
  ed25519VerifierUsableAsCosigner: string;
  badVerifiers: string[];
  timestamps: Array<{ signature: string; timestamp: number | null }>;
  witnessKeys: Array<{ vkey: string; skey: string }>;
}

const sigsum = vectorJson<SigsumVector>('c2sp-tlog-cosignature', 'sigsum-proof.json');
const formats = vectorJson<FormatsVector>('c2sp-tlog-cosignature', 'formats-keys.json');

/** The Sigsum policy's logs and witnesses (name -> hex public key). */
function policy() {
  const logs: string[] = [];
  const witnesses = new Map<string, string>();
  for (const line of sigsum.policy.split('\n')) {
    const [word, a, b] = line.trim().split(/\s+/);
    if (word === 'log') logs.push(a);
    if (word === 'witness') witnesses.set(a, b);
  }
  return { logs, witnesses };
}

/** The Sigsum ASCII proof's checkpoint, log signature and cosignatures (hex, as the proof has them). */
function proof() {
  const lines = sigsum.proofAscii.split('\n');
  const one = (k: string) => lines.find((l) => l.startsWith(`${k}=`))!.slice(k.length + 1);
  const cosignatures = lines
    .filter((l) => l.startsWith('cosignature='))
    .map((l) => {
      const [keyHash, time, sig] = l.slice('cosignature='.length).split(' ');
      return { keyHash, timestamp: Number(time), signature: sig };
    });
  return { log: one('log'), size: Number(one('size')), rootHex: one('root_hash'), signature: one('signature'), cosignatures };
}

/**
 * The C2SP signed note a Sigsum proof stands for: the checkpoint text, the log's Ed25519 note
 * signature, and each witness's cosignature as a note line under its policy name.
 */
function sigsumNote() {
  const { logs, witnesses } = policy();
  const p = proof();
  const logKey = logs.find((k) => sha256Hex(Buffer.from(k, 'hex')) === p.log)!;
  const origin = `sigsum.org/v1/tree/${p.log}`;
  const text = formatCheckpoint({ origin, size: p.size, rootHash: Buffer.from(p.rootHex, 'hex') });
  const lines = [`\u2014 ${origin} ${Buffer.concat([Buffer.from(noteKeyHash(origin, logKey), 'hex'), Buffer.from(p.signature, 'hex')]).toString('base64')}`];
  const byHash = new Map([...witnesses].map(([name, key]) => [sha256Hex(Buffer.from(key, 'hex')), { name, key }]));
  const used: Array<{ name: string; key: string }> = [];
  for (const c of p.cosignatures) {
    const w = byHash.get(c.keyHash)!;
    used.push(w);
    const ts = Buffer.alloc(8);
    ts.writeBigUInt64BE(BigInt(c.timestamp));
    lines.push(`\u2014 ${w.name} ${Buffer.concat([Buffer.from(cosignerKeyId(w.name, w.key), 'hex'), ts, Buffer.from(c.signature, 'hex')]).toString('base64')}`);
  }
  return {
    text,
    note: `${text}\n${lines.join('\n')}\n`,
    logVkey: verifierKeyString(origin, logKey),
    witnesses: used,
    all: witnesses,
    timestamps: p.cosignatures.map((c) => c.timestamp),
  };
}

describe('cosignatures (src/core/cosignature.ts)', () => {
  describe('a Sigsum checkpoint cosigned by eight real witnesses (sigsum-rs)', () => {
    const s = sigsumNote();

    it('names only keys of the policy: the log and each cosigner are found by sha256 of their keys', () => {
      expect(s.witnesses).toHaveLength(8);
      expect(s.witnesses.every((w) => w !== undefined)).toBe(true);
    });

    it("opens under the log's Ed25519 key, ignoring the eight cosignature lines (unknown keys to it)", () => {
      const opened = openNote(s.note, [s.logVkey]);
      expect(opened.errors).toEqual([]);
      expect(opened.ok).toBe(true);
      expect(opened.text).toBe(s.text);
    });

    it('every cosignature verifies: akas builds the signed message byte for byte as each witness did', () => {
      const keys = s.witnesses.map((w) => cosignerVerifierKey(w.name, w.key));
      const r = verifyCosignatures(s.note, keys);
      expect(r.error).toBeUndefined();
      expect(r.invalid).toEqual([]);
      expect(r.missing).toEqual([]);
      expect(r.valid.map((v) => v.name).sort()).toEqual(s.witnesses.map((w) => w.name).sort());
      expect(new Set(r.valid.map((v) => v.timestamp))).toEqual(new Set(s.timestamps));
    });

    it('the raw signature is Ed25519 over "cosignature/v1\\ntime T\\n" and the checkpoint text', () => {
      const w = s.witnesses[0];
      const line = parseNote(s.note);
      if (!line.ok) throw new Error(line.error);
      const mine = line.signatures.find((l) => l.name === w.name)!;
      const t = cosignatureTimestamp(mine.signature)!;
      expect(verifyBytes(Buffer.from(w.key, 'hex'), Buffer.from(`cosignature/v1\ntime ${t}\n${s.text}`), mine.signature.subarray(8))).toBe(true);
      expect(cosignedMessage(s.text, t).toString()).toBe(`cosignature/v1\ntime ${t}\n${s.text}`);
    });

    it('a cosignature moved to another size, root or time no longer verifies', () => {
      const keys = s.witnesses.map((w) => cosignerVerifierKey(w.name, w.key));
      const sigs = s.note.slice(s.note.indexOf('\n\n') + 2);
      const otherSize = s.text.replace(/\n(\d+)\n/, (_m, n) => `\n${Number(n) + 1}\n`);
      const r = verifyCosignatures(`${otherSize}\n${sigs}`, keys);
      expect(r.valid).toEqual([]);
      expect(r.invalid).toHaveLength(8);
    });

    it('a quorum counts distinct keys: the policy requires 4 of its 6 groups and this proof has all 8', () => {
      const keys = [...s.all].map(([name, key]) => cosignerVerifierKey(name, key));
      expect(verifyCosignatures(s.note, keys).valid.length).toBeGreaterThanOrEqual(4);
    });
  });

  describe('key IDs and keys (transparency-dev/formats)', () => {
    it('MUST compute the Ed25519 key ID as SHA-256(name || "\\n" || 0x04 || key)[:4]: remora.n621.de is da77ade7', () => {
      const k = parseCosignerKey(formats.cosignatureV1Verifier)!;
      expect(k).not.toBeNull();
      expect(k.keyId).toBe('da77ade7');
      // The same witness in the Sigsum policy: two sources agree on its key.
      expect(k.publicKey).toBe(policy().witnesses.get('remora.n621.de'));
      expect(cosignerVerifierKey(k.name, k.publicKey)).toBe(formats.cosignatureV1Verifier);
    });

    it('takes a plain Ed25519 verifier key (0x01) as the same key cosigning, under its 0x04 key ID', () => {
      const plain = parseVerifierKey(formats.ed25519VerifierUsableAsCosigner)!;
      const k = parseCosignerKey(formats.ed25519VerifierUsableAsCosigner)!;
      expect(k.publicKey).toBe(plain.publicKey);
      expect(k.keyId).toBe(cosignerKeyId(plain.name, plain.publicKey));
      expect(k.keyId).not.toBe(plain.keyHash);
    });

    it('refuses malformed verifier keys', () => {
      for (const bad of formats.badVerifiers) expect(parseCosignerKey(bad), bad).toBeNull();
    });

    it("reads a cosignature's timestamp, and refuses a plain Ed25519 signature as one", () => {
      for (const t of formats.timestamps) {
        const bytes = decodeBase64(t.signature)!;
        expect(cosignatureTimestamp(bytes.subarray(4))).toBe(t.timestamp);
      }
    });

    it("derives each witness's public key from its signer key (0x01 form, as Go's note.GenerateKey writes it)", () => {
      for (const w of formats.witnessKeys) {
        const signer = parseCosignerSignerKey(w.skey)!;
        expect(signer.publicKey).toBe(parseVerifierKey(w.vkey)!.publicKey);
        expect(parseCosignerKey(w.vkey)!.keyId).toBe(signer.keyId);
      }
    });
  });

  describe('signing (each MUST of tlog-cosignature and tlog-witness)', () => {
    const pair = generateKeyPair();
    const signer = { name: 'witness.example/w1', seed: pair.privateKey };
    const vkey = cosignerVerifierKey(signer.name, pair.publicKey);
    const text = formatCheckpoint({ origin: 'example.com/log', size: 3, rootHash: Buffer.alloc(32, 7) });
    const logPair = generateKeyPair();
    const logNote = signNote(text, 'example.com/log', logPair.privateKey);

    it('signature type 0x04 keys round-trip through their signer and verifier strings', () => {
      expect(parseCosignerSignerKey(cosignerSignerKey(signer.name, signer.seed))!.publicKey).toBe(pair.publicKey);
      expect(parseCosignerKey(vkey)!.publicKey).toBe(pair.publicKey);
      expect(Buffer.from(vkey.split('+')[2], 'base64')[0]).toBe(0x04);
    });

    it('the cosignature MUST be a timestamped_signature: u64 big-endian time then 64 bytes', () => {
      const line = cosign(text, signer, 1_700_000_000);
      const bytes = Buffer.from(line.trim().split(' ').pop()!, 'base64');
      expect(bytes).toHaveLength(4 + 8 + 64);
      expect(bytes.subarray(0, 4).toString('hex')).toBe(cosignerKeyId(signer.name, pair.publicKey));
      expect(Number(bytes.readBigUInt64BE(4))).toBe(1_700_000_000);
    });

    it('the cosignature MUST NOT omit the timestamp (it must not be zero)', () => {
      expect(() => cosign(text, signer, 0)).toThrow(TypeError);
    });

    it('the timestamp line MUST be "time" and the decimal with no leading zeroes', () => {
      expect(cosignedMessage(text, 5).toString()).toBe(`cosignature/v1\ntime 5\n${text}`);
    });

    it('extension lines, if present, MUST be included in the cosigned message', () => {
      const ext = formatCheckpoint({ origin: 'example.com/log', size: 3, rootHash: Buffer.alloc(32, 7), extensions: ['note'] });
      const line = cosign(ext, signer, 10);
      expect(verifyCosignatures(`${ext}\n${line}`, [vkey]).valid).toHaveLength(1);
      expect(verifyCosignatures(`${text}\n${line}`, [vkey]).invalid).toHaveLength(1);
    });

    it('clients MUST ignore cosignatures from unknown keys, and a matching line that fails is invalid', () => {
      const other = generateKeyPair();
      const otherLine = cosign(text, { name: 'other.example/w', seed: other.privateKey }, 10);
      const note = addSignatureLines(logNote, [cosign(text, signer, 10), otherLine]);
      const r = verifyCosignatures(note, [vkey]);
      expect(r.valid.map((v) => v.name)).toEqual([signer.name]);
      // The log's own key still opens the cosigned note.
      expect(openNote(note, [verifierKeyString('example.com/log', logPair.publicKey)]).ok).toBe(true);
      // A forged line under the witness's name and key ID.
      const forged = cosign(text, { name: signer.name, seed: other.privateKey }, 10).replace(/ (\S+)\n$/, (_m, b64: string) => {
        const b = Buffer.from(b64, 'base64');
        Buffer.from(cosignerKeyId(signer.name, pair.publicKey), 'hex').copy(b, 0);
        return ` ${b.toString('base64')}\n`;
      });
      const bad = verifyCosignatures(addSignatureLines(logNote, [forged]), [vkey]);
      expect(bad.valid).toEqual([]);
      expect(bad.invalid[0].why).toMatch(/does not verify/);
    });

    it('verifiers MAY reject cosignatures dated in the future: with `now`, beyond 10 minutes is refused', () => {
      const note = addSignatureLines(logNote, [cosign(text, signer, 10_000)]);
      expect(verifyCosignatures(note, [vkey], { now: 9_500 }).valid).toHaveLength(1);
      expect(verifyCosignatures(note, [vkey], { now: 9_000 }).invalid[0].why).toMatch(/future/);
    });

    it('one verdict per key: a repeated line is counted once', () => {
      const line = cosign(text, signer, 10);
      const note = `${logNote}${line}${line}`;
      expect(verifyCosignatures(note, [vkey]).valid).toHaveLength(1);
    });

    it('every line under a given key is verified: a valid line does not hide a failing one of the same key', () => {
      const good = cosign(text, signer, 10);
      const b = Buffer.from(good.trim().split(' ').pop()!, 'base64');
      b[b.length - 1] ^= 1;
      const broken = `${good.slice(0, good.lastIndexOf(' ') + 1)}${b.toString('base64')}\n`;
      for (const note of [`${logNote}${good}${broken}`, `${logNote}${broken}${good}`]) {
        const r = verifyCosignatures(note, [vkey]);
        expect(r.valid).toEqual([]);
        expect(r.invalid).toHaveLength(1);
        expect(r.invalid[0].why).toMatch(/does not verify/);
      }
    });
  });
});
