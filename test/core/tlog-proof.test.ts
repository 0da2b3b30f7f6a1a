// C2SP tlog-proof@v1 (src/core/tlog-proof.ts) against what is published: the spec's example,
// the reference Go implementation's test cases, and the research notes' signed and cosigned
// worked example checked end to end (inclusion, the log's signature, the witness's cosignature).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyCosignatures } from '../../src/core/cosignature.js';
import { leafHash, verifyInclusion } from '../../src/core/merkle.js';
import { formatTlogProof, parseTlogProof } from '../../src/core/tlog-proof.js';
import { openCheckpoint } from '../../verifier/log.js';
import { vectorJson, vectorText } from '../helpers/vectors.js';

const h = (s: string) => createHash('sha256').update(s).digest();
const go = vectorJson('c2sp-tlog-proof', 'go-reference.json');
const expand = (s: string) =>
  s
    .replace(/\{h\(([^)]*)\)\}/g, (_, x) => h(x).toString('base64'))
    .replace(/\{b64\(64 zero bytes\)\}/g, Buffer.alloc(64).toString('base64'))
    .replace(/\{b64\(([^)]*)\)\}/g, (_, x) => Buffer.from(x).toString('base64'));

describe('C2SP tlog-proof@v1', () => {
  it.each(go.marshal as Array<Record<string, any>>)('formats as the Go reference does: $name', (t) => {
    const text = formatTlogProof({
      index: t.index,
      hashes: t.hashesOf.map(h),
      checkpoint: t.checkpoint,
      ...(t.extra ? { extra: Buffer.from(t.extra) } : {}),
    });
    expect(text).toBe(expand(t.want));
  });

  it.each(go.unmarshalErrors as Array<Record<string, any>>)('refuses what the Go reference refuses: $name', (t) => {
    expect(() => parseTlogProof(expand(t.proof))).toThrow();
  });

  it.each(go.roundTrip as Array<Record<string, any>>)('round-trips: $name', (t) => {
    const p = { index: t.index, hashes: t.hashesOf.map(h), checkpoint: t.checkpoint, ...(t.extra ? { extra: Buffer.from(t.extra) } : {}) };
    const back = parseTlogProof(formatTlogProof(p));
    expect(back.index).toBe(p.index);
    expect(back.checkpoint).toBe(p.checkpoint);
    expect(back.hashes.map((x) => x.toString('hex'))).toEqual(p.hashes.map((x: Buffer) => x.toString('hex')));
    expect(back.extra?.toString()).toBe(t.extra);
  });

  it("reads the spec's example and writes it back byte for byte", () => {
    const text = vectorText('c2sp-tlog-proof', 'spec-example.tlog-proof');
    const p = parseTlogProof(text);
    expect(p.index).toBe(73894);
    expect(p.hashes).toHaveLength(5);
    expect(p.checkpoint.split('\n')[0]).toBe('example.com/fancylog');
    expect(formatTlogProof(p)).toBe(text);
  });

  it('verifies the worked example: inclusion, the log signature, the witness cosignature', () => {
    const text = vectorText('c2sp-tlog-proof', 'worked-example.tlog-proof');
    const w = vectorJson('c2sp-tlog-proof', 'worked-example.json');
    const p = parseTlogProof(text);
    expect(formatTlogProof(p)).toBe(text);
    const opened = openCheckpoint(p.checkpoint, [w.logKey]);
    expect(opened.ok).toBe(true);
    if (!opened.ok) return;
    expect(opened.checkpoint.size).toBe(5);
    const leaf = leafHash(Buffer.from(w.entries[w.index]));
    expect(verifyInclusion(p.index, 5, leaf, p.hashes, opened.checkpoint.rootHash)).toBe(true);
    expect(verifyInclusion(p.index, 5, leafHash(Buffer.from('entry x\n')), p.hashes, opened.checkpoint.rootHash)).toBe(false);
    const cos = verifyCosignatures(p.checkpoint, [w.witnessKey]);
    expect(cos.valid.map((v) => v.timestamp)).toEqual([w.cosignatureTime]);
  });

  it('refuses CRLF, a leading-zero index and a missing checkpoint', () => {
    expect(() => parseTlogProof('c2sp.org/tlog-proof@v1\r\nindex 0\r\n\r\ncp\r\n')).toThrow(/CR/);
    expect(() => parseTlogProof('c2sp.org/tlog-proof@v1\nindex 01\n\ncp\n')).toThrow(/index/);
    expect(() => parseTlogProof('c2sp.org/tlog-proof@v1\nindex 0\n')).toThrow();
  });
});
