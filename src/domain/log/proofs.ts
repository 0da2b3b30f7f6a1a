// Proofs and reads of the log (PROTOCOL 9.4 and 9.5): RFC 9162 inclusion and consistency
// proofs assembled from the stored subtrees, entries by index or id, and the secondary
// indexes (kind, agent, subject, proposal). Reads only: nothing here takes the `log` lock.
import { consistencyProof, inclusionProof, ServiceError, type LogEntry } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import { indexFrom, LogEntries, LogIndex, readHead, seqKey, seqOfId, storeNodes, type LogHeadRecord } from './spaces.js';

/** Reads one node's log from its store. */
export class LogReader {
  constructor(private readonly store: Store) {}

  head(): Promise<LogHeadRecord> {
    return readHead(this.store);
  }

  async entry(seq: number): Promise<LogEntry | undefined> {
    return this.store.get(LogEntries, seqKey(seq));
  }

  async entryById(id: string): Promise<LogEntry | undefined> {
    const seq = seqOfId(id);
    return seq === undefined ? undefined : this.entry(seq);
  }

  /** Entries start (inclusive) to end (exclusive), in order. */
  async entries(start: number, end: number): Promise<LogEntry[]> {
    if (end <= start) return [];
    return (await this.store.list(LogEntries, { gte: seqKey(start), lt: seqKey(end) })).map(([, e]) => e);
  }

  /** The inclusion proof of entry `index` in the tree of `size` entries (size defaults to the latest checkpoint). */
  async inclusion(index: number, size: number): Promise<Buffer[]> {
    const head = await this.head();
    // RFC 9162 2.1.3.1: "the Merkle inclusion proof PATH(m, D_n) for the (m+1)th input d[m],
    // 0 <= m < n": anything else, or a tree larger than the log, is the caller's mistake.
    if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size || size > head.size) {
      throw new ServiceError('validation_failed', `No inclusion proof of entry ${index} in a tree of ${size} (the log holds ${head.size}).`, {
        errors: [{ field: 'index', reason: `must be below size, and size at most ${head.size}` }],
      });
    }
    return inclusionProof(index, size, storeNodes(this.store));
  }

  /** The consistency proof between two sizes (0 < old <= new <= the log's size). */
  async consistency(oldSize: number, newSize: number): Promise<Buffer[]> {
    const head = await this.head();
    // RFC 9162 2.1.4.1: "the Merkle consistency proof PROOF(m, D_n) for a previous Merkle Tree
    // Hash MTH(D[0:m]), 0 < m < n"; for m = n the proof is empty (SUBPROOF(m, D_m, true) = {}).
    if (!Number.isSafeInteger(oldSize) || !Number.isSafeInteger(newSize) || oldSize < 1 || oldSize > newSize || newSize > head.size) {
      throw new ServiceError('validation_failed', `No consistency proof from ${oldSize} to ${newSize} (the log holds ${head.size}).`, {
        errors: [{ field: 'old', reason: `1 <= old <= new <= ${head.size}` }],
      });
    }
    return consistencyProof(oldSize, newSize, storeNodes(this.store));
  }

  /** Entries whose secondary index starts with prefix (kind:K:, agent:T:, subject:S:, proposal:P:), after the cursor seq. */
  async byIndex(prefix: string, limit: number, after?: number): Promise<LogEntry[]> {
    const refs = await this.store.list(LogIndex, { gt: indexFrom(prefix, after), lt: `${prefix}\uffff`, limit });
    const out: LogEntry[] = [];
    for (const [, ref] of refs) {
      const e = await this.entry(ref.seq);
      if (e) out.push(e);
    }
    return out;
  }

  /** The judgment.recorded event of a judgment of a proposal, once appended. */
  async judgmentEntry(proposalId: string, judgmentId: string): Promise<LogEntry | undefined> {
    const entries = await this.byIndex(`proposal:${proposalId}:`, 1000);
    return entries.find((e) => e.body.event === 'judgment.recorded' && e.body.judgmentId === judgmentId);
  }
}
