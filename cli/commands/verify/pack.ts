// Credential reports packed for the hand-off between the threads of `akas verify credential`
// (cli/commands/verify/pool.ts). A report is some sixteen checks, nearly all the same from one
// credential to the next of a batch (the same issuer, the same instant, the same passes): each
// distinct check is sent once, in a table the receiving side keeps per thread, and each report
// as indexes into it. Structured-cloning 10,000 whole reports cost a third of verifying them
// (issue 32); and the receiving side then holds each shared check once, not 10,000 times.
// Nothing is dropped: a report unpacked is the report packed, check for check, in order.
import type { CredentialReport } from '../../../verifier/credential.js';
import { type Check, unanchoredOf } from '../../../verifier/report.js';

/** One chunk of reports, packed. */
export interface PackedChunk {
  /** The index of the chunk's first document in the batch. */
  start: number;
  /** Checks not sent before, appended to the receiver's table in order. */
  checks: Check[];
  /** Strings (issuers) not sent before, appended to the receiver's string table. */
  strings: string[];
  /** Per report: how many checks it has, then verified (1) and anchored (2), its issuer (a string index, -1: none), its subject. */
  counts: Int32Array;
  flags: Uint8Array;
  issuers: Int32Array;
  subjects: Array<string | null>;
  /** Every report's checks, as table indexes, end to end (~i: table check i, about the report's subject). */
  indexes: Int32Array;
  /** Per report: its credential's credentialStatus, when asked for (keepStatus). */
  status?: unknown[];
}

/** What the receiving side keeps per sending thread. */
export interface PackTables {
  checks: Check[];
  strings: string[];
}

// A check repeated across credentials is found among those with the same `what`; a `what`
// with more distinct checks than this (say, a failure whose reason names each credential)
// stops being looked up, so a batch of distinct checks costs no quadratic search.
const MAX_PER_WHAT = 8;

const same = (a: Check, b: Check) =>
  a.id === b.id && a.layer === b.layer && a.valid === b.valid && a.why === b.why && a.subject === b.subject && a.anchor === b.anchor;

/** Packs reports on the sending side; keeps what it has sent (the receiver's table mirrors it). */
export class ReportPacker {
  private sent = 0;
  private readonly byWhat = new Map<string, Array<[number, Check]>>();
  private readonly stringIndex = new Map<string, number>();
  private fresh: Check[] = [];
  private freshStrings: string[] = [];
  private counts: number[] = [];
  private flags: number[] = [];
  private issuers: number[] = [];
  private subjects: Array<string | null> = [];
  private indexes: number[] = [];
  private status: unknown[] | undefined;

  private checkIndex(c: Check): number {
    let known = this.byWhat.get(c.what);
    if (known) {
      for (const [i, k] of known) if (same(k, c)) return i;
    } else this.byWhat.set(c.what, (known = []));
    const i = this.sent + this.fresh.length;
    this.fresh.push(c);
    if (known.length < MAX_PER_WHAT) known.push([i, c]);
    return i;
  }

  private stringAt(s: string): number {
    let i = this.stringIndex.get(s);
    if (i === undefined) {
      this.stringIndex.set(s, (i = this.stringIndex.size));
      this.freshStrings.push(s);
    }
    return i;
  }

  add(r: CredentialReport, status?: unknown) {
    for (const c of r.checks) {
      // A check about the report's own subject (a status entry's) is that check for every
      // credential of the batch but for the subject: held once without it, and its index
      // flipped (~i) so that unpacking puts the report's subject back.
      if (c.subject !== undefined && c.subject === r.subject) this.indexes.push(~this.checkIndex({ ...c, subject: undefined }));
      else this.indexes.push(this.checkIndex(c));
    }
    this.counts.push(r.checks.length);
    this.flags.push((r.verified ? 1 : 0) | (r.anchored ? 2 : 0));
    this.issuers.push(r.issuer === undefined ? -1 : this.stringAt(r.issuer));
    this.subjects.push(r.subject ?? null);
    if (status !== undefined || this.status) (this.status ??= new Array(this.counts.length - 1).fill(undefined)).push(status);
  }

  /** The reports added since the last take, packed; their first is document `start` of the batch. */
  take(start: number): PackedChunk {
    const chunk: PackedChunk = {
      start,
      checks: this.fresh,
      strings: this.freshStrings,
      counts: Int32Array.from(this.counts),
      flags: Uint8Array.from(this.flags),
      issuers: Int32Array.from(this.issuers),
      subjects: this.subjects,
      indexes: Int32Array.from(this.indexes),
      ...(this.status ? { status: this.status } : {}),
    };
    this.sent += this.fresh.length;
    this.fresh = [];
    this.freshStrings = [];
    this.counts = [];
    this.flags = [];
    this.issuers = [];
    this.subjects = [];
    this.indexes = [];
    this.status = undefined;
    return chunk;
  }
}

/** A report as the pool answers it. */
export type PoolReport = CredentialReport;

/** Unpacks a chunk into reports[start...] (and statuses[start...] when it carries them), growing the sender's tables. */
export function unpackReports(chunk: PackedChunk, tables: PackTables, reports: PoolReport[], statuses?: unknown[]) {
  for (const c of chunk.checks) tables.checks.push(c);
  for (const s of chunk.strings) tables.strings.push(s);
  let at = 0;
  for (let j = 0; j < chunk.counts.length; j++) {
    const checks: Check[] = new Array(chunk.counts[j]);
    const subject = chunk.subjects[j] ?? undefined;
    for (let q = 0; q < checks.length; q++) {
      const i = chunk.indexes[at++];
      checks[q] = i >= 0 ? tables.checks[i] : { ...tables.checks[~i], subject };
    }
    const flags = chunk.flags[j];
    // The fields in the order verifyCredential answers them.
    const r: PoolReport = { verified: (flags & 1) !== 0, anchored: (flags & 2) !== 0, unanchored: unanchoredOf(checks), checks };
    if (chunk.issuers[j] >= 0) r.issuer = tables.strings[chunk.issuers[j]];
    if (chunk.subjects[j] !== null) r.subject = chunk.subjects[j]!;
    reports[chunk.start + j] = r;
    if (statuses && chunk.status) statuses[chunk.start + j] = chunk.status[j];
  }
}
