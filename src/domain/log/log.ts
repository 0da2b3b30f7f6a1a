// The attestation chain and its transparency log (PROTOCOL 9): every attestation, and the
// node's own audit events (judgments recorded, proposals decided), appended to one HMAC
// chain whose entries are the leaves of an RFC 9162 Merkle tree with signed checkpoints.
//
// One object per running node, made of the parts the specifications name, each in its file:
// the appender (sequencer.ts), the checkpoints and their cosignatures (checkpoints.ts), the
// proofs and reads (proofs.ts), on the keys and spaces of spaces.ts; the audit is audit.ts.
import type { LogEntry } from '../../core/index.js';
import type { Ctx } from '../context.js';
import { Checkpoints } from './checkpoints.js';
import { LogReader } from './proofs.js';
import { Sequencer } from './sequencer.js';
import type { OutboxItem, StoredCheckpoint } from './spaces.js';

export interface LogOptions {
  /** Largest number of items one append transaction takes. */
  batch?: number;
  /** How often a new checkpoint is made when the log grew (ms); 0 turns the timer off. */
  checkpointEveryMs?: number;
  /** Told of a failed append or checkpoint (the outbox keeps the items: the next write retries). */
  onError?: (e: unknown) => void;
}

/**
 * The appender and the reader of one node's log. One instance per running node (and per
 * store): it drains the outbox whenever a write lands there, and makes a checkpoint at
 * most every second while the log grows.
 */
export class TransparencyLog {
  private readonly sequencer: Sequencer;
  private readonly checkpoints: Checkpoints;
  private readonly reader: LogReader;

  constructor(
    private readonly ctx: Pick<Ctx, 'store' | 'clock' | 'keys'>,
    options: LogOptions = {},
  ) {
    const onError = options.onError ?? (() => undefined);
    const every = options.checkpointEveryMs ?? 1000;
    // checkpointEveryMs: 0 turns both timers off (tests drive the log by hand): the outbox sweep goes with it.
    this.sequencer = new Sequencer(ctx, { batch: options.batch ?? 500, sweep: every > 0, onError });
    this.checkpoints = new Checkpoints(ctx, { everyMs: every, onError });
    this.reader = new LogReader(ctx.store);
  }

  get store() {
    return this.ctx.store;
  }

  // The appender (sequencer.ts).

  /** Appends everything in the outbox (coalesces concurrent calls; answers when the outbox was empty once). */
  drain(): Promise<void> {
    return this.sequencer.drain();
  }

  /** Appends an item that needs no transaction of its own, in the next batch; resolves once that batch is on disk. */
  submit(item: Omit<OutboxItem, 'at'>): Promise<LogEntry> {
    return this.sequencer.submit(item);
  }

  /** Resolves with the entry once the item enqueued under this ticket is in the log. */
  appended(ticket: string): Promise<LogEntry> {
    return this.sequencer.appended(ticket);
  }

  /** Calls `listen` with the entries of each batch this process appends, in log order, once committed; answers a function that stops it. */
  onAppend(listen: (entries: LogEntry[]) => void): () => void {
    return this.sequencer.onAppend(listen);
  }

  // Checkpoints and their cosignatures (checkpoints.ts).

  /** The newest checkpoint stored, if any. */
  latestCheckpoint(): Promise<StoredCheckpoint | undefined> {
    return this.checkpoints.latest();
  }

  /** The newest checkpoint, first making one when the log grew past the last. */
  checkpoint(): Promise<StoredCheckpoint> {
    return this.checkpoints.checkpoint();
  }

  /** Calls `listen` with each checkpoint this process makes; answers a function that stops it. */
  onCheckpoint(listen: (cp: StoredCheckpoint) => void): () => void {
    return this.checkpoints.onCheckpoint(listen);
  }

  /** Keeps verified cosignature lines with a stored checkpoint, and marks it witnessed when `witnessed` is given. */
  addCosignatures(size: number, lines: Array<{ id: string; line: string }>, witnessed?: number): Promise<StoredCheckpoint | undefined> {
    return this.checkpoints.addCosignatures(size, lines, witnessed);
  }

  /** The newest stored checkpoint every configured witness has answered for, if any among the newest `scan`. */
  latestWitnessed(scan?: number): Promise<StoredCheckpoint | undefined> {
    return this.checkpoints.latestWitnessed(scan);
  }

  /** A stored checkpoint of exactly this size. */
  checkpointAt(size: number): Promise<StoredCheckpoint | undefined> {
    return this.checkpoints.at(size);
  }

  // Proofs and reads (proofs.ts).

  head(): Promise<{ size: number; lastHash: string }> {
    return this.reader.head();
  }

  entry(seq: number): Promise<LogEntry | undefined> {
    return this.reader.entry(seq);
  }

  entryById(id: string): Promise<LogEntry | undefined> {
    return this.reader.entryById(id);
  }

  /** Entries start (inclusive) to end (exclusive), in order. */
  entries(start: number, end: number): Promise<LogEntry[]> {
    return this.reader.entries(start, end);
  }

  /** The inclusion proof of entry `index` in the tree of `size` entries (400 validation_failed outside the log). */
  inclusion(index: number, size: number): Promise<Buffer[]> {
    return this.reader.inclusion(index, size);
  }

  /** The consistency proof between two sizes (0 < old <= new <= the log's size; else 400 validation_failed). */
  consistency(oldSize: number, newSize: number): Promise<Buffer[]> {
    return this.reader.consistency(oldSize, newSize);
  }

  /** Entries whose secondary index starts with prefix (kind:K:, agent:T:, subject:S:, proposal:P:), after the cursor seq. */
  byIndex(prefix: string, limit: number, after?: number): Promise<LogEntry[]> {
    return this.reader.byIndex(prefix, limit, after);
  }

  /** The judgment.recorded event of a judgment of a proposal, once appended. */
  judgmentEntry(proposalId: string, judgmentId: string): Promise<LogEntry | undefined> {
    return this.reader.judgmentEntry(proposalId, judgmentId);
  }

  async close() {
    const appending = this.sequencer.close();
    this.checkpoints.stop();
    await appending;
    await this.checkpoints.idle();
  }
}
