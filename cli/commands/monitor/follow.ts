// One round of `akas monitor` (issue 34): the node's keys against those seen before, its
// checkpoint (signature, witness quorum of a tlog-policy, the tiles giving its root, extending
// the last one verified and every view given with --compare), then every new entry from the
// entry bundles, each checked against the tree; the watched agent's entries matched with the
// journal, and every status-list version read for the agent's credentials
// (cli/commands/monitor/status.ts). The log is followed by the follower `akas log watch` uses too
// (cli/commands/log/follower.ts). What it finds goes out as alerts (exit 1) and events, printed as
// cli/commands/monitor/output.ts says, and the state is saved as cli/commands/monitor/state.ts
// says, so a SIGKILL loses nothing and repeats nothing. A round runs as named steps
// (monitorRound), sharing what they change in a Round.
import { join } from 'node:path';
import { inclusionProof, sha256Hex, STATUS_LIST_EVENT_KIND, TILE_WIDTH, type TileHashReader } from '../../../src/core/index.js';
import { type IssuerTrust, trustIssuerKeys } from '../../../verifier/index.js';
import { boundedGet, type FetchCaps, isFetchError, type Json, writeFileSafely } from '../../kit/index.js';
import { holdsAttestation, holdsJudgment, type JournalHolds, type SignedJudgment } from '../journal/journal.js';
import { type CheckedBundle, entriesContaining, leafAt } from '../log/bundle-check.js';
import { bundleReader, openView, type SignedView, signedTree } from '../log/follower.js';
import type { FetchBytes } from '../log/tile-reader.js';
import { STATUS_LIST_CAPS } from '../verify/status-check.js';
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

/**
 * Points of a round a test stops it at, as a kill would (test/cli/monitor.test.ts passes these
 * in-process and throws from them: nothing of the round runs after, so what is on disk is what a
 * SIGKILL there leaves). The command passes none.
 */
export interface RoundHooks {
  /** After entries are read, with how many this round has read so far. */
  entriesRead?: (read: number) => void;
  /** Right after the n-th record of this round is saved as pending (`saved`), and right after it is printed and logged (`printed`). */
  record?: (point: 'saved' | 'printed', n: number) => void;
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
  hooks?: RoundHooks;
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
/** Bundles between two saves of the state when nothing is found (65,536 entries: a save is three fsyncs, and at most this many are read again after a kill). */
const SAVE_EVERY = 256;

/** What the steps of one round share and change. */
interface Round {
  o: MonitorRound;
  state: MonitorState;
  result: RoundResult;
  /** A resource of the log, its failures sorted (read below). */
  fetch: FetchBytes;
  status: StatusWatch;
  emitted: Set<string>;
  counted: Set<string>;
  /** The node's issuer keys as trusted this round (its status lists are signed by them). */
  trust?: IssuerTrust;
  save: () => void;
  report: Report;
  alert: (id: string, what: string, message: string, extra?: Json) => void;
}

const note8 = (note: string) => sha256Hex(note).slice(0, 16);

export async function monitorRound(o: MonitorRound): Promise<RoundResult> {
  const saved = readState(o.statePath);
  const published = o.nodeKeys ? await o.nodeKeys() : undefined;
  const r = startRound(o, saved, published);
  if (published) checkNodeKeys(r, published);
  if (o.agentKeys) for (const k of await o.agentKeys(o.watched.tag)) if (!r.state.keys.includes(k)) r.state.keys.push(k);
  for (const k of o.watched.keys) if (!r.state.keys.includes(k)) r.state.keys.push(k);
  const signed = await readSignedTree(r);
  if (!signed) return r.result;
  await compareViews(r, signed.view, signed.tiles);
  const end = await readEntries(r, signed.view, signed.tiles);
  if (end === undefined) return r.result;
  if (end < signed.view.size) {
    // Stopped at the bound: saved where it stopped, the checkpoint kept for a round that reads it all.
    r.result.capped = { max: o.maxEntries ?? MAX_ENTRIES_PER_ROUND, left: signed.view.size - end };
    r.save();
    return r.result;
  }
  r.state.next = Math.max(r.state.next, signed.view.size);
  r.state.checkpoint = signed.view.note;
  r.save();
  return r.result;
}

/**
 * The round's state (the saved one, or a first one on the log key given, kept, in the policy or
 * published) and how it reports: a finding is printed once (cli/commands/monitor/output.ts):
 * saved as pending, printed, then kept as emitted; those a killed run saved but did not print
 * are printed first.
 */
function startRound(o: MonitorRound, saved: MonitorState | undefined, published: Json | undefined): Round {
  const logKey = o.logKey ?? saved?.logKey ?? o.policy?.logs[0] ?? (typeof published?.log?.verifierKey === 'string' ? published.log.verifierKey : undefined);
  if (!logKey) throw new Error('the log key is needed on the first run: --log-key KEY (akas node-keys prints it) or a policy file with a log line');
  const state: MonitorState = saved ?? { version: 1, logKey, checkpoint: null, next: 0, emitted: [], keys: [] };
  if (o.from !== undefined) state.next = o.from;
  state.pending ??= [];
  let records = 0;
  const output = new AlertOutput(o.statePath, o.emit, () => o.hooks?.record?.('printed', records));
  const settled = output.settle(state);
  const r: Round = {
    o,
    state,
    result: { alerts: 0, incomplete: [], size: 0, read: 0 },
    fetch: (path) => read(o.fetchBytes, path),
    emitted: new Set(state.emitted),
    counted: new Set<string>(),
    status: undefined as unknown as StatusWatch,
    save: () => {
      r.status.flush();
      writeState(o.statePath, state);
    },
    report: (type, id, what, message, extra) => {
      if (type === 'alert') r.counted.add(id);
      r.result.alerts = r.counted.size;
      if (r.emitted.has(id)) return;
      r.emitted.add(id);
      const record: MonitorRecord = { type, id, what, message, ...extra };
      records++;
      state.pending!.push(record);
      r.save();
      o.hooks?.record?.('saved', records);
      output.write(record);
      state.pending = state.pending!.filter((p) => p !== record);
      state.emitted.push(id);
    },
    alert: (id, what, message, extra = {}) => r.report('alert', id, what, message, extra),
  };
  r.status = statusWatch(r);
  if (settled) r.save();
  return r;
}

/** The status lists of the watched credentials, read through the caps and within the node's origins (cli/commands/monitor/status.ts). */
function statusWatch(r: Round): StatusWatch {
  const { o } = r;
  return new StatusWatch(o.statePath, r.state, {
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
      return r.trust;
    },
  });
}

