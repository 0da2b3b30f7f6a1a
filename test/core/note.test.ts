// C2SP signed notes and tlog checkpoints of src/core/note.ts: the golang.org/x/mod
// sumdb/note vector (test/vectors/c2sp-signed-note, see its README), tampering, malformed
// notes and keys, and checkpoints signed over a real Merkle root.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { vectorJson } from '../helpers/vectors.js';
import { generateKeyPair } from '../../src/core/ed25519.js';
import { MemoryTree } from '../../src/core/merkle.js';
import {
  NOTE_MAX_BYTES,
  formatCheckpoint,
  isNoteKeyName,
  noteKeyHash,
  openNote,
  parseCheckpoint,
  parseSignerKey,
  parseVerifierKey,
  signNote,
  signerKeyString,
  verifierKeyString,
} from '../../src/core/note.js';

interface SignVector {
  signerKey: string;
  verifierKey: string;
  keyName: string;
  keyHash: string;
  text: string;
  signedNote: string;
  badVerifierKeys: string[];
}

const v = vectorJson<SignVector>('c2sp-signed-note', 'sign.json');
const signer = parseSignerKey(v.signerKey)!;

/** A fresh named Ed25519 key: its seed and verifier key string. */
function freshKey(name: string) {
  const pair = generateKeyPair();
  return { name, seed: pair.privateKey, publicKey: pair.publicKey, verifierKey: verifierKeyString(name, pair.publicKey) };
}

/** The signature line(s) of a signed note (everything after the blank line). */
const signatureLines = (note: string) => note.slice(note.lastIndexOf('\n\n') + 2);

