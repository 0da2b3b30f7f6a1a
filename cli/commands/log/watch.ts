// The monitor of a node's transparency log (`akas log watch`) and the review gate
// (`akas gate review`), on the log follower it shares with `akas monitor` (follower.ts). The
// monitor keeps, per node, the last checkpoint it verified and the
// right edge of the tree its entries build (O(log n) hashes) in the config folder; each run
// checks the new checkpoint's signature, proves it extends the last one (a fork or a rollback
// fails), re-hashes and re-chains every new entry, and requires the root they build to be
// the one signed (an edited, removed or reordered entry fails).
import { readFileSync } from 'node:fs';
import { canonicalize, entryHash, sha256Hex, TILE_WIDTH, type LogEntry } from '../../../src/core/index.js';
import { checkLogInclusion, checkWitnesses, Checks, consistent, LogAuditor, type AuditState, type WitnessPolicy } from '../../../verifier/index.js';
import { AkasClient, boundedTransport, type FetchCaps, type Json, writeFileSafely } from '../../kit/index.js';
import { leafAt } from './bundle-check.js';
import { bundleReader, type ConsistencyCheck, openView, provenByTiles, relation, type SignedView, signedTree } from './follower.js';
import type { FetchBytes } from './tile-reader.js';

/**
 * The caps of log watch's reads of the node's API: a page of /api/log/entries is at most 1,000
 * entries of at most 65,535 bytes each as JSON beside their ids, hashes and MACs (96 MiB); a
 * head within 15 s, all of it within 120 s.
 */
export const LOG_WATCH_CAPS: FetchCaps = { maxBytes: 96 * 1024 * 1024, headersMs: 15_000, totalMs: 120_000 };
/** Entries one page of /api/log/entries holds at most (PROTOCOL 9.5): a page of more is refused. */
const ENTRIES_PER_PAGE = 1000;
/**
 * The most entries one run audits: a signed checkpoint may claim any size (2^40 repeated leaves
 * are a self-consistent log), and a run that would read more says so and reads nothing (exit 1).
 */
export const LOG_WATCH_MAX_ENTRIES = 10_000_000;
/** Pages of 100 reviews the review gate reads at most (100,000 reviews of one subject): the node's cursors are its word. */
export const GATE_MAX_PAGES = 1000;

interface WatchState extends AuditState {
  checkpoint: string;
}

export function readWatchState(path: string): WatchState | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as WatchState;
  } catch {
    return undefined;
  }
}

// Through a fresh temporary file renamed in place: never through a link planted at the path (cli/kit/safe-file.ts).
function writeWatchState(path: string, state: WatchState) {
  writeFileSafely(path, JSON.stringify(state, null, 2) + '\n');
}

/** The same node's client, every call within LOG_WATCH_CAPS (cli/kit/http1.ts boundedTransport). */
const boundedClient = (client: AkasClient) => new AkasClient({ baseUrl: client.baseUrl, apiKey: client.apiKey, fetch: boundedTransport(LOG_WATCH_CAPS) });

/** A run that would audit more than `max` entries: said, and nothing read. */
function tooLong(size: number, from: number, max: number): WatchResult {
  return {
    ok: false,
    message: `the log has ${size - from} entries to audit (${from} to ${size}), more than the ${max} one run of log watch reads: refused`,
    size,
  };
}

export interface WatchResult {
  ok: boolean;
  message: string;
  size?: number;
  previousSize?: number;
  audited?: number;
  logKey?: string;
}

/** The log key to trust: pinned, else kept from the first run, else the one the node publishes now. */
async function logKeyFor(client: AkasClient, pinned: string | undefined, state: WatchState | undefined) {
  if (pinned) return { key: pinned, source: 'pinned' };
  if (state?.logKey) return { key: state.logKey, source: 'kept' };
  const keys = await client.get<Json>('/api/node/keys');
  return { key: String(keys.log?.verifierKey ?? ''), source: 'published' };
}

/** The witness quorum of a served checkpoint, as a failure message or null. */
function witnessProblem(note: string, witnesses?: WitnessPolicy): string | null {
  if (!witnesses) return null;
  const c = new Checks();
  return checkWitnesses(c, note, witnesses) ? null : `the checkpoint lacks its witnesses' quorum: ${c.failed[0]?.why}`;
}