/** The node's keys: the log key pinned, the issuer reached from the first one seen through signed rotations. */
function checkNodeKeys(r: Round, published: Json) {
  const { state } = r;
  const nowLog = published.log?.verifierKey;
  if (nowLog !== state.logKey)
    r.alert(`log-key:${nowLog}`, 'log-key-changed', `the node now publishes another log key (${nowLog}) than the one pinned (${state.logKey})`, {
      pinned: state.logKey,
      published: nowLog,
    });
  const current = published.issuer?.current;
  if (typeof current !== 'string') return;
  state.issuer ??= current;
  r.trust = trustIssuerKeys(state.issuer, published.issuer);
  if (!r.trust.keys.has(current))
    r.alert(
      `issuer-key:${current}`,
      'issuer-key-changed',
      `the node's issuer is now ${current}, which no rotation signed by both keys links to ${state.issuer}`,
      { pinned: state.issuer, current, problems: r.trust.problems },
    );
}

/**
 * The checkpoint signed by the log key, its policy's witness quorum, and the tree its tiles give;
 * undefined when the log cannot be followed this round (alerted).
 */
async function readSignedTree(r: Round): Promise<{ view: SignedView; tiles: TileHashReader } | undefined> {
  const note = (await r.fetch('checkpoint')).toString('utf8');
  const view = openView(note, r.state.logKey);
  if ('refused' in view) {
    r.alert(`checkpoint:${note8(note)}`, 'bad-checkpoint', `the checkpoint is not signed by the log key: ${view.refused}`, { checkpoint: note });
    return undefined;
  }
  r.result.size = view.size;
  const policy = r.o.policy;
  if (policy) {
    const q = quorumOf(policy, note);
    if (!q.met)
      r.alert(`quorum:${note8(note)}`, 'witness-quorum', `the checkpoint of ${view.size} entries lacks the policy's witness quorum (${policy.quorum})`, {
        checkpoint: note,
        cosigned: q.cosigned,
        missing: q.missing,
      });
  }
  let tiles: TileHashReader | { problem: string };
  try {
    tiles = await signedTree(r.fetch, view);
  } catch (e) {
    if (!(e instanceof Missing)) throw e;
    tiles = { problem: `a tile of the signed tree cannot be read: ${e.message}` };
  }
  if ('problem' in tiles) {
    r.alert(`tiles:${note8(note)}`, 'malformed-log', tiles.problem, { checkpoint: note });
    return undefined;
  }
  return { view, tiles };
}

