// One round of `akas monitor` (issue 34): the node's keys against those seen before, its
// checkpoint (signature, witness quorum of a tlog-policy, the tiles giving its root, extending
// the last one verified and every view given with --compare), then every new entry from the
// entry bundles, each checked against the tree (cli/commands/monitor/bundle-check.ts); the watched
// agent's entries matched with the journal, and every status-list version read for the agent's
// credentials (cli/commands/monitor/status.ts). What it finds goes out as alerts (exit 1) and events,
// printed as cli/commands/monitor/output.ts says, and the state is saved as cli/commands/monitor/state.ts says, so
// a SIGKILL loses nothing and repeats nothing.
import { boundedGet, type FetchCaps, isFetchError, type Json, writeFileSafely } from '../../kit/index.js';
import { join } from 'node:path';
import { bundlePath, inclusionProof, sha256Hex, STATUS_LIST_EVENT_KIND, TILE_WIDTH, TileHashReader, tilePath, tileWidthAt } from '../../../src/core/index.js';
import { type IssuerTrust, openCheckpoint, trustIssuerKeys } from '../../../verifier/index.js';
import { holdsAttestation, holdsJudgment, type JournalHolds, type SignedJudgment } from '../journal/journal.js';
import { STATUS_LIST_CAPS } from '../verify/status-check.js';
import type { FetchBytes } from '../log/tile-reader.js';
import { BoundTiles, type CheckedBundle, checkBundle, entriesContaining, leafAt } from './bundle-check.js';
import { forkEvidence } from './evidence.js';
import { AlertOutput } from './output.js';
import { quorumOf, type TlogPolicy } from './policy.js';
import { type MonitorRecord, type MonitorState, readState, writeState } from './state.js';
import { type GetUrl, type Report, StatusWatch } from './status.js';

/** The network failed under a read (no answer at all): the round could not run (exit 2). */
export class Unreachable extends Error {}
/** A log resource answered 404 (or bytes that are not one): the log misbehaves (an alert, not a crash). */
export class Missing extends Error {}

export type Record = MonitorRecord;

/** Who is watched: one's own agent (entries checked against the journal) or, with --agent, anyone's (every signed entry reported). */
export interface Watched {
  tag: string;
  own: boolean;
  /** What the journal holds as sent and accepted (cli/commands/journal/journal.ts's journalHolds). */
  journal: JournalHolds;
  /** Public keys known locally (the profile's, the journal's). */
  keys: string[];
}

export interface CompareSource {
  from: string;
  note: () => Promise<string>;
  /** The tiles of that view, when it is a node (to prove a newer view extends ours). */
  tiles?: FetchBytes;
}

export interface MonitorRound {
  fetchBytes: FetchBytes;
  statePath: string;
  evidenceDir: string;
  watched: Watched;
  emit: (r: Record) => void;
  logKey?: string;
  from?: number;
  policy?: TlogPolicy;
  compare?: CompareSource[];
  /** GET /api/node/keys of the node (absent: only the tiles are read). */
  nodeKeys?: () => Promise<Json>;
  /** The watched agent's public keys as the node publishes them (current and prior). */
  agentKeys?: (tag: string) => Promise<string[]>;
  /** A judgment's signature as the node shows it (PROTOCOL 6.6): its public key, signature and signed payload. */
  judgmentSigned?: (proposalId: string, judgmentId: string) => Promise<SignedJudgment | null>;
  /** The judgment credential as the node serves it, null when it answers 404 (its status indexes: cli/commands/monitor/status.ts). */
  credential?: (kind: string, proposalId: string, judgmentId: string) => Promise<unknown | null>;
  /** GET of a status list's URL (default: boundedGet within STATUS_LIST_CAPS). */
  getUrl?: GetUrl;
  /** The origins status lists are read from (the node's: its --base-url's, then its --tiles'); a list named elsewhere is read from the first. */
  origins?: string[];
  /** The most entries one round reads (MAX_ENTRIES_PER_ROUND by default): a log with more to read stops there (RoundResult.capped). */
  maxEntries?: number;
  /** Test hook: SIGKILL this process after reading this many entries. */
  killAfter?: number;
  /** Test hook: SIGKILL this process at the n-th record printed once, right after it is saved as pending or right after it is printed. */
  killAt?: { point: 'saved' | 'printed'; record: number };
}

export interface RoundResult {
  alerts: number;
  /** What could not be checked (exit 3 when nothing else went wrong). */
  incomplete: string[];
  size: number;
  read: number;
  /** Set when the log held more entries to read than maxEntries: the round read that many and stopped. */
  capped?: { max: number; left: number };
}

