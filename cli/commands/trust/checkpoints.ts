// Freshness and one view (issue 50, 3; PROTOCOL 8.6, "The reader's pins and checkpoints"): the
// reader keeps, beside a node's pin (pins.ts), the newest checkpoint it verified under the pinned
// log key, and proves every other checkpoint a read comes with to be one history with it, by the
// node's consistency proofs (GET /api/log/proof/consistency, checked with verifier/log.ts). A
// newer tree that extends it is kept in its place; an older tree it extends is fine (a proof
// made earlier), and the read is verified at that one; a tree that is not the same history is a
// fork, and a node that no longer holds the tree kept (its log is smaller) a rollback: both are
// refused, with the two checkpoints written as the evidence `akas verify fork` reads
// (cli/commands/monitor/evidence.ts), the consistency proof computed from the node's tiles where
// they can be read. The checkpoints replaced are kept as anchors, one per power of two of their
// size, so a node rolled back to a history of its own is proven a fork against the anchor below
// its size; a rollback to a tree the kept one extends proves no fork (there is none), and its
// evidence says so.
import { basename, dirname, join } from 'node:path';
import { sha256Hex, type TileHashReader } from '../../../src/core/index.js';
import { Checks, checkWitnesses, consistent, openCheckpoint, parseTrust } from '../../../verifier/index.js';
import { type AkasClient, type Json, writeFileSafely } from '../../kit/index.js';
import { signedTree } from '../log/follower.js';
import { type FetchBytes, tileFetcher } from '../log/tile-reader.js';
import { forkEvidence } from '../monitor/evidence.js';
import { changeReaderState, type KeptCheckpoint, type ReaderState, readerStatePath } from './pins.js';

/** What advanceCheckpoint answers for one read's checkpoint. */
export interface CheckpointOutcome {
  /** The checkpoint the read is verified at (its own, signed by the pinned log key); null when it is not. */
  checkpoint: { note: string; size: number; root: string } | null;
  /** The newest checkpoint the reader keeps for the node after this read (size, root hex). */
  kept: { size: number; root: string } | null;
  /** Whether this read's checkpoint replaced the one kept. */
  advanced: boolean;
  /** Why the read must be refused: its checkpoint is not the pinned log's, or not one history with what was verified before. */
  refused?: 'unverified' | 'rollback' | 'fork';
  why?: string;
  /** The evidence written (`akas verify fork FILE --log-key KEY`), and whether it proves a fork. */
  evidenceFile?: string;
  proven?: boolean;
}

/** Anchors kept (earlier checkpoints, one per power of two of their size: at most 54 for sizes below 2^53). */
export const MAX_ANCHORS = 64;

interface View {
  note: string;
  size: number;
  root: Buffer;
}

interface Ctx {
  client: AkasClient;
  tiles: FetchBytes;
  path: string;
  logKey: string;
  now: number;
}

const note8 = (note: string) => sha256Hex(note).slice(0, 16);
const keep = (v: View, now: number): KeptCheckpoint => ({ note: v.note, size: v.size, root: v.root.toString('hex'), at: new Date(now).toISOString() });

/** The earlier checkpoints with `kept` among them: the newest of each power of two of size. */
function anchorsWith(earlier: KeptCheckpoint[] | undefined, kept: KeptCheckpoint): KeptCheckpoint[] {
  const byPower = new Map<number, KeptCheckpoint>();
  for (const a of [...(earlier ?? []), kept]) {
    if (a.size < 1) continue; // every tree extends the empty one: it anchors nothing
    const p = Math.floor(Math.log2(a.size));
    if ((byPower.get(p)?.size ?? -1) <= a.size) byPower.set(p, a);
  }
  return [...byPower.values()].sort((a, b) => a.size - b.size).slice(-MAX_ANCHORS);
}

