// The witness (src/witness) over real HTTP on 127.0.0.1: litewitness's tlog-witness
// conformance script and race (test/vectors/c2sp-tlog-cosignature), concurrent add-checkpoint
// calls, a forked log refused, persistence before the answer, and each MUST by name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vectorJson } from '../helpers/vectors.js';
import {
  cosignerVerifierKey,
  FakeClock,
  formatAddCheckpoint,
  formatCheckpoint,
  generateKeyPair,
  openNote,
  signNote,
  verifyCosignatures,
} from '../../src/core/index.js';
import { MemoryTree } from '../../src/core/merkle.js';
import { verifierKeyString } from '../../src/core/note.js';
import { openLevelStore, openTempStore, type Store } from '../../src/store/index.js';
import { originHash, serveWitness, Witness } from '../../src/witness/index.js';

interface LiteVector {
  witnessName: string;
  witnessPrivateKey: string;
  logPublicKey: string;
  origin: string;
  conformance: Array<{ body: string; status: number; assert: string | null }>;
  raceRequests: string[];
  finalSize: number;
  finalRootHex: string;
}
const lite = vectorJson<LiteVector>('c2sp-tlog-cosignature', 'litewitness-requests.json');
const liteSeed = lite.witnessPrivateKey.slice(0, 64);
const liteLog = verifierKeyString(lite.origin, lite.logPublicKey);

interface Running {
  witness: Witness;
  url: string;
  store: Store;
  dir: string;
  close: () => Promise<void>;
}

async function start(logs: string[], name = lite.witnessName, seed = liteSeed, clock = new FakeClock()): Promise<Running> {
  const { store, dir, dispose } = await openTempStore();
  const witness = new Witness({ store, clock, key: { name, seed }, logs });
  const server = await serveWitness(witness, { host: '127.0.0.1', port: 0 });
  return { witness, url: server.url, store, dir, close: async () => (await server.close(), await dispose()) };
}

const post = async (url: string, body: string) => {
  const r = await fetch(`${url}/add-checkpoint`, { method: 'POST', body });
  return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
};

/** A log of our own: a key, a tree, and signed checkpoints of any size with their proofs. */
function ownLog(origin = 'example.com/akas-test-log', leaves = 16, salt = '') {
  const key = generateKeyPair();
  const tree = new MemoryTree();
  for (let i = 0; i < leaves; i++) tree.append(Buffer.from(`${salt}leaf ${i}`));
  const vkey = verifierKeyString(origin, key.publicKey);
  const checkpoint = (size: number, t = tree) => signNote(formatCheckpoint({ origin, size, rootHash: t.root(size) }), origin, key.privateKey);
  const request = (old: number, size: number, t = tree) =>
    formatAddCheckpoint(old, old > 0 && old < size ? t.consistencyProof(old, size) : [], checkpoint(size, t));
  return { key, tree, vkey, origin, checkpoint, request };
}

