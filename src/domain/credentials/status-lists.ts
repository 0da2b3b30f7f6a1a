// Status lists (PROTOCOL 8.7; W3C Bitstring Status List v1.0): every judgment credential names
// a random, unique index in the node's revocation list and in its suspension list; an operator
// flips bits (`akas admin revoke`), and each change makes a new signed version of the list,
// kept for good and recorded in the transparency log, so that what the status was at any
// checkpoint can be proved.
//
// Spaces and locks: a slot (purpose:index -> judgmentId) is written only by the judgment that
// claims it, under the lock `status-slot:purpose:index`; a list's head, its versions and the
// per-credential status records of one purpose only under `status-list:purpose`.
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  canonicalize,
  isoTime,
  ServiceError,
  sha256Hex,
  STATUS_LIST_EVENT_KIND,
  STATUS_LIST_LENGTH,
  STATUS_PURPOSES,
  statusEntry,
  statusListCredential,
  statusListPath,
  setStatusBit,
  getStatusBit,
  multibaseBase64url,
  toMultibaseBase64url,
  type StatusEntry,
  type StatusPurpose,
} from '../../core/index.js';
import { space, type Tx } from '../../store/index.js';
import type { Ctx } from '../context.js';
import { enqueueLogEntry } from '../log/index.js';
import { Credentials, issueStatusListCredential, Standings, type StoredCredential } from './credentials.js';

/** The two indexes a judgment credential holds, one per purpose. */
export type StatusSlots = Record<StatusPurpose, number>;

/** What the node keeps of a list: its newest version. */
export interface StatusListHead {
  purpose: StatusPurpose;
  version: number;
  /** The list's stable URL, as its credentials name it. */
  listUrl: string;
  encodedList: string;
  at: number;
}

/** What an operator does to a credential's bit. */
export type StatusAction = 'revoke' | 'suspend' | 'unsuspend';
/** What made a version: a change, or (version 0) the making of the empty list. */
export type VersionAction = StatusAction | 'create';

/** One version of a list; version 0 is the empty list, made and logged before the first credential names it. */
export interface StatusListVersion {
  purpose: StatusPurpose;
  version: number;
  at: number;
  action: VersionAction;
  reason: string;
  /** The bits this version flipped, and the credentials they belong to. */
  changes: Array<{ judgmentId: string; index: number }>;
  /** The signed BitstringStatusListCredential of this version. */
  credential: StoredCredential;
  /** sha256 hex of the JCS bytes of `credential`: what the log entry names. */
  credentialSha256: string;
  /** The log entry's ticket, for a caller that waits for it. */
  ticket?: string;
}

/** A credential's standing in one list, as its detail shows it. */
export interface CredentialStatusRecord {
  set: boolean;
  action: StatusAction;
  reason: string;
  at: number;
  version: number;
  /** Every version that flipped this credential's bit, oldest first (absent on records written before: `version` alone). */
  versions?: number[];
}

export const StatusSlotsSpace = space<string>('status-slots');
export const StatusListHeads = space<StatusListHead>('status-lists');
export const StatusListVersions = space<StatusListVersion>('status-list-versions');
/** `judgmentId:purpose` -> the last change of that credential's bit. */
export const CredentialStatuses = space<CredentialStatusRecord>('credential-status');

export const statusListLock = (purpose: StatusPurpose) => `status-list:${purpose}`;
const slotKey = (purpose: StatusPurpose, index: number) => `${purpose}:${index}`;
export const slotLocks = (slots: StatusSlots) => STATUS_PURPOSES.map((p) => `status-slot:${slotKey(p, slots[p])}`);
const versionKey = (purpose: StatusPurpose, version: number) => `${purpose}:${String(version).padStart(12, '0')}`;
/** Longest reason kept with a change (it goes in the log entry too). */
export const MAX_REASON_LENGTH = 500;

/** The origin the node's documents name (--public-url, else its listen address; PROTOCOL 11.1). */
export const statusOrigin = (ctx: Pick<Ctx, 'config'>) => (ctx.config.publicUrl ?? ctx.config.listenOrigin ?? 'http://localhost').replace(/\/$/, '');
export const statusListUrl = (ctx: Pick<Ctx, 'config'>, purpose: StatusPurpose) => `${statusOrigin(ctx)}${statusListPath(purpose)}`;

// 131,072 = 2^17: three random bytes masked to 17 bits draw an index with no bias.
const drawIndex = (ctx: Pick<Ctx, 'random'>) => ctx.random(3).readUIntBE(0, 3) & (STATUS_LIST_LENGTH - 1);

