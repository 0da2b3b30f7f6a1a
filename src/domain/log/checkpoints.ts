// The log's checkpoints (PROTOCOL 9.5, C2SP tlog-checkpoint): the signed note of the tree's
// size and root, made from the stored tree at most every second while the log grows and on
// demand, stored once per size, and the witnesses' cosignatures (PROTOCOL 9.9, C2SP
// tlog-cosignature) kept on it as they arrive. The witness client (witnesses.ts) hears of each checkpoint from here.
import { formatCheckpoint, rootAt, signNote } from '../../core/index.js';
import type { Ctx } from '../context.js';
import { checkpointLock, LogCheckpoints, readHead, seqKey, storeNodes, type StoredCheckpoint } from './spaces.js';

/**
 * "name+keyID" of a note signature line, from its text. signed-note: "The tuple of key name
 * and key ID uniquely identifies the key that performed the signature": a checkpoint keeps one
 * line per such key.
 */
const cosignatureId = (line: string) => {
  const m = /^\u2014 (\S+) (\S+)$/.exec(line.replace(/\n$/, ''));
  return m ? `${m[1]}+${Buffer.from(m[2], 'base64').subarray(0, 4).toString('hex')}` : line;
};

export interface CheckpointOptions {
  /** How often a new checkpoint is made when the log grew (ms); 0 turns the timer off. */
  everyMs: number;
  /** Told of a checkpoint the timer failed to make. */
  onError: (e: unknown) => void;
}

/** Makes, stores and reads the checkpoints of one node's log. */
export class Checkpoints {
  private making: Promise<StoredCheckpoint> | null = null;
  private readonly timer?: NodeJS.Timeout;
  private readonly listeners = new Set<(cp: StoredCheckpoint) => void>();

  constructor(
    private readonly ctx: Pick<Ctx, 'store' | 'clock' | 'keys'>,
    options: CheckpointOptions,
  ) {
    if (options.everyMs > 0) {
      this.timer = setInterval(() => void this.checkpoint().catch(options.onError), options.everyMs);
      this.timer.unref();
    }
  }

  /** The newest checkpoint stored, if any. */
  async latest(): Promise<StoredCheckpoint | undefined> {
    const [last] = await this.ctx.store.list(LogCheckpoints, { reverse: true, limit: 1 });
    return last?.[1];
  }

  /** A stored checkpoint of exactly this size. */
  at(size: number): Promise<StoredCheckpoint | undefined> {
    return this.ctx.store.get(LogCheckpoints, seqKey(size));
  }

  /**
   * The newest checkpoint, first making one when the log grew past the last: every
   * checkpoint handed out commits to everything appended before the request.
   */
  async checkpoint(): Promise<StoredCheckpoint> {
    // A checkpoint already being made may predate entries appended before this call.
    const want = (await readHead(this.ctx.store)).size;
    let cp = await this.checkpointOnce();
    while (cp.size < want) cp = await this.checkpointOnce();
    return cp;
  }

  // One checkpoint at a time in this process: callers meanwhile share the one being made.
  private checkpointOnce(): Promise<StoredCheckpoint> {
    if (this.making) return this.making;
    this.making = Promise.resolve().then(async () => {
      try {
        const [head, last] = await Promise.all([readHead(this.ctx.store), this.latest()]);
        // An empty log has a checkpoint too (size 0, the empty root): a monitor starts there.
        if (last && last.size >= head.size) return last;
        return await this.make(head.size);
      } finally {
        this.making = null;
      }
    });
    return this.making;
  }

  private async make(size: number): Promise<StoredCheckpoint> {
    const { store, keys, clock } = this.ctx;
    // tlog-checkpoint: "A log MUST not sign any checkpoint which is inconsistent with any
    // checkpoint it previously signed." The root is read from the stored tree, which only
    // grows by appends under the `log` lock, so every size's root extends every smaller one's.
    const root = await rootAt(size, storeNodes(store));
    // The note text is the origin, the size in decimal with no leading zeroes, and the root in
    // base64, with no extension lines ("The use of extension lines is NOT RECOMMENDED").
    // tlog-tiles: the checkpoint "MUST carry at least one Ed25519 signature by the log", and
    // tlog-checkpoint: "The log's key name in its signature line SHOULD match the origin line".
    const note = signNote(formatCheckpoint({ origin: keys.log.origin, size, rootHash: root }), keys.log.origin, keys.log.privateKey);
    const made: StoredCheckpoint = { size, root: root.toString('hex'), note, at: clock.now() };
    // Stored once per size: two processes signing one size sign the same note (Ed25519 is
    // deterministic), and the first stored is the one every later caller is handed.
    const cp = await store.transact([checkpointLock(size)], async (tx) => {
      const had = await tx.get(LogCheckpoints, seqKey(size));
      if (!had) tx.put(LogCheckpoints, seqKey(size), made);
      return had ?? made;
    });
    // Told after the commit, off the caller's path (the witnesses are asked from here).
    for (const listen of this.listeners) queueMicrotask(() => listen(cp));
    return cp;
  }

  /** Calls `listen` with each checkpoint this process makes; answers a function that stops it. */
  onCheckpoint(listen: (cp: StoredCheckpoint) => void): () => void {
    this.listeners.add(listen);
    return () => this.listeners.delete(listen);
  }

  /**
   * Keeps witnesses' cosignature lines with a stored checkpoint (a line of the same witness
   * name and key ID replaces the older one), and marks the checkpoint witnessed when `witnessed`
   * is given. The caller verified each line.
   */
  async addCosignatures(size: number, lines: Array<{ id: string; line: string }>, witnessed?: number): Promise<StoredCheckpoint | undefined> {
    return this.ctx.store.transact([checkpointLock(size)], async (tx) => {
      const cp = await tx.get(LogCheckpoints, seqKey(size));
      if (!cp) return undefined;
      const kept = new Map((cp.cosignatures ?? []).map((l) => [cosignatureId(l), l]));
      for (const { id, line } of lines) kept.set(id, line.replace(/\n$/, ''));
      const next: StoredCheckpoint = { ...cp, cosignatures: [...kept.values()], ...(witnessed !== undefined && !cp.witnessed ? { witnessed } : {}) };
      tx.put(LogCheckpoints, seqKey(size), next);
      return next;
    });
  }

  /** The newest stored checkpoint every configured witness has answered for, if any among the newest `scan`. */
  async latestWitnessed(scan = 256): Promise<StoredCheckpoint | undefined> {
    // Newest first, stopping at the first witnessed one (usually the newest or the one before).
    for await (const [, cp] of this.ctx.store.iterate(LogCheckpoints, { reverse: true, limit: scan })) if (cp.witnessed) return cp;
    return undefined;
  }

  /** Stops the timer and tells no listener any more. */
  stop(): void {
    this.listeners.clear();
    if (this.timer) clearInterval(this.timer);
  }

  /** Settles once the checkpoint being made, if any, is made or failed. */
  async idle(): Promise<void> {
    await this.making?.catch(() => undefined);
  }
}
