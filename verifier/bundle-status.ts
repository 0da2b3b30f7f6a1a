// The status checks of a proposal bundle (bundle.ts; PROTOCOL 8.4, 8.7), offline: each stapled
// list checked as a list (status-list.ts), its version proven in the node's log (the entry names
// the list, its version and the sha256 of the list credential, with an inclusion proof against
// the bundle's checkpoint); the versions that changed the bundle's credentials, proven alike,
// give the reason and time; then each credential's entries. It says the time the lists speak
// for, and, where a judgment the decision counted is revoked or suspended, whether the decision
// would still hold without it (recomputed here: the node never rewrites history).
import type { Checking } from '../src/core/checking.js';
import { PUBLISH_THRESHOLD, round6, weightedComposite } from '../src/core/judgment.js';
import { STATUS_LIST_EVENT_KIND } from '../src/core/status-list.js';
import type { BundleScope } from './bundle-log.js';
import { endorsedLogKeyChecking, logInclusionChecking } from './log.js';
import type { Checks } from './report.js';
import { parseCheckpoint, parseNote } from '../src/core/note.js';
import type { IssuerTrust } from './issuer-keys.js';
import {
  bindHeads,
  credentialStatusChecks,
  jcsSha256,
  statusHeadChecking,
  statusListChecking,
  type Inflate,
  type ReadHead,
  type ReadList,
  type StatusVerdict,
} from './status-list.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface StatusOutcome {
  /** The time each list speaks for (the status head's, else its validFrom), by purpose. */
  asOf: Record<string, string>;
  /** Each list read: its purpose, its version, the time it speaks for. */
  lists: Array<{ purpose: string; version?: number; at: string }>;
  /** The bundle's credentials revoked or suspended. */
  withdrawn: Array<{ judgmentId: string; purpose: string; reason?: string; at?: number }>;
}

