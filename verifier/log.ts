// Offline checks of the node's transparency log (L3 made verifiable, PROTOCOL 9.5): a
// checkpoint is a C2SP signed note under the log's Ed25519 key; an entry is in the log when
// its leaf (the JCS of its hashed fields) and an RFC 9162 inclusion proof give the root the
// checkpoint signs; a log was never rewritten when a consistency proof links an older
// checkpoint to a newer one. And the monitor's audit: the entries themselves, re-hashed and
// re-chained, must rebuild exactly the signed roots.
import { ed25519Hex, runAsync, runNow, type Checking } from '../src/core/checking.js';
import { cosignaturesChecking, parseCosignerKey } from '../src/core/cosignature.js';
import { canonicalize } from '../src/core/jcs.js';
import { entryHash, entryLeaf, GENESIS_PREV_HASH, type LogEntry, type LogKeyEndorsement } from '../src/core/log-entry.js';
import { leafHash, nodesToStoreOnAppend, rootAt, verifyConsistency, verifyInclusion } from '../src/core/merkle.js';
import { openNoteChecking, parseCheckpoint, parseVerifierKey, type Checkpoint } from '../src/core/note.js';
import type { IssuerTrust } from './issuer-keys.js';
import { Checks, type Report } from './report.js';
import { quorumHolds, type QuorumRule } from './trust.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const b64 = (s: unknown): Buffer | null => {
  if (typeof s !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null;
  const b = Buffer.from(s, 'base64');
  return b.length === 32 ? b : null;
};

export type OpenedCheckpoint = { ok: true; checkpoint: Checkpoint } | { ok: false; reason: string };

/** A checkpoint note signed by one of the given log keys (C2SP verifier key strings). */
export function openCheckpoint(note: unknown, logKeys: string[]): OpenedCheckpoint {
  return runNow(openCheckpointChecking(note, logKeys));
}

/** openCheckpoint as a check that yields its signatures (src/core/checking.ts). */
export function* openCheckpointChecking(note: unknown, logKeys: string[]): Checking<OpenedCheckpoint> {
  if (typeof note !== 'string') return { ok: false, reason: 'no checkpoint' };
  const keys = logKeys.filter((k) => parseVerifierKey(k));
  if (!keys.length) return { ok: false, reason: 'no valid log key to check it with' };
  const opened = yield* openNoteChecking(note, keys);
  if (!opened.ok || opened.text === null) return { ok: false, reason: `its signature does not verify under the log key (${opened.errors.join('; ')})` };
  const cp = parseCheckpoint(opened.text);
  if (!cp) return { ok: false, reason: 'the signed text is not a tlog checkpoint' };
  const origin = parseVerifierKey(keys.find((k) => opened.verifiedBy.includes(parseVerifierKey(k)!.name))!)!.name;
  if (cp.origin !== origin) return { ok: false, reason: `the checkpoint's origin ${cp.origin} is not the log key's ${origin}` };
  return { ok: true, checkpoint: cp };
}

/**
 * The log key an issuer vouches for: its endorsement (the JCS of {type, origin, verifierKey,
 * issuer}) signed by an issuer key the pinned chain reaches. Null when none does.
 */
export function endorsedLogKey(endorsement: unknown, trust: IssuerTrust): string | null {
  return runNow(endorsedLogKeyChecking(endorsement, trust));
}

/** endorsedLogKey as a check that yields its signature. */
export function* endorsedLogKeyChecking(endorsement: unknown, trust: IssuerTrust): Checking<string | null> {
  if (!isObject(endorsement) || endorsement.type !== 'akas.log-key.v1' || typeof endorsement.issuer !== 'string' || typeof endorsement.verifierKey !== 'string')
    return null;
  const key = trust.keys.get(endorsement.issuer);
  if (!key) return null;
  const statement: LogKeyEndorsement = {
    type: 'akas.log-key.v1',
    origin: String(endorsement.origin),
    verifierKey: endorsement.verifierKey,
    issuer: endorsement.issuer,
  };
  const parsed = parseVerifierKey(statement.verifierKey);
  if (!parsed || parsed.name !== statement.origin) return null;
  return (yield* ed25519Hex(key.publicKey, canonicalize(statement), endorsement.signature)) ? statement.verifierKey : null;
}

