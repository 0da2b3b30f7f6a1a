// An agent's standing checked offline (PROTOCOL 8.9): the credential as any VC (verifier/credential.ts),
// its subject, the checkpoint it names (signed by a pinned log key), and, given the log's entries
// [0, size), those entries proven to be that tree's leaves and every figure computed again from
// them (src/core/standing.ts, the code the node ran) and compared with the figure signed.
// The status of the credential (revoked when superseded or banned) is read by the caller, as for
// any credential (cli/commands/verify/status-check.ts, the explorer's status reader).
import { runAsync, runNow, type Checking } from '../src/core/checking.js';
import { publicKeyFromMultibase } from '../src/core/didkey.js';
import { canonicalize } from '../src/core/jcs.js';
import { entryLeaf, type LogEntry } from '../src/core/log-entry.js';
import { leafHash, nodeHash } from '../src/core/merkle.js';
import { STANDING_CREDENTIAL_TYPE, STANDING_FIGURES, standingFigures, type EntryFacts } from '../src/core/standing.js';
import { credentialChecking, type CredentialOptions, type CredentialReport } from './credential.js';
import { openCheckpointChecking } from './log.js';
import { lookupChecking } from './lookup.js';
import { Checks, readJsonInput, type Report } from './report.js';

export interface StandingOptions extends Pick<CredentialOptions, 'at' | 'issuer' | 'trust' | 'didWeb'> {
  /** The log keys pinned (a trust file's log lines): the checkpoint must be signed by one. */
  logKeys?: string[];
  /** The log's entries from 0 on (at least up to the checkpoint's size), to recompute the figures from; none: not recomputed. */
  entries?: unknown[];
  /** Where the entries came from, for the checks' text (`the node`, a file name). */
  entriesFrom?: string;
  /**
   * Instead of the whole range: lookups in the node's verifiable index (GET /api/index/{key}?entries=true, PROTOCOL 9.10)
   * of `agent:TAG` and of `credential:J` for each judgment J of the agent, each proving its entries complete.
   */
  lookups?: unknown[];
}

