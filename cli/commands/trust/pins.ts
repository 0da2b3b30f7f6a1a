// The reader's pins (issue 50; PROTOCOL 8.6, "The reader's pins and checkpoints"): what this
// machine trusts of a node it reads, kept per profile and node in
// profiles/NAME/trust/<url>.json (mode 0600, written whole and atomically: cli/kit/safe-file.ts),
// changed only under the profile's lock file and only when nobody changed it meanwhile (its
// `rev`), so concurrent akas processes of one profile never lose each other's changes. The pin is
// a trust file (8.6) made as `akas trust pin` makes one, on first contact (trust on first use,
// said on stderr and in the record). Every later contact compares the node's GET /api/node/keys
// with it: a new issuer key its key history links to the pinned one by a rotation signed by both
// keys (8.3) is followed and recorded; anything else (an issuer key no signed rotation reaches,
// another log key, a key list that does not hold) is an event, and the pin stays as it is until
// `akas trust accept`, as ssh's known_hosts does. The checkpoints kept beside the pin are
// checkpoints.ts's.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseTrust, type Trust, trustIssuerKeys } from '../../../verifier/index.js';
import { type AkasClient, CliError, type Json, profileFile, terminalSafe, withFileLock, writeFileSafely } from '../../kit/index.js';
import { trustFileFrom } from './trust-file.js';

export const READER_STATE_TYPE = 'akas.reader-pin.v1';

/** How a pin was made: trust on first use, a trust file the reader gave, or a change the reader accepted. */
export type PinSource = 'tofu' | 'file' | 'accepted';

/** A checkpoint the reader verified (checkpoints.ts): its signed note, size, root (hex) and when. */
export interface KeptCheckpoint {
  note: string;
  size: number;
  root: string;
  at: string;
}

/** One change of the pin, as recorded: made, a signed rotation followed, a change accepted. */
export interface PinChange {
  at: string;
  what: 'pinned' | 'followed' | 'accepted';
  source?: PinSource;
  from?: { issuer: string; logKey: string };
  to: { issuer: string; logKey: string };
  /** The rotation statements, signed by both keys, that link `from` to `to` (a followed change). */
  rotations?: Json[];
}

export interface ReaderState {
  type: typeof READER_STATE_TYPE;
  /** Bumped by every write: a change is written only over the revision it was decided on. */
  rev: number;
  url: string;
  source: PinSource;
  pinnedAt: string;
  /** The node's issuer key as pinned (or last followed): rotations are followed from it. */
  issuer: string;
  /** The log key as pinned (one of the trust file's `log` lines). */
  logKey: string;
  /** The trust file (akas.trust.v1, PROTOCOL 8.6) the node's reads are verified under. */
  trust: Json;
  /** What changed, when (the newest MAX_CHANGES). */
  changes: PinChange[];
  /** The newest checkpoint verified (checkpoints.ts). */
  checkpoint?: KeptCheckpoint;
  /** Earlier checkpoints verified, one per power of two of their size: anchors that can prove a rollback a fork. */
  earlier?: KeptCheckpoint[];
}

/** Keys the node shows that are not the pinned ones and that no signed rotation links to them. */
export interface KeyEvent {
  what: 'issuer-key-changed' | 'log-key-changed' | 'keys-do-not-hold';
  /** What the node shows, in one sentence; `message` adds what the reader may do. */
  why: string;
  message: string;
  pinned: { issuer: string; logKey: string; source: PinSource; pinnedAt: string };
  shown: { issuer: string | null; logKey: string | null };
}

/** What pinnedTrust answers: the trust to verify a read under, and what this contact did to the pin. */
export interface PinnedTrust {
  url: string;
  /** The reader's state file of this node. */
  path: string;
  /** The pinned trust, as the verifier takes it (`--trust FILE`'s parse): unchanged while an event waits. */
  trust: Trust;
  /** The same, as the trust file it is (akas.trust.v1). */
  file: Json;
  source: PinSource;
  pinnedAt: string;
  issuer: string;
  logKey: string;
  /** pinned: first contact; unchanged; followed: a signed rotation followed; event: other keys, the pin unchanged. */
  status: 'pinned' | 'unchanged' | 'followed' | 'event';
  change?: PinChange;
  event?: KeyEvent;
  /** What to say on stderr (trust on first use, a rotation followed, an event), or nothing. */
  notice?: string;
}

