// The node's own audit of its log (`akas log check`, PROTOCOL 9.6): the whole log read back
// from the store and every stored thing checked against what the entries give.
import {
  entryHash,
  entryLeaf,
  formatCheckpoint,
  GENESIS_PREV_HASH,
  hmacSha256Hex,
  leafHash,
  nodesToStoreOnAppend,
  openNote,
  rootAt,
  safeEqual,
  type LogEntry,
  type NodeKeys,
} from '../../core/index.js';
import type { Store } from '../../store/index.js';
import { attestationId, LogCheckpoints, LogEntries, LogHead, LogNodes, nodeKey, seqKey, type StoredCheckpoint } from './spaces.js';

export interface LogCheck {
  ok: boolean;
  entries: number;
  checkpoints: number;
  problems: string[];
}

/** A badly damaged log would list a problem per entry: the first fifty say enough. */
const ENOUGH_PROBLEMS = 50;

/**
 * The node's own audit of its log (`akas log check`): every entry in sequence, its hash and
 * chain link, its MAC under the node key named, its leaf against the stored tree, and every
 * stored checkpoint's signature and root against the tree rebuilt from the entries. A removed,
 * reordered or edited entry, or a rewritten tree, is a problem.
 */
export async function checkLog(store: Store, keys: NodeKeys, onProgress?: (n: number) => void): Promise<LogCheck> {
  const problems: string[] = [];
  const hmacs = new Map(keys.hmac.map((h) => [h.signingKeyId, h.key]));
  const checkpoints = (await store.list(LogCheckpoints)).map(([, c]) => c);
  const tree = new RebuiltTree();
  let nextCheckpoint = 0;
  // Every stored checkpoint of `size` entries against the tree rebuilt so far (the empty log's first).
  const checkCheckpointsAt = (size: number) => {
    while (nextCheckpoint < checkpoints.length && checkpoints[nextCheckpoint].size === size) {
      checkCheckpoint(checkpoints[nextCheckpoint++], tree.root(size), keys, problems);
    }
  };
  let prev = GENESIS_PREV_HASH;
  let seq = 0;
  checkCheckpointsAt(0);
  for await (const [key, e] of store.iterate(LogEntries)) {
    checkEntry(key, e, seq, prev, hmacs, problems);
    for (const node of await tree.append(store, seq, e)) problems.push(`tree node ${node} differs from the entries (entry ${seq})`);
    prev = e.hash;
    seq += 1;
    checkCheckpointsAt(seq);
    if (problems.length >= ENOUGH_PROBLEMS) {
      problems.push(`stopped after ${seq} entries`);
      return { ok: false, entries: seq, checkpoints: checkpoints.length, problems };
    }
    if (onProgress && seq % 10_000 === 0) onProgress(seq);
  }
  for (const c of checkpoints.slice(nextCheckpoint)) problems.push(`checkpoint of size ${c.size} is beyond the ${seq} entries stored: entries were removed`);
  await checkHead(store, seq, prev, problems);
  return { ok: problems.length === 0, entries: seq, checkpoints: checkpoints.length, problems };
}

/**
 * The tree rebuilt from the entries, keeping only the complete subtrees on its right edge:
 * all an append needs, and all a root of the current size is made of.
 */
class RebuiltTree {
  private readonly frontier = new Map<number, { index: number; hash: Buffer }>();
  private readonly fromFrontier = (level: number, index: number) => {
    const f = this.frontier.get(level);
    if (!f || f.index !== index) throw new Error(`no node ${level}:${index} on the frontier`);
    return f.hash;
  };

  root(size: number): Buffer {
    return rootAt(size, this.fromFrontier);
  }

  /** Adds entry `seq`; answers the stored subtrees ("level:index") that differ from what it completes. */
  async append(store: Store, seq: number, e: LogEntry): Promise<string[]> {
    const differ: string[] = [];
    for (const n of nodesToStoreOnAppend(seq, leafHash(entryLeaf(e)), this.fromFrontier)) {
      this.frontier.set(n.level, { index: n.index, hash: n.hash });
      if (n.level === 0) continue; // leaves are not stored: they are the entries
      const stored = await store.get(LogNodes, nodeKey(n.level, n.index));
      if (stored !== n.hash.toString('hex')) differ.push(`${n.level}:${n.index}`);
    }
    return differ;
  }
}

/** One entry in sequence: where it is stored, its link to the one before, its id, its hash and its MAC. */
function checkEntry(key: string, e: LogEntry, seq: number, prev: string, hmacs: Map<string, NodeKeys['hmac'][number]['key']>, problems: string[]) {
  if (key !== seqKey(seq) || e.seq !== seq) {
    problems.push(`entry at ${key} carries seq ${e.seq}, expected ${seq}: an entry was removed or moved`);
  }
  if (e.prevHash !== prev) problems.push(`entry ${seq} does not link to the previous entry's hash`);
  if (e.id !== attestationId(e.seq)) problems.push(`entry ${seq} carries the id ${e.id}`);
  const hash = entryHash(e);
  if (hash !== e.hash) problems.push(`entry ${seq} (${e.id}) was edited: its fields hash to ${hash.slice(0, 16)}..., not ${e.hash.slice(0, 16)}...`);
  const key2 = hmacs.get(e.signingKeyId);
  if (!key2) problems.push(`entry ${seq}: MAC key ${e.signingKeyId} is not one of this node's`);
  else if (!safeEqual(hmacSha256Hex(key2, e.hash), e.mac)) problems.push(`entry ${seq}: its MAC does not verify`);
}

/**
 * A stored checkpoint against the root the entries give. signed-note: "If no signature from a
 * known key verifies successfully, clients MUST reject the note"; the text it signs must be
 * the checkpoint of that size and root under the log's origin.
 */
function checkCheckpoint(c: StoredCheckpoint, root: Buffer, keys: NodeKeys, problems: string[]) {
  const opened = openNote(c.note, [keys.log.verifierKey]);
  if (!opened.ok) problems.push(`checkpoint of size ${c.size}: its signature does not verify (${opened.errors.join('; ')})`);
  const expected = formatCheckpoint({ origin: keys.log.origin, size: c.size, rootHash: root });
  if (opened.text !== expected || c.root !== root.toString('hex'))
    problems.push(`checkpoint of size ${c.size} signs a root the entries do not give: the log was rewritten`);
}

/** The head names as many entries as are stored, and the last of them. */
async function checkHead(store: Store, seq: number, prev: string, problems: string[]) {
  const head = await store.get(LogHead, 'head');
  if ((head?.size ?? 0) !== seq) problems.push(`the head says ${head?.size ?? 0} entries; ${seq} are stored`);
  if (seq > 0 && head && head.lastHash !== prev) problems.push('the head does not name the last entry');
}