describe('the witness (src/witness)', () => {
  describe("litewitness's conformance script (cmd/litewitness/testdata/litewitness.txt)", () => {
    let w: Running;
    beforeAll(async () => (w = await start([liteLog])));
    afterAll(() => w.close());

    it('answers each request as the script expects, in order (404 for the unknown log, as the specification says)', async () => {
      const vkey = cosignerVerifierKey(lite.witnessName, lite.witnessPrivateKey.slice(64));
      for (const [i, r] of lite.conformance.entries()) {
        const got = await post(w.url, r.body);
        // litewitness answers 403 for an unknown origin; C2SP tlog-witness: "If the checkpoint
        // origin is unknown, the witness MUST respond with a "404 Not Found" HTTP status code."
        const unknownOrigin = r.assert === 'body contains "unknown log"';
        expect(got.status, `request ${i}: ${got.body}`).toBe(unknownOrigin ? 404 : r.status);
        const contains = /^body contains "(.*)"$/.exec(r.assert ?? '');
        const equals = /^body == "(.*)"$/.exec(r.assert ?? '');
        if (contains) expect(got.body, `request ${i}`).toContain(contains[1]);
        if (equals) expect(got.body, `request ${i}`).toBe(equals[1].replace(/\\n/g, '\n'));
        if (got.status === 409) expect(got.type).toBe('text/x.tlog.size');
        if (got.status === 200) {
          // The answer is a cosignature of the submitted checkpoint by this witness.
          const cp = r.body.slice(r.body.indexOf('\n\n') + 2);
          expect(verifyCosignatures(`${cp}${got.body}`, [vkey]).valid).toHaveLength(1);
        }
      }
      expect((await w.witness.status()).logs[0]).toMatchObject({ origin: lite.origin, size: 5 });
    });
  });

  describe("the add-checkpoint race (litewitness's TestRace, then many at once)", () => {
    it('two requests from the same old size: exactly one is cosigned, the other gets 409 with the winner size; never a rollback', async () => {
      const w = await start([liteLog]);
      try {
        expect((await post(w.url, lite.raceRequests[0])).status).toBe(200);
        const [a, b] = await Promise.all([post(w.url, lite.raceRequests[1]), post(w.url, lite.raceRequests[2])]);
        const statuses = [a.status, b.status].sort();
        expect(statuses).toEqual([200, 409]);
        const winner = a.status === 200 ? 3 : 5;
        expect((a.status === 409 ? a : b).body).toBe(`${winner}\n`);
        const s = (await w.witness.status()).logs[0];
        expect(s.size).toBe(winner);
        // From the winner the other size is reached only by a request that names it.
        if (winner === 5) expect(Buffer.from(s.root!, 'base64').toString('hex')).toBe(lite.finalRootHex);
      } finally {
        await w.close();
      }
    });

    it('checking the old size and persisting MUST be atomic: 24 concurrent requests from one old size, one winner', async () => {
      const log = ownLog('example.com/race', 64);
      const w = await start([log.vkey]);
      try {
        expect((await post(w.url, log.request(0, 8))).status).toBe(200);
        const sizes = Array.from({ length: 24 }, (_, i) => 9 + i * 2);
        const answers = await Promise.all(sizes.map((s) => post(w.url, log.request(8, s))));
        const won = answers.flatMap((a, i) => (a.status === 200 ? [sizes[i]] : []));
        expect(won).toHaveLength(1);
        for (const a of answers) if (a.status !== 200) expect(a).toMatchObject({ status: 409, body: `${won[0]}\n` });
        expect((await w.witness.status()).logs[0].size).toBe(won[0]);
      } finally {
        await w.close();
      }
    });
  });

  describe('a forked log', () => {
    let w: Running;
    const log = ownLog('example.com/forked', 16);
    // The same log key signing another tree: a split view.
    const other = new MemoryTree();
    for (let i = 0; i < 16; i++) other.append(Buffer.from(i < 5 ? `leaf ${i}` : `other ${i}`));
    beforeAll(async () => {
      w = await start([log.vkey]);
      expect((await post(w.url, log.request(0, 6))).status).toBe(200);
    });
    afterAll(() => w.close());

    it('refuses a second checkpoint of the size it cosigned with another root (422), and keeps its record', async () => {
      const forked = formatAddCheckpoint(6, [], log.checkpoint(6, other));
      const r = await post(w.url, forked);
      expect(r.status).toBe(422);
      expect(r.body).toMatch(/another root hash/);
      expect((await w.witness.status()).logs[0]).toMatchObject({ size: 6, refused: 1 });
    });

    it('refuses a checkpoint inconsistent with the one it cosigned, whatever proof comes with it (422)', async () => {
      for (const proof of [other.consistencyProof(6, 12), log.tree.consistencyProof(6, 12)]) {
        const r = await post(w.url, formatAddCheckpoint(6, proof, log.checkpoint(12, other)));
        expect(r.status).toBe(422);
        expect(r.body).toMatch(/consistency proof/);
      }
      // One record per signed checkpoint: the same one sent again with another proof adds none.
      expect((await w.witness.status()).logs[0]).toMatchObject({ size: 6, refused: 2 });
      // The honest extension is still cosigned.
      expect((await post(w.url, log.request(6, 12))).status).toBe(200);
    });

    it('keeps no record of an honest checkpoint sent with a junk proof: a wrong proof is not evidence against the log', async () => {
      // Anyone can send the log's public checkpoint with a proof that does not verify: each is a
      // 422, and nothing is kept, so replays neither fill the disk nor list false evidence.
      const before = (await w.witness.status()).logs[0].refused;
      const junk = formatAddCheckpoint(12, [Buffer.alloc(32, 9)], log.checkpoint(14));
      for (let i = 0; i < 5; i++) expect((await post(w.url, junk)).status).toBe(422);
      expect((await w.witness.status()).logs[0]).toMatchObject({ size: 12, refused: before });
    });
  });

  describe('each MUST of add-checkpoint', () => {
    let w: Running;
    const log = ownLog('example.com/musts', 8);
    beforeAll(async () => (w = await start([log.vkey], 'witness.example/w1', generateKeyPair().privateKey)));
    afterAll(() => w.close());

    it('the request MUST be an HTTP POST', async () => {
      const r = await fetch(`${w.url}/add-checkpoint`);
      expect(r.status).toBe(405);
    });

    it('MUST respond 404 for an unknown origin', async () => {
      const stranger = ownLog('example.com/stranger', 2);
      expect((await post(w.url, stranger.request(0, 2))).status).toBe(404);
    });

    it('MUST respond 403 without a signature from a trusted key, or with one that fails', async () => {
      const impostor = generateKeyPair();
      const unsigned = signNote(formatCheckpoint({ origin: log.origin, size: 2, rootHash: log.tree.root(2) }), log.origin, impostor.privateKey);
      expect((await post(w.url, formatAddCheckpoint(0, [], unsigned))).status).toBe(403);
      const good = log.checkpoint(2);
      const tampered = good.replace(/\n2\n/, '\n3\n');
      expect((await post(w.url, formatAddCheckpoint(0, [], tampered))).status).toBe(403);
    });

    it('MUST respond 403 when any line under the trusted key fails, even after a valid one under that key', async () => {
      // "or a signature line's key name and ID match a trusted key but the signature itself
      // fails to verify": a second line of the log's key with a broken signature, in either order.
      const good = log.checkpoint(2);
      const line = good.slice(good.lastIndexOf('\n\n') + 2, -1);
      const sig = Buffer.from(line.slice(line.lastIndexOf(' ') + 1), 'base64');
      sig[sig.length - 1] ^= 1;
      const broken = `${line.slice(0, line.lastIndexOf(' ') + 1)}${sig.toString('base64')}`;
      expect((await post(w.url, formatAddCheckpoint(0, [], `${good}${broken}\n`))).status).toBe(403);
      expect((await post(w.url, formatAddCheckpoint(0, [], good.replace(line, `${broken}\n${line}`)))).status).toBe(403);
    });

    it('MUST respond 400 when the old size is above the checkpoint size, or the body is malformed', async () => {
      expect((await post(w.url, formatAddCheckpoint(5, [], log.checkpoint(3)))).status).toBe(400);
      expect((await post(w.url, 'old 1\n')).status).toBe(400);
      expect((await post(w.url, `old 01\n\n${log.checkpoint(3)}`)).status).toBe(400);
    });

    it('MUST answer 409 with the size in text/x.tlog.size when the old size is not its own', async () => {
      const r = await post(w.url, formatAddCheckpoint(1, log.tree.consistencyProof(1, 3), log.checkpoint(3)));
      expect(r).toMatchObject({ status: 409, type: 'text/x.tlog.size', body: '0\n' });
    });

    it('a checkpoint of size zero MUST have the empty root (422), and a proof from size 0 MUST be empty (422)', async () => {
      const zero = signNote(formatCheckpoint({ origin: log.origin, size: 0, rootHash: Buffer.alloc(32, 1) }), log.origin, log.key.privateKey);
      expect((await post(w.url, formatAddCheckpoint(0, [], zero))).status).toBe(422);
      expect((await post(w.url, formatAddCheckpoint(0, [Buffer.alloc(32)], log.checkpoint(3)))).status).toBe(422);
    });

    it('MUST persist the new checkpoint before responding, and answers a cosignature with a non-zero timestamp', async () => {
      const r = await post(w.url, log.request(0, 3));
      expect(r.status).toBe(200);
      expect(r.body).toMatch(/^\u2014 witness\.example\/w1 \S+\n$/);
      // Read back from a second handle on the same folder: the record is on disk.
      const monitor = await fetch(`${w.url}/${originHash(log.origin)}/checkpoint`);
      const body = await monitor.text();
      expect(monitor.status).toBe(200);
      expect(openNote(body, [log.vkey]).ok).toBe(true);
      const cos = verifyCosignatures(body, [w.witness.verifierKey]);
      expect(cos.valid).toHaveLength(1);
      expect(cos.valid[0].timestamp).toBeGreaterThan(0);
      expect((await fetch(`${w.url}/${'0'.repeat(64)}/checkpoint`)).status).toBe(404);
    });

    it('the old size equal to the checkpoint size needs the same root, and is cosigned again', async () => {
      expect((await post(w.url, log.request(3, 3))).status).toBe(200);
    });
  });

  it('keeps its record across a restart (durable before the answer)', async () => {
    const log = ownLog('example.com/restart', 4);
    const w = await start([log.vkey]);
    const dir = w.dir;
    try {
      expect((await post(w.url, log.request(0, 4))).status).toBe(200);
      const status = await w.witness.status();
      expect(status.logs[0].size).toBe(4);
    } finally {
      // Close the store only, keep the folder: reopen it.
      await w.store.close();
    }
    const store = await openLevelStore(dir);
    try {
      const again = new Witness({ store, clock: new FakeClock(), key: { name: lite.witnessName, seed: liteSeed }, logs: [log.vkey] });
      expect((await again.status()).logs[0].size).toBe(4);
      expect((await again.addCheckpoint(log.request(0, 4))).status).toBe(409);
    } finally {
      await store.close();
    }
  });
});
