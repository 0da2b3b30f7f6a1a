// What the attestation reads ask of the log (PROTOCOL 9.4): entries by the filters of
// GET /api/attestations, through the most selective secondary index they name, and an entry with
// its inclusion proof against a checkpoint that covers it. Reads only.
import type { LogEntry } from '../../core/index.js';
import type { TransparencyLog } from './log.js';
import { cosignedNote } from './spaces.js';
import { servedCheckpoint, type WitnessClient } from './witnesses.js';

/** The filters of an attestation listing; each one named narrows it. */
export interface EntryFilter {
  kind?: string;
  subject?: string;
  agent?: string;
  proposalId?: string;
}

/** The secondary index a filter reads: the most selective one it names (subject, proposal, agent, kind), or none (the log in order). */
function indexPrefixOf(q: EntryFilter): string | undefined {
  if (q.subject) return `subject:${q.subject}:`;
  if (q.proposalId) return `proposal:${q.proposalId}:`;
  if (q.agent) return `agent:${q.agent}:`;
  if (q.kind) return `kind:${q.kind}:`;
  return undefined;
}

/**
 * Up to `limit` entries after seq `after` that pass every filter, in log order: the index's rows
 * are read two pages at a time and the other filters applied on them. `more` is whether the
 * page is full (the next one starts after its last entry).
 */
export async function findEntries(log: TransparencyLog, q: EntryFilter, limit: number, after?: number): Promise<{ items: LogEntry[]; more: boolean }> {
  const prefix = indexPrefixOf(q);
  const keep = (e: LogEntry) =>
    (!q.kind || e.kind === q.kind) &&
    (!q.agent || e.agent === q.agent) &&
    (!q.subject || e.body.subjectSha256 === q.subject) &&
    (!q.proposalId || e.body.proposalId === q.proposalId);
  const items: LogEntry[] = [];
  let cursor = after;
  for (;;) {
    const page = prefix
      ? await log.byIndex(prefix, limit * 2, cursor)
      : await log.entries(cursor === undefined ? 0 : cursor + 1, (cursor === undefined ? 0 : cursor + 1) + limit * 2);
    if (page.length === 0) break;
    for (const e of page) {
      cursor = e.seq;
      if (keep(e)) items.push(e);
      if (items.length === limit) break;
    }
    if (items.length === limit) break;
  }
  return { items, more: items.length === limit };
}

/**
 * An entry's inclusion proof against a checkpoint that covers it: with witnesses, the newest
 * witnessed one (waiting for the round at most waitMs), else the newest (made now if it does not
 * cover the entry). The checkpoint note carries its cosignatures.
 */
export async function inclusionOf(log: TransparencyLog, witnesses: WitnessClient | undefined, entry: LogEntry, waitMs: number) {
  let { cp, note } = await servedCheckpoint(log, witnesses, entry.seq + 1, waitMs);
  // A checkpoint being made while the entry was appended may not cover it: the next one does.
  for (let i = 0; i < 3 && cp.size <= entry.seq; i++) {
    cp = await log.checkpoint();
    note = cosignedNote(cp);
  }
  const proof = await log.inclusion(entry.seq, cp.size);
  return { inclusion: { index: entry.seq, size: cp.size, proof: proof.map((b) => b.toString('base64')) }, checkpoint: note };
}