/** The node's consistency proof between two sizes; 'beyond' when it holds fewer entries than `newer` (400). */
async function proofFromNode(client: AkasClient, older: number, newer: number): Promise<unknown[] | 'beyond'> {
  const r = await client.call<Json>('GET', `/api/log/proof/consistency?old=${older}&new=${newer}`, { json: true, okStatuses: [400] });
  if (r.status === 400) return 'beyond';
  return Array.isArray(r.body.proof) ? r.body.proof : [];
}

/** A note opened under the log key (and, when the pin asks for one, with its witnesses' quorum), or why not. */
function openNote(note: string, trust: ReturnType<typeof parseTrust>): View | { why: string } {
  const opened = openCheckpoint(note, trust.policy.logs);
  if (!opened.ok) return { why: `the checkpoint is not signed by the pinned log key: ${opened.reason}` };
  const { policy } = trust;
  if (policy.quorum) {
    const c = new Checks();
    if (!checkWitnesses(c, note, { keys: policy.witnesses, rule: policy.quorum }))
      return { why: `the checkpoint lacks the pinned witness quorum: ${c.failed[0]?.why}` };
  }
  return { note, size: opened.checkpoint.size, root: Buffer.from(opened.checkpoint.rootHash) };
}

/** The tree of a checkpoint as the node's tiles give it (checked to give its root), or undefined when they cannot be read. */
async function treeOf(ctx: Ctx, v: View): Promise<TileHashReader | undefined> {
  try {
    const t = await signedTree(ctx.tiles, { ...v, origin: '' });
    return 'problem' in t ? undefined : t;
  } catch {
    return undefined;
  }
}

type Side = View & { from: string };

/**
 * The evidence of two checkpoints (cli/commands/monitor/evidence.ts), the newer one's tree read
 * from the node's tiles when `tilesOf` is given and they can be read; `forked`: it proves a fork.
 */
async function evidenceOf(ctx: Ctx, a: Side, b: Side, tilesOf?: View) {
  const tree = tilesOf ? await treeOf(ctx, tilesOf) : undefined;
  try {
    return await forkEvidence(ctx.logKey, a, b, tree);
  } catch {
    return forkEvidence(ctx.logKey, a, b, undefined); // a tile that fails midway: the two checkpoints alone
  }
}

/** Writes evidence beside the reader's state, named by its kind and its two checkpoints. */
function writeEvidence(ctx: Ctx, kind: string, made: Awaited<ReturnType<typeof evidenceOf>>): string {
  const name = `${basename(ctx.path, '.json')}-${kind}-${note8(made.evidence.older.note)}-${note8(made.evidence.newer.note)}.json`;
  const file = join(dirname(ctx.path), 'evidence', name);
  writeFileSafely(file, `${JSON.stringify(made.evidence, null, 2)}\n`);
  return file;
}

type Step = { next?: Omit<ReaderState, 'rev'>; result: CheckpointOutcome };