/**
 * Checks one entry with its inclusion proof and checkpoint (GET /api/attestations/{id}):
 * the entry's fields hash to its hash, the checkpoint is signed by the log key, and the
 * entry's leaf is at its index in the tree the checkpoint signs.
 */
export function checkLogInclusion(
  c: Checks,
  doc: { entry?: unknown; inclusion?: unknown; checkpoint?: unknown },
  logKeys: string[],
  subject?: string,
): boolean {
  return runNow(logInclusionChecking(c, doc, logKeys, subject));
}

/** checkLogInclusion as a check that yields its signatures. */
export function* logInclusionChecking(
  c: Checks,
  doc: { entry?: unknown; inclusion?: unknown; checkpoint?: unknown },
  logKeys: string[],
  subject?: string,
): Checking<boolean> {
  const entry = doc.entry as LogEntry;
  const inc = isObject(doc.inclusion) ? doc.inclusion : {};
  let fieldsOk = false;
  try {
    fieldsOk = isObject(entry) && entryHash(entry) === entry.hash;
  } catch {
    fieldsOk = false;
  }
  // The leafHash an entry shows (PROTOCOL 9.4) is a claim too: a reader may look it up in a tile.
  let leafShown: string | undefined;
  if (fieldsOk && isObject(entry) && (entry as unknown as Json).leafHash !== undefined) {
    const shown = (entry as unknown as Json).leafHash;
    if (shown !== Buffer.from(leafHash(entryLeaf(entry))).toString('base64')) {
      fieldsOk = false;
      leafShown = `the leafHash shown (${String(shown)}) is not the leaf of the entry's fields`;
    }
  }
  c.add({
    id: 'log.entry',
    what: "the entry's fields hash to its hash",
    valid: fieldsOk,
    why: fieldsOk ? undefined : (leafShown ?? 'the entry was changed after it was hashed'),
    subject,
  });
  const opened = yield* openCheckpointChecking(doc.checkpoint, logKeys);
  c.add({
    id: 'log.checkpoint',
    what: 'the checkpoint is signed by the log key',
    valid: opened.ok,
    why: opened.ok ? `size ${opened.checkpoint.size}` : opened.reason,
    subject,
  });
  if (!opened.ok || !fieldsOk) {
    c.add({
      id: 'log.inclusion',
      what: 'the entry is in the signed tree',
      valid: null,
      why: 'not checked: the entry or the checkpoint above does not hold',
      subject,
    });
    return false;
  }
  const cp = opened.checkpoint;
  const proof = Array.isArray(inc.proof) ? inc.proof.map(b64) : [];
  const index = inc.index;
  const size = inc.size;
  const shapeOk = typeof index === 'number' && index === entry.seq && size === cp.size && proof.every((p): p is Buffer => p !== null);
  const included = shapeOk && verifyInclusion(index as number, size as number, leafHash(entryLeaf(entry)), proof as Buffer[], cp.rootHash);
  c.add({
    id: 'log.inclusion',
    what: `entry ${entry.seq} is in the tree of ${cp.size} entries the checkpoint signs`,
    valid: included,
    why: included
      ? undefined
      : !shapeOk
        ? 'the proof is for another index or size, or holds a hash that is not 32 bytes'
        : 'the inclusion proof does not lead to the signed root',
    subject,
  });
  return included;
}

/** The witnesses a checkpoint must be cosigned by: their cosignature/v1 verifier keys and how many must have cosigned. */
export interface WitnessPolicy {
  keys: string[];
  /** How many distinct given witnesses must have cosigned (default: all of them). */
  quorum?: number;
  /** POSIX seconds: cosignatures dated more than 10 minutes after it are refused (default: no check). */
  now?: number;
  /** A trust file's tlog-policy quorum (groups of witnesses, verifier/trust.ts): met instead of a count when given. */
  rule?: QuorumRule;
}