/** Random indexes for a new credential (Bitstring Status List §6.5: "Implementations SHOULD assign indexes randomly"). */
export const drawStatusSlots = (ctx: Pick<Ctx, 'random'>): StatusSlots => ({ revocation: drawIndex(ctx), suspension: drawIndex(ctx) });

/** Whether no credential holds either index yet (read under the slots' locks). */
export async function slotsFree(tx: Tx, slots: StatusSlots): Promise<boolean> {
  for (const p of STATUS_PURPOSES) if ((await tx.get(StatusSlotsSpace, slotKey(p, slots[p]))) !== undefined) return false;
  return true;
}

/** Claims the slots for a judgment and answers its credentialStatus entries. */
export function claimSlots(tx: Tx, ctx: Pick<Ctx, 'config'>, slots: StatusSlots, judgmentId: string): StatusEntry[] {
  return STATUS_PURPOSES.map((p) => {
    tx.put(StatusSlotsSpace, slotKey(p, slots[p]), judgmentId);
    return statusEntry(statusListUrl(ctx, p), p, slots[p]);
  });
}

const emptyBits = () => new Uint8Array(STATUS_LIST_LENGTH / 8);
export const encodeBits = (bits: Uint8Array) => toMultibaseBase64url(gzipSync(bits));
export function decodeBits(encodedList: string): Uint8Array {
  const gz = multibaseBase64url(encodedList);
  if (!gz) throw new Error('a stored status list is not multibase base64url');
  return new Uint8Array(gunzipSync(gz));
}

// Which lists this process has seen made, by store: a list, once made, is never unmade, so a
// judgment asks the store only until it has seen both.
const made = new WeakMap<object, Set<StatusPurpose>>();

/**
 * Makes version 0 of each list that has none yet: the empty list, valid from now, stored and
 * logged like every later version (so no version is ever signed afresh on demand). Runs before
 * a credential first names the list, in its own transaction under the list's lock (judging
 * never waits on it once the lists exist), and at start for a node whose credentials name
 * lists it never made (PROTOCOL 8.7).
 */
export async function ensureStatusLists(ctx: Ctx): Promise<void> {
  let seen = made.get(ctx.store);
  if (!seen) made.set(ctx.store, (seen = new Set()));
  for (const purpose of STATUS_PURPOSES) {
    if (seen.has(purpose)) continue;
    await ctx.store.transact([statusListLock(purpose)], async (tx) => {
      if (await tx.get(StatusListHeads, purpose)) return;
      const listUrl = statusListUrl(ctx, purpose);
      const at = ctx.clock.now();
      const encodedList = encodeBits(emptyBits());
      const credential = await signVersion(ctx, { purpose, listUrl, encodedList, at });
      writeVersion(
        tx,
        ctx,
        { purpose, version: 0, at, action: 'create', reason: 'the list is made, every bit clear', changes: [], listUrl, encodedList, credential },
        null,
      );
    });
    seen.add(purpose);
  }
}

function signVersion(ctx: Pick<Ctx, 'keys'>, f: { purpose: StatusPurpose; listUrl: string; encodedList: string; at: number }) {
  const unsigned = statusListCredential({
    listUrl: f.listUrl,
    issuer: ctx.keys.issuer.did,
    purpose: f.purpose,
    encodedList: f.encodedList,
    validFrom: isoTime(f.at),
  });
  return issueStatusListCredential(ctx.keys, unsigned, f.at);
}

/** A version of a list (the newest without `version`), or undefined when there is no such version (or none was logged). */
export async function statusListVersion(ctx: Pick<Ctx, 'store'>, purpose: StatusPurpose, version?: number): Promise<StatusListVersion | undefined> {
  const head = await ctx.store.get(StatusListHeads, purpose);
  if (!head) return undefined;
  const wanted = version ?? head.version;
  if (wanted > head.version) return undefined;
  return ctx.store.get(StatusListVersions, versionKey(purpose, wanted));
}

/** A version as served: what it changed and why, and the sha256 its log entry names (not the node-internal ticket). */
export const versionView = (v: StatusListVersion) => ({
  purpose: v.purpose,
  version: v.version,
  at: v.at,
  action: v.action,
  reason: v.reason,
  changes: v.changes,
  credentialSha256: v.credentialSha256,
});

/** Every stored version of a list from `from` on (at most `limit`), oldest first. */
export async function statusListVersions(ctx: Pick<Ctx, 'store'>, purpose: StatusPurpose, from = 0, limit = 100): Promise<StatusListVersion[]> {
  const rows = await ctx.store.list(StatusListVersions, { gte: versionKey(purpose, from), lt: `${purpose}:~`, limit });
  return rows.map(([, v]) => v);
}

