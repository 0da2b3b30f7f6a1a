// The node's witness client (PROTOCOL 9.9): every checkpoint the log makes is sent to each
// configured witness (C2SP tlog-witness `add-checkpoint`: the witness's last size, a
// consistency proof from it, the checkpoint), and the cosignatures they answer are verified and
// kept with the checkpoint, which is then served with them.
//
// It runs beside the log, never in its path: the log tells it of a checkpoint after the
// checkpoint is committed, and a round of requests runs on its own; appends never wait for a
// witness, and a witness that is down or slow only makes its own lag grow (/healthz says so).
// Rounds run one at a time; checkpoints made meanwhile are coalesced into the newest.
import {
  cosignerKeyId,
  formatAddCheckpoint,
  parseCosignerKey,
  parseTlogSize,
  TLOG_SIZE_CONTENT_TYPE,
  verifyCosignatures,
  type Clock,
} from '../../core/index.js';
import type { TransparencyLog } from './log.js';
import { cosignedNote, type StoredCheckpoint } from './spaces.js';

/** A witness the node asks: its cosigner key and where it takes add-checkpoint. */
export interface WitnessConfig {
  name: string;
  keyId: string;
  publicKey: string;
  /** Its cosignature/v1 verifier key string. */
  verifierKey: string;
  /** The submission prefix (add-checkpoint is POSTed to `${url}/add-checkpoint`). */
  url: string;
}

/**
 * Parses "NAME+KEYID+KEY@URL": a witness's verifier key (cosignature/v1, or a plain Ed25519
 * note key) and its submission prefix (http or https). Throws a TypeError saying what is wrong.
 */
