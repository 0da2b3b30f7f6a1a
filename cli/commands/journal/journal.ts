// The journal of what this machine signed (issue 34, `akas journal`): every signature the CLI and
// `akas mcp --stdio` make (judgments, proofs of possession at register and recover) and every
// attestation it sends, one JSON line each, appended to <config>/profiles/<profile>/journal.jsonl
// (mode 0600, through cli/kit/safe-file.ts: never through a link planted at the path, never into a
// file whose mode or owner this process did not set). A line names the signed payload by its
// sha256, the kind, the node, the agent tag and the public half of the key, never the key or any
// secret. `akas monitor` reads it to tell an entry of the log this machine made from one a stolen
// key made.
//
// A judgment or an attestation is journaled twice (issue 54, item 6). A `pending` line is durable
// (written and fsynced) before the request is sent; the node's answer settles it with a second
// line of the same `request` id: `accepted` with what identifies the entry the node made (a
// judgment's judgmentId, an attestation's entry hash), or `refused` with the node's status and
// code (a 4xx in PROTOCOL 1.3's envelope: nothing was recorded). Anything else (no answer, a 5xx)
// leaves the line pending, as a crash between sending and the answer does. The monitor excuses an
// entry only by an accepted line naming it, or by a pending line whose payload is byte for byte
// the entry's (a crash after sending); a refused line, or a pending one of another payload, never
// excuses another judgment of the same proposal (a thief's, made first with copied keys).
// Lines written before issue 54 carry no state: they are read as pending.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalize, ERROR_CODES, sha256Hex } from '../../../src/core/index.js';
import { appendLineSafely, CliError, configDir } from '../../kit/index.js';

export type JournalKind = 'judgment' | 'possession' | 'attestation';
export type JournalState = 'pending' | 'accepted' | 'refused';
const STATES: readonly string[] = ['pending', 'accepted', 'refused'];

export interface JournalEntry {
  /** The kind of signature (or, for an attestation, of signed-in request). */
  kind: JournalKind;
  /** sha256 hex of the exact bytes signed (a judgment's JCS payload; an attestation's JCS {kind, body}). */
  payloadSha256: string;
  /** The node the signature was sent to (its base URL). */
  node: string;
  /** The agent's tag (null for a proof of possession at register, made before the node names the tag). */
  agent: string | null;
  /** The public half of the key that signed (64 hex), or null for an attestation (the node signs it). */
  publicKey: string | null;
  /** What the signature is about: the proposal judged, the attestation kind, the purpose of a proof. */
  subject: string;
  /** Epoch ms on this machine's clock. */
  at: number;
  /** A judgment's or an attestation's: pending before sending, then the node's answer. Absent (lines before issue 54, proofs of possession): pending. */
  state?: JournalState;
  /** The id this machine gave one sending (16 hex): its pending line and the line settling it share it. */
  request?: string;
  /** A judgment's Ed25519 signature (hex): public, the node shows it beside the judgment. */
  signature?: string;
  /** Accepted: the judgment's id as the node answered it (its log entry names it). */
  judgmentId?: string;
  /** Accepted: the hash of the log entry the node answered for an attestation (the sha256 of its leaf). */
  entryHash?: string;
  /** Refused: the node's HTTP status and error code. */
  status?: number;
  code?: string;
}

/** Where a profile's journal is kept. */
export function journalPath(profile: string): string {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(profile)) throw new Error(`profile names are letters, digits, . _ -: ${profile}`);
  return join(configDir(), 'profiles', profile, 'journal.jsonl');
}

/** Who signs, for the journal: the profile whose folder keeps it and the node the signature goes to. */
export interface JournalTarget {
  profile: string;
  baseUrl: string;
}

// The kinds settled by the node's answer. A proof of possession is kept as a record of the keys
// this machine made; the monitor matches no entry with it.
const SETTLED: ReadonlySet<JournalKind> = new Set(['judgment', 'attestation']);

// One line, appended and fsynced (the folder too when the file is new) through cli/kit/safe-file.ts.
const append = (target: JournalTarget, line: JournalEntry) => appendLineSafely(journalPath(target.profile), JSON.stringify(line));

/**
 * Appends the line of a signature about to be sent (`pending` for a judgment or an attestation)
 * and fsyncs it before answering. Throws when it cannot: a signature that could not be journaled
 * is not sent.
 */