/**
 * The caps of the monitor's calls to the node's API (its keys, an agent's profile, a proposal,
 * a credential): JSON documents of 32 MiB at most, a head within 15 s, all of it within 60 s.
 */
export const MONITOR_API_CAPS: FetchCaps = { maxBytes: 32 * 1024 * 1024, headersMs: 15_000, totalMs: 60_000 };
/**
 * The most entries one round reads (`--max-entries`): a catch-up is bounded whatever size a
 * validly signed checkpoint claims (a log of 2^40 repeated leaves is self-consistent); ten
 * million is about 6 minutes at 30,000 entries a second. Beyond it the round stops, saved, and
 * says so (exit 3); the next run reads on from there.
 */
export const MAX_ENTRIES_PER_ROUND = 10_000_000;
/** Bundles read ahead while the current one is checked. */
const READ_AHEAD = 4;
/** Bundles between two saves of the state when nothing is found (65,536 entries: a save is three fsyncs, and at most this many are read again after a kill). */
const SAVE_EVERY = 256;

export async function monitorRound(o: MonitorRound): Promise<RoundResult> {
  const saved = readState(o.statePath);
  const result: RoundResult = { alerts: 0, incomplete: [], size: 0, read: 0 };
  const published = o.nodeKeys ? await o.nodeKeys() : undefined;
  const logKey = o.logKey ?? saved?.logKey ?? o.policy?.logs[0] ?? (typeof published?.log?.verifierKey === 'string' ? published.log.verifierKey : undefined);
  if (!logKey) throw new Error('the log key is needed on the first run: --log-key KEY (akas node-keys prints it) or a policy file with a log line');
  const state: MonitorState = saved ?? { version: 1, logKey, checkpoint: null, next: 0, emitted: [], keys: [] };
  if (o.from !== undefined) state.next = o.from;
  state.pending ??= [];
  let records = 0;
  const killAt = (point: 'saved' | 'printed') => {
    if (o.killAt?.point === point && o.killAt.record === records) process.kill(process.pid, 'SIGKILL');
  };
  const output = new AlertOutput(o.statePath, o.emit, () => killAt('printed'));
  // Alerts saved by a run killed before it printed them are printed first (saved below).
  const settled = output.settle(state);
  const emitted = new Set(state.emitted);
  const counted = new Set<string>();
  let trust: IssuerTrust | undefined;
  const status = new StatusWatch(o.statePath, state, {
    getUrl: async (url) => {
      try {
        return await (o.getUrl ?? httpGet)(url);
      } catch (e) {
        if (isFetchError(e) && e.code !== 'timeout') throw e;
        throw new Unreachable(`${url}: ${(e as Error & { cause?: Error }).cause?.message ?? (e as Error).message}`);
      }
    },
    origins: o.origins,
    credential: o.credential,
    get trust() {
      return trust;
    },
  });
  const save = () => {
    status.flush();
    writeState(o.statePath, state);
  };
  // A finding printed once (cli/commands/monitor/output.ts): saved as pending, printed, then kept as emitted.
  const report: Report = (type, id, what, message, extra) => {
    if (type === 'alert') counted.add(id);
    result.alerts = counted.size;
    if (emitted.has(id)) return;
    emitted.add(id);
    const r: MonitorRecord = { type, id, what, message, ...extra };
    records++;
    state.pending!.push(r);
    save();
    killAt('saved');
    output.write(r);
    state.pending = state.pending!.filter((p) => p !== r);
    state.emitted.push(id);
  };
  const alert = (id: string, what: string, message: string, extra: Json = {}) => report('alert', id, what, message, extra);
  if (settled) save();
  const note8 = (note: string) => sha256Hex(note).slice(0, 16);

  // The node's keys: the log key pinned, the issuer reached from the first one seen through signed rotations.
  if (published) {
    const nowLog = published.log?.verifierKey;
    if (nowLog !== state.logKey)
      alert(`log-key:${nowLog}`, 'log-key-changed', `the node now publishes another log key (${nowLog}) than the one pinned (${state.logKey})`, {
        pinned: state.logKey,
        published: nowLog,
      });
    const current = published.issuer?.current;
    if (typeof current === 'string') {
      state.issuer ??= current;
      trust = trustIssuerKeys(state.issuer, published.issuer);
      if (!trust.keys.has(current))
        alert(
          `issuer-key:${current}`,
          'issuer-key-changed',
          `the node's issuer is now ${current}, which no rotation signed by both keys links to ${state.issuer}`,
          { pinned: state.issuer, current, problems: trust.problems },
        );
    }
  }
  if (o.agentKeys) for (const k of await o.agentKeys(o.watched.tag)) if (!state.keys.includes(k)) state.keys.push(k);
  for (const k of o.watched.keys) if (!state.keys.includes(k)) state.keys.push(k);

  const note = (await read(o.fetchBytes, 'checkpoint')).toString('utf8');
  const opened = openCheckpoint(note, [state.logKey]);
  if (!opened.ok) {
    alert(`checkpoint:${note8(note)}`, 'bad-checkpoint', `the checkpoint is not signed by the log key: ${opened.reason}`, { checkpoint: note });
    return result;
  }
  const cp = opened.checkpoint;
  const root = Buffer.from(cp.rootHash);
  result.size = cp.size;
  if (o.policy) {
    const q = quorumOf(o.policy, note);
    if (!q.met)
      alert(`quorum:${note8(note)}`, 'witness-quorum', `the checkpoint of ${cp.size} entries lacks the policy's witness quorum (${o.policy.quorum})`, {
        checkpoint: note,
        cosigned: q.cosigned,
        missing: q.missing,
      });
  }
  const tiles = new TileHashReader(cp.size, (level, index, width) => read(o.fetchBytes, tilePath(level, index, width)));
  try {
    if (cp.size > 0 && !(await tiles.root()).equals(root)) {
      alert(`tiles:${note8(note)}`, 'malformed-log', `the tiles of ${cp.size} entries give another root than the signed checkpoint`, { checkpoint: note });
      return result;
    }
  } catch (e) {
    if (!(e instanceof Missing)) throw e;
    alert(`tiles:${note8(note)}`, 'malformed-log', `a tile of the signed tree cannot be read: ${e.message}`, { checkpoint: note });
    return result;
  }

  // Two views of one log that disagree: the last checkpoint verified, and every --compare view.
  const views: Array<{ note: string; from: string }> = state.checkpoint ? [{ note: state.checkpoint, from: 'the last checkpoint this monitor verified' }] : [];
  for (const c of o.compare ?? []) {
    try {
      views.push({ note: await c.note(), from: c.from });
    } catch (e) {
      result.incomplete.push(`cannot read the checkpoint of ${c.from}: ${(e as Error).message}`);
    }
  }
  const ours = { note, from: 'the node', size: cp.size, root };
  for (const v of views) {
    const other = openCheckpoint(v.note, [state.logKey]);
    if (!other.ok) {
      result.incomplete.push(`the checkpoint of ${v.from} is not signed by the log key: ${other.reason}`);
      continue;
    }
    const theirs = { ...v, size: other.checkpoint.size, root: Buffer.from(other.checkpoint.rootHash) };
    let newerTiles: TileHashReader | undefined = tiles;
    if (theirs.size > cp.size) {
      const source = o.compare?.find((c) => c.from === v.from)?.tiles;
      if (!source) {
        if (v.from === views[0]?.from && state.checkpoint === v.note)
          alert(`rollback:${note8(v.note)}:${note8(note)}`, 'rollback', `the log shrank from ${theirs.size} to ${cp.size} entries`, {
            older: note,
            newer: v.note,
          });
        else result.incomplete.push(`${v.from} is ahead (${theirs.size} entries) and serves no tiles to check it against`);
        continue;
      }
      newerTiles = new TileHashReader(theirs.size, (level, index, width) => read(source, tilePath(level, index, width)));
      if (!(await newerTiles.root()).equals(theirs.root)) {
        result.incomplete.push(`the tiles of ${v.from} do not give its signed root`);
        continue;
      }
    }
    const { forked, evidence } = await forkEvidence(state.logKey, theirs, ours, newerTiles);
    if (!forked) continue;
    const id = `fork:${note8(evidence.older.note)}:${note8(evidence.newer.note)}`;
    if (emitted.has(id)) {
      counted.add(id);
      result.alerts = counted.size;
      continue;
    }
    const file = join(o.evidenceDir, `${id.replaceAll(':', '-')}.json`);
    writeFileSafely(file, `${JSON.stringify(evidence, null, 2)}\n`);
    alert(id, 'fork', `the log signed two histories: ${v.from} (${theirs.size} entries) and the node (${cp.size}) disagree`, { evidence, evidenceFile: file });
  }

  // Every new entry, checked against the tree; only those that may be the watched agent's or a
  // status list's version are parsed (a byte search of the bundle finds them).
  const mine = Buffer.from(`"agent":${JSON.stringify(o.watched.tag)}`);
  const statusKind = Buffer.from(`"kind":${JSON.stringify(STATUS_LIST_EVENT_KIND)}`);
  const start = Math.min(state.next, cp.size);
  // What this round reads: at most maxEntries from where the last one stopped.
  const end = Math.min(cp.size, start + (o.maxEntries ?? MAX_ENTRIES_PER_ROUND));
  const first = Math.floor(start / TILE_WIDTH);
  const last = Math.ceil(end / TILE_WIDTH);
  const ahead = new Map<number, Promise<[Buffer, Buffer | undefined]>>();
  // The bundle and its full level-0 tile (a partial one the root was folded from is read through
  // `tiles`), READ_AHEAD bundles ahead: the reads overlap the checks.
  const bundleOf = (n: number) => {
    for (let m = n; m < Math.min(last, n + READ_AHEAD); m++)
      if (!ahead.has(m)) {
        const width = tileWidthAt(0, m, cp.size);
        const p = Promise.all([read(o.fetchBytes, bundlePath(m, width)), width === TILE_WIDTH ? read(o.fetchBytes, tilePath(0, m)) : undefined]);
        p.catch(() => undefined);
        ahead.set(m, p);
      }
    const p = ahead.get(n)!;
    ahead.delete(n);
    return p;
  };
  const entry = { o, state, note, tiles, alert, report, incomplete: (why: string) => result.incomplete.push(why), status };
  const bound = new BoundTiles(tiles);
  for (let n = first; n < last; n++) {
    let bundle: CheckedBundle | { problem: string };
    try {
      const [bytes, tile] = await bundleOf(n);
      bundle = await checkBundle(bytes, tile, n, bound);
    } catch (e) {
      if (!(e instanceof Missing)) throw e;
      bundle = { problem: e.message };
    }
    if ('problem' in bundle) {
      alert(`bundle:${note8(note)}:${n}`, 'malformed-log', bundle.problem, { checkpoint: note });
      save();
      return result;
    }
    const base = n * TILE_WIDTH;
    let done = Math.max(0, state.next - base);
    // Entries done..to-1 are read (the test hook may stop the process exactly after the killAfter-th).
    const advance = (to: number) => {
      if (o.killAfter !== undefined && result.read < o.killAfter && result.read + to - done >= o.killAfter) {
        state.next = base + done + (o.killAfter - result.read);
        process.kill(process.pid, 'SIGKILL');
      }
      result.read += to - done;
      done = to;
      state.next = base + to;
    };
    const upTo = Math.min(bundle.width, end - base);
    const inspect = [...new Set([...entriesContaining(bundle, mine), ...entriesContaining(bundle, statusKind)])].filter((i) => i >= done && i < upTo);
    for (const i of inspect.sort((a, b) => a - b)) {
      advance(i);
      await inspectEntry(entry, base + i, leafAt(bundle, i));
      advance(i + 1);
    }
    advance(upTo);
    if ((n - first) % SAVE_EVERY === SAVE_EVERY - 1) save();
  }
  if (end < cp.size) {
    // Stopped at the bound: saved where it stopped, the checkpoint kept for a round that reads it all.
    result.capped = { max: o.maxEntries ?? MAX_ENTRIES_PER_ROUND, left: cp.size - end };
    save();
    return result;
  }
  state.next = Math.max(state.next, cp.size);
  state.checkpoint = note;
  save();
  return result;
}