export interface StandingReport extends Report {
  issuer?: string;
  tag?: string;
  /** Per figure, whether the entries give it again (absent when not recomputed). */
  figures?: Record<string, boolean>;
  /** Where the entries came from, as the CLI says it: the verifiable index, or a range of the log. */
  recomputedFrom?: 'index' | 'log range' | 'saved range';
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** Verifies a standing credential (text, bytes or parsed); throws NotCheckableError for input that is not strict JSON. */
export function verifyStanding(input: unknown, o: StandingOptions = {}): StandingReport {
  return runNow(standingChecking(readJsonInput(input, 'a standing credential'), o));
}

/** verifyStanding where Ed25519 is asynchronous (the browser build). */
export function verifyStandingAsync(input: unknown, o: StandingOptions = {}): Promise<StandingReport> {
  return runAsync(standingInputChecking(input, o));
}

function* standingInputChecking(input: unknown, o: StandingOptions): Checking<StandingReport> {
  return yield* standingChecking(readJsonInput(input, 'a standing credential'), o);
}

// RFC 9162 2.1.1: the root of the leaves' hashes, the left subtree the largest power of two below n.
function merkleRoot(leaves: Uint8Array[], from = 0, to = leaves.length): Uint8Array {
  const n = to - from;
  if (n === 1) return leaves[from];
  let k = 1;
  while (k * 2 < n) k *= 2;
  return nodeHash(merkleRoot(leaves, from, from + k), merkleRoot(leaves, from + k, to));
}

/** The checks of verifyStanding, as a generator of the signatures they need. */
export function* standingChecking(doc: unknown, o: StandingOptions = {}): Checking<StandingReport> {
  const cred: CredentialReport = yield* credentialChecking(doc, { at: o.at, issuer: o.issuer, trust: o.trust, didWeb: o.didWeb });
  const c = new Checks();
  for (const k of cred.checks) c.list.push(k);
  const report = (): StandingReport => ({ ...c.report(), issuer: cred.issuer, tag: typeof subject?.tag === 'string' ? subject.tag : undefined });
  const vc = isObject(doc) ? doc : {};
  const subject = isObject(vc.credentialSubject) ? vc.credentialSubject : undefined;
  const typed = Array.isArray(vc.type) && vc.type.includes(STANDING_CREDENTIAL_TYPE);
  const key = typeof subject?.id === 'string' && subject.id.startsWith('did:key:') && !subject.id.includes('#') ? publicKeyFromMultibase(subject.id) : null;
  const subjectOk = typed && subject !== undefined && typeof subject.tag === 'string' && key !== null && key === subject.publicKey;
  c.add({
    id: 'standing.subject',
    what: `an ${STANDING_CREDENTIAL_TYPE} about one agent: its tag, and a did:key that is its publicKey`,
    valid: subjectOk,
    why: subjectOk
      ? undefined
      : !typed
        ? `type does not include ${STANDING_CREDENTIAL_TYPE}`
        : 'the subject names no tag, or its id is not the did:key of its publicKey',
  });
  if (!subjectOk || !subject) return report();
  const cp = isObject(subject.checkpoint) ? subject.checkpoint : {};
  const size = Number.isSafeInteger(cp.size) ? (cp.size as number) : -1;
  // The checkpoint: signed by a log key pinned, naming the size and root the subject names.
  if (!o.logKeys?.length) {
    c.add({
      id: 'standing.checkpoint',
      what: 'the checkpoint is signed by a log key you pinned',
      valid: null,
      why: 'no log key pinned (a trust file with a log line)',
      anchor: true,
    });
  } else {
    const opened = yield* openCheckpointChecking(cp.note, o.logKeys);
    const same = opened.ok && opened.checkpoint.size === size && hex(opened.checkpoint.rootHash) === cp.rootHash;
    c.add({
      id: 'standing.checkpoint',
      what: `the checkpoint of size ${size} is signed by a log key you pinned and names the root the standing names`,
      valid: same,
      why: !opened.ok ? opened.reason : same ? undefined : `the signed note names size ${opened.checkpoint.size}, not the standing's`,
      anchor: true,
    });
  }
  let range: LogEntry[];
  if (o.lookups) {
    const got = yield* entriesFromLookups(c, o.lookups, o.logKeys ?? [], subject.tag as string, size, o.entriesFrom);
    if (!got) return report();
    range = got;
  } else {
    if (!o.entries) {
      c.add({
        id: 'standing.entries',
        what: 'the figures recomputed from the log',
        valid: null,
        why: 'not recomputed: no log entries given (--from-node URL, or --log-range FILE)',
      });
      return report();
    }
    const entries = o.entries.filter((e): e is LogEntry => isObject(e) && Number.isSafeInteger(e.seq)).sort((a, b) => a.seq - b.seq);
    range = entries.slice(0, Math.max(size, 0));
    const contiguous = size > 0 && range.length === size && range.every((e, i) => e.seq === i);
    const root = contiguous ? hex(merkleRoot(range.map((e) => leafHash(entryLeaf(e))))) : undefined;
    const proven = root !== undefined && root === cp.rootHash;
    c.add({
      id: 'standing.entries',
      what: `the entries [0, ${size}) from ${o.entriesFrom ?? 'the log'} hash to the checkpoint's root`,
      valid: proven,
      why: proven
        ? undefined
        : !contiguous
          ? `the entries given do not hold every index from 0 to ${size - 1}`
          : 'their leaves give another root: not that log',
    });
    if (!proven) return report();
  }
  const again = standingFigures(subject.tag as string, range as EntryFacts[], size, Date.parse(String(vc.validFrom)));
  const computed: Json = { ...again.figures, window: again.window };
  const figures: Record<string, boolean> = {};
  for (const name of STANDING_FIGURES) {
    const agree = subject[name] !== undefined && canonicalize(computed[name]) === canonicalize(subject[name]);
    figures[name] = agree;
    c.add({
      id: 'standing.figure',
      what: `${name} is what the entries give (PROTOCOL 8.9)`,
      valid: agree,
      why: agree ? undefined : `the entries give ${JSON.stringify(computed[name])}, the standing says ${JSON.stringify(subject[name])}`,
      subject: name,
    });
  }
  return { ...report(), figures };
}

/**
 * The entries the figures read, through the verifiable index (PROTOCOL 9.10): the lookup of
 * `agent:TAG` and of `credential:J` for each judgment J it finds below `size`, each checked as
 * `akas verify lookup` checks it and complete as of a map of at least `size` entries, so no entry
 * the figures count is left out. Answers them (below `size`), or undefined with the check failed.
 */
function* entriesFromLookups(c: Checks, lookups: unknown[], logKeys: string[], tag: string, size: number, from?: string): Checking<LogEntry[] | undefined> {
  const byKey = new Map<string, { ok: boolean; size: number; entries: LogEntry[] }>();
  for (const doc of lookups) {
    const r = yield* lookupChecking(doc, logKeys);
    const entries = (isObject(doc) && Array.isArray(doc.entries) ? doc.entries : []) as LogEntry[];
    const shown = isObject(doc) && Array.isArray(doc.indices) && doc.indices.filter((i) => Number(i) < size).every((i) => entries.some((e) => e.seq === i));
    if (r.key) byKey.set(r.key, { ok: r.verified && r.anchored && Boolean(shown), size: r.size ?? -1, entries });
  }
  const problems: string[] = [];
  const need = (key: string) => {
    const l = byKey.get(key);
    if (!l) problems.push(`no lookup of ${key}`);
    else if (!l.ok) problems.push(`the lookup of ${key} does not hold, or does not show every entry below ${size}`);
    else if (l.size < size) problems.push(`the lookup of ${key} is complete as of entry ${l.size}, before the standing's ${size}`);
    return l?.entries ?? [];
  };
  const own = need(`agent:${tag}`).filter((e) => e.seq < size);
  const judged = own.filter((e) => e.kind === 'attestation.event.v1' && e.body?.event === 'judgment.recorded').map((e) => String(e.body.judgmentId));
  const all = new Map<number, LogEntry>();
  for (const e of own) all.set(e.seq, e);
  for (const j of judged) for (const e of need(`credential:${j}`)) if (e.seq < size) all.set(e.seq, e);
  const ok = problems.length === 0;
  c.add({
    id: 'standing.entries',
    what: `the entries about ${tag} and its ${judged.length} judgment(s) below ${size}, from the verifiable index${from ? ` of ${from}` : ''}, proven complete`,
    valid: ok,
    why: ok ? undefined : problems.slice(0, 3).join('; '),
  });
  return ok ? [...all.values()].sort((a, b) => a.seq - b.seq) : undefined;
}