/** Pin changes kept in the record (the oldest dropped first). */
export const MAX_CHANGES = 64;
/** Rotation statements recorded with one followed change. */
export const MAX_RECORDED_ROTATIONS = 16;
/** Times a change is decided again when another process wrote the state meanwhile. */
const MAX_TRIES = 5;

/** The reader's state file of the node at baseUrl in this profile. */
export const readerStatePath = (profile: string, baseUrl: string) => profileFile(profile, baseUrl.replace(/\/$/, ''), 'trust');

const iso = (ms: number) => new Date(ms).toISOString();

/** The state kept, or undefined when the node was never pinned; a file others may write, or that is no state, is refused (never pinned again silently). */
export function readReaderState(path: string): ReaderState | undefined {
  let text: string;
  try {
    if (process.platform !== 'win32') {
      const mode = statSync(path).mode & 0o777;
      if (mode & 0o077)
        throw new CliError(
          'profile_mode',
          `${path} has mode ${mode.toString(8).padStart(4, '0')}: it holds the keys you pinned for a node and must be yours only. Run: chmod 600 ${path}`,
          { path },
        );
    }
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (CliError.is(e)) throw e;
    throw new CliError('profile_unreadable', `${path} cannot be read: ${(e as Error).message}`, { path });
  }
  try {
    const s = JSON.parse(text) as ReaderState;
    if (
      s?.type !== READER_STATE_TYPE ||
      !Number.isSafeInteger(s.rev) ||
      typeof s.issuer !== 'string' ||
      typeof s.logKey !== 'string' ||
      !Array.isArray(s.changes)
    )
      throw new Error(`not an ${READER_STATE_TYPE} record`);
    parseTrust(s.trust);
    return s;
  } catch (e) {
    throw new CliError(
      'profile_unreadable',
      `${path} is not the reader's record of a node (${(e as Error).message}). Move it aside and run \`akas trust accept\` to pin the node again ` +
        '(after comparing its keys with ones you have from elsewhere)',
      { path },
    );
  }
}

/**
 * Writes `next` over the state of revision `rev` (0: none), under the profile's lock; false when
 * another process wrote it meanwhile (the caller decides again on what is there now).
 */
export function commitReaderState(path: string, rev: number, next: Omit<ReaderState, 'rev'>): boolean {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  return withFileLock(path, () => {
    if ((readReaderState(path)?.rev ?? 0) !== rev) return false;
    writeFileSafely(path, `${JSON.stringify({ ...next, rev: rev + 1 }, null, 2)}\n`);
    return true;
  });
}

/** Runs `decide` on the state as it is and writes what it answers, again while another process wrote first. */
export async function changeReaderState<T>(
  path: string,
  decide: (state: ReaderState | undefined) => Promise<{ next?: Omit<ReaderState, 'rev'>; result: T }>,
): Promise<T> {
  for (let i = 0; i < MAX_TRIES; i++) {
    const state = readReaderState(path);
    const { next, result } = await decide(state);
    if (!next || commitReaderState(path, state?.rev ?? 0, next)) return result;
  }
  throw new Error(`${path} kept changing under other akas processes: try again`);
}

const shownOf = (keys: Json) => ({
  issuer: typeof keys.issuer?.current === 'string' ? keys.issuer.current : null,
  logKey: typeof keys.log?.verifierKey === 'string' ? keys.log.verifierKey : null,
});

