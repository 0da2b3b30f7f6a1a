// C2SP tlog-tiles in src/core/tiles.ts: paths, widths (the specification's own examples),
// entry bundles, and Merkle hashes read from tiles against the in-memory tree. The add-checkpoint
// wire format of src/core/witness-wire.ts too.
import { describe, expect, it } from 'vitest';
import { MemoryTree } from '../../src/core/merkle.js';
import { bundlePath, decodeBundle, encodeBundle, encodeTileIndex, parseTilePath, TileHashReader, tilePath, tileWidthAt } from '../../src/core/tiles.js';
import { formatAddCheckpoint, parseAddCheckpoint, parseTlogSize } from '../../src/core/witness-wire.js';

describe('tiles (src/core/tiles.ts)', () => {
  it('<N> MUST be zero-padded 3-digit path elements, all but the last beginning with x: 1234067 is x001/x234/067', () => {
    expect(encodeTileIndex(1234067)).toBe('x001/x234/067');
    expect(encodeTileIndex(0)).toBe('000');
    expect(encodeTileIndex(999)).toBe('999');
    expect(encodeTileIndex(1000)).toBe('x001/000');
    expect(tilePath(0, 1234067)).toBe('tile/0/x001/x234/067');
    expect(tilePath(2, 5, 17)).toBe('tile/2/005.p/17');
    expect(bundlePath(3)).toBe('tile/entries/003');
    expect(bundlePath(3, 256)).toBe('tile/entries/003');
  });

  it('parses only canonical paths: level 0..63 without leading zeroes, width 1..255', () => {
    expect(parseTilePath('0/x001/x234/067')).toEqual({ kind: 'hashes', level: 0, index: 1234067, width: 256 });
    expect(parseTilePath('1/005.p/17')).toEqual({ kind: 'hashes', level: 1, index: 5, width: 17 });
    expect(parseTilePath('entries/x001/000.p/1')).toEqual({ kind: 'entries', index: 1000, width: 1 });
    for (const bad of [
      '00/000',
      '64/000',
      '0/1',
      '0/0001',
      '0/001/002',
      '0/x000/001',
      '0/000.p/0',
      '0/000.p/256',
      '0/000.p/07',
      'entries/',
      '0/',
      'x/000',
      '0/000.p',
      '-1/000',
    ]) {
      expect(parseTilePath(bad), bad).toBeNull();
    }
  });

  it(
    "the specification's example: a tree of 70,000 has 273 full level-0 tiles, one of width 112, a full level-1 tile, one of width 17, and " +
      'a level-2 tile of width 1',
    () => {
      const s = 70_000;
      expect(tileWidthAt(0, 272, s)).toBe(256);
      expect(tileWidthAt(0, 273, s)).toBe(112);
      expect(tileWidthAt(0, 274, s)).toBe(0);
      expect(tileWidthAt(1, 0, s)).toBe(256);
      expect(tileWidthAt(1, 1, s)).toBe(17);
      expect(tileWidthAt(2, 0, s)).toBe(1);
      expect(tileWidthAt(3, 0, s)).toBe(0);
      // "a tree of size 256 will be represented by a full level 0 tile and a partial level 1 tile of width 1"
      expect(tileWidthAt(0, 0, 256)).toBe(256);
      expect(tileWidthAt(1, 0, 256)).toBe(1);
    },
  );

  it('entry bundles are big-endian uint16 length-prefixed entries, and refuse an entry over 65,535 bytes', () => {
    const entries = [Buffer.from('a'), Buffer.alloc(0), Buffer.alloc(300, 1)];
    const b = encodeBundle(entries);
    expect(b.subarray(0, 3)).toEqual(Buffer.from([0, 1, 0x61]));
    expect(b.readUInt16BE(5)).toBe(300);
    expect(decodeBundle(b)).toEqual(entries);
    expect(decodeBundle(b.subarray(0, b.length - 1))).toBeNull();
    expect(() => encodeBundle([Buffer.alloc(65_536)])).toThrow(RangeError);
    expect(decodeBundle(encodeBundle([Buffer.alloc(65_535)]))![0]).toHaveLength(65_535);
  });

  it('reads every root and complete subtree of a tree from its tiles', async () => {
    const tree = new MemoryTree();
    for (let i = 0; i < 65_600; i++) tree.append(Buffer.from(`leaf ${i}`));
    const reads: string[] = [];
    const getTile = async (level: number, index: number, width: number) => {
      reads.push(tilePath(level, index, width));
      const out: Buffer[] = [];
      for (let i = 0; i < width; i++) out.push(tree.getNode(8 * level, index * 256 + i));
      return Buffer.concat(out);
    };
    for (const size of [1, 2, 255, 256, 257, 65_535, 65_536, 65_537, 65_600]) {
      reads.length = 0;
      const r = new TileHashReader(size, getTile);
      expect((await r.root()).equals(tree.root(size)), `size ${size}`).toBe(true);
      // Every tile read is one the tree of that size has, at its width.
      for (const p of reads) {
        const ref = parseTilePath(p.slice('tile/'.length))!;
        expect(ref.kind === 'hashes' && tileWidthAt(ref.level, ref.index, size)).toBe(ref.width);
      }
    }
    const r = new TileHashReader(65_600, getTile);
    expect((await r.hash(11, 3)).equals(tree.getNode(11, 3))).toBe(true);
    await expect(r.hash(17, 0)).rejects.toThrow(RangeError);
  });

  it('refuses a tile of the wrong width', async () => {
    const r = new TileHashReader(300, async () => Buffer.alloc(32 * 255));
    await expect(r.root()).rejects.toThrow(/not 1 hashes/);
  });
});

describe('the add-checkpoint body (src/core/witness-wire.ts)', () => {
  const note = 'example.com/log\n2\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u2014 example.com/log AAAA\n';

  it('is an old size line, proof lines, an empty line, then the checkpoint', () => {
    const body = formatAddCheckpoint(1, [Buffer.alloc(32, 1)], note);
    expect(body).toBe(`old 1\n${Buffer.alloc(32, 1).toString('base64')}\n\n${note}`);
    const p = parseAddCheckpoint(body);
    expect(p).toEqual({ ok: true, oldSize: 1, proof: [Buffer.alloc(32, 1)], checkpoint: note });
    expect(parseAddCheckpoint(formatAddCheckpoint(0, [], note))).toEqual({ ok: true, oldSize: 0, proof: [], checkpoint: note });
  });

  it('refuses a size with leading zeroes, a proof line that is not a 32-byte hash, over 63 lines, no empty line', () => {
    for (const bad of [`old 01\n\n${note}`, `old -1\n\n${note}`, `old 1\nAAAA\n\n${note}`, `old 1\n${note}`, `new 1\n\n${note}`, `old 1\n\n`]) {
      expect(parseAddCheckpoint(bad).ok, bad).toBe(false);
    }
    const lines = Array.from({ length: 64 }, () => Buffer.alloc(32).toString('base64')).join('\n');
    expect(parseAddCheckpoint(`old 1\n${lines}\n\n${note}`).ok).toBe(false);
    expect(() =>
      formatAddCheckpoint(
        1,
        Array.from({ length: 64 }, () => Buffer.alloc(32)),
        note,
      ),
    ).toThrow();
  });

  it('a 409 body is the size and a newline', () => {
    expect(parseTlogSize('3\n')).toBe(3);
    expect(parseTlogSize('03\n')).toBeNull();
    expect(parseTlogSize('3')).toBeNull();
  });
});
