// A C2SP tlog-witness (`akas witness`): for each log it is configured with, it keeps the
// latest checkpoint it cosigned, and cosigns a new one only when a consistency proof shows it
// extends that one. It stands on src/core (notes, cosignatures, Merkle proofs) and src/store
// only, so it runs where no node does; the node's own code is not involved.
//
// The state of a log is one record, changed by one compare-and-swap: the add-checkpoint
// request takes the log's lock, reads the record, checks the old size against it, verifies the
// consistency proof against the stored root, writes the new record and commits it durably,
// all before answering. That is what makes the race the specification describes impossible.
import { createHash } from 'node:crypto';
import {
  addSignatureLines,
  cosign,
  consistencyOldRoot,
  cosignerVerifierKey,
  EMPTY_ROOT,
  formatTlogSize,
  openNote,
  parseAddCheckpoint,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  publicKeyFromPrivate,
  TLOG_SIZE_CONTENT_TYPE,
  verifyConsistency,
  type Clock,
  type CosignerSigner,
  type NoteVerifierKey,
} from '../core/index.js';
import { space, type Store } from '../store/index.js';

/** What the witness keeps per log: the latest checkpoint it cosigned. */
export interface WitnessedLog {
  origin: string;
  size: number;
  /** base64 root hash. */
  root: string;
  /** That checkpoint: the text, the log's verified signature lines, and this witness's cosignature. */
  checkpoint: string;
  /** ms. */
  at: number;
}

/**
 * A checkpoint the log signed that contradicts what the witness cosigned: evidence of a fork,
 * which anyone holding the log's key can check. It holds the log's bytes and the proof only.
 */
export interface RefusedCheckpoint {
  origin: string;
  status: number;
  reason: string;
  oldSize: number;
  size: number;
  root: string;
  /** The signed text and the log's verified signature lines, one per trusted key: nothing else the submitter sent. */
  checkpoint: string;
  /** The consistency proof sent with it (base64 hashes): for a fork shown by a proof, the evidence itself. */
  proof: string[];
  /** The size and base64 root the witness had cosigned when it refused this one. */
  cosigned: { size: number; root: string };
  at: number;
}

/** How many checkpoints of one log were refused as evidence, and the latest: what GET / reads, never the records. */
export interface RefusedSummary {
  count: number;
  lastReason: string;
  lastAt: number;
}

/**
 * The largest signed checkpoint text a refusal record keeps (bytes). A log's checkpoint is its
 * origin, size, root and a few extension lines; a longer one is refused all the same, but not
 * kept, so no record holds more than this, one signature line per log key and 63 proof hashes.
 */
export const MAX_REFUSED_TEXT_BYTES = 8192;

/** origin -> the latest cosigned checkpoint. */
export const WitnessLogs = space<WitnessedLog>('witness-logs');
/**
 * `${origin}\u0000${hex sha256 of the signed checkpoint text}` -> a signed checkpoint the witness
 * refused as evidence (a fork): one record per checkpoint the log signed, the first refusal's.
 */
export const WitnessRefused = space<RefusedCheckpoint>('witness-refused');
/** origin -> how many refusal records the log has and the latest, kept beside them in the same transaction. */
export const WitnessRefusedSummary = space<RefusedSummary>('witness-refused-summary');

const lockOf = (origin: string) => `witness:${origin}`;

/** The answer to an HTTP request, as the witness decides it (any HTTP layer can send it). */
export interface WitnessAnswer {
  status: number;
  contentType: string;
  body: string;
}

const text = (status: number, body: string): WitnessAnswer => ({
  status,
  contentType: 'text/plain; charset=utf-8',
  body: body.endsWith('\n') ? body : `${body}\n`,
});

export interface WitnessOptions {
  store: Store;
  clock: Clock;
  /** The witness's key: its name and Ed25519 seed. */
  key: Pick<CosignerSigner, 'name' | 'seed'>;
  /** The logs it witnesses: C2SP Ed25519 verifier keys, the key name being the log's origin (several keys per origin allowed). */
  logs: string[];
}

/** The verifier keys of each origin, from the configured log keys; throws on a malformed one. */
export function logKeysByOrigin(logs: string[]): Map<string, NoteVerifierKey[]> {
  const byOrigin = new Map<string, NoteVerifierKey[]>();
  for (const s of logs) {
    const k = parseVerifierKey(s);
    if (!k) throw new TypeError(`not an Ed25519 note verifier key (ORIGIN+KEYHASH+KEY): ${s}`);
    byOrigin.set(k.name, [...(byOrigin.get(k.name) ?? []), k]);
  }
  return byOrigin;
}

/** The lowercase hex SHA-256 of an origin: the monitoring path of its checkpoint. */
export const originHash = (origin: string) => createHash('sha256').update(origin, 'utf8').digest('hex');

export class Witness {
  readonly name: string;
  readonly publicKey: string;
  /** The witness's cosignature/v1 verifier key: what a log or a client configures. */
  readonly verifierKey: string;
  private readonly logs: Map<string, NoteVerifierKey[]>;
  private readonly byHash: Map<string, string>;