/** The status records of a credential, by purpose (none before any change). */
export async function credentialStatusOf(ctx: Pick<Ctx, 'store'>, judgmentId: string): Promise<Partial<Record<StatusPurpose, CredentialStatusRecord>>> {
  const out: Partial<Record<StatusPurpose, CredentialStatusRecord>> = {};
  for (const p of STATUS_PURPOSES) {
    const r = await ctx.store.get(CredentialStatuses, `${judgmentId}:${p}`);
    if (r) out[p] = r;
  }
  return out;
}

const JUDGMENT_ID = /^jdg_[0-9a-f]{16}$/;

/**
 * The judgment id an operator's ID names: the id itself, the credential's URL as the node
 * serves it (absolute or its path), or the credential's subject id (urn:akas:judgment:jdg_...).
 */
export function judgmentIdOf(id: string): string | undefined {
  if (JUDGMENT_ID.test(id)) return id;
  const urn = /^urn:akas:judgment:(jdg_[0-9a-f]{16})$/.exec(id);
  if (urn) return urn[1];
  let path = id;
  try {
    path = new URL(id).pathname;
  } catch {
    // not absolute: a path
  }
  const m = /^\/api\/credentials\/judgment\/[a-z-]+\/[A-Za-z0-9_-]+\/(jdg_[0-9a-f]{16})\/?$/.exec(path);
  return m ? m[1] : undefined;
}

/** The status entries a stored credential carries (none when issued before status lists). */
export function entriesOf(credential: StoredCredential): StatusEntry[] {
  const s = credential.credentialStatus;
  return (Array.isArray(s) ? s : s ? [s] : []) as StatusEntry[];
}

export interface StatusChangeRequest {
  action: StatusAction;
  reason: string;
  /** Credential ids (judgment ids, credential URLs or subject ids). */
  ids?: string[];
  /** Every credential judged by this agent tag. */
  judge?: string;
}

export interface StatusChangeResult {
  action: StatusAction;
  purpose: StatusPurpose;
  reason: string;
  /** The credentials named, and whether this change flipped their bit (false: it was already so). */
  credentials: Array<{ judgmentId: string; index: number; changed: boolean }>;
  /** The list's version after the change (unchanged when nothing changed). */
  version: number;
  /** A new version was made (and a log entry written). */
  changed: boolean;
  listUrl: string;
  credentialSha256: string;
}

const purposeOf = (action: StatusAction): StatusPurpose => (action === 'revoke' ? 'revocation' : 'suspension');

// The credentials a request names, with their index in the list; an unknown id is a 404 naming it.
async function targets(ctx: Pick<Ctx, 'store'>, req: StatusChangeRequest, purpose: StatusPurpose) {
  const found = new Map<string, { index: number; listUrl: string }>();
  const add = (judgmentId: string, credential: StoredCredential) => {
    const entry = entriesOf(credential).find((e) => e.statusPurpose === purpose);
    if (!entry) {
      throw new ServiceError(
        'not_found',
        `The credential of ${judgmentId} was issued before status lists and carries no ${purpose} entry: it cannot be ${req.action}d.`,
        {
          id: judgmentId,
        },
      );
    }
    found.set(judgmentId, { index: Number(entry.statusListIndex), listUrl: entry.statusListCredential });
  };
  for (const id of req.ids ?? []) {
    // A standing (PROTOCOL 8.9) has its entries in the same lists, under its own id.
    const standingId = /^stn_[0-9a-f]{16}$/.test(id) ? id : /^urn:akas:standing:(stn_[0-9a-f]{16})$/.exec(id)?.[1];
    const standing = standingId ? await ctx.store.get(Standings, standingId) : undefined;
    if (standingId && standing) {
      add(standingId, standing.credential);
      continue;
    }
    const judgmentId = judgmentIdOf(id);
    const credential = judgmentId ? await ctx.store.get(Credentials, judgmentId) : undefined;
    if (!judgmentId || !credential) throw new ServiceError('not_found', `No judgment credential ${id} on this node.`, { id });
    add(judgmentId, credential);
  }
  if (req.judge !== undefined) {
    let any = false;
    for await (const [judgmentId, credential] of ctx.store.iterate(Credentials)) {
      const subject = credential.credentialSubject as { judge?: { tag?: string } } | undefined;
      if (subject?.judge?.tag !== req.judge) continue;
      any = true;
      if (entriesOf(credential).some((e) => e.statusPurpose === purpose)) add(judgmentId, credential);
    }
    if (!any) throw new ServiceError('not_found', `No judgment credential of judge ${req.judge} on this node.`, { id: req.judge });
  }
  return found;
}

