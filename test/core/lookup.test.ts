// The verifiable index's map (src/core/lookup.ts, docs/INDEX.md): the vectors of
// test/core/lookup-vectors.json, the incremental map held to a naive one computed from scratch,
// inclusion and non-inclusion proofs, and proofs refused once tampered with.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EMPTY_MAP_ROOT, ListEdge, listRoot, listLeafHash, listNodeHash, LookupMap, lookupKeyHash, naiveMapRoot } from '../../src/core/lookup.js';
import { decodeMapProof, encodeMapProof, verifyMapProof } from '../../src/core/lookup-proof.js';
import { entryLookupKeys, lookupKeyProblem } from '../../src/core/lookup-keys.js';

interface Vectors {
  emptyRoot: string;
  root: string;
  keys: Array<{ key: string; k: string; indices: number[]; listRoot: string; proof: string }>;
  absent: Array<{ key: string; k: string; proof: string }>;
}
const vectors: Vectors = JSON.parse(readFileSync(new URL('./lookup-vectors.json', import.meta.url), 'utf8'));
const hex = (s: string) => Buffer.from(s, 'hex');

// A deterministic stream of numbers, so a failing case can be run again.
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

/** A log of `n` entries each mentioning one to three of `keys` keys, as the map and the naive rebuild both see it. */
function randomLog(n: number, keys: number, seed: number) {
  const next = lcg(seed);
  const lists = new Map<string, number[]>();
  const map = new LookupMap();
  for (let i = 0; i < n; i++) {
    const mentioned = new Set<string>();
    const many = 1 + (next() % 3);
    for (let j = 0; j < many; j++) mentioned.add(`agent:a${next() % keys}`);
    for (const key of mentioned) {
      map.add(lookupKeyHash(key), i);
      lists.set(key, [...(lists.get(key) ?? []), i]);
    }
  }
  return { map, lists };
}