/** One round of monitoring. */
export async function watchOnce(
  given: AkasClient,
  statePath: string,
  opts: { full?: boolean; logKey?: string; witnesses?: WitnessPolicy; maxEntries?: number } = {},
): Promise<WatchResult> {
  const client = boundedClient(given);
  const state = readWatchState(statePath);
  const { key, source } = await logKeyFor(client, opts.logKey, state);
  if (state && opts.logKey && state.logKey !== opts.logKey) return { ok: false, message: `the pinned log key differs from the one kept in ${statePath}` };
  const published = await client.get<Json>('/api/node/keys');
  if (published.log?.verifierKey !== key)
    return { ok: false, message: `the node now publishes another log key (${published.log?.verifierKey}) than the trusted one (${key})`, logKey: key };

  const note = (await client.call<string>('GET', '/api/log/checkpoint')).body;
  const cp = checkedCheckpoint(note, key, opts.witnesses);
  if ('refused' in cp) return cp.refused;
  const { root } = cp;
  // The node proves its new checkpoint extends the one seen before (PROTOCOL 9.5).
  const provenByNode: ConsistencyCheck = async (before, now) =>
    consistent(before.size, before.root, now.size, now.root, (await client.get<Json>(`/api/log/proof/consistency?old=${before.size}&new=${now.size}`)).proof);
  const broken = await againstKept(
    state,
    cp,
    provenByNode,
    `the checkpoint of ${cp.size} entries does not extend the one of ${state?.size} seen before (consistency proof fails)`,
  );
  if (broken) return broken;

  // The entries themselves must build the signed root.
  const auditor = new LogAuditor(opts.full ? undefined : state);
  const from = auditor.size;
  const max = opts.maxEntries ?? LOG_WATCH_MAX_ENTRIES;
  if (cp.size - from > max) return tooLong(cp.size, from, max);
  // Pages bounded by the checkpoint: each holds at least one entry and no more than it was asked.
  while (auditor.size < cp.size) {
    const asked = Math.min(cp.size - auditor.size, ENTRIES_PER_PAGE);
    const page = await client.get<Json>(`/api/log/entries?start=${auditor.size}&end=${auditor.size + asked}`);
    if (!Array.isArray(page.entries) || page.entries.length === 0)
      return { ok: false, message: `the node serves no entry ${auditor.size} of the ${cp.size} its checkpoint signs` };
    if (page.entries.length > asked)
      return { ok: false, message: `the node serves ${page.entries.length} entries from ${auditor.size} where ${asked} were asked for`, size: cp.size };
    for (const e of page.entries) {
      const problem = auditor.append(e);
      if (problem) return { ok: false, message: `REWRITE: ${problem}`, size: cp.size };
    }
  }
  if (!auditor.root().equals(root))
    return { ok: false, message: `REWRITE: the ${cp.size} entries served build another root than the signed checkpoint`, size: cp.size };

  writeWatchState(statePath, { ...auditor.state(cp.origin, key, Date.now()), checkpoint: note });
  const grew = state ? cp.size - state.size : cp.size;
  return {
    ok: true,
    message: `${cp.origin} at ${cp.size} entries (root ${root.toString('hex').slice(0, 16)}…): ${
      state ? `+${grew} since the last check, ` + `consistent` : `first check (log key ${source})`
    }; ${cp.size - from} entries audited`,
    size: cp.size,
    previousSize: state?.size,
    audited: cp.size - from,
    logKey: key,
  };
}

export interface GateReview {
  id: string;
  /** The agent the node vouches made the attestation (its tag): what the gate counts. */
  reviewer: string;
  verdict: string;
  counted: boolean;
  why?: string;
  /** What the body says about who reviewed: the reviewer's own claim, never verified. */
  claimed: { reviewerId: unknown; reviewerDid: unknown };
}

/** Who may count as a reviewer, beyond being a calibrated agent (akas gate review's policy flags). */
export interface GatePolicy {
  /** The lowest tier that counts (frontier > strong > mid > weak). */
  minTier?: 'frontier' | 'strong' | 'mid' | 'weak';
  minReputation?: number;
  /** How old an agent must be, in ms (by the node's clock). */
  minAgeMs?: number;
  /** Only these agents count: tags (ak_...) or current public keys (64 hex). */
  trusted?: Set<string>;
}

const TIER_RANK: Record<string, number> = { frontier: 4, strong: 3, mid: 2, weak: 1 };

/** A reviewer's profile against the policy: why it does not count, or undefined when it does. */
function policyRefusal(profile: Json | undefined, policy: GatePolicy, now: number): string | undefined {
  if (typeof profile?.intelligenceScore !== 'number' || profile.tier === 'refused') return 'the reviewer is not a calibrated agent';
  if (policy.trusted && !policy.trusted.has(String(profile.tag)) && !policy.trusted.has(String(profile.signing?.publicKey).toLowerCase()))
    return 'the reviewer is not in the trusted list';
  if (policy.minTier && (TIER_RANK[profile.tier] ?? 0) < TIER_RANK[policy.minTier]) return `tier ${profile.tier} is below ${policy.minTier}`;
  if (policy.minReputation !== undefined && !(Number(profile.reputationScore) >= policy.minReputation))
    return `reputation ${profile.reputationScore} is below ${policy.minReputation}`;
  if (policy.minAgeMs !== undefined && !(now - Number(profile.createdAt) >= policy.minAgeMs))
    return `the agent is ${Math.floor((now - Number(profile.createdAt)) / 3_600_000)} h old, younger than the policy allows`;
  return undefined;
}

