// The status part of an offline bundle (PROTOCOL 8.4, 8.7), as of the bundle's one checkpoint:
// the status head at that checkpoint (the issuer's word on which version of each list is the
// newest logged there), that version of each list, and the versions that changed the bit of
// one of the bundle's credentials (what they changed, when and why), each with its log entry
// and its inclusion proof against the checkpoint. It reads only what it staples: the newest
// versions through the log's `status:` index, the changes through each credential's record.
import { STATUS_PURPOSES, type StatusPurpose } from '../core/index.js';
import type { Ctx } from '../domain/context.js';
import { statusHeadAt, versionEntryIndex } from '../domain/credentials/status-head.js';
import { CredentialStatuses, statusListVersion, versionView } from '../domain/credentials/status-lists.js';
import type { StoredCheckpoint, TransparencyLog } from '../domain/log/index.js';
import { entryView } from './views/records.js';

/** A logged entry with its inclusion proof against a checkpoint of `size` entries. */
async function proven(log: TransparencyLog, index: number | undefined, size: number) {
  if (index === undefined || index >= size) return {};
  const entry = await log.entry(index);
  if (!entry) return {};
  const proof = await log.inclusion(index, size);
  return { entry: entryView(entry), inclusion: { index, size, proof: proof.map((b) => b.toString('base64')) } };
}

// The versions that flipped a credential's bit in one list, oldest first (a record written
// before histories were kept names its last change only).
async function changedBy(ctx: Pick<Ctx, 'store'>, judgmentId: string, purpose: StatusPurpose): Promise<number[]> {
  const record = await ctx.store.get(CredentialStatuses, `${judgmentId}:${purpose}`);
  return record ? (record.versions ?? [record.version]) : [];
}

/** The bundle's status part as of the checkpoint `cp` (which covers every entry it names). */
export async function statusPart(ctx: Ctx, log: TransparencyLog, cp: StoredCheckpoint, judgmentIds: string[]) {
  const { head, versions: newest } = await statusHeadAt(ctx, cp);
  const lists = [];
  const versions = [];
  for (const purpose of STATUS_PURPOSES) {
    const current = newest.get(purpose);
    if (current) {
      const v = current.version;
      lists.push({ purpose, version: v.version, credential: v.credential, ...(await proven(log, current.index, cp.size)) });
    }
    // What changed these credentials up to that version: what, when and why.
    const wanted = new Set<number>();
    for (const id of judgmentIds) for (const n of await changedBy(ctx, id, purpose)) if (current && n <= current.version.version) wanted.add(n);
    for (const n of [...wanted].sort((a, b) => a - b)) {
      const v = await statusListVersion(ctx, purpose, n);
      if (v) versions.push({ ...versionView(v), ...(await proven(log, await versionEntryIndex(ctx, purpose, n), cp.size)) });
    }
  }
  return { head, lists, versions };
}