export function parseWitnessSpec(spec: string): WitnessConfig {
  const at = spec.lastIndexOf('@');
  if (at < 0) throw new TypeError(`a witness is NAME+KEYID+KEY@URL: ${spec}`);
  const key = parseCosignerKey(spec.slice(0, at));
  if (!key) throw new TypeError(`not a witness verifier key (NAME+KEYID+KEY): ${spec.slice(0, at)}`);
  let url: URL;
  try {
    url = new URL(spec.slice(at + 1));
  } catch {
    throw new TypeError(`not a URL: ${spec.slice(at + 1)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`a witness URL is http or https: ${url.href}`);
  const verifierKey = spec.slice(0, at);
  return { name: key.name, keyId: key.keyId, publicKey: key.publicKey, verifierKey, url: url.href.replace(/\/+$/, '') };
}

/** The answer of an HTTP POST, as the witness client needs it. */
export interface PostAnswer {
  status: number;
  contentType: string;
  body: string;
}
export type PostFn = (url: string, body: string, signal: AbortSignal) => Promise<PostAnswer>;

/** POST with the runtime's fetch (keep-alive connections, which tlog-witness asks clients to use). */
const fetchPost: PostFn = async (url, body, signal) => {
  const r = await fetch(url, { method: 'POST', body, signal, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  return { status: r.status, contentType: r.headers.get('content-type') ?? '', body: await r.text() };
};

/** What /healthz says of one witness. */
export interface WitnessStatus {
  name: string;
  url: string;
  /** The largest checkpoint size it cosigned for this node (as far as this process saw), or 0. */
  cosignedSize: number;
  /** Entries of the newest checkpoint it has not cosigned. */
  lag: number;
  /** When it last cosigned (ms), or null. */
  cosignedAt: number | null;
  /** The last failure, or null once it cosigned again. */
  lastError: string | null;
}

interface State {
  /** The size the witness holds for this log (learned from its 200s and 409s). */
  size: number;
  cosignedSize: number;
  cosignedAt: number | null;
  lastError: string | null;
}

export interface WitnessClientOptions {
  /** How long one add-checkpoint may take (ms); default 10 s. */
  timeoutMs?: number;
  post?: PostFn;
  onError?: (e: unknown) => void;
}

export class WitnessClient {
  private readonly state = new Map<string, State>();
  private pending: StoredCheckpoint | null = null;
  private running: Promise<void> | null = null;
  private lastRound = -1;
  private closed = false;
  private readonly waiters = new Set<{ minSize: number; resolve: (cp: StoredCheckpoint | undefined) => void }>();
  private readonly unlisten: () => void;
  private readonly post: PostFn;
  private readonly timeoutMs: number;
  /** Requests in flight, so close() can cut them. */
  private readonly inflight = new Set<AbortController>();

  constructor(
    private readonly log: TransparencyLog,
    readonly witnesses: WitnessConfig[],
    private readonly clock: Clock,
    private readonly options: WitnessClientOptions = {},
  ) {
    this.post = options.post ?? fetchPost;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    for (const w of witnesses) this.state.set(w.verifierKey, { size: 0, cosignedSize: 0, cosignedAt: null, lastError: null });
    this.unlisten = log.onCheckpoint((cp) => this.notify(cp));
  }

  /** Asks the witnesses about the newest checkpoint (at start: what was made before). */
  async start(): Promise<void> {
    const cp = await this.log.latestCheckpoint();
    if (cp) this.notify(cp);
  }

  /** Queues a round for this checkpoint, unless a newer one is queued or was witnessed. */
  notify(cp: StoredCheckpoint): void {
    if (this.closed || cp.size < this.lastRound) return;
    if (!this.pending || cp.size > this.pending.size) this.pending = cp;
    if (!this.running) {
      this.running = this.loop()
        .catch((e) => this.options.onError?.(e))
        .finally(() => (this.running = null));
    }
  }

  private async loop() {
    while (this.pending && !this.closed) {
      const cp = this.pending;
      this.pending = null;
      if (cp.size < this.lastRound) continue;
      this.lastRound = cp.size;
      // Every witness gets the same checkpoint (so a client finds one cosigned by all); each
      // cosignature is kept as soon as it is verified, so a slow witness delays no other's.
      await Promise.all(
        this.witnesses.map(async (w) => {
          const line = await this.submit(w, cp);
          if (line && !this.closed) await this.log.addCosignatures(cp.size, [line]);
        }),
      );
      const stored = this.closed ? undefined : await this.log.addCosignatures(cp.size, [], this.clock.now());
      for (const w of [...this.waiters]) {
        if (stored && stored.size >= w.minSize) {
          this.waiters.delete(w);
          w.resolve(stored);
        }
      }
    }
  }

  /** One witness, one checkpoint: its cosignature line, or null (the reason is kept in its state). */
  private async submit(w: WitnessConfig, cp: StoredCheckpoint): Promise<{ id: string; line: string } | null> {
    const s = this.state.get(w.verifierKey)!;
    const fail = (why: string) => {
      s.lastError = why;
      return null;
    };
    // Twice at most: a 409 tells the witness's size, and the request is sent again from it.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (s.size > cp.size)
        return fail(
          `the witness holds size ${s.size} of this log, above the newest checkpoint (${cp.size}): it saw another view of this log, or this node lost entries`,
        );
      let body: string;
      try {
        const proof = s.size > 0 && s.size < cp.size ? await this.log.consistency(s.size, cp.size) : [];
        body = formatAddCheckpoint(s.size, proof, cp.note);
      } catch (e) {
        return fail(`no consistency proof from ${s.size} to ${cp.size}: ${(e as Error).message}`);
      }
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), this.timeoutMs);
      this.inflight.add(ac);
      let answer: PostAnswer;
      try {
        answer = await this.post(`${w.url}/add-checkpoint`, body, ac.signal);
      } catch (e) {
        return fail(ac.signal.aborted ? `no answer within ${this.timeoutMs} ms` : `unreachable: ${(e as Error).message}`);
      } finally {
        clearTimeout(timer);
        this.inflight.delete(ac);
      }
      if (answer.status === 409) {
        // tlog-witness: the 409 body is the size the witness holds; "If a client doesn't have
        // information on the latest cosigned checkpoint, it MAY initially make a request with a
        // old size of zero to obtain it."
        const size = answer.contentType.startsWith(TLOG_SIZE_CONTENT_TYPE) ? parseTlogSize(answer.body) : null;
        if (size === null) return fail('answered 409 without a text/x.tlog.size body');
        s.size = size;
        continue;
      }
      if (answer.status !== 200) return fail(`refused with ${answer.status}: ${answer.body.trim().slice(0, 300)}`);
      // "The client MUST ignore any cosignatures from unknown keys. To parse the response, the
      // client MAY concatenate it to the checkpoint, and use a note verification function
      // configured with the witness keys it trusts."
      const r = verifyCosignatures(`${cp.note}${answer.body.endsWith('\n') ? answer.body : `${answer.body}\n`}`, [w.verifierKey], {
        now: Math.floor(this.clock.now() / 1000),
      });
      const mine = r.valid[0];
      if (!mine) return fail(`answered no valid cosignature by its key${r.invalid.length ? ` (${r.invalid.map((i) => i.why).join('; ')})` : ''}`);
      s.size = cp.size;
      s.cosignedSize = Math.max(s.cosignedSize, cp.size);
      s.cosignedAt = this.clock.now();
      s.lastError = null;
      return { id: `${w.name}+${cosignerKeyId(w.name, w.publicKey)}`, line: mine.line };
    }
    return fail('its size kept changing (409 three times)');
  }

  /** Each witness's lag behind the newest checkpoint. */
  async status(): Promise<WitnessStatus[]> {
    const newest = (await this.log.latestCheckpoint())?.size ?? 0;
    return this.witnesses.map((w) => {
      const s = this.state.get(w.verifierKey)!;
      return {
        name: w.name,
        url: w.url,
        cosignedSize: s.cosignedSize,
        lag: Math.max(0, newest - s.cosignedSize),
        cosignedAt: s.cosignedAt,
        lastError: s.lastError,
      };
    });
  }

  /**
   * The newest witnessed checkpoint of at least `minSize` entries: one already witnessed, or
   * the next round's (a checkpoint covering minSize is queued if none is), waiting at most
   * `ms`. Undefined when none came in time.
   */
  async witnessed(minSize: number, ms: number): Promise<StoredCheckpoint | undefined> {
    const have = await this.log.latestWitnessed();
    if (have && have.size >= minSize) return have;
    const done = new Promise<StoredCheckpoint | undefined>((resolve) => {
      const w = { minSize, resolve };
      this.waiters.add(w);
      setTimeout(() => {
        if (this.waiters.delete(w)) resolve(undefined);
      }, ms).unref();
    });
    // A checkpoint covering minSize, made now if needed; made by another process, it is queued here.
    this.notify(await this.log.checkpoint());
    return done;
  }

  async close() {
    this.closed = true;
    this.unlisten();
    for (const ac of this.inflight) ac.abort();
    for (const w of this.waiters) w.resolve(undefined);
    this.waiters.clear();
    await this.running?.catch(() => undefined);
  }
}

/** The checkpoint to hand out when witnesses are configured: witnessed if one comes in time, else the newest (with what cosignatures it has). */
export async function servedCheckpoint(
  log: TransparencyLog,
  client: WitnessClient | undefined,
  minSize: number,
  waitMs: number,
): Promise<{ cp: StoredCheckpoint; note: string }> {
  if (!client) {
    const cp = await log.checkpoint();
    return { cp, note: cosignedNote(cp) };
  }
  const cp = (await client.witnessed(minSize, waitMs)) ?? (await log.checkpoint());
  // The record as stored now: cosignatures may have arrived since.
  const fresh = (await log.checkpointAt(cp.size)) ?? cp;
  return { cp: fresh, note: cosignedNote(fresh) };
}