/** The decision on one read's checkpoint against the state as it is (written by changeReaderState when it changes). */
async function decide(ctx: Ctx, state: ReaderState, note: string): Promise<Step> {
  const trust = parseTrust(state.trust);
  ctx.logKey = trust.policy.logs.find((k) => k === state.logKey) ?? trust.policy.logs[0];
  const kept = state.checkpoint;
  const keptOf = (k?: KeptCheckpoint) => (k ? { size: k.size, root: k.root } : null);
  const view = openNote(note, trust);
  if ('why' in view) return { result: { checkpoint: null, kept: keptOf(kept), advanced: false, refused: 'unverified', why: view.why } };
  const here = { note, size: view.size, root: view.root.toString('hex') };
  const fine = (): Step => ({ result: { checkpoint: here, kept: keptOf(kept), advanced: false } });
  const advance = (): Step => {
    const next = { ...state, checkpoint: keep(view, ctx.now), ...(kept ? { earlier: anchorsWith(state.earlier, kept) } : {}) };
    return { next, result: { checkpoint: here, kept: keptOf(next.checkpoint), advanced: true } };
  };
  if (!kept) return advance();
  const k = { note: kept.note, size: kept.size, root: Buffer.from(kept.root, 'hex') };
  const ours: Side = { ...k, from: `the checkpoint this reader kept for ${state.url} (verified ${kept.at})` };
  const theirs: Side = { ...view, from: `${state.url}, at a read ${new Date(ctx.now).toISOString()}` };
  const refuse = async (refused: 'fork' | 'rollback', why: string, made: Awaited<ReturnType<typeof evidenceOf>>): Promise<Step> => ({
    result: { checkpoint: here, kept: keptOf(kept), advanced: false, refused, why, evidenceFile: writeEvidence(ctx, refused, made), proven: made.forked },
  });
  if (view.size === k.size)
    return view.root.equals(k.root) ? fine() : refuse('fork', `the log key signed two roots for ${k.size} entries`, await evidenceOf(ctx, ours, theirs));
  if (view.size > k.size) {
    if (k.size === 0) return advance();
    const proof = await proofFromNode(ctx.client, k.size, view.size);
    if (proof !== 'beyond' && consistent(k.size, k.root, view.size, view.root, proof)) return advance();
    return refuse('fork', `the tree of ${view.size} entries does not extend the tree of ${k.size} verified before`, await evidenceOf(ctx, ours, theirs, view));
  }
  // An older tree than the one kept: fine when the kept one extends it (a proof made earlier).
  if (view.size === 0) return fine();
  const proof = await proofFromNode(ctx.client, view.size, k.size);
  if (proof !== 'beyond')
    return consistent(view.size, view.root, k.size, k.root, proof)
      ? fine()
      : refuse('fork', `the tree of ${k.size} entries verified before does not extend this tree of ${view.size}`, await evidenceOf(ctx, theirs, ours, k));
  // The node cannot prove it: it holds fewer entries than the tree kept, its log rolled back.
  const why = `the node no longer holds the tree of ${k.size} entries verified before (it shows ${view.size}): its log was rolled back`;
  const anchored = await rollbackEvidence(ctx, state, ours, theirs);
  return refuse('rollback', anchored.forked ? `${why}, to a history of its own (the evidence proves a fork)` : why, anchored);
}

/**
 * The evidence of a rollback: an anchor (an earlier checkpoint verified) at or below the size
 * the node shows now that its tree does not extend proves a fork; else the evidence is the two
 * checkpoints, which prove none (a log that shows an older state of one history forks nothing).
 */
async function rollbackEvidence(ctx: Ctx, state: ReaderState, ours: Side, theirs: Side) {
  const anchor = (state.earlier ?? []).filter((a) => a.size > 0 && a.size <= theirs.size).sort((a, b) => b.size - a.size)[0];
  if (anchor) {
    const from = `a checkpoint this reader verified for ${state.url} (${anchor.at})`;
    const made = await evidenceOf(ctx, { note: anchor.note, size: anchor.size, root: Buffer.from(anchor.root, 'hex'), from }, theirs, theirs);
    if (made.forked) return made;
  }
  return evidenceOf(ctx, theirs, ours);
}

/**
 * Checks one read's checkpoint (a signed note) against what the reader keeps for the node (the
 * API the read path calls, after pinnedTrust): the read is verified at that checkpoint unless
 * `refused` says otherwise (then `evidenceFile` names the evidence). The node is asked for
 * consistency proofs (and its tiles, to make evidence) through `client`; `tiles` reads the log's
 * tiles instead of `<node>/log`. The node must be pinned first (pinnedTrust).
 */
export async function advanceCheckpoint(
  profile: string,
  client: AkasClient,
  note: string,
  opts: { now?: number; tiles?: FetchBytes } = {},
): Promise<CheckpointOutcome> {
  const path = readerStatePath(profile, client.baseUrl);
  const ctx: Ctx = { client, tiles: opts.tiles ?? tileFetcher(`${client.baseUrl}/log`), path, logKey: '', now: opts.now ?? Date.now() };
  return changeReaderState(path, async (state) => {
    if (!state) throw new Error(`${client.baseUrl} is not pinned in profile ${profile}: call pinnedTrust first`);
    return decide(ctx, state, note);
  });
}
