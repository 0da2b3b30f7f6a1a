// The journal of what this machine signed (issue 34, `akas journal`): every signature the CLI and
// `akas mcp --stdio` make (judgments, proofs of possession at register and recover) and every
// attestation it sends, one JSON line each, appended to <config>/profiles/<profile>/journal.jsonl
// (mode 0600). A line names the signed payload by its sha256, the kind, the node, the agent tag
// and the public half of the key, never the key or any secret. `akas monitor` reads it to tell
// an entry of the log this machine made from one a stolen key made.
//
// A line is durable (written and fsynced) before the request that carries the signature is
// sent: a crash after sending never leaves a signature the journal lacks, so the monitor never
// raises a false "not mine" on one of the owner's own judgments. A crash between the fsync and
// the send leaves a line for a signature never sent: harmless (the monitor matches entries to
// lines, never lines to entries).
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { canonicalize, sha256Hex } from '../src/core/index.js';
import { configDir } from './profile.js';

export type JournalKind = 'judgment' | 'possession' | 'attestation';

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

/**
 * Appends one line and fsyncs it (and, when the file is new, its folder) before answering.
 * Throws when it cannot: a signature that could not be journaled is not sent.
 */
export function appendJournal(target: JournalTarget, entry: Omit<JournalEntry, 'node' | 'at'> & { at?: number }): JournalEntry {
  const path = journalPath(target.profile);
  const line: JournalEntry = {
    kind: entry.kind,
    payloadSha256: entry.payloadSha256,
    node: target.baseUrl.replace(/\/+$/, ''),
    agent: entry.agent,
    publicKey: entry.publicKey,
    subject: entry.subject,
    at: entry.at ?? Date.now(),
  };
  const fresh = !existsSync(path);
  if (fresh) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // O_APPEND: lines of two processes of one profile never overwrite each other.
  const fd = openSync(path, 'a', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(line)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (fresh && process.platform !== 'win32') {
    const dir = openSync(dirname(path), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  }
  return line;
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
      if (typeof e?.kind === 'string' && typeof e.payloadSha256 === 'string' && typeof e.subject === 'string') entries.push(e);
      else unreadable++;
    } catch {
      unreadable++;
    }
  }
  return { entries, unreadable, path };
}