interface EntryContext {
  o: MonitorRound;
  state: MonitorState;
  note: string;
  tiles: TileHashReader;
  alert: (id: string, what: string, message: string, extra: Json) => void;
  report: Report;
  incomplete: (why: string) => void;
  status: StatusWatch;
}

/** An entry the byte search picked: a status-list version is read for the watched credentials, one of the agent's matched. */
async function inspectEntry(c: EntryContext, seq: number, leaf: Buffer) {
  let fields: Json;
  try {
    fields = JSON.parse(leaf.toString('utf8'));
  } catch {
    c.alert(`leaf:${seq}`, 'malformed-log', `entry ${seq} is not JSON`, { seq });
    return;
  }
  const evidence = async () => {
    const proof = await inclusionProof(seq, c.tiles.size, (l, i) => c.tiles.hash(l, i));
    return {
      entry: { ...fields, hash: sha256Hex(leaf) },
      inclusion: { index: seq, size: c.tiles.size, proof: proof.map((h) => h.toString('base64')) },
      checkpoint: c.note,
    };
  };
  if (fields.kind === STATUS_LIST_EVENT_KIND) await c.status.version(seq, fields.body ?? {}, evidence, c.report, c.incomplete);
  if (fields.agent === c.o.watched.tag) await matchEntry(c, seq, fields, evidence, sha256Hex(leaf));
}

