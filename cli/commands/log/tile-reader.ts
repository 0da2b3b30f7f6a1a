// Reading a log through its C2SP tiles (PROTOCOL 9.8), as `akas log watch --tiles` and
// `akas monitor` both do: a fetcher of the log's resources, each read within the caps of its
// kind (the log follower, follower.ts, checks what it reads against the signed tree).
import { MAX_ENTRY_BYTES, parseTilePath } from '../../../src/core/index.js';
import { boundedGet, type FetchCaps } from '../../kit/index.js';

/** Reads one resource of a tiled log: its bytes (gzip undone), or throws saying which. */
export type FetchBytes = (path: string) => Promise<Buffer>;

/** A checkpoint note: origin, size, root and signature lines, and the witnesses' cosignatures; 256 KiB, a head within 15 s, all of it within 30 s. */
export const CHECKPOINT_CAPS: FetchCaps = { maxBytes: 256 * 1024, headersMs: 15_000, totalMs: 30_000 };
/** The time a tile or an entry bundle may take: a head within 15 s, all of it within 120 s (a full bundle may be 16 MiB). */
export const TILE_TIME_CAPS = { headersMs: 15_000, totalMs: 120_000 };
/** The 429s a fetcher waits out (each at most 60 s, as Retry-After says) before it gives up. */
export const MAX_RATE_WAITS = 600;

/**
 * The caps of a resource of a tiled log (PROTOCOL 9.8), from its path alone: a tile of width W
 * is W hashes (W × 32 bytes, 8 KiB at most), an entry bundle W entries of at most 65,535 bytes
 * with their 2-byte lengths (16 MiB at most); the widths are those the checkpoint's size gives
 * (TileHashReader asks only for those), so no read exceeds what the signed size implies.
 */
export function capsOf(path: string): FetchCaps {
  if (path === 'checkpoint') return CHECKPOINT_CAPS;
  const ref = path.startsWith('tile/') ? parseTilePath(path.slice('tile/'.length)) : null;
  if (!ref) throw new TypeError(`not a resource of a tiled log: ${path}`);
  return { maxBytes: ref.kind === 'entries' ? ref.width * (2 + MAX_ENTRY_BYTES) : ref.width * 32, ...TILE_TIME_CAPS };
}

/**
 * GET <prefix>/<path> within the caps of its kind (capsOf), taking gzip (tlog-tiles: clients
 * SHOULD include gzip and identity) and following redirects within the prefix's origin only. A
 * node draws a token for every tile like for every route (PROTOCOL 1.4), and a first audit of a
 * long log reads more tiles than a burst holds: a 429 is waited out as its Retry-After says (at
 * most a minute each, `maxWaits` times), not taken for a failure.
 */
export function tileFetcher(prefix: string, opts: { maxWaits?: number; sleep?: (ms: number) => Promise<void> } = {}): FetchBytes {
  const base = prefix.replace(/\/+$/, '');
  const maxWaits = opts.maxWaits ?? MAX_RATE_WAITS;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let waits = 0;
  return async (path) => {
    const caps = capsOf(path);
    for (;;) {
      const r = await boundedGet(`${base}/${path}`, caps, { 'accept-encoding': 'gzip, identity' });
      if (r.status === 429 && waits < maxWaits) {
        waits++;
        const seconds = Number(r.headers.get('retry-after'));
        await sleep(Math.min(60, Number.isFinite(seconds) && seconds > 0 ? seconds : 1) * 1000);
        continue;
      }
      if (r.status !== 200) throw new Error(`GET ${base}/${path} answered ${r.status}${r.status === 429 ? ` (still rate limited after ${waits} waits)` : ''}`);
      return r.body;
    }
  };
}
