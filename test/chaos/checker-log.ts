// The checker's log checks (issue 49, 3; PROTOCOL 9.5, 9.6): the log as the processes serve it
// once the run is healed, against the checkpoints clients read during the run. The entries are
// re-hashed and re-chained and the tree rebuilt with the verifier's own auditor
// (verifier/log.ts); consistency proofs come from the nodes and are checked by the verifier.
import type { LogEntry } from '../../src/core/index.js';
import type { Checkpoint } from '../../src/core/note.js';
import { LogAuditor, openCheckpoint, verifyConsistencyProof } from '../../verifier/log.js';
import { precedes, type Found, type Op } from './checker-history.js';
import type { Reader } from './checker-read.js';

/** A checkpoint as a client or the checker read it: the note, opened under the log key. */
export interface ReadCheckpoint {
  note: string;
  /** Where it came from: a history line, or a process's final checkpoint. */
  from: string;
  node: string;
  /** The history lines of the read (Infinity for a final checkpoint: read after everything). */
  invoked: number;
  done: number;
  checkpoint?: Checkpoint;
  /** Why it does not open under the log key. */
  unopened?: string;
}

/** The served log, read once: the log key all processes must share, the entries, each process's final checkpoint. */
export interface ServedLog {
  logKey: string;
  origin: string;
  /** Each process's published log key and origin (GET /api/node/keys). */
  keys: Array<{ node: string; origin: string; verifierKey: string }>;
  entries: LogEntry[];
  finals: ReadCheckpoint[];
}

type Json = Record<string, unknown>;

/** Reads the keys of every process, the whole log from the first, and every process's newest checkpoint. */
export async function readServedLog(reader: Reader): Promise<ServedLog> {
  const keys = [];
  for (const p of reader.processes) {
    const k = (await reader.json(`/api/node/keys`, p.name)) as { log: { origin: string; verifierKey: string } };
    keys.push({ node: p.name, origin: k.log.origin, verifierKey: k.log.verifierKey });
  }
  const entries: LogEntry[] = [];
  for (let start = 0; ; ) {
    const page = (await reader.json(`/api/log/entries?start=${start}&end=${start + 1000}`, reader.processes[0].name)) as {
      end: number;
      size: number;
      entries: LogEntry[];
    };
    entries.push(...page.entries);
    if (page.entries.length === 0 || page.end >= page.size) break;
    start = page.end;
  }
  const finals: ReadCheckpoint[] = [];
  for (const p of reader.processes) {
    const note = await reader.text('/api/log/checkpoint', p.name);
    finals.push(opened({ note, from: `the final checkpoint of ${p.name}`, node: p.name, invoked: Infinity, done: Infinity }, keys[0].verifierKey));
  }
  return { logKey: keys[0].verifierKey, origin: keys[0].origin, keys, entries, finals };
}

function opened(c: ReadCheckpoint, logKey: string): ReadCheckpoint {
  const o = openCheckpoint(c.note, [logKey]);
  return o.ok ? { ...c, checkpoint: o.checkpoint } : { ...c, unopened: o.reason };
}

/** The checkpoints the history's clients read (read-checkpoint ok), opened under the log key. */
export function historyCheckpoints(ops: readonly Op[], logKey: string): ReadCheckpoint[] {
  return ops
    .filter((o) => o.f === 'read-checkpoint' && o.type === 'ok' && typeof o.got.note === 'string')
    .map((o) => opened({ note: o.got.note as string, from: `history line ${o.lines.at(-1)}`, node: o.node, invoked: o.invoked, done: o.done }, logKey));
}

const hex = (b: Buffer) => b.toString('hex');
const brief = (c: ReadCheckpoint) => ({
  from: c.from,
  node: c.node,
  size: c.checkpoint?.size,
  rootHash: c.checkpoint?.rootHash.toString('base64'),
  note: c.note,
});

/**
 * log-append-only: the entries served are 0..n−1 with no gap, each links to the one before and
 * hashes to its hash (the verifier's LogAuditor); the tree they build has, at the size of every
 * checkpoint a client read during the run and of every process's final checkpoint, exactly the
 * signed root (a checkpoint beyond the entries means entries were removed; another root, that
 * the log was rewritten); and the node's own audit (`akas log check`) finds nothing in the log.
 */
