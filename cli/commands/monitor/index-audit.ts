// akas monitor --index (PROTOCOL 9.10, docs/INDEX.md 7): the verifiable index rebuilt from the
// log's tiles, every logged index.root.v1 root compared with the root of the entries below its
// size. A root the entries do not give is an alert with evidence (verifier/index-evidence.ts)
// that `akas verify index FILE --log-key KEY` checks with nothing but the log key.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TILE_WIDTH } from '../../../src/core/index.js';
import { IndexRebuildInWorker } from './index-rebuild-worker.js';
import { INDEX_EVIDENCE_TYPE, type IndexEvidence } from '../../../verifier/index-evidence.js';
import { CliError, type Json } from '../../kit/index.js';
import { type CheckedBundle, leafAt } from '../log/bundle-check.js';
import { bundleReader, openView, signedTree, type SignedView } from '../log/follower.js';
import type { FetchBytes } from '../log/tile-reader.js';

export interface IndexAuditOptions {
  fetchBytes: FetchBytes;
  logKey: string;
  evidenceDir: string;
  emit: (r: Json) => void;
}

/** Reads every leaf of the signed tree in order, handing each to `each`; throws CliError when the tiles are not the tree signed. */
async function eachLeaf(fetchBytes: FetchBytes, view: SignedView, each: (seq: number, leaf: Buffer) => void) {
  await eachBundle(fetchBytes, view, async (b, first) => {
    for (let i = 0; i < b.width; i++) each(first + i, leafAt(b, i));
  });
}

/** Reads every entry bundle of the signed tree in order (the index of its first leaf beside it); throws CliError when the tiles are not the tree signed. */
async function eachBundle(fetchBytes: FetchBytes, view: SignedView, each: (b: CheckedBundle, first: number) => Promise<void>) {
  const tiles = await signedTree(fetchBytes, view);
  if ('problem' in tiles) throw new CliError('incomplete', `the log's tiles: ${tiles.problem}`);
  const bundles = Math.ceil(view.size / TILE_WIDTH);
  const read = bundleReader(fetchBytes, tiles, bundles);
  for (let n = 0; n < bundles; n++) {
    const b = await read(n);
    if ('problem' in b) throw new CliError('incomplete', `entry bundle ${n}: ${b.problem}`);
    await each(b, n * TILE_WIDTH);
  }
}

/** One audit of the index against the newest checkpoint: answers the exit code (0 every root held, 1 an alert, 3 a root not compared). */
export async function auditIndex(o: IndexAuditOptions): Promise<number> {
  const note = (await o.fetchBytes('checkpoint')).toString('utf8');
  const view = openView(note, o.logKey);
  if ('refused' in view) throw new CliError('incomplete', `the checkpoint is not signed by the log key ${o.logKey}: ${view.refused}`);
  const started = Date.now();
  // The leaves are read (JSON, their keys) on a worker thread while this one keeps the map.
  const reading = new IndexRebuildInWorker();
  await eachBundle(o.fetchBytes, view, async (b) => {
    const starts = Array.from({ length: b.width }, (_, i) => b.offsets[i] + 2);
    await reading.add(b.bytes, starts, b.offsets.slice(1, b.width + 1));
  }).catch(async (e) => {
    await reading.finish().catch(() => undefined);
    throw e;
  });
  const rebuild = await reading.finish().catch((e: Error) => {
    throw new CliError('incomplete', `the log's entries: ${e.message}`);
  });
  let alerts = 0;
  let unchecked = 0;
  for (const r of rebuild.roots) {
    if (r.held) continue;
    if (r.held === null) {
      unchecked++;
      o.emit({ type: 'event', what: 'index-root-unchecked', message: `root entry ${r.seq}: ${r.why}`, seq: r.seq });
      continue;
    }
    alerts++;
    const evidenceFile = await saveEvidence(o, view, r.seq, r.logged, r.rebuilt);
    o.emit({
      type: 'alert',
      what: 'index-root',
      message:
        `the index root logged at entry ${r.seq} (size ${r.size}) is ${r.logged}, the entries give ${r.rebuilt ?? 'none'}: ` +
        'the node left an entry out of a key or filed it under another',
      seq: r.seq,
      size: r.size,
      logged: r.logged,
      rebuilt: r.rebuilt,
      evidenceFile,
    });
  }
  const seconds = Math.max(0.001, (Date.now() - started) / 1000);
  o.emit({
    type: 'event',
    what: 'index-checked',
    message: `${view.size} entries indexed again, ${rebuild.roots.length} root(s) compared: ${alerts} wrong, ${unchecked} not compared`,
    size: view.size,
    roots: rebuild.roots.length,
    alerts,
    unchecked,
    entriesPerSecond: Math.round(view.size / seconds),
  });
  return alerts ? 1 : unchecked ? 3 : 0;
}

// The leaves up to the checkpoint's size, read again (the audit keeps none), with the checkpoint and the root entry's index.
async function saveEvidence(o: IndexAuditOptions, view: SignedView, seq: number, logged: string, rebuilt: string | null): Promise<string> {
  const leaves: string[] = [];
  await eachLeaf(o.fetchBytes, view, (_, leaf) => leaves.push(leaf.toString('base64')));
  const evidence: IndexEvidence = { type: INDEX_EVIDENCE_TYPE, checkpoint: view.note, root: seq, leaves, logged, ...(rebuilt ? { rebuilt } : {}) };
  mkdirSync(o.evidenceDir, { recursive: true, mode: 0o700 });
  const file = join(o.evidenceDir, `index-${view.size}-${seq}.json`);
  writeFileSync(file, JSON.stringify(evidence), { mode: 0o600 });
  return file;
}