/** Two views of one log that disagree: the last checkpoint verified, and every --compare view (a fork, with evidence; a rollback). */
async function compareViews(r: Round, view: SignedView, tiles: TileHashReader) {
  const { o, state, result } = r;
  const views: Array<{ note: string; from: string }> = state.checkpoint ? [{ note: state.checkpoint, from: 'the last checkpoint this monitor verified' }] : [];
  for (const c of o.compare ?? []) {
    try {
      views.push({ note: await c.note(), from: c.from });
    } catch (e) {
      result.incomplete.push(`cannot read the checkpoint of ${c.from}: ${(e as Error).message}`);
    }
  }
  const ours = { note: view.note, from: 'the node', size: view.size, root: view.root };
  for (const v of views) {
    const other = openView(v.note, state.logKey);
    if ('refused' in other) {
      result.incomplete.push(`the checkpoint of ${v.from} is not signed by the log key: ${other.refused}`);
      continue;
    }
    const theirs = { ...v, size: other.size, root: other.root };
    let newerTiles: TileHashReader = tiles;
    if (theirs.size > view.size) {
      const source = o.compare?.find((c) => c.from === v.from)?.tiles;
      if (!source) {
        if (v.from === views[0]?.from && state.checkpoint === v.note)
          r.alert(`rollback:${note8(v.note)}:${note8(view.note)}`, 'rollback', `the log shrank from ${theirs.size} to ${view.size} entries`, {
            older: view.note,
            newer: v.note,
          });
        else result.incomplete.push(`${v.from} is ahead (${theirs.size} entries) and serves no tiles to check it against`);
        continue;
      }
      const theirTree = await signedTree((path) => read(source, path), other);
      if ('problem' in theirTree) {
        result.incomplete.push(`the tiles of ${v.from} do not give its signed root`);
        continue;
      }
      newerTiles = theirTree;
    }
    const { forked, evidence } = await forkEvidence(state.logKey, theirs, ours, newerTiles);
    if (!forked) continue;
    const id = `fork:${note8(evidence.older.note)}:${note8(evidence.newer.note)}`;
    if (r.emitted.has(id)) {
      r.counted.add(id);
      result.alerts = r.counted.size;
      continue;
    }
    const file = join(o.evidenceDir, `${id.replaceAll(':', '-')}.json`);
    writeFileSafely(file, `${JSON.stringify(evidence, null, 2)}\n`);
    r.alert(id, 'fork', `the log signed two histories: ${v.from} (${theirs.size} entries) and the node (${view.size}) disagree`, {
      evidence,
      evidenceFile: file,
    });
  }
}

/**
 * Every new entry, checked against the tree, from where the last round stopped and at most
 * maxEntries; only those that may be the watched agent's or a status list's version are parsed
 * (a byte search of the bundle finds them). Answers where it stopped, or undefined when a bundle
 * is not the tree's (alerted, saved).
 */
async function readEntries(r: Round, view: SignedView, tiles: TileHashReader): Promise<number | undefined> {
  const { o, state, result } = r;
  const mine = Buffer.from(`"agent":${JSON.stringify(o.watched.tag)}`);
  const statusKind = Buffer.from(`"kind":${JSON.stringify(STATUS_LIST_EVENT_KIND)}`);
  const start = Math.min(state.next, view.size);
  const end = Math.min(view.size, start + (o.maxEntries ?? MAX_ENTRIES_PER_ROUND));
  const first = Math.floor(start / TILE_WIDTH);
  const last = Math.ceil(end / TILE_WIDTH);
  const bundles = bundleReader(r.fetch, tiles, last);
  const entry: EntryContext = { ...r, note: view.note, tiles, incomplete: (why: string) => result.incomplete.push(why) };
  for (let n = first; n < last; n++) {
    let bundle: CheckedBundle | { problem: string };
    try {
      bundle = await bundles(n);
    } catch (e) {
      if (!(e instanceof Missing)) throw e;
      bundle = { problem: e.message };
    }
    if ('problem' in bundle) {
      r.alert(`bundle:${note8(view.note)}:${n}`, 'malformed-log', bundle.problem, { checkpoint: view.note });
      r.save();
      return undefined;
    }
    const base = n * TILE_WIDTH;
    let done = Math.max(0, state.next - base);
    // Entries done..to-1 are read.
    const advance = (to: number) => {
      result.read += to - done;
      done = to;
      state.next = base + to;
      o.hooks?.entriesRead?.(result.read);
    };
    const upTo = Math.min(bundle.width, end - base);
    const inspect = [...new Set([...entriesContaining(bundle, mine), ...entriesContaining(bundle, statusKind)])].filter((i) => i >= done && i < upTo);
    for (const i of inspect.sort((a, b) => a - b)) {
      advance(i);
      await inspectEntry(entry, base + i, leafAt(bundle, i));
      advance(i + 1);
    }
    advance(upTo);
    if ((n - first) % SAVE_EVERY === SAVE_EVERY - 1) r.save();
  }
  return end;
}

interface EntryContext {
  o: MonitorRound;
  state: MonitorState;
  note: string;
  tiles: TileHashReader;
  alert: (id: string, what: string, message: string, extra?: Json) => void;
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
  // The node's own events name an agent too (the judge a status-list version was made for, the agent calibrated or
  // failing a decoy: PROTOCOL 9.3): those are not the agent's.
  const attestation = fields.kind !== 'attestation.event.v1' && fields.kind !== STATUS_LIST_EVENT_KIND && fields.kind !== 'agent.event.v1';
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
