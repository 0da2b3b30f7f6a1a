// PROTOCOL 9.8: the log as C2SP tlog-tiles, read by an implementation of the tile maths
// written here from the specifications (RFC 6962 / RFC 9162 section 2.1, C2SP tlog-tiles,
// signed-note, tlog-checkpoint), with node:crypto alone: none of the node's code checks what
// the node serves. Then the MUSTs of the API by name, and the 64 KiB bound on entries.
import { createHash, createPublicKey, verify as edVerify } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ENTRY_BYTES } from '../../src/core/index.js';
import { attestationKinds, enqueueLogEntry, kindOf, leafBytesAtMost } from '../../src/domain/log/index.js';
import { bearer, registerAgent, testNode, type TestNode } from '../helpers/app.js';
import { markCalibrated } from '../helpers/agents.js';

// ---- an independent reader of a tiled log, from the specifications ----------------------
const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
/** RFC 6962 2.1: leaf hash and interior node hash. */
const leafH = (leaf: Uint8Array) => sha256(Buffer.of(0), leaf);
const nodeH = (l: Uint8Array, r: Uint8Array) => sha256(Buffer.of(1), l, r);
/** RFC 6962 2.1: MTH(D[lo:hi]) with k the largest power of two smaller than n (memoised per range). */
function mth(leaves: Buffer[], lo = 0, hi = leaves.length, memo = new Map<string, Buffer>()): Buffer {
  const n = hi - lo;
  if (n === 0) return sha256();
  if (n === 1) return leaves[lo];
  const key = `${lo}:${hi}`;
  let h = memo.get(key);
  if (!h) {
    let k = 1;
    while (k * 2 < n) k *= 2;
    h = nodeH(mth(leaves, lo, lo + k, memo), mth(leaves, lo + k, hi, memo));
    memo.set(key, h);
  }
  return h;
}
/** RFC 6962 2.1.1: PATH(m, D[lo:hi]) over leaf hashes. */
function path(m: number, leaves: Buffer[], memo: Map<string, Buffer>, lo = 0, hi = leaves.length): Buffer[] {
  const n = hi - lo;
  if (n <= 1) return [];
  let k = 1;
  while (k * 2 < n) k *= 2;
  return m < k
    ? [...path(m, leaves, memo, lo, lo + k), mth(leaves, lo + k, hi, memo)]
    : [...path(m - k, leaves, memo, lo + k, hi), mth(leaves, lo, lo + k, memo)];
}
/** RFC 9162 2.1.3.2: verifying an inclusion proof. */
function verifyPath(index: number, size: number, leafHash: Buffer, proof: Buffer[], root: Buffer): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeH(p, r);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) (fn = Math.floor(fn / 2)), (sn = Math.floor(sn / 2));
    } else r = nodeH(r, p);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}
/** tlog-tiles: <N> in zero-padded 3-digit elements, all but the last prefixed with x. */
function encodeN(n: number): string {
  const parts: string[] = [];
  do {
    parts.unshift(String(n % 1000).padStart(3, '0'));
    n = Math.floor(n / 1000);
  } while (n > 0);
  return parts.map((p, i) => (i < parts.length - 1 ? `x${p}` : p)).join('/');
}
const tileUrl = (l: number | 'entries', n: number, w: number) => `/log/tile/${l}/${encodeN(n)}${w === 256 ? '' : `.p/${w}`}`;
/** signed-note + tlog-checkpoint, for one Ed25519 verifier key "name+hex8+base64(0x01||key)". */
function openCheckpoint(note: string, vkey: string) {
  const [name, id, ...b64parts] = vkey.split('+'); // base64 may hold '+' too
  const b64 = b64parts.join('+');
  const key = Buffer.from(b64, 'base64');
  expect(key[0]).toBe(0x01);
  const split = note.lastIndexOf('\n\n');
  const text = note.slice(0, split + 1);
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.subarray(1).toString('base64url') }, format: 'jwk' });
  const mine = note
    .slice(split + 2)
    .split('\n')
    .filter((l) => l.startsWith(`\u2014 ${name} `))
    .map((l) => Buffer.from(l.slice(l.lastIndexOf(' ') + 1), 'base64'))
    .find((s) => s.subarray(0, 4).toString('hex') === id)!;
  expect(
    sha256(Buffer.from(`${name}\n`), key)
      .subarray(0, 4)
      .toString('hex'),
  ).toBe(id);
  expect(edVerify(null, Buffer.from(text), pub, mine.subarray(4))).toBe(true);
  const [origin, size, root, ...rest] = text.slice(0, -1).split('\n');
  expect(rest).toEqual([]);
  return { origin, size: Number(size), root: Buffer.from(root, 'base64') };
}
/** tlog-tiles entry bundles: big-endian uint16 length-prefixed entries. */
function splitBundle(b: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < b.length; ) {
    const n = b.readUInt16BE(at);
    out.push(b.subarray(at + 2, at + 2 + n));
    at += 2 + n;
  }
  return out;
}
const hashesOf = (tile: Buffer) => Array.from({ length: tile.length / 32 }, (_, i) => tile.subarray(i * 32, i * 32 + 32));
// -----------------------------------------------------------------------------------------

