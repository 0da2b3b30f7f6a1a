// What the pages show, read the way the routes read it. Where an API route already composes a
// view (a node with its manifest and evidence, a proposal with its judgments, search, the
// leaderboard, a log entry with its proof), the explorer asks that route in-process
// (src/http-kit/inner-call.ts: fastify's own routing, no socket, no second token), so a page shows
// exactly what the API answers. Where no route lists what a page needs (proposals by status, the
// log newest first, checkpoints over time, counts), it reads the domain's spaces directly.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ERROR_CODES, ServiceError, type ErrorCode, type LogEntry, type ProposalKind } from '../core/index.js';
import { credentialStatusOf } from '../domain/credentials/status-lists.js';
import { KnowledgeNodes } from '../domain/knowledge/tree.js';
import { LogCheckpoints, LogEntries, LogIndex, seqKey, type StoredCheckpoint } from '../domain/log/index.js';
import { PendingQueue, Proposals, type ProposalRecord } from '../domain/records.js';
import { innerCall } from '../http-kit/index.js';
import type { Store } from '../store/index.js';
import { judgmentOf, type Statuses } from './pages/entries.js';

type Json = Record<string, unknown>;

/** GETs an API route in-process on behalf of a page request; its 4xx become the same ServiceError. */
export async function api<T = Json>(app: FastifyInstance, request: FastifyRequest, url: string): Promise<T> {
  const res = await innerCall(app, {
    method: 'GET',
    url,
    headers: { host: request.headers.host ?? '127.0.0.1', accept: 'application/json' },
    ip: request.ip,
    encrypted: request.protocol === 'https',
  });
  if (res.statusCode === 200) return JSON.parse(res.body) as T;
  let body: { code?: string; error?: string; errors?: unknown } = {};
  try {
    body = JSON.parse(res.body);
  } catch {
    // not JSON: reported below with the status
  }
  // A refusal, or a search stopped at its timeout (PROTOCOL 10.6: the page says so, not "the node failed").
  if ((res.statusCode < 500 || body.code === 'search_busy') && body.code && body.code in ERROR_CODES) {
    throw new ServiceError(body.code as ErrorCode, body.error ?? `${url} was refused.`, body.errors ? { errors: body.errors } : {});
  }
  throw new Error(`${url.split('?')[0]} answered ${res.statusCode}`);
}

export interface ProposalRow {
  proposalId: string;
  kind: ProposalKind;
  title: string;
  path: string | null;
  status: ProposalRecord['status'];
  submittedAt: number;
  decidedAt: number | null;
  judgments: number;
  required: number;
  composite: number | null;
  proposer: string | null;
}

const row = (p: ProposalRecord): ProposalRow => ({
  proposalId: p.proposalId,
  kind: p.kind,
  title: p.title,
  path: p.path,
  status: p.status,
  submittedAt: p.submittedAt,
  decidedAt: p.decidedAt,
  judgments: p.judgments.length,
  required: p.requiredJudgments,
  composite: p.outcome?.weightedComposite ?? null,
  proposer: p.proposer?.tag ?? null,
});

export interface Page<T> {
  items: T[];
  /** The cursor of the next (older) page, or null. */
  next: string | null;
}

/** Pending proposals, newest first (the judge queue read backwards), filtered by kind. */
export async function pendingProposals(store: Store, limit: number, before?: string, kind?: string): Promise<Page<ProposalRow>> {
  const items: ProposalRow[] = [];
  let cursor = before;
  for (let rounds = 0; rounds < 50; rounds++) {
    const keys = await store.list(PendingQueue, { reverse: true, limit: 100, ...(cursor ? { lt: cursor } : {}) });
    if (!keys.length) return { items, next: null };
    for (const [key, entry] of keys) {
      cursor = key;
      if (kind && entry.kind !== kind) continue;
      const p = await store.get(Proposals, key.slice(key.indexOf(':') + 1));
      if (p && p.status === 'pending') items.push(row(p));
      if (items.length === limit) return { items, next: key };
    }
  }
  return { items, next: cursor ?? null };
}

const DECISIONS = new Set(['proposal.published', 'proposal.rejected', 'proposal.withdrawn']);

/**
 * Decided proposals, most recent decision first: the node's own log events (PROTOCOL 9.3), read
 * backwards through the log's kind index. The cursor is the log index to continue below.
 */