export function appendJournal(
  target: JournalTarget,
  entry: Omit<JournalEntry, 'node' | 'at' | 'state' | 'request' | 'judgmentId' | 'entryHash' | 'status' | 'code'> & { at?: number },
): JournalEntry {
  const line: JournalEntry = {
    kind: entry.kind,
    payloadSha256: entry.payloadSha256,
    node: target.baseUrl.replace(/\/+$/, ''),
    agent: entry.agent,
    publicKey: entry.publicKey,
    subject: entry.subject,
    at: entry.at ?? Date.now(),
    ...(SETTLED.has(entry.kind) ? { state: 'pending' as const, request: randomBytes(8).toString('hex') } : {}),
    ...(entry.signature ? { signature: entry.signature } : {}),
  };
  append(target, line);
  return line;
}

/** What the node answered to a journaled sending. */
export type Settlement = { state: 'accepted'; judgmentId?: string; entryHash?: string } | { state: 'refused'; status: number; code: string };

/** Appends the line settling a pending one (the same request id, with the node's answer). */
export function settleJournal(target: JournalTarget, pending: JournalEntry, outcome: Settlement, at = Date.now()): JournalEntry {
  const { kind, payloadSha256, node, agent, publicKey, subject, request, signature } = pending;
  const line: JournalEntry = { kind, payloadSha256, node, agent, publicKey, subject, at, request, ...(signature ? { signature } : {}), ...outcome };
  append(target, line);
  return line;
}

/** A refusal by the node (a 4xx in PROTOCOL 1.3's envelope: nothing was recorded), from the CLI's client's error; undefined for anything else. */
export function refusalOf(e: unknown): { status: number; code: string } | undefined {
  if (!CliError.is(e) || e.exitCode !== 1) return undefined;
  const { status, code } = e.body;
  return typeof status === 'number' && status >= 400 && status < 500 && typeof code === 'string' ? { status, code } : undefined;
}

/** A refusal by the node from an MCP tool error (PROTOCOL 12.4: the envelope without its status, read from the code's entry in PROTOCOL 13). */
export function toolRefusalOf(structured: unknown): { status: number; code: string } | undefined {
  const code = (structured as { code?: unknown } | undefined)?.code;
  const status = typeof code === 'string' && Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as keyof typeof ERROR_CODES].status : undefined;
  return status !== undefined && status >= 400 && status < 500 ? { status, code: code as string } : undefined;
}

/**
 * Sends a journaled request and settles its pending line by the answer: `settle` reads an answer
 * (undefined leaves the line pending), a thrown refusal settles it refused. A settling line that
 * cannot be written is not the request's failure: the pending line stands, which the monitor
 * matches only by its exact payload (as after a crash).
 */
export async function sendJournaled<T>(
  target: JournalTarget | undefined,
  pending: JournalEntry | undefined,
  send: () => Promise<T>,
  settle: (answer: T) => Settlement | undefined,
): Promise<T> {
  const write = (outcome: Settlement | undefined) => {
    if (!target || !pending || !outcome) return;
    try {
      settleJournal(target, pending, outcome);
    } catch {
      // The pending line stands (above).
    }
  };
  let answer: T;
  try {
    answer = await send();
  } catch (e) {
    const refused = refusalOf(e);
    write(refused && { state: 'refused', ...refused });
    throw e;
  }
  write(settle(answer));
  return answer;
}

/** The sha256 of a signed string, as the journal names it. */
export const payloadHash = (payload: string) => sha256Hex(payload);

/** An attestation as the journal names it: the sha256 of the JCS of {kind, body}. */
export const attestationHash = (kind: string, body: unknown) => sha256Hex(canonicalize({ kind, body }));

/** A profile's journal: its lines, and how many lines were not journal entries (a torn last line after a crash, an edit). */
export function readJournal(profile: string): { entries: JournalEntry[]; unreadable: number; path: string } {
  return readJournalFile(journalPath(profile));
}