describe('the index map of docs/INDEX.md', () => {
  it('gives the vectors: key hashes, list roots, the map root and every proof', () => {
    expect(EMPTY_MAP_ROOT.toString('hex')).toBe(vectors.emptyRoot);
    const map = new LookupMap();
    const adds = vectors.keys.flatMap((v) => v.indices.map((i) => [v.key, i] as const)).sort((a, b) => a[1] - b[1]);
    for (const [key, i] of adds) map.add(lookupKeyHash(key), i);
    expect(map.root().toString('hex')).toBe(vectors.root);
    for (const v of vectors.keys) {
      expect(lookupKeyHash(v.key).toString('hex')).toBe(v.k);
      expect(listRoot(v.indices).toString('hex')).toBe(v.listRoot);
      expect(encodeMapProof(map.prove(hex(v.k))).toString('hex')).toBe(v.proof);
      expect(verifyMapProof(hex(vectors.root), hex(v.k), v.indices, hex(v.proof))).toEqual({ ok: true, found: true });
    }
    for (const v of vectors.absent) {
      expect(encodeMapProof(map.prove(hex(v.k))).toString('hex')).toBe(v.proof);
      expect(verifyMapProof(hex(vectors.root), hex(v.k), [], hex(v.proof))).toEqual({ ok: true, found: false });
    }
  });

  it('keeps a list root that is RFC 9162 shaped over leaves of 64 indices, split at the largest power of two below their count', () => {
    const mth = (leaves: number[][]): Buffer => {
      if (leaves.length === 1) return listLeafHash(leaves[0]);
      let k = 1;
      while (k * 2 < leaves.length) k *= 2;
      return listNodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
    };
    const edge = new ListEdge();
    const all: number[] = [];
    for (let n = 1; n <= 64 * 9 + 5; n++) {
      edge.push(n * 3);
      all.push(n * 3);
      const leaves = Array.from({ length: Math.ceil(all.length / 64) }, (_, i) => all.slice(i * 64, i * 64 + 64));
      if (n % 7 === 0 || n % 64 <= 1) expect(edge.root()!.equals(mth(leaves)), `${n} indices`).toBe(true);
    }
  });

  it('agrees with a map computed from scratch, after every append of a random log', () => {
    for (const seed of [1, 2, 3]) {
      const next = lcg(seed);
      const map = new LookupMap();
      const lists = new Map<string, number[]>();
      for (let i = 0; i < 400; i++) {
        const key = `path:/p${next() % 60}`;
        map.add(lookupKeyHash(key), i);
        lists.set(key, [...(lists.get(key) ?? []), i]);
        if (i % 37 === 0 || i === 399) {
          const naive = naiveMapRoot([...lists].map(([k, indices]) => ({ k: lookupKeyHash(k), indices })));
          expect(map.root().equals(naive)).toBe(true);
        }
      }
      expect(map.keys).toBe(lists.size);
    }
  });

  it('agrees with a map computed from scratch when keys are added by name, lists outgrow their leaves and the map its arrays', () => {
    const next = lcg(5);
    const byHash = new LookupMap();
    const byName = new LookupMap();
    const lists = new Map<string, number[]>();
    for (let i = 0; i < 6000; i++) {
      // A few keys met often (lists of several full leaves), many met once or twice.
      const key = i % 3 === 0 ? `agent:a${next() % 7}` : `sha256:${(next() % 2500).toString(16).padStart(64, '0')}`;
      expect(byName.addKey(key, i)).toBe(byHash.add(lookupKeyHash(key), i));
      lists.set(key, [...(lists.get(key) ?? []), i]);
      if (i % 997 === 0 || i === 5999) {
        const naive = naiveMapRoot([...lists].map(([k, indices]) => ({ k: lookupKeyHash(k), indices })));
        expect(byName.root().equals(naive), `${i + 1} entries`).toBe(true);
        expect(byHash.root().equals(naive), `${i + 1} entries`).toBe(true);
      }
    }
    expect(byName.keys).toBe(lists.size);
    // Hashed in slices of a few nodes, the root is the one computed at once.
    for (let i = 6000; i < 6300; i++) byName.addKey(`path:/p${i}`, i);
    let slices = 1;
    while (!byName.settle(7)) slices++;
    expect(slices).toBeGreaterThan(10);
    for (let i = 6000; i < 6300; i++) lists.set(`path:/p${i}`, [i]);
    expect(byName.root().equals(naiveMapRoot([...lists].map(([k, indices]) => ({ k: lookupKeyHash(k), indices }))))).toBe(true);
    const root = byName.root();
    for (const [key, indices] of [...lists].filter((_, n) => n % 50 === 0)) {
      expect(byName.keyHash(key).equals(lookupKeyHash(key))).toBe(true);
      expect(byName.count(lookupKeyHash(key))).toBe(indices.length);
      const proof = encodeMapProof(byName.prove(lookupKeyHash(key)));
      expect(verifyMapProof(root, lookupKeyHash(key), indices, proof)).toEqual({ ok: true, found: true });
    }
  });

  it('proves each key held with its indices, and each key not held as absent', () => {
    const { map, lists } = randomLog(2000, 300, 7);
    const root = map.root();
    for (const [key, indices] of lists) {
      const proof = encodeMapProof(map.prove(lookupKeyHash(key)));
      expect(verifyMapProof(root, lookupKeyHash(key), indices, proof)).toEqual({ ok: true, found: true });
      // The same proof with an index left out, or one added, leads elsewhere.
      expect(verifyMapProof(root, lookupKeyHash(key), indices.slice(1), proof).ok).toBe(false);
      expect(verifyMapProof(root, lookupKeyHash(key), [...indices, 2001], proof).ok).toBe(false);
    }
    for (let i = 0; i < 200; i++) {
      const k = lookupKeyHash(`agent:none${i}`);
      const proof = encodeMapProof(map.prove(k));
      expect(decodeMapProof(proof)).toMatchObject({ type: 'other' });
      expect(verifyMapProof(root, k, [], proof)).toEqual({ ok: true, found: false });
    }
  });

  it('refuses a proof with any byte changed, and the proof of absence of a key the map holds', () => {
    const { map, lists } = randomLog(300, 40, 11);
    const root = map.root();
    const [key, indices] = [...lists][0];
    const good = encodeMapProof(map.prove(lookupKeyHash(key)));
    for (let i = 0; i < good.length; i++) {
      const bad = Buffer.from(good);
      bad[i] ^= 0x01;
      expect(verifyMapProof(root, lookupKeyHash(key), indices, bad).ok).toBe(false);
    }
    // Another key's proof of absence, shown for a key held: its lookup does not end at that leaf.
    const other = lookupKeyHash('agent:someone-else');
    const absentProof = encodeMapProof(map.prove(other));
    expect(verifyMapProof(root, lookupKeyHash(key), [], absentProof).ok).toBe(false);
  });

  it('proves absence in the empty map, and nothing else there', () => {
    const map = new LookupMap();
    const proof = encodeMapProof(map.prove(lookupKeyHash('agent:x')));
    expect(verifyMapProof(EMPTY_MAP_ROOT, lookupKeyHash('agent:x'), [], proof)).toEqual({ ok: true, found: false });
    expect(verifyMapProof(EMPTY_MAP_ROOT, lookupKeyHash('agent:x'), [1], proof).ok).toBe(false);
  });
});

describe('the keys an entry mentions', () => {
  it('takes the agent, did:keys, proposal, paths, digests and credentials of a body, each once', () => {
    const sha = 'cd'.repeat(32);
    const keys = entryLookupKeys({
      kind: 'attestation.event.v1',
      agent: 'ak_T',
      body: {
        proposalId: 'art_0011223344556677',
        path: '/a/b',
        contentSha256: sha,
        datasetSha256: sha,
        signer: 'did:key:z6Mkabc',
        outputs: [{ sha256: 'ef'.repeat(32) }],
        judgments: [{ judgmentId: 'jdg_1' }],
        judgmentIds: ['jdg_2'],
        notASha256: 'short',
      },
    });
    expect(keys).toEqual([
      'agent:ak_T',
      'key:did:key:z6Mkabc',
      'proposal:art_0011223344556677',
      'path:/a/b',
      `sha256:${sha}`,
      `sha256:${'ef'.repeat(32)}`,
      'credential:jdg_1',
      'credential:jdg_2',
    ]);
    expect(entryLookupKeys({ kind: 'index.root.v1', agent: 'ak_T', body: { root: sha } })).toEqual([]);
  });

  it('writes keys with a prefix and a well-formed value', () => {
    expect(lookupKeyProblem('agent:ak_1')).toBeNull();
    expect(lookupKeyProblem('sha256:' + 'a'.repeat(64))).toBeNull();
    expect(lookupKeyProblem('sha256:ABC')).not.toBeNull();
    expect(lookupKeyProblem('path:relative')).not.toBeNull();
    expect(lookupKeyProblem('kind:x')).not.toBeNull();
    expect(lookupKeyProblem('agent:')).not.toBeNull();
  });
});
