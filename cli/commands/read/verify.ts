// Verified reads (issue 50, items 2 and 4): what `akas mcp --stdio` hands a model and what `akas
// node|brief|search|show` print is checked on this machine first, with the offline verifier
// (verifier/read.ts verifyRead: content, publication, judges, credentials, their status, the
// inclusion proof under a checkpoint), under the keys this profile pinned for the node
// (cli/commands/trust/pins.ts, trust on first use) and at a checkpoint proven one history with
// the newest one this reader kept (cli/commands/trust/checkpoints.ts). A read is one the node
// answered with ?evidence=full (PROTOCOL 10.6, 10.7): a node, a brief, a search whose hits carry
// their reads, a proposal detail with its bundle, an attestation with its proof.
//
// The outcome is one `Verification` (the same object in an MCP result's structuredContent and
// under --json): the verdict of PROTOCOL 8.6 (verifier/report.ts verdictOf), what it was
// anchored on, the checkpoint it was verified at, the checks that failed, whether the decision
// behind a published read still holds (status.decision), what this contact did to the pin (a
// key change outside the node's signed history is an event, said), and a checkpoint refused (a
// rollback or a fork, with the evidence file `akas verify fork` reads).
//
// One ReadVerifier per reader process: its SignatureMemo (verifier/memo.ts) and its inflated
// status lists are kept across reads, so a signature or a list checked once is not checked again.
import { statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { readShape, SignatureMemo, verifyRead, type ReadReport, type ReadShape, type Trust } from '../../../verifier/index.js';
import { issuerTrustOf } from '../../../verifier/trust.js';
import { type Check, Checks, isStatusCheck, NotCheckableError, type Verdict, verdictLine, verdictOf } from '../../../verifier/report.js';
import type { Inflate } from '../../../verifier/status-list.js';
import { type AkasClient, CliError, type Json, terminalSafe } from '../../kit/index.js';
import { advanceCheckpoint, type CheckpointOutcome } from '../trust/checkpoints.js';
import { type Completeness, judgmentsComplete } from './complete.js';
import { evalsComplete } from './evals.js';
import { type PinnedTrust, pinJson, pinnedTrust, readerStatePath } from '../trust/pins.js';

/** A failed check as a verification names it: its id (PROTOCOL 8.8), why, and what it was about. */
export interface FailedCheck {
  id: string;
  why?: string;
  subject?: string;
}

/** What a reader says about one read (PROTOCOL 8.6's verdict, with where and under what it was verified). */
export interface Verification {
  verdict: Verdict;
  /** The keys the verdict rests on: this profile's pin of the node (its file, how and when it was made). */
  anchoredOn: string | null;
  /** The checkpoint the read was verified at (its size and root, hex); null when it has none or it was refused. */
  checkpoint: { size: number; root: string } | null;
  failed: FailedCheck[];
  /** What could not be checked and kept the verdict from `verified` (an unanchored or status-unknown read), with why. */
  unchecked?: FailedCheck[];
  /** A published read's decision (status.decision): whether it still holds with the judgments withdrawn since. */
  decision?: { holds: boolean; why: string };
  /** What this read did to the pin, when it did something: pinned (trust on first use), followed a signed rotation, or an event. */
  trust?: Json;
  /** The read's checkpoint refused: not the pinned log's, a rollback or a fork, with the evidence written. */
  refused?: { what: 'unverified' | 'rollback' | 'fork'; why: string; evidenceFile?: string; proven?: boolean };
  /** A search's hits, in its order, each with its own verdict. */
  hits?: Array<{ path: string; verdict: Verdict; failed: FailedCheck[] }>;
  /**
   * Complete as of this log size (its lookup): a proposal read with this many judgments the log records, an artifact read with
   * this many evals the log records of its bytes; null when not proven.
   */
  complete?: { size: number; judgments?: number; evals?: number } | null;
  /** Why completeness was not proven, when it was not. */
  completeWhy?: string;
  /** A lookup (the lookup tool: PROTOCOL 9.10): its key, whether any entry mentions it, how many, complete as of which log size. */
  lookup?: { key: string; found: boolean; entries: number; size: number };
  /** The one line a model (or a person) reads first. */
  line: string;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Bytes of inflated status lists a reader keeps (a list of the minimum size inflates to 16 KiB; the largest to 16 MiB). */
export const INFLATED_KEPT_BYTES = 32 * 1024 * 1024;

/**
 * node:zlib's gunzip, bounded as the verifier asks (maxBytes), remembering what it inflated by the
 * SHA-256 of the GZIP bytes: the hits of a search and a node read again staple the same lists.
 */
export function keptInflate(capacity = INFLATED_KEPT_BYTES): Inflate {
  const kept = new Map<string, Uint8Array>();
  let bytes = 0;
  return (gz, maxBytes) => {
    const key = createHash('sha256').update(gz).digest('hex');
    const hit = kept.get(key);
    if (hit) {
      if (hit.length > maxBytes) throw new Error(`the list inflates past ${maxBytes} bytes`);
      return hit;
    }
    const out = new Uint8Array(gunzipSync(gz, { maxOutputLength: maxBytes }));
    kept.set(key, out);
    bytes += out.length;
    for (const [k, v] of kept) {
      if (bytes <= capacity) break;
      kept.delete(k);
      bytes -= v.length;
    }
    return out;
  };
}

/** The node's keys a read carries (its evidence's issuerKeys and log), as GET /api/node/keys answers them; undefined when it carries none. */
export function keysOf(shape: ReadShape, doc: Json): Json | undefined {
  const evidences = shape === 'search' ? (doc.items as unknown[]).map((i) => (isObject(i) && isObject(i.read) ? i.read.evidence : undefined)) : [doc.evidence];
  for (const ev of evidences)
    if (isObject(ev) && isObject(ev.issuerKeys) && isObject(ev.log) && typeof ev.log.verifierKey === 'string')
      return { issuer: ev.issuerKeys, log: { verifierKey: ev.log.verifierKey, endorsement: ev.log.endorsement } };
  return undefined;
}

const sizeOfNote = (note: string) => Number(note.split('\n')[1]);

/** The checkpoints (signed notes) a read is proven under, smallest tree first. */
export function notesOf(shape: ReadShape, doc: Json): string[] {
  const notes = new Set<string>();
  const add = (n: unknown) => typeof n === 'string' && Number.isSafeInteger(sizeOfNote(n)) && notes.add(n);
  const publication = (ev: unknown) => (isObject(ev) && isObject(ev.publication) ? ev.publication.checkpoint : undefined);
  if (shape === 'node' || shape === 'brief') add(publication(doc.evidence));
  else if (shape === 'search') for (const i of doc.items as unknown[]) add(isObject(i) && isObject(i.read) ? publication(i.read.evidence) : undefined);
  else if (shape === 'proposal') add(isObject(doc.evidence) && isObject(doc.evidence.log) ? doc.evidence.log.checkpoint : undefined);
  else add(doc.checkpoint);
  return [...notes].sort((a, b) => sizeOfNote(a) - sizeOfNote(b));
}

export const failedOf = (checks: Check[]): FailedCheck[] =>
  checks
    .filter((c) => c.valid === false)
    .map((c) => ({ id: c.id, ...(c.why !== undefined ? { why: c.why } : {}), ...(c.subject !== undefined ? { subject: c.subject } : {}) }));

/** The checks that ran to no answer where one was needed: an anchor, or a credential's status. */
export const uncheckedOf = (checks: Check[]): FailedCheck[] =>
  failedOf(checks.filter((c) => c.valid === null && (c.anchor || isStatusCheck(c.id))).map((c) => ({ ...c, valid: false })));

/** The fields every Verification carries: the verdict of a report, the checks it failed or left unchecked, its anchor and checkpoint. */
export function verificationOf(
  report: { verified: boolean; anchored: boolean; checks: Check[] },
  anchoredOn: string,
  at: CheckpointOutcome | undefined,
  trust: { trust?: Json },
): Omit<Verification, 'line'> {
  const verdict = verdictOf(report);
  const unchecked = verdict === 'unanchored' || verdict === 'status unknown' ? uncheckedOf(report.checks) : [];
  return {
    verdict,
    ...(unchecked.length ? { unchecked } : {}),
    anchoredOn,
    checkpoint: at?.checkpoint ? { size: at.checkpoint.size, root: at.checkpoint.root } : null,
    failed: failedOf(report.checks),
    ...trust,
  };
}

/** What a read was proven complete with: its judgments (a proposal) or its evals (an artifact), as of a log size. */
export const completeLine = (c: NonNullable<Verification['complete']>) =>
  c.evals !== undefined
    ? `all ${c.evals} eval(s) the log records of its bytes, as of entry ${c.size}`
    : `all ${c.judgments} judgment(s) the log records of it, as of entry ${c.size}`;

const short = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The one line of a verification: the verdict, where, what failed or whether the decision still holds, and what happened to the pin. */
export function lineOf(v: Omit<Verification, 'line'>, url: string): string {
  const at = v.checkpoint ? ` at checkpoint ${v.checkpoint.size} (root ${v.checkpoint.root.slice(0, 12)}…)` : '';
  const parts: string[] = [];
  if (v.refused) parts.push(`NOT VERIFIED: refused: ${short(v.refused.why)}${v.refused.evidenceFile ? ` (evidence: ${v.refused.evidenceFile})` : ''}`);
  else if (v.decision && !v.decision.holds) parts.push(`NOT VERIFIED${at}: ${short(v.decision.why, 200)}`);
  else {
    const failed = v.hits
      ? v.hits.filter((h) => h.verdict === 'not verified').map((h) => `${h.path} (${[...new Set(h.failed.map((f) => f.id))].join(', ')})`)
      : v.failed.map((f) => f.id);
    const base = verdictLine({ verdict: v.verdict, anchoredOn: `the keys pinned for ${url}`, status: null, failed });
    const [word, rest] = base.split(' — ');
    parts.push(`${word}${at} — ${rest}`);
    for (const u of v.unchecked ?? []) parts.push(`not checked: ${short(u.why ?? u.id)}`);
    if (v.hits) parts.push(`${v.hits.filter((h) => h.verdict === 'verified').length} of ${v.hits.length} hits verified`);
    if (v.decision?.holds) parts.push('the decision still holds');
    if (v.lookup && v.verdict !== 'not verified')
      parts.push(`${v.lookup.key}: ${v.lookup.entries} entr${v.lookup.entries === 1 ? 'y' : 'ies'}, complete as of log size ${v.lookup.size}`);
    if (v.complete) parts.push(completeLine(v.complete));
    else if (v.complete === null && v.completeWhy) parts.push(`not proven complete (${short(v.completeWhy, 120)})`);
  }
  const event = v.trust?.event as Json | undefined;
  if (event) parts.push(`WARNING: ${short(String(event.why))}; the pin is unchanged (akas trust accept moves it)`);
  else if (v.trust?.status === 'pinned') parts.push('trust on first use: the keys were pinned now');
  else if (v.trust?.status === 'followed') parts.push('the node rotated its issuer key (signed by both keys): followed');
  return `akas checked this on your machine: ${parts.join('; ')}`;
}

export interface ReaderOptions {
  profile: string;
  client: AkasClient;
  /** Where notices go (trust on first use, a rotation followed, a key change event). */
  say(line: string): void;
}

/** The checks of a read on this machine, with what they keep between reads (one per reader process). */
export class ReadVerifier {
  readonly memo = new SignatureMemo();
  private readonly inflate = keptInflate();

  constructor(readonly o: ReaderOptions) {}

  /** The pin's file as it is now (its modification time and size): a cached verdict stands only while it is unchanged. */
  pinStamp(): string {
    try {
      const s = statSync(readerStatePath(this.o.profile, this.o.client.baseUrl));
      return `${s.mtimeMs}:${s.size}`;
    } catch {
      return 'none';
    }
  }

  /**
   * The pin a read is checked under (trust on first use, its keys when it carries them), and each
   * checkpoint it is proven under, against the newest this reader kept: a refusal refuses the read.
   */
  async anchor(
    keys: Json | undefined,
    notes: string[],
  ): Promise<{ refusal: Omit<Verification, 'line'> } | { pin: PinnedTrust; anchoredOn: string; trust: { trust?: Json }; at?: CheckpointOutcome }> {
    let pin: PinnedTrust;
    try {
      pin = await pinnedTrust(this.o.profile, this.o.client, keys ? { keys } : {});
    } catch (e) {
      // A first contact whose keys do not hold: nothing is pinned, so nothing verifies.
      if (!CliError.is(e) || e.body.code !== 'keys_do_not_hold') throw e;
      return { refusal: { verdict: 'not verified', anchoredOn: null, checkpoint: null, failed: [{ id: 'issuer.chain', why: e.message }] } };
    }
    if (pin.notice) this.o.say(terminalSafe(pin.notice));
    const anchoredOn = `${pin.path} (${pin.source}, pinned ${pin.pinnedAt})`;
    const trust = pin.status === 'unchanged' ? {} : { trust: pinJson(pin) };
    let at: CheckpointOutcome | undefined;
    for (const note of notes) {
      const cp = await advanceCheckpoint(this.o.profile, this.o.client, note);
      if (cp.refused) {
        const why = cp.why ?? cp.refused;
        return {
          refusal: {
            verdict: 'not verified',
            anchoredOn,
            checkpoint: null,
            failed: [{ id: cp.refused === 'unverified' ? 'log.checkpoint' : 'log.consistency', why }],
            refused: { what: cp.refused, why, ...(cp.evidenceFile ? { evidenceFile: cp.evidenceFile, proven: cp.proven === true } : {}) },
            ...trust,
          },
        };
      }
      at = cp;
    }
    return { pin, anchoredOn, trust, at };
  }

  /** Verifies a read the node answered with ?evidence=full; input that is no read is a failure (evidence), never a pass. */
  async verify(doc: Json): Promise<Verification> {
    const url = this.o.client.baseUrl;
    const done = (v: Omit<Verification, 'line'>): Verification => ({ ...v, line: lineOf(v, url) });
    let shape: ReadShape;
    try {
      shape = readShape(doc);
    } catch (e) {
      if (!NotCheckableError.is(e)) throw e;
      return done({ verdict: 'not verified', anchoredOn: null, checkpoint: null, failed: [{ id: 'evidence', why: e.message }] });
    }
    const anchored = await this.anchor(keysOf(shape, doc), notesOf(shape, doc));
    if ('refusal' in anchored) return done(anchored.refusal);
    const { pin, anchoredOn, trust, at } = anchored;
    const report = await verifyRead(doc, optionsOf(pin.trust, this.memo, this.inflate));
    // A proposal's judgments, an artifact's evals, held against every one the log records (their lookup: ./complete.ts, ./evals.ts).
    const complete =
      shape === 'proposal'
        ? await judgmentsComplete(this.o.client, pin.trust, doc)
        : shape === 'node'
          ? await evalsComplete(this.o.client, pin.trust, doc)
          : null;
    if (complete) {
      const c = new Checks();
      for (const check of complete.checks) c.add(check);
      report.checks.push(...c.list);
      if (complete.checks.some((check) => check.valid === false)) report.verified = false;
    }
    const decision = report.checks.find((c) => c.id === 'status.decision' && c.valid !== null);
    return done({
      ...verificationOf(report, anchoredOn, at, trust),
      ...(decision ? { decision: decisionOf(decision) } : {}),
      ...(report.hits ? { hits: hitsOf(report) } : {}),
      ...(complete ? { complete: complete.asOf ?? null, ...(complete.asOf ? {} : { completeWhy: whyNotComplete(complete) }) } : {}),
    });
  }
}

/** Why a read was not proven complete: the first of its completeness checks that did not hold. */
const whyNotComplete = (c: Completeness) => {
  const check = c.checks.find((k) => k.valid !== true) ?? c.checks[0];
  return `${check.id}: ${check.why ?? ''}`;
};

/** Whether the decision behind a read holds, said in those words whichever verifier made the check (a node read's or a bundle's). */
function decisionOf(check: Check): { holds: boolean; why: string } {
  const holds = check.valid === true;
  const why = check.why ?? '';
  return { holds, why: /^the decision /.test(why) ? why : `the decision ${holds ? 'still holds' : 'no longer holds'}: ${why}` };
}

const hitsOf = (r: ReadReport) => (r.hits ?? []).map((h) => ({ path: h.path, verdict: verdictOf(h.report), failed: failedOf(h.report.checks) }));

/** The verifier's options under a pinned trust file: its issuer keys in their windows, its log keys, its witness quorum. */
function optionsOf(trust: Trust, memo: SignatureMemo, inflate: Inflate) {
  const q = trust.policy.quorum;
  return {
    trust: issuerTrustOf(trust),
    logKeys: trust.policy.logs,
    ...(q ? { witnesses: { keys: trust.policy.witnesses, rule: q, now: Math.floor(Date.now() / 1000) } } : {}),
    memo,
    inflate,
  };
}