/**
 * An entry naming the watched agent: a judgment or attestation the journal does not hold as
 * accepted is an alert; with --agent, each is reported. A judgment is matched by the judgmentId
 * of an accepted line (the log entry names no signature or payload hash: the judgmentId is what
 * the node answered to the exact payload this machine signed), else by a line never settled whose
 * payload hash and signature are those the node shows for the judgment; an attestation by the
 * entry hash of an accepted line, else by the {kind, body} hash of one never settled
 * (cli/commands/journal/journal.ts). A refused line excuses nothing.
 */
async function matchEntry(c: EntryContext, seq: number, fields: Json, evidence: () => Promise<Json>, entryHash: string) {
  const { o, state } = c;
  const judgment = fields.kind === 'attestation.event.v1' && fields.body?.event === 'judgment.recorded';
  // The node's own events name an agent too (the judge a status-list version was made for): those are not the agent's.
  const attestation = fields.kind !== 'attestation.event.v1' && fields.kind !== STATUS_LIST_EVENT_KIND;
  if (!judgment && !attestation) return;
  if (judgment) c.status.judgment(fields.body);
  // The judgment as the node shows it signed, asked for at most once per entry.
  let shown: Promise<SignedJudgment | null> | undefined;
  const signed = () =>
    (shown ??= o.judgmentSigned ? o.judgmentSigned(String(fields.body.proposalId), String(fields.body.judgmentId)).catch(() => null) : Promise.resolve(null));
  if (o.watched.own) {
    const journaled = judgment
      ? await holdsJudgment(o.watched.journal, fields.body, signed)
      : holdsAttestation(o.watched.journal, fields.kind, fields.body, entryHash);
    if (journaled) return;
  }
  let key: Json | undefined;
  const publicKey = judgment ? (await signed())?.publicKey : undefined;
  if (publicKey) key = { publicKey, watched: state.keys.includes(publicKey), current: state.keys[state.keys.length - 1] === publicKey };
  const what = judgment ? `a judgment of ${fields.body.proposalId}` : `an attestation ${fields.kind}`;
  if (o.watched.own)
    c.alert(
      `entry:${seq}`,
      judgment ? 'unjournaled-judgment' : 'unjournaled-attestation',
      `entry ${seq}: ${what} as ${o.watched.tag} that this machine's journal does not hold`,
      {
        ...(await evidence()),
        ...(key ? { key } : {}),
      },
    );
  else {
    o.emit({ type: 'event', what: 'signed-entry', message: `entry ${seq}: ${what} by ${o.watched.tag}`, ...(await evidence()), ...(key ? { key } : {}) });
  }
}

