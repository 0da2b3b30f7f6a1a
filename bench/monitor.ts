// `npm run bench -- monitor` (issue 34): `akas monitor` following a log of 1,000,000 entries
// through its tiles and entry bundles, served from memory by a local HTTP server, as a ratio to
// reading the very same resources the same way (the same fetcher, the same read-ahead: each
// bundle with its level-0 tile, and the upper tiles) and splitting each bundle into its entries,
// with no check at all, measured in the same run (target >= 0.5); and the steady state: a round
// over 20,000 entries appended since the last one, which must take under a second to keep up
// with 20,000 appends/s. The runs alternate, three each, and the medians are compared; the
// machine's load shows in the absolute rates, which is why only the ratio is a target.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorRound } from '../cli/commands/monitor/follow.js';
import { tileFetcher } from '../cli/commands/log/tile-reader.js';
import {
  bundlePath,
  canonicalize,
  decodeBundle,
  encodeBundle,
  formatCheckpoint,
  generateKeyPair,
  leafHash,
  perfectRoot,
  signNote,
  TILE_WIDTH,
  TileHashReader,
  tilePath,
  tileWidthAt,
} from '../src/core/index.js';
import { verifierKeyString } from '../src/core/note.js';
import { header, line } from './lib.js';

const SIZE = 1_000_000;
const MORE = 20_000;
const TAG = 'ak_benchmon';
const ORIGIN = 'bench.example/log';
const READ_AHEAD = 4;

/** The leaves of a log like a node's: mostly others' events, one in 100 the watched agent's judgment. */
function leaves(n: number): Buffer[] {
  const out: Buffer[] = [];
  let prev = '0'.repeat(64);
  for (let seq = 0; seq < n; seq++) {
    const mine = seq % 100 === 7;
    const leaf = Buffer.from(
      canonicalize({
        seq,
        prevHash: prev,
        kind: 'attestation.event.v1',
        tier: 'event',
        body: {
          schemaVersion: '1.1.0',
          event: 'judgment.recorded',
          proposalId: `prop_${(seq * 7919).toString(16).padStart(16, '0')}`,
          judgmentId: `jdg_${seq}`,
          at: seq,
        },
        agent: mine ? TAG : `ak_${(seq % 9973).toString(36).padStart(8, '0')}`,
        attestedAt: 1_700_000_000_000 + seq,
      }),
    );
    prev = leafHash(leaf).toString('hex');
    out.push(leaf);
  }
  return out;
}

/** Every tile and bundle of the trees of the given sizes, and a signed checkpoint of each. */
function serveLog(all: Buffer[], sizes: number[]) {
  const files = new Map<string, Buffer>();
  const levels: Buffer[][] = [all.map((l) => leafHash(l))];
  while (levels[levels.length - 1].length >= TILE_WIDTH) {
    const below = levels[levels.length - 1];
    const up: Buffer[] = [];
    for (let i = 0; i + TILE_WIDTH <= below.length; i += TILE_WIDTH) up.push(perfectRoot(below.slice(i, i + TILE_WIDTH)));
    levels.push(up);
  }
  for (const size of sizes) {
    for (let l = 0; l < levels.length; l++)
      for (let n = 0; tileWidthAt(l, n, size) > 0; n++) {
        const w = tileWidthAt(l, n, size);
        files.set(tilePath(l, n, w), Buffer.concat(levels[l].slice(n * TILE_WIDTH, n * TILE_WIDTH + w)));
        if (l === 0) files.set(bundlePath(n, w), encodeBundle(all.slice(n * TILE_WIDTH, n * TILE_WIDTH + w)));
      }
  }
  return { files };
}

async function rootOf(files: Map<string, Buffer>, size: number) {
  return new TileHashReader(size, async (l, i, w) => files.get(tilePath(l, i, w))!).root();
}