/**
 * The witness check of a checkpoint (C2SP tlog-cosignature): at least `quorum` of the given
 * witnesses cosigned it, each cosignature verifying over "cosignature/v1", its time and the
 * checkpoint text. Lines of other keys are ignored; a line under a given key that does not
 * verify fails the check. A checkpoint counts only with its quorum: a split view shown to
 * this client would have had to fool that many witnesses.
 */
export function checkWitnesses(c: Checks, note: unknown, policy: WitnessPolicy, subject?: string): boolean {
  return runNow(witnessesChecking(c, note, policy, subject));
}

/** checkWitnesses as a check that yields its signatures. */
export function* witnessesChecking(c: Checks, note: unknown, policy: WitnessPolicy, subject?: string): Checking<boolean> {
  const bad = policy.keys.filter((k) => !parseCosignerKey(k));
  const quorum = policy.quorum ?? policy.keys.length;
  if (bad.length || !Number.isInteger(quorum) || quorum < 1 || quorum > policy.keys.length) {
    return (
      c.add({
        id: 'log.witnesses',
        what: 'the checkpoint is cosigned by a quorum of the given witnesses',
        valid: false,
        why: bad.length ? `not a witness key: ${bad.join(', ')}` : `a quorum of ${quorum} out of ${policy.keys.length} witness key(s) cannot be met`,
        subject,
      }) === true
    );
  }
  if (typeof note !== 'string')
    return (
      c.add({
        id: 'log.witnesses',
        what: `the checkpoint is cosigned by ${quorum} of the ${policy.keys.length} given witnesses`,
        valid: false,
        why: 'no checkpoint',
        subject,
      }) === true
    );
  const r = yield* cosignaturesChecking(note, policy.keys, { now: policy.now });
  const met = policy.rule ? quorumHolds(policy.rule, new Set(r.valid.map((v) => `${v.name}+${v.keyId}`))) : r.valid.length >= quorum;
  const ok = !r.error && r.invalid.length === 0 && met;
  const what = policy.rule
    ? "the checkpoint is cosigned as the trust file's quorum asks"
    : `the checkpoint is cosigned by ${quorum} of the ${policy.keys.length} given witnesses`;
  const why = r.error
    ? r.error
    : r.invalid.length
      ? `a cosignature that does not verify: ${r.invalid.map((i) => `${i.name} (${i.why})`).join('; ')}`
      : ok
        ? `cosigned by ${r.valid.map((v) => `${v.name} at ${new Date(v.timestamp * 1000).toISOString()}`).join(', ')}`
        : policy.rule
          ? `the quorum is not met: cosigned by ${r.valid.map((v) => v.name).join(', ') || 'none'}; none from ${r.missing.join(', ')}`
          : `only ${r.valid.length} of the ${quorum} required${r.valid.length ? ` (${r.valid.map((v) => v.name).join(', ')})` : ''}; none ` +
            `from ${r.missing.join(', ')}`;
  return c.add({ id: 'log.witnesses', what, valid: ok, why, subject }) === true;
}

/**
 * Checks a saved GET /api/attestations/{id} answer offline (`akas verify log-proof`) under the
 * pinned log key (or a trust file's log keys, any one of which may sign), with the witnesses'
 * quorum when given. With no key pinned the verdict is unanchored: nothing is checked under the
 * key the answer names.
 */
export function verifyLogProof(doc: unknown, logKey: string | string[] | undefined, witnesses?: WitnessPolicy, pins: LogProofPins = {}): Report {
  return runNow(logProofChecking(doc, logKey, witnesses, pins));
}

/** verifyLogProof where Ed25519 is asynchronous (WebCrypto in a browser). */
export function verifyLogProofAsync(doc: unknown, logKey: string | string[] | undefined, witnesses?: WitnessPolicy, pins: LogProofPins = {}): Promise<Report> {
  return runAsync(logProofChecking(doc, logKey, witnesses, pins));
}

/** What else may anchor an attestation read's log key: the issuer keys pinned, whose endorsement of it a read with ?evidence=full carries (PROTOCOL 9.4). */
export interface LogProofPins {
  trust?: IssuerTrust;
}