  constructor(private readonly options: WitnessOptions) {
    this.name = options.key.name;
    this.publicKey = publicKeyFromPrivate(options.key.seed);
    this.verifierKey = cosignerVerifierKey(this.name, this.publicKey);
    this.logs = logKeysByOrigin(options.logs);
    this.byHash = new Map([...this.logs.keys()].map((o) => [originHash(o), o]));
  }

  /** The origins this witness cosigns for. */
  get origins(): string[] {
    return [...this.logs.keys()];
  }

  /** POST <prefix>/add-checkpoint (C2SP tlog-witness), the body as received. */
  async addCheckpoint(raw: string | Uint8Array): Promise<WitnessAnswer> {
    let body: string;
    try {
      body = typeof raw === 'string' ? raw : new TextDecoder('utf-8', { fatal: true }).decode(raw);
    } catch {
      return text(400, 'the body is not UTF-8');
    }
    const req = parseAddCheckpoint(body);
    if (!req.ok) return text(400, req.error);
    const origin = req.checkpoint.slice(0, Math.max(0, req.checkpoint.indexOf('\n')));
    const keys = this.logs.get(origin);
    // "If the checkpoint origin is unknown, the witness MUST respond with a "404 Not Found"".
    if (!keys) return text(404, `unknown log: ${origin}`);
    // "The witness MUST verify the checkpoint signature against the public key(s) it trusts for
    // the checkpoint origin, and it MUST ignore signatures from unknown keys." "403 Forbidden if
    // either no signature from a trusted key for the origin is present, or a signature line's key
    // name and ID match a trusted key but the signature itself fails to verify".
    const opened = openNote(req.checkpoint, keys);
    if (!opened.ok || opened.text === null) return text(403, `invalid signature: ${opened.errors.join('; ')}`);
    const cp = parseCheckpoint(opened.text);
    if (!cp || cp.origin !== origin) return text(400, 'the signed text is not a checkpoint');
    // "The old size MUST be equal to or lower than the checkpoint size. Otherwise, the witness
    // MUST respond with a "400 Bad Request"".
    if (req.oldSize > cp.size) return text(400, `old size ${req.oldSize} is above the checkpoint size ${cp.size}`);
    // The log's lines only, one per trusted key (each verified above): another key's lines, or
    // the log's line repeated, are the submitter's bytes and are kept nowhere.
    const trusted = new Set(keys.map((k) => `${k.name}+${k.keyHash}`));
    const parsed = parseNote(req.checkpoint);
    const logLines = new Map<string, string>();
    for (const s of parsed.ok ? parsed.signatures : [])
      if (trusted.has(`${s.name}+${s.keyId}`) && !logLines.has(`${s.name}+${s.keyId}`)) logLines.set(`${s.name}+${s.keyId}`, s.line);
    const logNote = `${opened.text}\n${[...logLines.values()].map((l) => `${l}\n`).join('')}`;
    const { store, clock } = this.options;

    // "checking the old size against the latest checkpoint and persisting the new checkpoint
    // must be performed atomically": one transaction under the log's lock.
    const outcome = await store.transact([lockOf(origin)], async (tx) => {
      const known = await tx.get(WitnessLogs, origin);
      const knownSize = known?.size ?? 0;
      const knownRoot = known ? Buffer.from(known.root, 'base64') : EMPTY_ROOT;
      // "The witness MUST check that the old size matches the size of the latest checkpoint it
      // cosigned for the checkpoint's origin (or zero if it never cosigned a checkpoint for
      // that origin). If it doesn't match, the witness MUST respond with a "409 Conflict"".
      if (req.oldSize !== knownSize) return { conflict: knownSize } as const;
      /**
       * "the witness MAY log the request even if the checkpoint fails one of the consistency
       * checks above (but MUST NOT cosign the checkpoint), as it might be proof of log
       * misbehavior." It is proof only when what the log signed contradicts what was cosigned
       * (`evidence`): a junk proof, or the cosigned checkpoint sent back, proves nothing, and
       * anyone can send those, so they are answered and forgotten. Evidence is kept once per
       * signed text, with the log's lines and the proof only.
       */
      const refuse = async (reason: string, evidence: boolean) => {
        if (!evidence || Buffer.byteLength(opened.text!, 'utf8') > MAX_REFUSED_TEXT_BYTES) return { refused: reason } as const;
        const key = `${origin}\u0000${createHash('sha256').update(opened.text!, 'utf8').digest('hex')}`;
        if ((await tx.get(WitnessRefused, key)) === undefined) {
          const at = clock.now();
          tx.put(WitnessRefused, key, {
            origin,
            status: 422,
            reason,
            oldSize: req.oldSize,
            size: cp.size,
            root: cp.rootHash.toString('base64'),
            checkpoint: logNote,
            proof: req.proof.map((h) => h.toString('base64')),
            cosigned: { size: knownSize, root: knownRoot.toString('base64') },
            at,
          });
          const summary = await tx.get(WitnessRefusedSummary, origin);
          tx.put(WitnessRefusedSummary, origin, { count: (summary?.count ?? 0) + 1, lastReason: reason, lastAt: at });
        }
        return { refused: reason } as const;
      };
      // "A checkpoint of size zero MUST have the root hash of the empty tree ... Otherwise, the
      // witness MUST respond with a "422 Unprocessable Entity"". The log signed a root for no
      // entries that is not the empty tree's: that contradicts every log, evidence on its own.
      if (cp.size === 0 && !cp.rootHash.equals(EMPTY_ROOT)) return await refuse('a checkpoint of size 0 must have the root hash of the empty tree', true);
      if (req.oldSize === 0) {
        // "If the old size is zero, the consistency proof MUST be empty". A wrong proof, not a wrong log.
        if (req.proof.length !== 0) return await refuse('the consistency proof from size 0 must be empty', false);
      } else if (req.oldSize === cp.size) {
        // "If the old size matches the checkpoint size, the witness MUST check that the root
        // hashes are also identical." Another root for the size cosigned is a split view.
        if (!cp.rootHash.equals(knownRoot)) return await refuse(`another root hash for the ${cp.size} entries already cosigned: a fork`, true);
        // The checkpoint cosigned, sent back with a proof: nothing the log did wrong.
        if (req.proof.length !== 0) return await refuse('the consistency proof between equal sizes must be empty', false);
      } else if (!verifyConsistency(req.oldSize, cp.size, req.proof, knownRoot, cp.rootHash)) {
        // "if a Merkle Consistency Proof doesn't verify, the witness MUST respond with a "422"".
        // Evidence only when the proof leads to the root the log signed and puts another root
        // at the size cosigned; a proof that leads nowhere says nothing about the log.
        const implied = consistencyOldRoot(req.oldSize, cp.size, req.proof, cp.rootHash);
        if (implied && !implied.equals(knownRoot)) {
          return await refuse(
            `the consistency proof leads to the signed root of size ${cp.size} from another root at size ${req.oldSize} than the one cosigned: a fork`,
            true,
          );
        }
        return await refuse(`the consistency proof from ${req.oldSize} to ${cp.size} does not verify: the checkpoint does not extend the one cosigned`, false);
      }
      // "The cosignature MUST NOT omit the timestamp, i.e. the timestamp MUST NOT be zero."
      const timestamp = Math.max(1, Math.floor(clock.now() / 1000));
      const line = cosign(opened.text!, this.options.key, timestamp);
      const checkpoint = addSignatureLines(logNote, [line]);
      // "the witness MUST update its record of the latest cosigned checkpoint": the whole record
      // is rewritten inside the lock; the commit is durable before the answer is sent.
      tx.put(WitnessLogs, origin, { origin, size: cp.size, root: cp.rootHash.toString('base64'), checkpoint, at: clock.now() });
      return { cosignature: line } as const;
    });
    if ('conflict' in outcome) {
      // "The response body MUST consist of the tree size of the latest cosigned checkpoint in
      // decimal, followed by a newline (U+000A). The response MUST have a `Content-Type` of
      // `text/x.tlog.size`."
      return { status: 409, contentType: TLOG_SIZE_CONTENT_TYPE, body: formatTlogSize(outcome.conflict as number) };
    }
    if ('refused' in outcome) return text(422, outcome.refused as string);
    // "The response body MUST be a sequence of one or more note signature lines".
    return { status: 200, contentType: 'text/plain; charset=utf-8', body: outcome.cosignature as string };
  }