describe('signed notes (src/core/note.ts)', () => {
  describe('the golang.org/x/mod sumdb/note vector', () => {
    it('parses the signer key into its name, key hash and seed', () => {
      expect(signer).not.toBeNull();
      expect(signer.name).toBe(v.keyName);
      expect(signer.keyHash).toBe(v.keyHash);
      expect(signer.seed).toBe(Buffer.from(v.signerKey.split('+').slice(4).join('+'), 'base64').subarray(1).toString('hex'));
    });

    it('parses the verifier key to the public key the seed derives', () => {
      expect(parseVerifierKey(v.verifierKey)).toEqual({ name: v.keyName, keyHash: v.keyHash, publicKey: signer.publicKey });
    });

    it('computes the key hash and writes both key strings back exactly', () => {
      expect(noteKeyHash(v.keyName, signer.publicKey)).toBe(v.keyHash);
      expect(verifierKeyString(v.keyName, signer.publicKey)).toBe(v.verifierKey);
      expect(signerKeyString(v.keyName, signer.seed)).toBe(v.signerKey);
    });

    it('signs the text to the signed note, byte for byte', () => {
      expect(signNote(v.text, signer.name, signer.seed)).toBe(v.signedNote);
      expect(signNote(v.text, signer.name, signer.seed.toUpperCase())).toBe(v.signedNote);
    });

    it('opens the signed note under the verifier key, given as a string, parsed, or as bytes', () => {
      const want = { ok: true, text: v.text, verifiedBy: [v.keyName], errors: [] };
      expect(openNote(v.signedNote, [v.verifierKey])).toEqual(want);
      expect(openNote(v.signedNote, [parseVerifierKey(v.verifierKey)!])).toEqual(want);
      expect(openNote(Buffer.from(v.signedNote, 'utf8'), [v.verifierKey])).toEqual(want);
    });

    it('refuses both bad verifier keys, whose hashes are right: the key bytes are wrong (length, algorithm)', () => {
      expect(v.badVerifierKeys).toHaveLength(2);
      for (const bad of v.badVerifierKeys) {
        const [name, hash, ...rest] = bad.split('+');
        const key = Buffer.from(rest.join('+'), 'base64');
        const sha = createHash('sha256').update(`${name}\n`).update(key).digest('hex');
        expect(sha.slice(0, 8), bad).toBe(hash);
        expect(parseVerifierKey(bad), bad).toBeNull();
      }
    });

    it('refuses the note when any one byte of its text changes', () => {
      for (let i = 0; i < v.text.length; i++) {
        const c = v.text[i] === 'X' ? 'Y' : 'X';
        const tampered = v.signedNote.slice(0, i) + c + v.signedNote.slice(i + 1);
        const opened = openNote(tampered, [v.verifierKey]);
        if (opened.ok) expect.fail(`text byte ${i} changed, still ok`);
        expect(opened.verifiedBy).toEqual([]);
      }
    });

    it('refuses the note when any one character of its signature changes', () => {
      const start = v.signedNote.lastIndexOf(' ') + 1;
      const end = v.signedNote.length - 1;
      for (let i = start; i < end; i++) {
        const c = v.signedNote[i] === 'A' ? 'B' : 'A';
        const tampered = v.signedNote.slice(0, i) + c + v.signedNote.slice(i + 1);
        if (openNote(tampered, [v.verifierKey]).ok) expect.fail(`signature character ${i - start} changed, still ok`);
      }
    });

    it('refuses it with one bit flipped in the Ed25519 signature, naming the key', () => {
      const line = signatureLines(v.signedNote);
      const sig = Buffer.from(line.slice(line.lastIndexOf(' ') + 1, -1), 'base64');
      sig[4 + 40] ^= 0x01;
      const tampered = `${v.text}\n— ${v.keyName} ${sig.toString('base64')}\n`;
      expect(openNote(tampered, [v.verifierKey])).toEqual({
        ok: false,
        text: v.text,
        verifiedBy: [],
        errors: [`invalid signature by ${v.keyName}+${v.keyHash}`],
      });
    });
  });

  describe('keys', () => {
    it('accepts names as Go does: no "+", no Unicode space, not empty', () => {
      for (const ok of ['PeterNeumann', 'example.com/log', 'ünïcødé', 'a-b_c.d/e:f']) expect(isNoteKeyName(ok), ok).toBe(true);
      for (const bad of ['', 'a+b', 'a b', 'a\tb', 'a\u00a0b', 'a\u0085b', 'a\u2003b', 'a\u3000b', 'a\ud800b'])
        expect(isNoteKeyName(bad), JSON.stringify(bad)).toBe(false);
    });

    it('refuses a verifier key with a wrong hash, an unknown algorithm, a bad name, missing parts, or a short or badly encoded key', () => {
      const [, hash, key] = v.verifierKey.split('+');
      const wrongHash = hash.slice(0, 7) + (hash[7] === '0' ? '1' : '0');
      // Algorithm 2 with the hash an Ed25519 key of those bytes would have: refused for the algorithm alone.
      const otherAlg = Buffer.concat([Buffer.of(0x02), Buffer.from(signer.publicKey, 'hex')]).toString('base64');
      for (const bad of [
        `${v.keyName}+${wrongHash}+${key}`,
        `${v.keyName}+${hash}+${otherAlg}`,
        `Peter Neumann+${hash}+${key}`,
        `+${hash}+${key}`,
        `${v.keyName}+${hash}`,
        `${v.keyName}+${hash.slice(1)}+${key}`,
        `${v.keyName}+${hash}+${Buffer.from(key, 'base64').subarray(0, 32).toString('base64')}`,
        `${v.keyName}+${hash}+${key.slice(0, -1)}`,
        `${v.keyName}+${hash}+${key}=`,
        v.signerKey,
        '',
      ]) {
        expect(parseVerifierKey(bad), bad).toBeNull();
      }
      expect(parseVerifierKey(42 as unknown as string)).toBeNull();
    });

    it('reads the key hash in either case, as Go does, and answers it in lowercase', () => {
      const upper = v.verifierKey.replace(v.keyHash, v.keyHash.toUpperCase());
      expect(upper).not.toBe(v.verifierKey);
      expect(parseVerifierKey(upper)?.keyHash).toBe(v.keyHash);
    });

    it('refuses a signer key without its prefix, with a hash that does not match its seed, or a verifier key', () => {
      expect(parseSignerKey(v.signerKey.slice('PRIVATE+KEY+'.length))).toBeNull();
      expect(parseSignerKey(v.signerKey.replace(v.keyHash, 'c74f20a4'))).toBeNull();
      expect(parseSignerKey(v.verifierKey)).toBeNull();
      expect(parseSignerKey(v.signerKey.replace('PRIVATE+KEY+', 'PRIVATE+KEYS+'))).toBeNull();
    });

    it('round-trips fresh keys through their strings', () => {
      const k = freshKey('akas.example/log');
      expect(parseVerifierKey(k.verifierKey)).toEqual({ name: k.name, keyHash: noteKeyHash(k.name, k.publicKey), publicKey: k.publicKey });
      expect(parseSignerKey(signerKeyString(k.name, k.seed))).toEqual({ ...parseVerifierKey(k.verifierKey), seed: k.seed });
    });

    it('throws when asked for a key string with a bad name or key', () => {
      expect(() => verifierKeyString('a b', signer.publicKey)).toThrow(TypeError);
      expect(() => verifierKeyString('ok', 'abcd')).toThrow(TypeError);
      expect(() => signerKeyString('a+b', signer.seed)).toThrow(TypeError);
      expect(() => noteKeyHash('', signer.publicKey)).toThrow(TypeError);
    });
  });

  describe('opening notes', () => {
    const alice = freshKey('alice.example');
    const bob = freshKey('bob.example');
    const text = 'akas.example/log\n7\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n';
    const byAlice = signNote(text, alice.name, alice.seed);
    const byBoth = byAlice + signatureLines(signNote(text, bob.name, bob.seed));

    it('ignores signatures by unknown keys and verifies the known ones', () => {
      expect(openNote(byBoth, [alice.verifierKey])).toEqual({ ok: true, text, verifiedBy: [alice.name], errors: [] });
      expect(openNote(byBoth, [bob.verifierKey])).toEqual({ ok: true, text, verifiedBy: [bob.name], errors: [] });
      expect(openNote(byBoth, [bob.verifierKey, alice.verifierKey]).verifiedBy).toEqual([alice.name, bob.name]);
    });

    it('refuses a note with no signature by a known key, still answering its text', () => {
      expect(openNote(byBoth, [v.verifierKey])).toEqual({ ok: false, text, verifiedBy: [], errors: ['no signature by a known key'] });
      expect(openNote(byBoth, []).ok).toBe(false);
    });

    it('refuses a note whose known key signed badly, even if another known key signed well', () => {
      const forged = byAlice + signatureLines(signNote(text.replace('7', '8'), bob.name, bob.seed));
      const opened = openNote(forged, [alice.verifierKey, bob.verifierKey]);
      expect(opened.ok).toBe(false);
      expect(opened.errors).toEqual([`invalid signature by ${bob.name}+${noteKeyHash(bob.name, bob.publicKey)}`]);
      expect(opened.verifiedBy).toEqual([]);
      expect(openNote(forged, [alice.verifierKey]).ok).toBe(true);
    });

    it('judges a repeated signature line of one key once', () => {
      const twice = byAlice + signatureLines(byAlice);
      expect(openNote(twice, [alice.verifierKey])).toEqual({ ok: true, text, verifiedBy: [alice.name], errors: [] });
    });

    it('verifies every line of a known key: a failing second line under it refuses the note, in either order', () => {
      // C2SP signed-note: "If the key name and ID match a known key, verifiers MUST verify the signature."
      const line = signatureLines(byAlice).trim();
      const sig = Buffer.from(line.slice(line.lastIndexOf(' ') + 1), 'base64');
      sig[sig.length - 1] ^= 1;
      const broken = `${line.slice(0, line.lastIndexOf(' ') + 1)}${sig.toString('base64')}\n`;
      for (const note of [byAlice + broken, byAlice.replace(line, broken + line)]) {
        const opened = openNote(note, [alice.verifierKey]);
        expect(opened.ok).toBe(false);
        expect(opened.errors).toEqual([`invalid signature by ${alice.name}+${noteKeyHash(alice.name, alice.publicKey)}`]);
      }
    });

    it('refuses malformed notes without throwing', () => {
      const sig = signatureLines(byAlice);
      const malformed: Record<string, string | Uint8Array> = {
        'no blank line': `${text}${sig}`,
        'no final newline': byAlice.slice(0, -1),
        'no signature': `${text}\n`,
        'a hyphen for the em dash': `${text}\n${sig.replace('—', '-')}`,
        'no space after the name': `${text}\n${sig.replace(' ', '').replace(' ', '')}`,
        'a blank line among the signatures': `${text}\n${sig}\n${sig}`,
        'a blank line in the text': `a\n\n${byAlice}`,
        'a blank first line': `\n${byAlice}`,
        'bad base64': `${text}\n${sig.replace(/=\n$/, '!\n')}`,
        'a signature under 5 bytes': `${text}\n— ${alice.name} AAAAAA==\n`,
        'an invalid key name': `${text}\n${sig.replace(alice.name, 'ali+ce')}`,
        'a carriage return': byAlice.replace('\n7', '\r\n7'),
        'a tab': byAlice.replace('akas', 'ak\tas'),
        'a NUL': byAlice.replace('akas', 'ak\0as'),
        'a lone surrogate': byAlice.replace('akas', 'ak\ud800as'),
        'invalid UTF-8': Buffer.concat([Buffer.from([0xc3, 0x28]), Buffer.from(byAlice)]),
        'neither string nor bytes': 42 as unknown as string,
      };
      for (const [why, note] of Object.entries(malformed)) {
        const opened = openNote(note, [alice.verifierKey]);
        expect(opened.ok, why).toBe(false);
        expect(opened.text, why).toBeNull();
        expect(opened.errors.length, why).toBeGreaterThan(0);
      }
    });

    it('reads up to 100 signatures and refuses the 101st', () => {
      const others = Array.from({ length: 99 }, (_, i) => `— other${i} ${Buffer.alloc(68, i).toString('base64')}\n`).join('');
      expect(openNote(byAlice + others, [alice.verifierKey]).ok).toBe(true);
      const opened = openNote(byAlice + others + `— more ${Buffer.alloc(68).toString('base64')}\n`, [alice.verifierKey]);
      expect(opened).toEqual({ ok: false, text: null, verifiedBy: [], errors: ['note has over 100 signatures'] });
    });

    it('refuses a note over 1 MiB, counted in UTF-8 bytes', () => {
      // 'é' is two bytes: a string of fewer than 2^20 characters but more than 2^20 bytes.
      const long = `${'é'.repeat(NOTE_MAX_BYTES / 2)}\n`;
      expect(long.length).toBeLessThan(NOTE_MAX_BYTES);
      expect(() => signNote(long, alice.name, alice.seed)).toThrow(/over/);
      const note = `${long}\n${signatureLines(byAlice)}`;
      expect(openNote(note, [alice.verifierKey]).errors).toEqual(['note is over 1 MiB']);
      expect(openNote(Buffer.from(note), [alice.verifierKey]).errors).toEqual(['note is over 1 MiB']);
      const fits = 'a'.repeat(NOTE_MAX_BYTES - 1000) + '\n';
      expect(openNote(signNote(fits, alice.name, alice.seed), [alice.verifierKey]).ok).toBe(true);
    });

    it('fails closed on a malformed or ambiguous verifier key in the trust list', () => {
      expect(openNote(byAlice, [alice.verifierKey, 'nonsense'])).toEqual({
        ok: false,
        text: null,
        verifiedBy: [],
        errors: ['verifier key #1 is malformed'],
      });
      const forgedHash = { ...parseVerifierKey(alice.verifierKey)!, keyHash: '00000000' };
      expect(openNote(byAlice, [forgedHash]).errors).toEqual(['verifier key #0 is malformed']);
      expect(openNote(byAlice, [alice.verifierKey, alice.verifierKey]).ok).toBe(true);
    });

    it('signs and opens text that is not ASCII', () => {
      const poem = 'Ünïcødé ✓ 😀\nzweite Zeile\n';
      expect(openNote(signNote(poem, alice.name, alice.seed), [alice.verifierKey])).toEqual({ ok: true, text: poem, verifiedBy: [alice.name], errors: [] });
    });

    it('throws when asked to sign a text it could not open again', () => {
      for (const bad of ['', 'no newline', '\nleading blank\n', 'a\n\nb\n', 'tab\there\n', 'cr\r\n', 'lone \ud800\n']) {
        expect(() => signNote(bad, alice.name, alice.seed), JSON.stringify(bad)).toThrow(TypeError);
      }
      expect(() => signNote(text, 'bad name', alice.seed)).toThrow(TypeError);
      expect(() => signNote(text, alice.name, 'not hex')).toThrow(TypeError);
    });
  });
});