export async function run() {
  header(`akas monitor: following ${SIZE.toLocaleString('en-US')} entries through tiles (issue 34)`);
  const keys = generateKeyPair();
  const logKey = verifierKeyString(ORIGIN, keys.publicKey);
  const all = leaves(SIZE + MORE);
  const { files } = serveLog(all, [SIZE, SIZE + MORE]);
  const checkpoint = async (size: number) => signNote(formatCheckpoint({ origin: ORIGIN, size, rootHash: await rootOf(files, size) }), ORIGIN, keys.privateKey);
  let note = await checkpoint(SIZE);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').slice(1);
    const body = path === 'checkpoint' ? Buffer.from(note) : files.get(path);
    if (!body) res.writeHead(404).end();
    else res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'akas-bench-monitor-'));
  try {
    // The baseline: the same resources through the same fetcher and read-ahead, nothing checked.
    const fetchBytes = tileFetcher(url);
    const plain = async () => {
      const t = performance.now();
      await fetchBytes('checkpoint');
      const last = Math.ceil(SIZE / TILE_WIDTH);
      const upper: string[] = [];
      for (let l = 1; tileWidthAt(l, 0, SIZE) > 0; l++) for (let n = 0; tileWidthAt(l, n, SIZE) > 0; n++) upper.push(tilePath(l, n, tileWidthAt(l, n, SIZE)));
      await Promise.all(upper.map((p) => fetchBytes(p)));
      const ahead = new Map<number, Promise<Buffer[]>>();
      for (let n = 0; n < last; n++) {
        for (let m = n; m < Math.min(last, n + READ_AHEAD); m++)
          if (!ahead.has(m))
            ahead.set(m, Promise.all([fetchBytes(bundlePath(m, tileWidthAt(0, m, SIZE))), fetchBytes(tilePath(0, m, tileWidthAt(0, m, SIZE)))]));
        const [bundle] = await ahead.get(n)!;
        ahead.delete(n);
        if (!decodeBundle(bundle)) throw new Error(`bundle ${n} does not decode`);
      }
      return (performance.now() - t) / 1000;
    };
    const watched = {
      tag: TAG,
      own: true,
      // Every judgment accepted, as cli/commands/journal/journal.ts's journalHolds reads settled lines.
      journal: {
        judgments: new Map(all.map((l) => JSON.parse(l.toString()).body).map((b) => [b.judgmentId as string, b.proposalId as string])),
        unsettled: new Map(),
        attestationEntries: new Set<string>(),
        attestations: new Set<string>(),
      },
      keys: [],
    };
    const follow = async (statePath: string) => {
      const t = performance.now();
      const r = await monitorRound({ fetchBytes, statePath, evidenceDir: join(dir, 'evidence'), watched, emit: () => undefined, logKey });
      if (r.alerts) throw new Error(`the bench log raised ${r.alerts} alert(s)`);
      return { seconds: (performance.now() - t) / 1000, read: r.read };
    };
    const plainRuns: number[] = [];
    const monitorRuns: number[] = [];
    // Alternated, three each: the median of each.
    for (let i = 0; i < 3; i++) {
      plainRuns.push(await plain());
      const m = await follow(join(dir, `state-${i}.json`));
      if (m.read !== SIZE) throw new Error(`the monitor read ${m.read} entries, not ${SIZE}`);
      monitorRuns.push(m.seconds);
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[1];
    const plainRate = SIZE / med(plainRuns);
    const monitorRate = SIZE / med(monitorRuns);
    line('reading the tiles and bundles, no check', `${Math.round(plainRate).toLocaleString('en-US')}/s`);
    line(
      'akas monitor (tiles, leaves, quorum-free, journal)',
      `${Math.round(monitorRate).toLocaleString('en-US')}/s`,
      monitorRate / plainRate,
      '>= 0.5',
      monitorRate / plainRate >= 0.5,
    );
    // The steady state: 20,000 entries appended since the last round.
    note = await checkpoint(SIZE + MORE);
    const steady = await follow(join(dir, 'state-2.json'));
    const steadyRate = steady.read / steady.seconds;
    line(`a round over ${MORE.toLocaleString('en-US')} new entries`, `${steady.seconds.toFixed(3)} s`);
    line(
      'steady state (new entries per second of round)',
      `${Math.round(steadyRate).toLocaleString('en-US')}/s`,
      undefined,
      '>= 20,000/s',
      steadyRate >= 20_000,
    );
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