/**
 * Revokes, suspends or unsuspends credentials: one new version of the list for all the bits
 * that flip, with its log entry, in one transaction; nothing at all when no bit flips
 * (idempotent: revoking twice writes one version and one log entry).
 */
export async function changeStatus(ctx: Ctx, req: StatusChangeRequest): Promise<StatusChangeResult> {
  const reason = req.reason.trim();
  if (!reason || reason.length > MAX_REASON_LENGTH) {
    throw new ServiceError('validation_failed', `A reason of 1 to ${MAX_REASON_LENGTH} characters is required.`, {
      errors: [{ field: 'reason', reason: 'length' }],
    });
  }
  if (!req.ids?.length && req.judge === undefined) {
    throw new ServiceError('validation_failed', 'Name a credential, or a judge.', { errors: [{ field: 'ids', reason: 'required' }] });
  }
  const purpose = purposeOf(req.action);
  const wanted = req.action !== 'unsuspend';
  const named = await targets(ctx, req, purpose);
  await ensureStatusLists(ctx);
  return ctx.store.transact([statusListLock(purpose)], async (tx) => {
    const head = (await tx.get(StatusListHeads, purpose))!;
    const bits = decodeBits(head.encodedList);
    const credentials = [...named].map(([judgmentId, t]) => {
      const changed = getStatusBit(bits, t.index) !== wanted;
      if (changed) setStatusBit(bits, t.index, wanted);
      return { judgmentId, index: t.index, changed };
    });
    const changes = credentials.filter((c) => c.changed).map(({ judgmentId, index }) => ({ judgmentId, index }));
    const result = { action: req.action, purpose, reason, credentials, listUrl: head.listUrl };
    if (!changes.length) {
      const current = await tx.get(StatusListVersions, versionKey(purpose, head.version));
      return { ...result, version: head.version, changed: false, credentialSha256: current?.credentialSha256 ?? '' };
    }
    // Never before the version it follows (a clock stepped back), so versions read in time order too.
    const at = Math.max(ctx.clock.now(), head.at);
    const version = head.version + 1;
    const encodedList = encodeBits(bits);
    const credential = await signVersion(ctx, { purpose, listUrl: head.listUrl, encodedList, at });
    const { credentialSha256 } = writeVersion(
      tx,
      ctx,
      { purpose, version, at, action: req.action, reason, changes, listUrl: head.listUrl, encodedList, credential },
      req.judge ?? null,
    );
    for (const c of changes) {
      const before = await tx.get(CredentialStatuses, `${c.judgmentId}:${purpose}`);
      const versions = [...(before?.versions ?? (before ? [before.version] : [])), version];
      tx.put(CredentialStatuses, `${c.judgmentId}:${purpose}`, { set: wanted, action: req.action, reason, at, version, versions });
    }
    return { ...result, version, changed: true, credentialSha256 };
  });
}

/** A new version as one transaction writes it: the version, the list's head and the version's log entry (PROTOCOL 8.7, 9.3). */
function writeVersion(
  tx: Tx,
  ctx: Ctx,
  v: Omit<StatusListVersion, 'credentialSha256' | 'ticket'> & { listUrl: string; encodedList: string },
  agent: string | null,
): { credentialSha256: string } {
  const credentialSha256 = sha256Hex(canonicalize(v.credential));
  const ticket = enqueueLogEntry(tx, ctx, {
    kind: STATUS_LIST_EVENT_KIND,
    tier: 'event',
    agent,
    body: {
      schemaVersion: '1.0.0',
      list: v.listUrl,
      purpose: v.purpose,
      version: v.version,
      credentialSha256,
      action: v.action,
      reason: v.reason,
      changed: v.changes.length,
      changesSha256: sha256Hex(canonicalize(v.changes)),
      // The judgments whose credentials this version changed, by id: the verifiable index files
      // the entry under each one's credential: key (docs/INDEX.md 2.2).
      judgmentIds: v.changes.map((c) => c.judgmentId),
      at: v.at,
    },
  });
  const { listUrl, encodedList, ...version } = v;
  tx.put(StatusListVersions, versionKey(v.purpose, v.version), { ...version, credentialSha256, ticket });
  tx.put(StatusListHeads, v.purpose, { purpose: v.purpose, version: v.version, listUrl, encodedList, at: v.at });
  return { credentialSha256 };
}