/** A first pin, or a pin in place of another (accepted, or a trust file), keeping the record and, for the same log key, the checkpoints. */
export function freshPin(url: string, doc: Json, source: PinSource, now: number, before?: ReaderState): Omit<ReaderState, 'rev'> {
  const trust = parseTrust(doc);
  const issuer = trust.issuers.find((p) => p.validUntil === Infinity)?.did ?? trust.issuers.at(-1)?.did;
  const logKey = trust.policy.logs[0];
  if (!issuer || !logKey) throw new CliError('not_a_trust_file', 'a pin names the issuer key and the log key of the node (an issuers entry and a log line)');
  const change: PinChange = {
    at: iso(now),
    what: before ? 'accepted' : 'pinned',
    source,
    ...(before ? { from: { issuer: before.issuer, logKey: before.logKey } } : {}),
    to: { issuer, logKey },
  };
  const sameLog = before !== undefined && trust.policy.logs.includes(before.logKey);
  return {
    type: READER_STATE_TYPE,
    url,
    source,
    pinnedAt: iso(now),
    issuer,
    logKey,
    trust: doc,
    changes: [...(before?.changes ?? []), change].slice(-MAX_CHANGES),
    ...(sameLog && before?.checkpoint ? { checkpoint: before.checkpoint, earlier: before.earlier ?? [] } : {}),
  };
}

/** The rotations of the node's list that lead from one issuer key to another (signed by both keys: checked by the caller). */
function rotationsBetween(list: Json[], from: string, to: string): Json[] {
  const path: Json[] = [];
  for (const way of ['forward', 'back'] as const) {
    path.length = 0;
    let at = from;
    const seen = new Set<string>();
    while (at !== to && !seen.has(at)) {
      seen.add(at);
      const r = list.find((x) => (way === 'forward' ? x.from === at : x.to === at));
      if (!r) break;
      path.push(r);
      at = String(way === 'forward' ? r.to : r.from);
    }
    if (at === to) return path.slice(0, MAX_RECORDED_ROTATIONS);
  }
  return [];
}

type Decision =
  | { status: 'pinned'; next: Omit<ReaderState, 'rev'>; change: PinChange }
  | { status: 'followed'; next: Omit<ReaderState, 'rev'>; change: PinChange }
  | { status: 'unchanged'; state: ReaderState }
  | { status: 'event'; state: ReaderState; event: KeyEvent; doc?: Json };

const sameIssuers = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What the node's keys (GET /api/node/keys, as fetched from url at now) do to the pin: a first
 * pin; nothing; a signed rotation followed; or an event (the pin unchanged), with the trust file
 * those keys would make when they hold (for `akas trust accept`).
 */
export async function decidePin(state: ReaderState | undefined, keys: Json, url: string, now: number): Promise<Decision> {
  if (!state) {
    const doc = await trustFileFrom(keys, url, now);
    const next = freshPin(url, doc, 'tofu', now);
    return { status: 'pinned', next, change: next.changes.at(-1)! };
  }
  const shown = shownOf(keys);
  const pinned = { issuer: state.issuer, logKey: state.logKey, source: state.source, pinnedAt: state.pinnedAt };
  const event = (what: KeyEvent['what'], why: string, doc?: Json): Decision => ({
    status: 'event',
    state,
    doc,
    event: {
      what,
      why: `${url} ${why}`,
      pinned,
      shown,
      message:
        `${url} ${why}. The pin (${state.source}, ${state.pinnedAt}) is unchanged: reads are verified against the pinned keys. ` +
        'Compare the new keys with ones you have from elsewhere (the operator), then `akas trust accept` pins them.',
    },
  });
  let doc: Json;
  try {
    doc = await trustFileFrom(keys, url, now);
  } catch (e) {
    if (CliError.is(e) && e.body.code === 'keys_do_not_hold') return event('keys-do-not-hold', `shows keys that do not hold: ${e.message}`);
    throw e;
  }
  const trust = parseTrust(state.trust);
  if (!shown.logKey || !trust.policy.logs.includes(shown.logKey))
    return event('log-key-changed', `shows another log key (${shown.logKey}) than the one pinned (${state.logKey})`, doc);
  const reached = trustIssuerKeys(state.issuer, keys.issuer);
  if (!shown.issuer || !reached.keys.has(shown.issuer) || reached.problems.length)
    return event(
      'issuer-key-changed',
      `shows the issuer key ${shown.issuer}, which no rotation signed by both keys links to the pinned ${state.issuer}` +
        (reached.problems.length ? ` (${reached.problems.join('; ')})` : ''),
      doc,
    );
  // The node's chain, with any key pinned before that the node no longer lists (a pinned key is never dropped).
  const chain = doc.issuers as Json[];
  const issuers = [...((state.trust.issuers ?? []) as Json[]).filter((p) => !chain.some((c) => c.did === p.did)), ...chain];
  if (shown.issuer === state.issuer && sameIssuers(issuers, state.trust.issuers)) return { status: 'unchanged', state };
  const change: PinChange = {
    at: iso(now),
    what: 'followed',
    from: { issuer: state.issuer, logKey: state.logKey },
    to: { issuer: shown.issuer, logKey: state.logKey },
    rotations: rotationsBetween((keys.issuer?.rotations ?? []) as Json[], state.issuer, shown.issuer),
  };
  return {
    status: 'followed',
    change,
    next: { ...state, issuer: shown.issuer, trust: { ...state.trust, issuers }, changes: [...state.changes, change].slice(-MAX_CHANGES) },
  };
}