/** The status sub-check: answers the time the lists speak for and what is withdrawn. */
export function* statusChecking(
  c: Checks,
  scope: BundleScope,
  options: { inflate: Inflate; at?: number; logKey?: string; issuer?: string },
): Checking<StatusOutcome | undefined> {
  const part = isObject(scope.bundle.status) ? scope.bundle.status : undefined;
  if (!part) {
    c.add({
      id: 'status',
      what: "the credentials' status (revocation, suspension)",
      valid: null,
      why: 'status unknown: the bundle carries no status lists (exported before status lists)',
    });
    return undefined;
  }
  const logPart = isObject(scope.bundle.log) ? scope.bundle.log : {};
  let logKey = options.logKey;
  if (!logKey && scope.trust) logKey = (yield* endorsedLogKeyChecking(logPart.endorsement, scope.trust)) ?? undefined;
  // A version's log entry: the list, its version and its sha256 (or its changes), proven in the log.
  function* logged(item: Json, expect: Json, subject: string): Checking<void> {
    const entry = isObject(item.entry) ? item.entry : undefined;
    const body = entry && isObject(entry.body) ? entry.body : {};
    const wrong = Object.entries(expect).filter(([k, v]) => body[k] !== v);
    const what = 'the version is recorded in the log: an entry naming the list, its version and the sha256 of the list credential';
    if (!entry && expect.version === 0) {
      c.add({ id: 'status.log', what, valid: null, why: 'version 0 carries no log entry (made before version 0 was logged)', subject });
      return;
    }
    if (!entry || entry.kind !== STATUS_LIST_EVENT_KIND || wrong.length) {
      c.add({
        id: 'status.log',
        what,
        valid: false,
        why: entry ? `the entry says ${wrong.map(([k]) => `${k} ${String(body[k])}`).join(', ') || String(entry.kind)}` : 'no log entry',
        subject,
      });
      return;
    }
    c.add({ id: 'status.log', what, valid: true, subject });
    if (logKey) yield* logInclusionChecking(c, { entry, inclusion: item.inclusion, checkpoint: logPart.checkpoint }, [logKey], subject);
    else c.add({ id: 'log.inclusion', what: "the entry is in the node's log", valid: null, why: 'not checked: no trusted log key', subject });
  }

  const lists = new Map<string, ReadList>();
  const unreadable = new Map<string, string>();
  const asOf: Record<string, string> = {};
  // Unpinned, a list may be by the credentials' issuer or by any issuer key the bundle lists (a
  // rotation since): as self-consistent as the rest of an unpinned bundle, and said so by issuer.chain.
  const listed =
    isObject(scope.bundle.issuerKeys) && Array.isArray(scope.bundle.issuerKeys.keys)
      ? scope.bundle.issuerKeys.keys.filter(isObject).map((k) => String(k.did))
      : [];
  const credentialIssuers = ((scope.bundle.credentials ?? []) as Json[]).map((cr) => (isObject(cr) ? String(cr.issuer) : ''));
  const issuers = options.issuer ? [options.issuer] : [...new Set([...credentialIssuers, ...listed])];
  const head = yield* stapledHeadChecking(c, part.head, logPart.checkpoint, { trust: scope.trust, issuers });
  const newest = new Map<string, number>();
  for (const item of (Array.isArray(part.lists) ? part.lists : []).filter(isObject)) {
    const list = yield* statusListChecking(c, item.credential, { at: options.at, issuers, trust: scope.trust, inflate: options.inflate });
    const url = isObject(item.credential) ? String(item.credential.id) : '?';
    if (!list) {
      unreadable.set(url, 'the stapled list does not verify');
      continue;
    }
    // Every version is logged, version 0 too: the entry names the list, its version and its sha256.
    yield* logged(item, { list: url, purpose: list.purpose, version: item.version, credentialSha256: list.sha256 }, `${list.purpose} v${String(item.version)}`);
    list.version = Number(item.version);
    lists.set(list.url, list);
    newest.set(list.purpose, list.version);
  }
  if (head) bindHeads(c, lists, [head]);
  else for (const url of lists.keys()) unreadable.set(url, 'no status head proves it the newest version at the checkpoint');
  if (!head) lists.clear();
  for (const list of lists.values()) asOf[list.purpose] = list.head ? new Date(list.head.at).toISOString() : list.validFrom;
  // The versions that changed these credentials: what, when and why, proven in the log.
  const reasonsByList = new Map<string, Array<{ version: number; at: number; reason: string; indexes: Set<number> }>>();
  for (const v of (Array.isArray(part.versions) ? part.versions : []).filter(isObject)) {
    const changes = Array.isArray(v.changes) ? v.changes.filter(isObject) : [];
    const subject = `${String(v.purpose)} v${String(v.version)}`;
    const entry = isObject(v.entry) ? v.entry : {};
    const url = isObject(entry.body) ? String(entry.body.list) : '';
    yield* logged(v, { purpose: v.purpose, version: v.version, action: v.action, reason: v.reason, changesSha256: jcsSha256(changes) }, subject);
    // A change newer than the list stapled for its purpose shows the list is not the newest (a rollback).
    const stapled = newest.get(String(v.purpose));
    if (stapled !== undefined && Number(v.version) > stapled)
      c.add({
        id: 'status.fresh',
        what: 'the list is the newest version the bundle shows (no older version stands in for it)',
        valid: false,
        why: `version ${String(v.version)} of the ${String(v.purpose)} list changed these credentials, but the list stapled is version ${stapled}`,
        subject,
      });
    const row = { version: Number(v.version), at: Number(v.at), reason: String(v.reason), indexes: new Set(changes.map((ch) => Number(ch.index))) };
    reasonsByList.set(url, [...(reasonsByList.get(url) ?? []), row]);
  }
  const reasons = (url: string, index: number) => {
    const rows = (reasonsByList.get(url) ?? []).filter((r) => r.indexes.has(index)).sort((a, b) => b.version - a.version);
    return rows[0];
  };
  const withdrawn: StatusOutcome['withdrawn'] = [];
  for (const cred of ((scope.bundle.credentials ?? []) as unknown[]).filter(isObject)) {
    const subjectId = isObject(cred.credentialSubject) ? String(cred.credentialSubject.id) : '';
    const judgmentId = subjectId.split(':').at(-1) ?? subjectId;
    const verdicts: StatusVerdict[] = credentialStatusChecks(c, cred, lists, { unreadable, reasons, subject: judgmentId });
    for (const v of verdicts)
      if (v.state === 'set') withdrawn.push({ judgmentId, purpose: v.purpose, ...(v.reason ? { reason: v.reason } : {}), ...(v.at ? { at: v.at } : {}) });
  }
  if (withdrawn.length) decisionWithout(c, scope, new Set(withdrawn.map((w) => w.judgmentId)));
  const read = [...lists.values()].map((l) => ({ purpose: l.purpose, ...(l.version !== undefined ? { version: l.version } : {}), at: asOf[l.purpose] }));
  return { asOf, lists: read, withdrawn };
}