export function checkAppendOnly(
  log: ServedLog,
  read: readonly ReadCheckpoint[],
  audit: { problems: string[] } | undefined,
): { found: Found[]; detail: string } {
  const found: Found[] = [];
  const wanted = new Map<number, ReadCheckpoint[]>();
  for (const c of [...read, ...log.finals]) {
    if (!c.checkpoint) continue;
    const list = wanted.get(c.checkpoint.size);
    if (list) list.push(c);
    else wanted.set(c.checkpoint.size, [c]);
  }
  const auditor = new LogAuditor();
  const compare = () => {
    for (const c of wanted.get(auditor.size) ?? []) {
      const root = auditor.root();
      if (!root.equals(c.checkpoint!.rootHash)) {
        found.push({
          message: `${c.from} signs a root of ${auditor.size} entries that the served entries do not build: the log was rewritten`,
          evidence: { checkpoint: brief(c), rebuiltRoot: root.toString('base64') },
        });
      }
    }
    wanted.delete(auditor.size);
  };
  compare();
  for (const e of log.entries) {
    const why = auditor.append(e);
    if (why) {
      found.push({ message: why, evidence: { index: auditor.size, entry: e } });
      break;
    }
    compare();
  }
  for (const [size, list] of wanted) {
    if (size <= auditor.size) continue;
    for (const c of list) {
      found.push({
        message: `${c.from} has ${size} entries; the log serves ${log.entries.length}: entries were removed`,
        evidence: { checkpoint: brief(c), served: log.entries.length },
      });
    }
  }
  for (const p of audit?.problems ?? []) found.push({ message: `akas log check: ${p}`, evidence: { problem: p } });
  return { found, detail: `${log.entries.length} entries re-chained; ${read.length + log.finals.length} checkpoints' roots rebuilt` };
}

/**
 * checkpoints-monotonic: checkpoints never go back. Every checkpoint handed out covers every
 * entry appended before the request (PROTOCOL 9.5) and all processes append to one log, so a
 * checkpoint read after another was answered, from the same process or any other, is at
 * least as large; and one read after an attestation was acknowledged covers that entry.
 */
export function checkMonotonic(read: readonly ReadCheckpoint[], ops: readonly Op[]): { found: Found[]; detail: string } {
  const found: Found[] = [];
  const sized = read.filter((c) => c.checkpoint);
  const byDone = [...sized].sort((a, b) => a.done - b.done);
  for (const later of sized) {
    // The largest checkpoint answered before this one was asked.
    let before: ReadCheckpoint | undefined;
    for (const c of byDone) {
      if (!precedes(c, later)) break;
      if (!before || c.checkpoint!.size > before.checkpoint!.size) before = c;
    }
    if (before && later.checkpoint!.size < before.checkpoint!.size) {
      found.push({
        message:
          `${later.from} (${later.node}) has ${later.checkpoint!.size} entries, fewer than the ${before.checkpoint!.size} ` +
          `of ${before.from} (${before.node}) read before it: the checkpoint went back`,
        evidence: { earlier: brief(before), later: brief(later) },
      });
    }
  }
  const attested = ops.filter((o) => o.f === 'attest' && o.type === 'ok' && typeof o.got.id === 'string');
  for (const c of sized) {
    for (const a of attested) {
      const seq = Number.parseInt((a.got.id as string).slice(4), 16);
      if (precedes(a, c) && c.checkpoint!.size <= seq) {
        found.push({
          message: `${c.from} (${c.node}) has ${c.checkpoint!.size} entries, but attestation ${a.got.id} (entry ${seq}) was acknowledged before it was read`,
          evidence: { checkpoint: brief(c), attestation: { lines: a.lines, id: a.got.id } },
        });
      }
    }
  }
  return { found, detail: `${sized.length} checkpoints read, in the order they were read` };
}

/**
 * checkpoints-consistent: every checkpoint read (during the run and each process's final one)
 * is signed by the log key; two of one size sign one root; and each, by size, is linked to the
 * next larger by a consistency proof a process gives, checked by the verifier
 * (verifyConsistencyProof): every two are then consistent, as consistency is transitive.
 */
