// PROTOCOL 10.4's check of an artifact's bytes (its sha256Verification): platform-verified only
// while the uri is this node's /api/cas/<sha256>, the blob is here with the size the artifact
// declares, and its stored copy hashes to its name; integrity-failed when that blob is missing or
// no longer hashes right; self-reported for any other uri (the sha256 is the proposer's word).
//
// Hashing the stored copy reads the whole blob (up to 10 MiB), so a result stands for REHASH_MS
// before a read hashes it again (bit rot shows within that). The results are kept by blob: an
// upload of a blob (a first one, or the repair of a damaged copy) drops its result at once,
// through the store's watch of the spaces that record blobs (ARCHITECTURE 2), and a store that
// may have missed writes drops them all. At most MAX_KEPT are kept: the oldest result makes room
// for a new one.
//
// The watch sees the blobs of an embedded store (inline ones, and the index of blob files); a
// PostgreSQL store keeps its blobs in tables of their own, whose uploads the result outlives by
// REHASH_MS at most.
import { FileIndex, InlineBlobs } from '../../store/index.js';
import { blobInfo, openVerifiedBlob } from '../cas/cas.js';
import type { Ctx } from '../context.js';
import { casHashOfUri } from '../proposals/kinds.js';

/** How long a full re-hash of a platform-verified artifact's blob stands before the next read does it again. */
export const REHASH_MS = 60_000;
/** The most re-hash results kept at once. */
const MAX_KEPT = 10_000;

export type ArtifactStanding = 'self-reported' | 'platform-verified' | 'integrity-failed';

/** What an artifact node declares of its bytes (its payload's uri, sha256 and size). */
export interface ArtifactBytes {
  uri: string;
  sha256: string;
  bytes: number;
}

export class ArtifactChecks {
  /** sha256 -> whether its stored copy hashed right, and when; in the order they were hashed (the oldest first). */
  private readonly hashed = new Map<string, { ok: boolean; at: number }>();
  /** Blob writes seen so far: a result hashed while one landed is used but not kept (it may predate it). */
  private writes = 0;
  private readonly unwatch: Array<() => void>;

  constructor(private readonly ctx: Pick<Ctx, 'store' | 'clock'>) {
    const drop = (sha256: string) => {
      this.writes++;
      this.hashed.delete(sha256);
    };
    const dropAll = () => {
      this.writes++;
      this.hashed.clear();
    };
    this.unwatch = [ctx.store.watch(InlineBlobs, drop, dropAll), ctx.store.watch(FileIndex, drop, dropAll)];
  }

  /** The standing of an artifact's bytes, and the blob of this node its uri names (when it names one). */
  async standing(p: ArtifactBytes, origin: string): Promise<{ status: ArtifactStanding; blob?: string }> {
    const blob = casHashOfUri(p.uri, origin);
    if (blob !== p.sha256) return { status: 'self-reported' };
    const info = await blobInfo(this.ctx, blob);
    const ok = info.exists && info.bytes === p.bytes && (await this.hashesRight(blob));
    return { status: ok ? 'platform-verified' : 'integrity-failed', blob };
  }

  /** Whether the stored copy of a blob hashes to its name: hashed again once its last result is REHASH_MS old. */
  private async hashesRight(sha256: string): Promise<boolean> {
    const now = this.ctx.clock.now();
    const last = this.hashed.get(sha256);
    if (last && now - last.at <= REHASH_MS) return last.ok;
    const before = this.writes;
    // At rest: the copy on disk, even when the cache of verified blobs holds the bytes.
    const ok = await openVerifiedBlob(this.ctx, sha256, { atRest: true }).then(
      async (b) => {
        await b.close();
        return true;
      },
      () => false,
    );
    this.hashed.delete(sha256);
    if (this.writes !== before) return ok;
    if (this.hashed.size >= MAX_KEPT) this.hashed.delete(this.hashed.keys().next().value!);
    this.hashed.set(sha256, { ok, at: now });
    return ok;
  }

  close() {
    for (const stop of this.unwatch) stop();
  }
}
