// The status head (PROTOCOL 8.7): which version of each status list is the newest logged at a
// checkpoint, signed by the issuer. Every version of a list stays validly signed for good, so a
// list alone cannot say it is the newest: a holder could staple an older one (the empty
// version 0, say) and a revoked credential would read as good. A list version therefore counts
// only as of the checkpoint that logged it, and the head binds the two: at tree size N (root
// R), the newest version logged is v (sha256 S). A verifier holding a head refuses any other
// version; the head is the issuer's word, and a monitor replaying the log can prove a false one.
import { sign, STATUS_HEAD_TYPE, STATUS_PURPOSES, statusHeadStatement, type StatusHead, type StatusHeadList, type StatusPurpose } from '../../core/index.js';
import type { Ctx } from '../context.js';
import { LogIndex, statusIndexPrefix, type StoredCheckpoint } from '../log/index.js';
import { statusListVersion, type StatusListVersion } from './status-lists.js';

/** A version of a list with the log index of its entry. */
export interface LoggedVersion {
  version: StatusListVersion;
  index: number;
}

const PAGE = 32;

/**
 * The newest version of a list whose entry is below `size` in the log (versions are logged in
 * order, so it is the first such one read from the newest down), or undefined when none is.
 */
export async function newestLoggedVersion(ctx: Pick<Ctx, 'store'>, purpose: StatusPurpose, size: number): Promise<LoggedVersion | undefined> {
  const gte = statusIndexPrefix(purpose);
  let lt = `${gte}\uffff`;
  for (;;) {
    const rows = await ctx.store.list(LogIndex, { gte, lt, reverse: true, limit: PAGE });
    for (const [key, { seq }] of rows) {
      if (seq >= size) continue;
      const version = await statusListVersion(ctx, purpose, Number(key.split(':')[2]));
      return version ? { version, index: seq } : undefined;
    }
    if (rows.length < PAGE) return undefined;
    lt = rows[rows.length - 1][0];
  }
}

/** The log entry index of a given version of a list, when it was logged. */
export async function versionEntryIndex(ctx: Pick<Ctx, 'store'>, purpose: StatusPurpose, version: number): Promise<number | undefined> {
  const prefix = statusIndexPrefix(purpose, version);
  const [row] = await ctx.store.list(LogIndex, { gte: prefix, lt: `${prefix}\uffff`, limit: 1 });
  return row?.[1].seq;
}

/** The newest version of each list logged at the checkpoint, with the head that names them, signed by the issuer. */
export async function statusHeadAt(
  ctx: Pick<Ctx, 'store' | 'keys' | 'clock'>,
  cp: Pick<StoredCheckpoint, 'size' | 'root'>,
): Promise<{ head: StatusHead; versions: Map<StatusPurpose, LoggedVersion> }> {
  const versions = new Map<StatusPurpose, LoggedVersion>();
  const lists: StatusHeadList[] = [];
  for (const purpose of STATUS_PURPOSES) {
    const logged = await newestLoggedVersion(ctx, purpose, cp.size);
    if (!logged) continue;
    versions.set(purpose, logged);
    lists.push({
      purpose,
      list: String(logged.version.credential.id),
      version: logged.version.version,
      credentialSha256: logged.version.credentialSha256,
      index: logged.index,
    });
  }
  const unsigned = {
    type: STATUS_HEAD_TYPE,
    issuer: ctx.keys.issuer.did,
    origin: ctx.keys.log.origin,
    treeSize: cp.size,
    rootHash: Buffer.from(cp.root, 'hex').toString('base64'),
    lists,
    at: ctx.clock.now(),
  } as const;
  const head: StatusHead = {
    ...unsigned,
    nodeSignature: { algorithm: 'Ed25519', issuer: ctx.keys.issuer.did, signature: sign(ctx.keys.issuer.privateKey, statusHeadStatement(unsigned)) },
  };
  return { head, versions };
}