/**
 * The review gate: approving reviews of a subject from distinct calibrated agents that meet the
 * policy, each proven in the log. The agent counted is the one the node vouches made the
 * attestation (its tag); the reviewerId and reviewerDid in the body are the reviewer's own
 * claim, reported as such and never counted as verified.
 */
export async function reviewGate(
  given: AkasClient,
  opts: { subject: string; verdict: string; min: number; logKey?: string; statePath: string; policy?: GatePolicy },
) {
  const client = boundedClient(given);
  const policy = opts.policy ?? {};
  const { key } = await logKeyFor(client, opts.logKey, readWatchState(opts.statePath));
  // Ages are measured by the node's clock, which set the agents' createdAt.
  const now = policy.minAgeMs !== undefined ? Number((await client.health<Json>()).time) : Date.now();
  const reviews: GateReview[] = [];
  const counted = new Set<string>();
  const refusals = new Map<string, string | undefined>();
  let cursor: string | null = null;
  let pages = 0;
  do {
    if (++pages > GATE_MAX_PAGES) throw new Error(`the node lists more than ${GATE_MAX_PAGES} pages of reviews of ${opts.subject}: refused, not read on`);
    const page: Json = await client.get<Json>(
      `/api/attestations?kind=review.attestation.v1&subject=${opts.subject}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    );
    for (const item of page.items as Json[]) {
      const reviewer = String(item.agent);
      const review: GateReview = {
        id: item.id,
        reviewer,
        verdict: String(item.body.verdict),
        counted: false,
        claimed: { reviewerId: item.body.reviewerId ?? null, reviewerDid: item.body.reviewerDid ?? null },
      };
      reviews.push(review);
      if (item.body.verdict !== opts.verdict) review.why = `verdict ${item.body.verdict}`;
      else if (item.body.subjectSha256 !== opts.subject) review.why = 'another subject';
      else if (counted.has(reviewer)) review.why = 'this reviewer is already counted';
      else {
        if (!refusals.has(reviewer)) {
          const profile = await client.get<Json>(`/api/agents/${reviewer}`).catch(() => undefined);
          refusals.set(reviewer, policyRefusal(profile, policy, now));
        }
        const refused = refusals.get(reviewer);
        if (refused) review.why = refused;
        else {
          const proof = await client.get<Json>(`/api/attestations/${item.id}`);
          const c = new Checks();
          if (proof.entry?.hash !== item.hash) review.why = 'the proven entry is not the one listed';
          else if (!checkLogInclusion(c, proof, [key], item.id)) review.why = `not proven in the log: ${c.failed.map((f) => f.why).join('; ')}`;
          else {
            review.counted = true;
            counted.add(reviewer);
          }
        }
      }
    }
    cursor = page.nextCursor;
  } while (cursor);
  const shownPolicy = { ...policy, ...(policy.trusted ? { trusted: [...policy.trusted] } : {}) };
  return {
    subject: opts.subject,
    verdict: opts.verdict,
    required: opts.min,
    approvals: counted.size,
    passed: counted.size >= opts.min,
    policy: shownPolicy,
    logKey: key,
    reviews,
  };
}

/** A checkpoint note signed by the pinned log key and cosigned by the witnesses' quorum, or the refusal a watch answers. */
function checkedCheckpoint(note: string, key: string, witnesses: WitnessPolicy | undefined): SignedView | { refused: WatchResult } {
  const view = openView(note, key);
  if ('refused' in view) return { refused: { ok: false, message: `the checkpoint is refused: ${view.refused}` } };
  const unwitnessed = witnessProblem(note, witnesses);
  if (unwitnessed) return { refused: { ok: false, message: unwitnessed, size: view.size } };
  return view;
}

/** The checkpoint against the one kept from the last run: a rollback or a fork as the result a watch answers, else undefined. */
async function againstKept(state: WatchState | undefined, cp: SignedView, consistent: ConsistencyCheck, forkMessage: string): Promise<WatchResult | undefined> {
  if (!state) return undefined;
  const kept = { size: state.size, root: Buffer.from(state.root, 'hex') };
  const said = { size: cp.size, previousSize: state.size };
  switch (await relation(kept, cp, consistent)) {
    case 'rollback':
      return { ok: false, message: `ROLLBACK: the log shrank from ${state.size} to ${cp.size} entries`, ...said };
    case 'fork':
      return { ok: false, message: cp.size === state.size ? `FORK: another root for the same ${cp.size} entries` : `FORK: ${forkMessage}`, ...said };
    default:
      return undefined;
  }
}

export { type FetchBytes, tileFetcher } from './tile-reader.js';

/** A leaf of the log (the JCS of an entry's hashed fields) as the entry the auditor extends the tree with, or why it is not one. */
function entryOfLeaf(leaf: Buffer): LogEntry | string {
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(leaf.toString('utf8')) as Record<string, unknown>;
  } catch {
    return 'a leaf is not JSON';
  }
  // The leaf must be exactly the canonical (JCS) bytes of its fields: else two byte strings would name one entry.
  if (Buffer.compare(Buffer.from(canonicalize(fields), 'utf8'), leaf) !== 0) return 'a leaf is not the canonical JSON of its fields';
  const e = { ...fields, id: '', hash: sha256Hex(leaf), mac: '', signingKeyId: '' } as unknown as LogEntry;
  if (entryHash(e) !== e.hash) return 'a leaf does not hash as an entry';
  return e;
}

/**
 * One round of monitoring through the C2SP tiles alone (`akas log watch --tiles URL`): the
 * checkpoint's signature (and witness quorum), a consistency proof from the last checkpoint
 * verified computed from the tiles, every new entry from the entry bundles re-hashed and
 * re-chained against its level-0 tile, and the root the entries build and the root the tiles
 * give both equal to the signed one.
 */
export async function watchTilesOnce(
  fetchBytes: FetchBytes,
  statePath: string,
  opts: { full?: boolean; logKey?: string; witnesses?: WitnessPolicy; maxEntries?: number } = {},
): Promise<WatchResult> {
  const state = readWatchState(statePath);
  const key = opts.logKey ?? state?.logKey;
  if (!key) return { ok: false, message: 'following tiles needs the log key on the first run: --log-key KEY (akas node-keys prints it)' };
  if (state && opts.logKey && state.logKey !== opts.logKey) return { ok: false, message: `the pinned log key differs from the one kept in ${statePath}` };
  const note = (await fetchBytes('checkpoint')).toString('utf8');
  const cp = checkedCheckpoint(note, key, opts.witnesses);
  if ('refused' in cp) return cp.refused;
  const { root } = cp;
  const tiles = await signedTree(fetchBytes, cp);
  if ('problem' in tiles) return { ok: false, message: `REWRITE: ${tiles.problem}`, size: cp.size };
  const broken = await againstKept(
    state,
    cp,
    provenByTiles(tiles),
    `the tiles of ${cp.size} entries do not extend the checkpoint of ${state?.size} seen before`,
  );
  if (broken) return broken;
  const auditor = new LogAuditor(opts.full ? undefined : state);
  const from = auditor.size;
  const max = opts.maxEntries ?? LOG_WATCH_MAX_ENTRIES;
  if (cp.size - from > max) return tooLong(cp.size, from, max);
  const last = Math.ceil(cp.size / TILE_WIDTH);
  const bundles = bundleReader(fetchBytes, tiles, last);
  for (let n = Math.floor(from / TILE_WIDTH); n < last; n++) {
    const bundle = await bundles(n);
    if ('problem' in bundle) return { ok: false, message: bundle.problem, size: cp.size };
    for (let i = 0; i < bundle.width; i++) {
      const seq = n * TILE_WIDTH + i;
      if (seq < from) continue;
      const e = entryOfLeaf(leafAt(bundle, i));
      if (typeof e === 'string') return { ok: false, message: `entry ${seq}: ${e}`, size: cp.size };
      const problem = auditor.append(e);
      if (problem) return { ok: false, message: `REWRITE: ${problem}`, size: cp.size };
    }
  }
  if (!auditor.root().equals(root))
    return { ok: false, message: `REWRITE: the ${cp.size} entries of the bundles build another root than the signed checkpoint`, size: cp.size };
  writeWatchState(statePath, { ...auditor.state(cp.origin, key, Date.now()), checkpoint: note });
  return {
    ok: true,
    message: `${cp.origin} at ${cp.size} entries (root ${root.toString('hex').slice(0, 16)}…), read through its tiles: ${
      state ? `+` + `${cp.size - state.size} since the last check, consistent` : 'first check'
    }; ${cp.size - from} entries audited`,
    size: cp.size,
    previousSize: state?.size,
    audited: cp.size - from,
    logKey: key,
  };
}