let node: TestNode;
const SIZE = 600; // two full level-0 tiles and one partial; a level-1 tile of width 2
beforeAll(async () => {
  node = await testNode({ rateLimit: { burst: 1e6, refillPerSecond: 1e6 } });
  const ids: string[] = [];
  await node.store.transact(['fill'], async (tx) => {
    for (let i = 0; i < SIZE; i++)
      ids.push(enqueueLogEntry(tx, node.app.akas, { kind: 'pipeline.facet.v1', tier: 'pipeline', agent: null, body: { i, pad: 'x'.repeat(i % 97) } }));
  });
  for (const id of ids) await node.app.akas.log.appended(id);
});
afterAll(() => node.close());

const get = (url: string, headers: Record<string, string> = {}) => node.app.inject({ url, headers });

describe('the log as C2SP tiles, read independently', () => {
  it('rebuilds the signed root from the tiles, checks every tile and bundle against it, and proves every entry', async () => {
    const cpRes = await get('/log/checkpoint');
    expect(cpRes.statusCode).toBe(200);
    const cp = openCheckpoint(cpRes.body, node.keys.log.verifierKey);
    expect(cp.size).toBe(SIZE);
    // Level 0: floor(s / 256^0) = 600 hashes -> tiles 0, 1 full, 2 of width 88.
    const leafHashes: Buffer[] = [];
    const leaves: Buffer[] = [];
    for (let n = 0; n * 256 < cp.size; n++) {
      const w = Math.min(256, cp.size - n * 256);
      const tile = await get(tileUrl(0, n, w));
      const bundle = await get(tileUrl('entries', n, w));
      expect([tile.statusCode, bundle.statusCode]).toEqual([200, 200]);
      const hashes = hashesOf(tile.rawPayload);
      const entries = splitBundle(bundle.rawPayload);
      expect(hashes).toHaveLength(w);
      expect(entries).toHaveLength(w);
      // "Each entry in a bundle hashes to the corresponding entry in the corresponding level 0 tile."
      for (const [i, e] of entries.entries()) expect(leafH(e).equals(hashes[i])).toBe(true);
      leafHashes.push(...hashes);
      leaves.push(...entries);
    }
    // Level 1: floor(600 / 256) = 2 hashes, each the MTH of a full level-0 tile.
    const l1 = hashesOf((await get(tileUrl(1, 0, 2))).rawPayload);
    expect(l1).toHaveLength(2);
    expect(l1[0].equals(mth(leafHashes.slice(0, 256)))).toBe(true);
    expect(l1[1].equals(mth(leafHashes.slice(256, 512)))).toBe(true);
    // The signed root is the MTH of the leaves the tiles give.
    expect(mth(leafHashes).equals(cp.root)).toBe(true);
    // Every entry is in the tree: its audit path from the tiles' hashes leads to the signed root.
    const memo = new Map<string, Buffer>();
    for (let i = 0; i < cp.size; i++) {
      if (!verifyPath(i, cp.size, leafH(leaves[i]), path(i, leafHashes, memo), cp.root)) throw new Error(`entry ${i} is not proven`);
    }
    // The leaves are the node's entries (the JCS of their hashed fields), in order.
    expect(JSON.parse(leaves[17].toString())).toMatchObject({ seq: 17, kind: 'pipeline.facet.v1', body: { i: 17 } });
  });
});