/** The checks of verifyLogProof, as a generator of the signatures they need. */
export function* logProofChecking(doc: unknown, logKey: string | string[] | undefined, witnesses?: WitnessPolicy, pins: LogProofPins = {}): Checking<Report> {
  const c = new Checks();
  if (!isObject(doc)) {
    c.add({ id: 'shape', what: 'an attestation with its proof ({entry, inclusion, checkpoint})', valid: false, why: 'not a JSON object' });
    return c.report();
  }
  const keys = logKey === undefined ? [] : Array.isArray(logKey) ? logKey : [logKey];
  const subject = isObject(doc.entry) ? String(doc.entry.id) : undefined;
  if (!keys.length && pins.trust) {
    // No log key pinned, the issuer is: the log key it endorses in the read's evidence, or none.
    const ev = isObject(doc.evidence) && isObject(doc.evidence.log) ? doc.evidence.log : {};
    const endorsed = yield* endorsedLogKeyChecking(ev.endorsement, pins.trust);
    c.add({
      id: 'log.key',
      what: 'the log key is endorsed by a pinned issuer key',
      valid: endorsed !== null,
      why: endorsed ?? "no endorsement of the read's log key by a pinned issuer key (read it with ?evidence=full)",
      anchor: true,
    });
    if (endorsed) yield* logInclusionChecking(c, doc, [endorsed], subject);
    if (witnesses) yield* witnessesChecking(c, doc.checkpoint, witnesses, subject);
    return c.report();
  }
  if (!keys.length) {
    c.add({
      id: 'log.key',
      what: 'the log key is one you pinned',
      valid: null,
      why: 'not checked: pass --trust FILE or --log-key KEY (akas node-keys prints it): unanchored',
      anchor: true,
    });
    return c.report();
  }
  const bad = keys.filter((k) => !parseVerifierKey(k));
  const key = bad.length === 0;
  c.add({
    id: 'log.key',
    what: 'the pinned log key is a C2SP Ed25519 verifier key',
    valid: key,
    why: key ? keys.map((k) => parseVerifierKey(k)!.name).join(', ') : `not a verifier key: ${bad.join(', ')}`,
    anchor: true,
  });
  if (key) yield* logInclusionChecking(c, doc, keys, subject);
  if (witnesses) yield* witnessesChecking(c, doc.checkpoint, witnesses, subject);
  return c.report();
}

/** What the monitor keeps between runs: the last verified checkpoint and the tree's right edge. */
export interface AuditState {
  origin: string;
  logKey: string;
  size: number;
  /** hex */
  root: string;
  lastHash: string;
  /** The complete subtrees on the right edge: level -> [index, hex hash]. */
  frontier: Record<string, [number, string]>;
  checkedAt: number;
}

/**
 * Extends a verified log state entry by entry: each must carry the next seq, link to the
 * previous hash and hash to its own; the tree is extended with its leaf. `root()` then gives
 * the root the entries build, to compare with a signed checkpoint.
 */
export class LogAuditor {
  size: number;
  lastHash: string;
  private readonly frontier: Map<number, { index: number; hash: Buffer }>;

  constructor(state?: Pick<AuditState, 'size' | 'lastHash' | 'frontier'>) {
    this.size = state?.size ?? 0;
    this.lastHash = state?.lastHash ?? GENESIS_PREV_HASH;
    this.frontier = new Map(Object.entries(state?.frontier ?? {}).map(([level, [index, hash]]) => [Number(level), { index, hash: Buffer.from(hash, 'hex') }]));
  }

  private readonly get = (level: number, index: number) => {
    const f = this.frontier.get(level);
    if (!f || f.index !== index) throw new Error(`the audit state lacks node ${level}:${index}`);
    return f.hash;
  };

  /** Adds the next entry; answers why it does not fit, or null. */
  append(e: LogEntry): string | null {
    if (e.seq !== this.size) return `entry ${e.seq} came where entry ${this.size} was due: entries were removed or reordered`;
    if (e.prevHash !== this.lastHash) return `entry ${e.seq} does not link to the previous entry: the chain was rewritten`;
    let hash: string;
    try {
      hash = entryHash(e);
    } catch {
      return `entry ${e.seq} cannot be canonicalized`;
    }
    if (hash !== e.hash) return `entry ${e.seq} (${e.id}) does not hash to its hash: it was edited`;
    for (const n of nodesToStoreOnAppend(this.size, leafHash(entryLeaf(e)), this.get)) this.frontier.set(n.level, { index: n.index, hash: n.hash });
    this.size += 1;
    this.lastHash = e.hash;
    return null;
  }