/** GET of a status list's URL within its caps (same-origin redirects only). */
const httpGet: GetUrl = async (url) => {
  const r = await boundedGet(url, STATUS_LIST_CAPS, { accept: 'application/json' });
  return { status: r.status, bytes: r.body };
};

/** A resource of the log: its bytes; a 404 is the log's fault (Missing), a failed connection the network's (Unreachable). */
async function read(fetchBytes: FetchBytes, path: string): Promise<Buffer> {
  try {
    return await fetchBytes(path);
  } catch (e) {
    const m = String((e as Error).message);
    if (/answered 404/.test(m)) throw new Missing(m);
    // A node that does not answer in time could not be read (exit 2, naming the URL); a tile or
    // bundle over the bytes its width allows is not the tree's (an alert). Anything else a cap
    // refuses (an over-long checkpoint, a redirect to another origin) stops the round: exit 2.
    if (isFetchError(e) && e.code === 'timeout') throw new Unreachable(m);
    if (isFetchError(e) && e.code === 'too_large' && path !== 'checkpoint') throw new Missing(m);
    if (e instanceof TypeError || /ECONNREFUSED|ENOTFOUND|fetch failed|ENOENT/.test(m))
      throw new Unreachable(`${path}: ${(e as Error & { cause?: Error }).cause?.message ?? m}`);
    throw e;
  }
}