// L1: the status head of the bundle's checkpoint (PROTOCOL 8.7): signed by the issuer, and of
// the very tree the bundle's checkpoint signs (origin, size and root). Without one, which version
// was the newest there is not proven, and every list is read as status unknown.
function* stapledHeadChecking(c: Checks, head: unknown, checkpoint: unknown, o: { trust?: IssuerTrust; issuers: string[] }): Checking<ReadHead | undefined> {
  if (head === undefined) {
    c.add({
      id: 'status.head',
      what: "a status head: the issuer's signed word on the newest version of each list logged at the checkpoint (PROTOCOL 8.7)",
      valid: null,
      why: 'status unknown: the bundle carries no status head (exported before status heads), so no list is proven the newest at its checkpoint',
    });
    return undefined;
  }
  const read = yield* statusHeadChecking(c, head, o);
  if (!read) return undefined;
  const note = typeof checkpoint === 'string' ? parseNote(checkpoint) : undefined;
  const cp = note?.ok ? parseCheckpoint(note.text) : null;
  const root = cp ? btoa(String.fromCharCode(...cp.rootHash)) : '';
  const same = cp !== null && cp.origin === read.origin && cp.size === read.treeSize && root === read.rootHash;
  c.add({
    id: 'status.checkpoint',
    what: "the status head speaks for the bundle's own checkpoint (origin, size and root)",
    valid: same,
    why: same ? undefined : `the head is of tree size ${read.treeSize}, the bundle's checkpoint ${cp ? `of size ${cp.size}` : 'unreadable'}`,
  });
  return same ? read : undefined;
}

// content: the decision recomputed without the withdrawn judgments, from what its log event counted.
function decisionWithout(c: Checks, scope: BundleScope, out: Set<string>) {
  const logPart = isObject(scope.bundle.log) ? scope.bundle.log : {};
  const decision = ((Array.isArray(logPart.entries) ? logPart.entries : []) as unknown[])
    .filter(isObject)
    .map((it) => (isObject(it.entry) && isObject(it.entry.body) ? it.entry.body : {}))
    .find((b) => b.event === 'proposal.published' || b.event === 'proposal.rejected');
  const what = 'the decision would still hold without the revoked or suspended judgments (recomputed here; the node does not rewrite history)';
  const counted = decision && Array.isArray(decision.judgments) ? (decision.judgments as unknown[]).filter(isObject) : undefined;
  const rule = decision && isObject(decision.rule) ? decision.rule : undefined;
  const named = [...out].join(', ');
  if (!counted || !rule) {
    c.add({ id: 'status.decision', what, valid: null, why: `not checked: ${named} withdrawn, and the bundle has no decision event naming what it counted` });
    return;
  }
  const kept = counted.filter((k) => !out.has(String(k.judgmentId)));
  const was = String(decision!.event).replace('proposal.', '');
  if (kept.length < Number(rule.requiredJudgments)) {
    c.add({
      id: 'status.decision',
      what,
      valid: false,
      why: `${named} withdrawn: ${kept.length} of the ${String(rule.requiredJudgments)} judgments required remain, no decision`,
    });
    return;
  }
  const w = weightedComposite(kept.map((k) => ({ weight: Number(k.weight), composite: Number(k.composite) })));
  const now = w >= PUBLISH_THRESHOLD ? 'published' : 'rejected';
  c.add({ id: 'status.decision', what, valid: now === was, why: `${named} withdrawn: the rest decide ${now} at ${round6(w)} (the decision was ${was})` });
}