  root(): Buffer {
    return rootAt(this.size, this.get);
  }

  state(origin: string, logKey: string, now: number): AuditState {
    return {
      origin,
      logKey,
      size: this.size,
      root: this.root().toString('hex'),
      lastHash: this.lastHash,
      frontier: Object.fromEntries([...this.frontier].map(([level, f]) => [String(level), [f.index, f.hash.toString('hex')] as [number, string]])),
      checkedAt: now,
    };
  }
}

/** Whether a consistency proof links the old signed root to the new one (0 -> anything holds). */
export function consistent(oldSize: number, oldRoot: Buffer, newSize: number, newRoot: Buffer, proof: unknown): boolean {
  if (oldSize === 0) return true;
  const hashes = Array.isArray(proof) ? proof.map(b64) : [];
  if (hashes.some((h) => h === null)) return false;
  return verifyConsistency(oldSize, newSize, hashes as Buffer[], oldRoot, newRoot);
}

/**
 * Two signed checkpoints and the consistency proof between them (GET /api/log/proof/consistency),
 * as the explorer's log pages check them: each checkpoint is signed by the pinned log key, and
 * the proof shows the newer tree extends the older one. Without `old`, only the newer
 * checkpoint's signature is checked.
 */
export function* consistencyChecking(doc: unknown, logKey: string): Checking<Report> {
  const c = new Checks();
  if (!isObject(doc) || typeof doc.new !== 'string') {
    c.add({ id: 'shape', what: 'checkpoints to check ({new, old?, proof?})', valid: false, why: 'no newer checkpoint note' });
    return c.report();
  }
  const key = parseVerifierKey(logKey);
  c.add({
    id: 'log.key',
    what: 'the pinned log key is a C2SP Ed25519 verifier key',
    valid: key !== null,
    why: key ? key.name : `not a verifier key: ${logKey}`,
  });
  if (!key) return c.report();
  const newer = yield* openCheckpointChecking(doc.new, [logKey]);
  c.add({
    id: 'checkpoint.new',
    what: 'the checkpoint is signed by the log key',
    valid: newer.ok,
    why: newer.ok ? `size ${newer.checkpoint.size}` : newer.reason,
  });
  if (doc.old === undefined) return c.report();
  const older = yield* openCheckpointChecking(doc.old, [logKey]);
  c.add({
    id: 'checkpoint.old',
    what: 'the older checkpoint is signed by the log key',
    valid: older.ok,
    why: older.ok ? `size ${older.checkpoint.size}` : older.reason,
  });
  if (!newer.ok || !older.ok) {
    c.add({ id: 'log.consistency', what: 'the newer tree extends the older one', valid: null, why: 'not checked: a checkpoint above does not hold' });
    return c.report();
  }
  const [o, n] = [older.checkpoint, newer.checkpoint];
  const holds = o.size <= n.size && (o.size === n.size ? o.rootHash.equals(n.rootHash) : consistent(o.size, o.rootHash, n.size, n.rootHash, doc.proof));
  c.add({
    id: 'log.consistency',
    what: `the tree of ${n.size} entries extends the tree of ${o.size}`,
    valid: holds,
    why: holds
      ? undefined
      : o.size > n.size
        ? 'the older checkpoint is the larger one'
        : 'the consistency proof does not link the two signed roots: the log was rewritten, or the proof is wrong',
  });
  return c.report();
}

/** consistencyChecking where Ed25519 is asynchronous (WebCrypto in a browser). */
export function verifyConsistencyAsync(doc: unknown, logKey: string): Promise<Report> {
  return runAsync(consistencyChecking(doc, logKey));
}

/** consistencyChecking on Node. */
export function verifyConsistencyProof(doc: unknown, logKey: string): Report {
  return runNow(consistencyChecking(doc, logKey));
}
