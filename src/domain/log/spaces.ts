// The log's keys and spaces: what the log stores, under which keys, behind which locks, and
// the ids its entries carry. Every file of the log (and the tiles read from it) takes its
// key formats from here, so there is one way to name a stored entry, subtree or checkpoint.
//
// Keys are zero-padded decimals, so the store's byte order is the numbers' order: a range of
// entries or of one level's subtrees is one range read.
import { randomBytes } from 'node:crypto';
import {
  addSignatureLines,
  entryLeaf,
  GENESIS_PREV_HASH,
  leafHash,
  STATUS_LIST_EVENT_KIND,
  type AttestationTier,
  type GetNode,
  type LogEntry,
  type RandomSource,
  type TileRef,
} from '../../core/index.js';
import { space, type Tx } from '../../store/index.js';

/** An item waiting to be appended (keyed in the outbox by its ticket). */
export interface OutboxItem {
  kind: string;
  tier: AttestationTier;
  body: Record<string, unknown>;
  agent: string | null;
  at: number;
}

export interface StoredCheckpoint {
  size: number;
  /** Root hash, hex. */
  root: string;
  /** The signed note (C2SP tlog-checkpoint), with the log's signature only. */
  note: string;
  at: number;
  /** Witnesses' cosignature lines (C2SP tlog-cosignature), each verified before it was kept. */
  cosignatures?: string[];
  /** When every configured witness had answered for this checkpoint (cosigned or not), ms. */
  witnessed?: number;
}

/** The log's head: how many entries it holds and the hash of the last (the chain's link). */
export interface LogHeadRecord {
  size: number;
  lastHash: string;
}

/** The checkpoint as served: the log's signed note followed by the witnesses' cosignatures. */
export const cosignedNote = (cp: StoredCheckpoint) => addSignatureLines(cp.note, cp.cosignatures ?? []);

const pad = (n: number, width = 16) => String(n).padStart(width, '0');

/** seq -> entry. */
export const LogEntries = space<LogEntry>('log-entries');
/** `${level}:${index}` -> hex hash of that complete subtree of two leaves or more (leaves are hashed from their entries). */
export const LogNodes = space<string>('log-nodes');
export const LogHead = space<LogHeadRecord>('log-head');
/** size -> checkpoint. */
export const LogCheckpoints = space<StoredCheckpoint>('log-checkpoints');
export const LogOutbox = space<OutboxItem>('log-outbox');
/** Secondary keys -> seq: `kind:K:seq`, `subject:SHA:seq`, `agent:TAG:seq`, `proposal:ID:seq`, `status:PURPOSE:VERSION:seq`. */
export const LogIndex = space<{ seq: number }>('log-index');
/** Full tiles and full entry bundles, made once: `h/<level>/<index>` or `e/<index>` -> base64. */
export const LogTiles = space<string>('log-tiles', { cached: false });

/** The lock that orders the log: one appender at a time, in every process on a shared store. */
export const LOG_LOCK = 'log';
/** The lock under which the checkpoint of one size is stored and its cosignatures kept. */
export const checkpointLock = (size: number) => `log-checkpoint:${size}`;
/** The lock under which a full tile is kept once made. */
export const tileLock = (ref: TileRef) => `log-tile:${tileKey(ref)}`;

/** The key of entry `seq` (in LogEntries) and of the checkpoint of size `seq` (in LogCheckpoints). */
export const seqKey = (seq: number) => pad(seq);
/** The key of the complete subtree at (level, index) in LogNodes. */
export const nodeKey = (level: number, index: number) => `${pad(level, 2)}:${pad(index)}`;
/** The key of a full tile or entry bundle in LogTiles. */
export const tileKey = (ref: TileRef) => (ref.kind === 'entries' ? `e/${pad(ref.index)}` : `h/${pad(ref.level, 2)}/${pad(ref.index)}`);