/** A journal file (a copy kept elsewhere, e.g. a CI secret): as readJournal. */
export function readJournalFile(path: string): { entries: JournalEntry[]; unreadable: number; path: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], unreadable: 0, path };
    throw e;
  }
  const entries: JournalEntry[] = [];
  let unreadable = 0;
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    try {
      const e = JSON.parse(raw) as JournalEntry;
      if (
        typeof e?.kind === 'string' &&
        typeof e.payloadSha256 === 'string' &&
        typeof e.subject === 'string' &&
        (e.state === undefined || STATES.includes(e.state)) &&
        (e.request === undefined || typeof e.request === 'string')
      )
        entries.push(e);
      else unreadable++;
    } catch {
      unreadable++;
    }
  }
  return { entries, unreadable, path };
}

/**
 * One line per sending: the last line of each request id (its settlement, once there is one;
 * a settled state is final), in the order the sendings were signed. A line without a request id
 * (before issue 54, a proof of possession) is a sending of its own.
 */
export function journalSendings(entries: JournalEntry[]): JournalEntry[] {
  const sendings = new Map<string, JournalEntry>();
  entries.forEach((e, i) => {
    const key = e.request === undefined ? `#${i}` : `r:${e.request}`;
    const seen = sendings.get(key);
    if (!seen || (seen.state ?? 'pending') === 'pending') sendings.set(key, e);
  });
  return [...sendings.values()];
}

/** What a journal holds, as `akas monitor` matches the watched agent's log entries against it. */
export interface JournalHolds {
  /** judgmentId → proposal id, of every judgment the node answered it accepted. */
  judgments: Map<string, string>;
  /** Judgments sent but never settled (no answer, a crash, lines before issue 54), by proposal id. */
  unsettled: Map<string, Array<{ payloadSha256: string; signature?: string }>>;
  /** Entry hashes of the attestations the node answered it accepted. */
  attestationEntries: Set<string>;
  /** attestationHash of attestations sent but never settled, or accepted by an answer that named no entry. */
  attestations: Set<string>;
}

/** A journal's lines as the monitor matches them: refused sendings are left out. */
export function journalHolds(entries: JournalEntry[]): JournalHolds {
  const h: JournalHolds = { judgments: new Map(), unsettled: new Map(), attestationEntries: new Set(), attestations: new Set() };
  for (const s of journalSendings(entries)) {
    const state = s.state ?? 'pending';
    if (state === 'refused') continue;
    if (s.kind === 'judgment') {
      if (state === 'accepted' && s.judgmentId) h.judgments.set(s.judgmentId, s.subject);
      else {
        const list = h.unsettled.get(s.subject) ?? [];
        list.push({ payloadSha256: s.payloadSha256, ...(s.signature ? { signature: s.signature } : {}) });
        h.unsettled.set(s.subject, list);
      }
    } else if (s.kind === 'attestation') {
      if (state === 'accepted' && s.entryHash) h.attestationEntries.add(s.entryHash);
      else h.attestations.add(s.payloadSha256);
    }
  }
  return h;
}

/** A judgment as the node shows it signed (PROTOCOL 6.6: its detail's signature). */
export interface SignedJudgment {
  publicKey: string;
  signature: string;
  signingPayload: string;
}

/**
 * Whether the journal holds a judgment.recorded entry (its body) as this machine's: an accepted
 * sending of that judgmentId, or a sending never settled whose payload is exactly the one the
 * node shows signed for it (`signed`, asked only then), with the same signature when the line
 * has one.
 */
export async function holdsJudgment(
  h: JournalHolds,
  body: { proposalId?: unknown; judgmentId?: unknown },
  signed: () => Promise<SignedJudgment | null>,
): Promise<boolean> {
  const proposalId = String(body.proposalId);
  if (typeof body.judgmentId === 'string' && h.judgments.get(body.judgmentId) === proposalId) return true;
  const unsettled = h.unsettled.get(proposalId);
  if (!unsettled?.length) return false;
  const shown = await signed();
  if (!shown) return false;
  const hash = payloadHash(shown.signingPayload);
  return unsettled.some((u) => u.payloadSha256 === hash && (u.signature === undefined || u.signature === shown.signature));
}

/** Whether the journal holds an attestation entry as this machine's: accepted as that entry, or sent and never settled with that {kind, body}. */
export function holdsAttestation(h: JournalHolds, kind: string, body: unknown, entryHash: string): boolean {
  return h.attestationEntries.has(entryHash) || h.attestations.has(attestationHash(kind, body));
}