describe('tlog checkpoints (src/core/note.ts)', () => {
  const root = createHash('sha256').update('root').digest();

  it('writes origin, size and base64 root, one per line', () => {
    expect(formatCheckpoint({ origin: 'akas.example/log', size: 42, rootHash: root })).toBe(`akas.example/log\n42\n${root.toString('base64')}\n`);
  });

  it('round-trips with and without extension lines, at size 0 and at the largest safe size', () => {
    for (const c of [
      { origin: 'akas.example/log', size: 42, rootHash: root, extensions: [] },
      { origin: 'o', size: 0, rootHash: Buffer.alloc(32), extensions: ['— ext one', 'Timestamp: 1700000000'] },
      { origin: 'o', size: Number.MAX_SAFE_INTEGER, rootHash: root, extensions: [] },
    ]) {
      expect(parseCheckpoint(formatCheckpoint(c))).toEqual(c);
    }
  });

  it('signs a checkpoint of a Merkle root and reads the same root back from the opened note', () => {
    const tree = new MemoryTree();
    for (let i = 0; i < 11; i++) tree.append(Buffer.from(`entry ${i}`));
    const key = freshKey('akas.example/log');
    const note = signNote(formatCheckpoint({ origin: key.name, size: tree.size, rootHash: tree.root() }), key.name, key.seed);
    const opened = openNote(note, [key.verifierKey]);
    expect(opened.ok).toBe(true);
    const cp = parseCheckpoint(opened.text!);
    expect(cp).toEqual({ origin: key.name, size: 11, rootHash: tree.root(), extensions: [] });
  });

  it('refuses malformed checkpoints', () => {
    const r = root.toString('base64');
    // The 43rd character carries 4 bits of the root and 2 unused ones: setting one decodes
    // to the same bytes in a lenient decoder.
    const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const nonCanonical = `${r.slice(0, 42)}${B64[B64.indexOf(r[42]) | 1]}=`;
    expect(nonCanonical).not.toBe(r);
    expect(Buffer.from(nonCanonical, 'base64')).toEqual(root);
    const malformed: Record<string, string> = {
      'no final newline': `o\n1\n${r}`,
      'two lines': `o\n1\n`,
      'empty origin': `\n1\n${r}\n`,
      'a leading zero': `o\n01\n${r}\n`,
      'a plus sign': `o\n+1\n${r}\n`,
      'a negative size': `o\n-1\n${r}\n`,
      'a hex size': `o\n0x10\n${r}\n`,
      'a space in the size': `o\n1 \n${r}\n`,
      'a size past 2^53': `o\n9007199254740993\n${r}\n`,
      'an empty size': `o\n\n${r}\n`,
      'a 31-byte root': `o\n1\n${root.subarray(1).toString('base64')}\n`,
      'a 33-byte root': `o\n1\n${Buffer.concat([root, Buffer.of(0)]).toString('base64')}\n`,
      'an unpadded root': `o\n1\n${r.replace(/=$/, '')}\n`,
      'a base64url root': `o\n1\n${root.toString('base64url')}=\n`,
      'a non-canonical root (stray low bits)': `o\n1\n${nonCanonical}\n`,
      'an empty extension line': `o\n1\n${r}\n\next\n`,
      'a trailing blank line': `o\n1\n${r}\n\n`,
      'a carriage return': `o\r\n1\n${r}\n`,
    };
    for (const [why, text] of Object.entries(malformed)) expect(parseCheckpoint(text), why).toBeNull();
    expect(parseCheckpoint(null as unknown as string)).toBeNull();
  });

  it('throws when asked to write a checkpoint that could not be parsed back', () => {
    expect(() => formatCheckpoint({ origin: '', size: 1, rootHash: root })).toThrow(TypeError);
    expect(() => formatCheckpoint({ origin: 'a\nb', size: 1, rootHash: root })).toThrow(TypeError);
    expect(() => formatCheckpoint({ origin: 'o', size: -1, rootHash: root })).toThrow(TypeError);
    expect(() => formatCheckpoint({ origin: 'o', size: 1.5, rootHash: root })).toThrow(TypeError);
    expect(() => formatCheckpoint({ origin: 'o', size: 1, rootHash: root.subarray(1) })).toThrow(TypeError);
    expect(() => formatCheckpoint({ origin: 'o', size: 1, rootHash: root, extensions: [''] })).toThrow(TypeError);
  });
});