/** The outcome of a contact for the read path, with what to say about it. */
function outcomeOf(path: string, state: Omit<ReaderState, 'rev'>, d: Decision): PinnedTrust {
  const base = {
    url: state.url,
    path,
    trust: parseTrust(state.trust),
    file: state.trust,
    source: state.source,
    pinnedAt: state.pinnedAt,
    issuer: state.issuer,
    logKey: state.logKey,
    status: d.status,
  };
  if (d.status === 'pinned')
    return {
      ...base,
      change: d.change,
      notice:
        `akas: trust on first use: pinned the keys ${state.url} shows now (issuer ${state.issuer}, log key ${state.logKey}) in ${path}; ` +
        'compare them with keys you have from elsewhere (akas node-keys prints them)',
    };
  if (d.status === 'followed')
    return {
      ...base,
      change: d.change,
      notice:
        `akas: ${state.url} rotated its issuer key from ${d.change.from?.issuer} to ${d.change.to.issuer} ` +
        `(a rotation signed by both keys): followed, recorded in ${path}`,
    };
  if (d.status === 'event') return { ...base, event: d.event, notice: `akas: WARNING: ${d.event.message}` };
  return base;
}

/**
 * The trust a read of the node verifies under (the API the read path calls): on first contact the
 * node's keys are pinned (trust on first use); on every later one they are compared with the pin,
 * a signed rotation followed and recorded, anything else an event with the pin unchanged. `keys`:
 * the node's keys as GET /api/node/keys answers them ({issuer, log}, e.g. a full read's
 * `issuerKeys` and `log`), fetched with `client` when not given. Throws CliError
 * keys_do_not_hold (exit 1) when a first contact's keys do not hold: nothing is pinned.
 */
export async function pinnedTrust(profile: string, client: AkasClient, opts: { keys?: Json; now?: number } = {}): Promise<PinnedTrust> {
  const url = client.baseUrl;
  const path = readerStatePath(profile, url);
  const keys = opts.keys ?? (await client.get<Json>('/api/node/keys'));
  return changeReaderState(path, async (state) => {
    const d = await decidePin(state, keys, url, opts.now ?? Date.now());
    return 'next' in d ? { next: d.next, result: outcomeOf(path, d.next, d) } : { result: outcomeOf(path, d.state, d) };
  });
}

/** What a contact did to the pin, for a command's --json (`trust` beside its own fields). */
export const pinJson = (p: PinnedTrust) => ({
  status: p.status,
  source: p.source,
  pinnedAt: p.pinnedAt,
  issuer: p.issuer,
  logKey: p.logKey,
  path: p.path,
  ...(p.change ? { change: p.change } : {}),
  ...(p.event ? { event: p.event } : {}),
});

/** Says on stderr what a contact did to the pin (trust on first use, a rotation followed, an event), also under --json. */
export function sayPinned(stderr: NodeJS.WritableStream, p: PinnedTrust) {
  if (p.notice) stderr.write(`${terminalSafe(p.notice)}\n`);
}