  /**
   * GET <monitoring prefix>/<origin hash>/checkpoint: "a checkpoint for the log identified by
   * the origin, and it MUST include the cosignature(s) from the witness's key(s) that were
   * returned from add-checkpoint and the cosignature from the log key(s) that the witness
   * verified. If the witness has never cosigned a checkpoint for that log, it MUST respond
   * with a "404 Not Found"".
   */
  async latest(hash: string): Promise<WitnessAnswer> {
    const origin = this.byHash.get(hash);
    const known = origin === undefined ? undefined : await this.options.store.get(WitnessLogs, origin);
    if (!known) return text(404, 'this witness has cosigned no checkpoint of that log');
    return { status: 200, contentType: 'text/plain; charset=utf-8', body: known.checkpoint };
  }

  /**
   * What the witness holds: each log's latest cosigned size, and how many checkpoints it kept
   * as evidence (read from one summary record per log, never from the records themselves).
   */
  async status() {
    const logs = [];
    for (const origin of this.origins) {
      const known = await this.options.store.get(WitnessLogs, origin);
      const refused = await this.options.store.get(WitnessRefusedSummary, origin);
      logs.push({
        origin,
        size: known?.size ?? 0,
        root: known?.root ?? null,
        at: known?.at ?? null,
        refused: refused?.count ?? 0,
        lastRefused: refused?.lastReason ?? null,
      });
    }
    return { name: this.name, verifierKey: this.verifierKey, logs };
  }
}