describe('the tiles API (C2SP tlog-tiles)', () => {
  it('the checkpoint MUST be served with Content-Type text/plain; charset=utf-8, and not cached beyond seconds', async () => {
    const r = await get('/log/checkpoint');
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.headers['cache-control']).toBe('no-cache');
  });

  it('full tiles MUST be exactly 256 hashes (8,192 bytes), served as application/octet-stream with long-lived caching', async () => {
    const r = await get('/log/tile/0/000');
    expect(r.statusCode).toBe(200);
    expect(r.rawPayload).toHaveLength(8192);
    expect(r.headers['content-type']).toBe('application/octet-stream');
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('serves gzip to a client that takes it (entry bundles SHOULD be compressed), and identity otherwise', async () => {
    const plain = await get('/log/tile/entries/000');
    const gz = await get('/log/tile/entries/000', { 'accept-encoding': 'gzip, identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toBe('accept-encoding');
    expect(gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
  });

  it('empty tiles MUST NOT be served, nor tiles wider than the tree holds, nor malformed paths', async () => {
    for (const url of [
      '/log/tile/0/003',
      '/log/tile/0/002',
      '/log/tile/0/002.p/89',
      '/log/tile/1/000',
      '/log/tile/2/000.p/1',
      '/log/tile/entries/002',
      '/log/tile/0/2',
      '/log/tile/00/000',
      '/log/tile/0/000.p/0',
      '/log/tile/0/000.p/256',
      '/log/tile/64/000',
    ]) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(404);
      expect(r.json().code).toBe('not_found');
    }
  });

  it('serves the partial tiles of every checkpoint size: a narrower partial stays served once the tile grew', async () => {
    expect((await get('/log/tile/0/002.p/88')).statusCode).toBe(200);
    expect((await get('/log/tile/0/002.p/1')).rawPayload).toHaveLength(32);
    expect((await get('/log/tile/0/000.p/5')).rawPayload.equals((await get('/log/tile/0/000')).rawPayload.subarray(0, 160))).toBe(true);
  });
});

describe('entries fit an entry bundle', () => {
  it('refuses at attest, with a clear 400 entry_too_large, a body whose entry would be over 65,535 bytes', async () => {
    const reg = await registerAgent(node, '10.9.0.1');
    await markCalibrated(node, reg.tag, 0.8);
    const example = structuredClone((kindOf('experiment.receipt.v1').schema.examples as unknown[])[0]) as Record<string, any>;
    // Within its schema (100 hyperparameters of 500 characters, 50 metrics), but too big for one entry.
    for (let i = 0; i < 100; i++) {
      if (i < 50) example.metrics[`m${String(i).padStart(3, '0')}${'n'.repeat(90)}`] = i / 7;
      example.hyperparameters[`p${String(i).padStart(3, '0')}${'n'.repeat(90)}`] = 'v'.repeat(500);
    }
    delete example.hyperparameters.lr;
    delete example.hyperparameters.batch_size;
    delete example.hyperparameters.optimizer;
    delete example.metrics.loss;
    const dry = await node.app.inject({ method: 'POST', url: '/api/credentials/dry-run', payload: { kind: 'experiment.receipt.v1', body: example } });
    expect(dry.json().valid, dry.body).toBe(true);
    const big = await node.app.inject({
      method: 'POST',
      url: '/api/attestations',
      headers: bearer(reg.apiKey),
      payload: { kind: 'experiment.receipt.v1', body: example },
    });
    expect(big.statusCode, big.body).toBe(400);
    expect(big.json()).toMatchObject({ code: 'entry_too_large', field: 'body' });
    expect(big.json().errors[0].reason).toMatch(/over 65535/);
    // Nothing was appended.
    expect((await node.app.akas.log.head()).size).toBe(SIZE);
  });

  it("every kind's own example (a realistic body) makes an entry far below the bound", () => {
    for (const k of attestationKinds().values()) {
      const body = (k.schema.examples as Array<Record<string, unknown>>)[0];
      const bytes = leafBytesAtMost({ kind: k.kind, tier: k.tier, body, agent: 'ak_0123abcd' });
      expect(bytes, k.kind).toBeLessThan(MAX_ENTRY_BYTES / 8);
    }
  });
});