/** The secondary index keys of an entry. */
export function indexKeys(e: LogEntry): string[] {
  const keys = [`kind:${e.kind}:${pad(e.seq)}`];
  if (e.agent) keys.push(`agent:${e.agent}:${pad(e.seq)}`);
  const subject = e.body.subjectSha256;
  if (typeof subject === 'string') keys.push(`subject:${subject}:${pad(e.seq)}`);
  const proposalId = e.body.proposalId;
  if (typeof proposalId === 'string') keys.push(`proposal:${proposalId}:${pad(e.seq)}`);
  const ref = statusVersionRef(e);
  if (ref) keys.push(statusIndexKey(ref.purpose, ref.version, e.seq));
  return keys;
}

/** The list and version a status-list.version.v1 entry records (PROTOCOL 8.7), or undefined for any other entry. */
export function statusVersionRef(e: Pick<LogEntry, 'kind' | 'body'>): { purpose: string; version: number } | undefined {
  if (e.kind !== STATUS_LIST_EVENT_KIND) return undefined;
  const { purpose, version } = e.body;
  return typeof purpose === 'string' && Number.isSafeInteger(version) ? { purpose, version: version as number } : undefined;
}

/** `status:PURPOSE:VERSION:SEQ`: a status list version's entry, found by its version (a bundle reads only those it staples). */
export const statusIndexKey = (purpose: string, version: number, seq: number) => `${statusIndexPrefix(purpose, version)}${pad(seq)}`;
/** The index keys of a list's versions (`status:PURPOSE:`), or of one version's entry. */
export const statusIndexPrefix = (purpose: string, version?: number) => (version === undefined ? `status:${purpose}:` : `status:${purpose}:${pad(version)}:`);

/** Where a read of the index under `prefix` starts: past the cursor seq, when there is one. */
export const indexFrom = (prefix: string, after?: number) => (after === undefined ? prefix : `${prefix}${pad(after)}`);

/**
 * An attestation's id: att_ + its log index as 16 hex digits. Ids are given at append time,
 * in log order; the log is public, so an id that tells the order gives nothing away, and it
 * saves an id index on every append.
 */
export const attestationId = (seq: number) => `att_${seq.toString(16).padStart(16, '0')}`;
/** The log index an attestation id names, or undefined. */
export const seqOfId = (id: string) => (/^att_[0-9a-f]{16}$/.test(id) ? Number.parseInt(id.slice(4), 16) : undefined);

// Outbox keys (tickets) sort by enqueue time, then a process-wide counter, then the process
// that enqueued and randomness (several processes may enqueue in the same millisecond).
let counter = 0;
const PROCESS = randomBytes(4).toString('hex');

/** A new outbox key for an item enqueued at `at`. */
export const newTicket = (at: number, random: RandomSource) => `${pad(at, 15)}:${pad(counter++ % 1e9, 9)}:${PROCESS}:${random(4).toString('hex')}`;
/** Whether this process enqueued the ticket (on a shared store, each appends its own at once). */
export const ownTicket = (ticket: string) => ticket.split(':')[2] === PROCESS;

/** The head as stored, or the empty log's. */
export async function readHead(reader: Pick<Tx, 'get'>): Promise<LogHeadRecord> {
  return (await reader.get(LogHead, 'head')) ?? { size: 0, lastHash: GENESIS_PREV_HASH };
}

/** The leaf hash of an entry (RFC 9162: SHA-256 of 0x00 and the leaf bytes). */
export const entryLeafHash = (e: LogEntry) => leafHash(entryLeaf(e));

/**
 * A node accessor over a store or a transaction: subtrees of two leaves or more are stored;
 * a leaf's hash is computed from its entry (one write less per append).
 */
export function storeNodes(reader: Pick<Tx, 'get'>): GetNode {
  return async (level, index) => {
    if (level === 0) {
      const e = await reader.get(LogEntries, seqKey(index));
      if (!e) throw new Error(`log entry ${index} is missing`);
      return entryLeafHash(e);
    }
    const hex = await reader.get(LogNodes, nodeKey(level, index));
    if (hex === undefined) throw new Error(`log node ${level}:${index} is missing`);
    return Buffer.from(hex, 'hex');
  };
}