export async function decidedProposals(
  store: Store,
  limit: number,
  before?: number,
  kind?: string,
): Promise<Page<ProposalRow & { decision: string; entryId: string }>> {
  const prefix = 'kind:attestation.event.v1:';
  const items: Array<ProposalRow & { decision: string; entryId: string }> = [];
  let upper = before === undefined ? `${prefix}\uffff` : `${prefix}${seqKey(before)}`;
  for (let rounds = 0; rounds < 50; rounds++) {
    const refs = await store.list(LogIndex, { gte: prefix, lt: upper, reverse: true, limit: 200 });
    if (!refs.length) return { items, next: null };
    for (const [key, ref] of refs) {
      upper = key;
      const e = await store.get(LogEntries, seqKey(ref.seq));
      if (!e || !DECISIONS.has(String(e.body.event))) continue;
      if (kind && e.body.kind !== kind) continue;
      const p = await store.get(Proposals, String(e.body.proposalId));
      if (!p) continue;
      items.push({ ...row(p), decision: String(e.body.event).slice('proposal.'.length), entryId: e.id });
      if (items.length === limit) return { items, next: String(ref.seq) };
    }
  }
  return { items, next: null };
}

/** Log entries newest first (all, or those of one kind or one agent: the log's own indexes), below a log index. */
export async function entriesNewestFirst(store: Store, limit: number, before?: number, by: { kind?: string; agent?: string } = {}): Promise<Page<LogEntry>> {
  const prefix = by.kind ? `kind:${by.kind}:` : by.agent ? `agent:${by.agent}:` : null;
  if (prefix) {
    const refs = await store.list(LogIndex, {
      gte: prefix,
      lt: before === undefined ? `${prefix}\uffff` : `${prefix}${seqKey(before)}`,
      reverse: true,
      limit: limit + 1,
    });
    const items: LogEntry[] = [];
    for (const [, ref] of refs.slice(0, limit)) {
      const e = await store.get(LogEntries, seqKey(ref.seq));
      if (e) items.push(e);
    }
    return { items, next: refs.length > limit && items.length ? String(items[items.length - 1].seq) : null };
  }
  const rows = await store.list(LogEntries, { ...(before !== undefined ? { lt: seqKey(before) } : {}), reverse: true, limit: limit + 1 });
  const items = rows.slice(0, limit).map(([, e]) => e);
  return { items, next: rows.length > limit ? String(items[items.length - 1].seq) : null };
}

/**
 * The node's status records of judgment credentials (what GET /api/credentials/status/{id}
 * answers: the last change of each bit, with its reason, time and list version), by id: what a
 * page says of each credential's status without JavaScript, and the reasons a checked one names.
 */
export async function nodeStatuses(store: Store, judgmentIds: Iterable<string>): Promise<Statuses> {
  const ids = [...new Set(judgmentIds)];
  const records = await Promise.all(ids.map((id) => credentialStatusOf({ store }, id)));
  return Object.fromEntries(ids.map((id, i) => [id, records[i]]));
}

/** The node's status records of the credentials of the judgments among some log entries. */
export const entryStatuses = (store: Store, entries: LogEntry[]) =>
  nodeStatuses(
    store,
    entries.flatMap((e) => judgmentOf(e)?.judgmentId ?? []),
  );

/** Stored checkpoints, newest first. */
export async function checkpoints(store: Store, limit: number): Promise<StoredCheckpoint[]> {
  return (await store.list(LogCheckpoints, { reverse: true, limit })).map(([, c]) => c);
}

/**
 * Counts for the home page: published tree nodes and pending proposals. Counted by one scan in
 * the background, again after a write to those spaces, at most once a minute (a scan of
 * 100,000 nodes takes about half a second of one core: a node publishing all the time must not
 * spend it every few seconds). A page never waits for a scan but the first one, and says when
 * its counts were taken; the log's size, read from its head, is always current.
 */
export class Counts {
  private value: { nodes: number; pending: number; at: number } | null = null;
  private scanning: Promise<void> | null = null;
  private dirty = true;
  private lastScan = 0;
  private readonly unwatch: Array<() => void>;
  static readonly COUNT_EVERY_MS = 60_000;

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {
    const mark = () => (this.dirty = true);
    this.unwatch = [store.watch(KnowledgeNodes, mark, mark), store.watch(PendingQueue, mark, mark)];
  }

  private async scan(): Promise<void> {
    this.dirty = false;
    this.lastScan = this.now();
    let nodes = 0;
    let pending = 0;
    for await (const _ of this.store.iterate(KnowledgeNodes)) nodes += 1;
    for await (const _ of this.store.iterate(PendingQueue)) pending += 1;
    this.value = { nodes, pending, at: this.now() };
  }

  async get(): Promise<{ nodes: number; pending: number; at: number }> {
    if (!this.scanning && this.dirty && (this.value === null || this.now() - this.lastScan >= Counts.COUNT_EVERY_MS)) {
      this.scanning = this.scan()
        .catch(() => {
          this.dirty = true;
        })
        .finally(() => (this.scanning = null));
    }
    if (this.value === null) await this.scanning;
    return this.value ?? { nodes: 0, pending: 0, at: this.now() };
  }

  close() {
    for (const u of this.unwatch) u();
  }
}