export async function checkConsistent(log: ServedLog, read: readonly ReadCheckpoint[], reader: Reader): Promise<{ found: Found[]; detail: string }> {
  const found: Found[] = [];
  const all = [...read, ...log.finals];
  for (const c of all) {
    if (c.unopened) found.push({ message: `${c.from} (${c.node}) is not a checkpoint of the log key: ${c.unopened}`, evidence: { checkpoint: brief(c) } });
  }
  const bySize = new Map<number, ReadCheckpoint>();
  for (const c of all) {
    if (!c.checkpoint) continue;
    const same = bySize.get(c.checkpoint.size);
    if (!same) bySize.set(c.checkpoint.size, c);
    else if (!same.checkpoint!.rootHash.equals(c.checkpoint.rootHash)) {
      found.push({
        message: `two checkpoints of ${c.checkpoint.size} entries sign two roots (${same.from}, ${c.from}): a fork`,
        evidence: { one: brief(same), other: brief(c) },
      });
    }
  }
  const sizes = [...bySize.keys()].sort((a, b) => a - b);
  let proofs = 0;
  for (let i = 1; i < sizes.length; i++) {
    const [older, newer] = [bySize.get(sizes[i - 1])!, bySize.get(sizes[i])!];
    if (older.checkpoint!.size === 0) continue; // the empty tree is a prefix of every tree
    const answer = (await reader.json(`/api/log/proof/consistency?old=${older.checkpoint!.size}&new=${newer.checkpoint!.size}`)) as Json;
    proofs++;
    const report = verifyConsistencyProof({ old: older.note, new: newer.note, proof: answer.proof }, log.logKey);
    const failed = report.checks.filter((k) => k.valid === false);
    if (failed.length) {
      found.push({
        message:
          `${newer.from} (${newer.checkpoint!.size} entries) does not extend ${older.from} (${older.checkpoint!.size}): ` +
          failed.map((k) => k.why ?? k.id).join('; '),
        evidence: { older: brief(older), newer: brief(newer), proof: answer.proof, rootOlder: hex(older.checkpoint!.rootHash) },
      });
    }
  }
  return { found, detail: `${all.length} checkpoints, ${sizes.length} sizes, ${proofs} consistency proofs checked` };
}

/**
 * one-tree: one tree per origin across processes. Every process publishes the same log origin
 * and key, and its newest checkpoint opens under that key with that origin; the processes'
 * checkpoints are one tree (two of one size sign one root, a smaller one is a prefix of a
 * larger one by the larger process's consistency proof).
 */
export async function checkOneTree(log: ServedLog, reader: Reader): Promise<{ found: Found[]; detail: string }> {
  const found: Found[] = [];
  for (const k of log.keys) {
    if (k.origin !== log.origin || k.verifierKey !== log.logKey) {
      found.push({
        message: `${k.node} publishes the log ${k.origin} under key ${k.verifierKey}; ${log.keys[0].node} publishes ${log.origin} under ${log.logKey}`,
        evidence: { keys: log.keys },
      });
    }
  }
  for (const c of log.finals) {
    if (c.unopened) found.push({ message: `${c.from} does not open under the shared log key: ${c.unopened}`, evidence: { checkpoint: brief(c) } });
    else if (c.checkpoint!.origin !== log.origin)
      found.push({ message: `${c.from} names the origin ${c.checkpoint!.origin}`, evidence: { checkpoint: brief(c) } });
  }
  const finals = log.finals.filter((c) => c.checkpoint);
  for (let i = 0; i < finals.length; i++) {
    for (let j = i + 1; j < finals.length; j++) {
      const [a, b] = finals[i].checkpoint!.size <= finals[j].checkpoint!.size ? [finals[i], finals[j]] : [finals[j], finals[i]];
      if (a.checkpoint!.size === 0) continue;
      let proof: unknown = [];
      if (a.checkpoint!.size !== b.checkpoint!.size) {
        proof = ((await reader.json(`/api/log/proof/consistency?old=${a.checkpoint!.size}&new=${b.checkpoint!.size}`, b.node)) as Json).proof;
      }
      const report = verifyConsistencyProof({ old: a.note, new: b.note, proof }, log.logKey);
      if (report.checks.some((k) => k.valid === false)) {
        found.push({
          message: `${a.node} and ${b.node} serve two trees under one origin (${a.checkpoint!.size} and ${b.checkpoint!.size} entries, not consistent)`,
          evidence: { one: brief(a), other: brief(b), proof },
        });
      }
    }
  }
  return { found, detail: `${log.keys.length} processes on the origin ${log.origin}` };
}
