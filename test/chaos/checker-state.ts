// The checker's checks of the final state against the history (issue 49, 3): every
// acknowledged write is there, every acknowledged event has its log entry, one decision per
// proposal, status list versions only grow and each is logged. Reads go through the
// processes' public routes (checker-read.ts) and the log as served (checker-log.ts).
import { createHash } from 'node:crypto';
import { kindOfProposalId, type LogEntry } from '../../src/core/index.js';
import { precedes, type Found, type Op } from './checker-history.js';
import { eachLimited, type Reader } from './checker-read.js';

type Json = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const acked = (ops: readonly Op[], f: Op['f']) => ops.filter((o) => o.f === f && o.type === 'ok');

/** What a proposal detail shows that the checks read (PROTOCOL 6.6). */
export interface ProposalView {
  proposalId: string;
  /** Absent on a decision graph's detail (its DgProposal shape). */
  kind?: string;
  status: string;
  proposer: string | null;
  judgments?: Array<{ judgmentId: string }>;
}

/** A status list version as GET /credentials/status/{purpose}/versions lists it (PROTOCOL 8.7). */
export interface VersionView {
  purpose: string;
  version: number;
  at: number;
  action: string;
  changes: Array<{ judgmentId: string; index: number }>;
  credentialSha256: string;
}

export const PURPOSES = ['revocation', 'suspension'] as const;

/** Every version of a list, paged (none before a credential names the list: 404). */
export async function readVersions(reader: Reader, purpose: string): Promise<VersionView[]> {
  const all: VersionView[] = [];
  for (let from = 0; ; ) {
    const r = await reader.get(`/credentials/status/${purpose}/versions?from=${from}&limit=100`);
    if (r.status === 404) return all;
    if (r.status !== 200) throw new Error(`GET versions of ${purpose}: HTTP ${r.status}`);
    const page = (JSON.parse(r.bytes.toString('utf8')) as { versions: VersionView[] }).versions;
    all.push(...page);
    if (page.length < 100) return all;
    from = page[page.length - 1].version + 1;
  }
}

/** Reads the detail of each proposal id (404: undefined). */
export async function readProposals(reader: Reader, ids: Iterable<string>): Promise<Map<string, ProposalView | undefined>> {
  const out = new Map<string, ProposalView | undefined>();
  await eachLimited([...new Set(ids)], 8, async (id) => {
    const r = await reader.get(`/api/knowledge/proposals/${id}`);
    if (r.status !== 200 && r.status !== 404) throw new Error(`GET proposal ${id}: HTTP ${r.status}`);
    out.set(id, r.status === 200 ? (JSON.parse(r.bytes.toString('utf8')) as ProposalView) : undefined);
  });
  return out;
}

/** The proposal ids the history acknowledged, and those the log names. */
export function proposalIds(ops: readonly Op[], entries: readonly LogEntry[]): Set<string> {
  const ids = new Set<string>();
  for (const o of ops)
    if ((o.f === 'propose' || o.f === 'judge' || o.f === 'withdraw') && o.type === 'ok' && str(o.got.proposalId)) ids.add(o.got.proposalId as string);
  for (const e of entries) if (str(e.body?.proposalId)) ids.add(e.body.proposalId as string);
  return ids;
}

/**
 * writes-acknowledged: every `ok` write is there, read through the processes (in turn):
 * a registered agent's profile (calibrated when a calibration was acknowledged), a proposal
 * (its kind and proposer), a judgment in its proposal, a withdrawal's status, a blob whose bytes
 * hash to its name, an attestation with the hash acknowledged, and a revocation's version
 * listing the credential, whose status names that version (a revocation is final: still set).
 * An `info` write may or may not be there: it is not looked for.
 */
export async function checkWrites(
  ops: readonly Op[],
  reader: Reader,
  proposals: Map<string, ProposalView | undefined>,
  versions: Map<string, VersionView[]>,
): Promise<{ found: Found[]; detail: string }> {
  const found: Found[] = [];
  const lacks = (op: Op, what: string, evidence: Json = {}) =>
    found.push({
      message: `${op.f} acknowledged at history line ${op.lines.at(-1)} (${op.node}): ${what}`,
      evidence: { lines: op.lines, node: op.node, acked: op.got, ...evidence },
    });
  let checked = 0;
  const agents = [...acked(ops, 'register'), ...acked(ops, 'calibrate')];
  await eachLimited(agents, 8, async (op) => {
    const tag = str(op.got.tag);
    if (!tag) return lacks(op, 'its answer names no agent tag');
    checked++;
    const r = await reader.get(`/api/agents/${tag}`);
    if (r.status !== 200) return lacks(op, `GET /api/agents/${tag} answers ${r.status}: the agent is gone`, { status: r.status });
    const profile = JSON.parse(r.bytes.toString('utf8')) as Json;
    if (op.f === 'calibrate' && (profile.intelligenceScore === null || profile.intelligenceScore === undefined))
      lacks(op, `agent ${tag} shows no calibration`, { profile: { tier: profile.tier, intelligenceScore: profile.intelligenceScore } });
  });
  for (const op of [...acked(ops, 'propose'), ...acked(ops, 'judge'), ...acked(ops, 'withdraw')]) {
    const id = str(op.got.proposalId);
    if (!id) {
      lacks(op, 'its answer names no proposal');
      continue;
    }
    checked++;
    const p = proposals.get(id);
    if (!p) {
      lacks(op, `proposal ${id} is gone (404)`);
      continue;
    }
    if (op.f === 'propose') {
      // A decision graph's detail names no kind (PROTOCOL 6.6): its id's prefix does (6.1).
      const kind = p.kind ?? kindOfProposalId(id);
      if (str(op.got.kind) && kind !== op.got.kind) lacks(op, `proposal ${id} is of kind ${kind}, not ${String(op.got.kind)}`);
      const tag = str(op.got.tag) ?? op.agent;
      if (tag && p.proposer !== tag) lacks(op, `proposal ${id} names the proposer ${p.proposer}, not ${tag}`);
    }
    if (op.f === 'judge' && !(p.judgments ?? []).some((j) => j.judgmentId === op.got.judgmentId))
      lacks(op, `proposal ${id} lacks judgment ${String(op.got.judgmentId)}`, { judgments: (p.judgments ?? []).map((j) => j.judgmentId) });
    if (op.f === 'withdraw' && p.status !== 'withdrawn') lacks(op, `proposal ${id} is ${p.status}, not withdrawn`);
  }
  await eachLimited(acked(ops, 'cas-put'), 8, async (op) => {
    const sha = str(op.got.sha256);
    if (!sha) return lacks(op, 'its answer names no sha256');
    checked++;
    const r = await reader.get(`/api/cas/${sha}`);
    if (r.status !== 200) return lacks(op, `GET /api/cas/${sha} answers ${r.status}: the blob is gone`, { status: r.status });
    const got = createHash('sha256').update(r.bytes).digest('hex');
    if (got !== sha) lacks(op, `the bytes served for ${sha} hash to ${got}`);
  });
  await eachLimited(acked(ops, 'attest'), 8, async (op) => {
    const id = str(op.got.id);
    if (!id) return lacks(op, 'its answer names no attestation id');
    checked++;
    const r = await reader.get(`/api/attestations/${id}`);
    if (r.status !== 200) return lacks(op, `GET /api/attestations/${id} answers ${r.status}: the entry is gone`, { status: r.status });
    const entry = (JSON.parse(r.bytes.toString('utf8')) as { entry: LogEntry }).entry;
    if (entry.hash !== op.got.hash) lacks(op, `attestation ${id} hashes to ${entry.hash}, not the ${String(op.got.hash)} acknowledged`);
  });
  for (const op of acked(ops, 'revoke')) {
    checked++;
    await checkRevocation(op, reader, versions, lacks);
  }
  return { found, detail: `${checked} acknowledged writes found` };
}

/** A revocation's version lists each credential it flipped, and each credential's status names that version. */
async function checkRevocation(op: Op, reader: Reader, versions: Map<string, VersionView[]>, lacks: (op: Op, what: string, evidence?: Json) => void) {
  const purpose = str(op.got.purpose);
  const version = op.got.version;
  if (!purpose || typeof version !== 'number') return lacks(op, 'its answer names no purpose and version');
  const credentials = Array.isArray(op.got.credentials) ? (op.got.credentials as Array<{ judgmentId: string; changed: boolean }>) : [];
  const v = (versions.get(purpose) ?? []).find((x) => x.version === version);
  if (op.got.changed === true && !v) return lacks(op, `the ${purpose} list serves no version ${version}`);
  for (const c of credentials) {
    if (c.changed && !v?.changes.some((x) => x.judgmentId === c.judgmentId))
      lacks(op, `version ${version} of the ${purpose} list does not list ${c.judgmentId}`);
    const r = await reader.get(`/api/credentials/status/${c.judgmentId}`);
    if (r.status !== 200) {
      lacks(op, `GET /api/credentials/status/${c.judgmentId} answers ${r.status}`);
      continue;
    }
    const status = (JSON.parse(r.bytes.toString('utf8')) as Json)[purpose] as { set?: boolean; version?: number; versions?: number[] } | undefined;
    const named = status?.versions ?? (status?.version === undefined ? [] : [status.version]);
    if (c.changed && !named.includes(version)) lacks(op, `the status of ${c.judgmentId} does not name ${purpose} version ${version}`, { status });
    if (op.got.action === 'revoke' && status?.set !== true) lacks(op, `${c.judgmentId} is no longer revoked (revocation is final)`, { status });
  }
}

/** The node's events in the log, by what they name (PROTOCOL 9.3). */
function eventIndex(entries: readonly LogEntry[]) {
  const count = new Map<string, number[]>();
  const add = (key: string, seq: number) => {
    const list = count.get(key);
    if (list) list.push(seq);
    else count.set(key, [seq]);
  };
  for (const e of entries) {
    const b = e.body ?? {};
    if (e.kind === 'attestation.event.v1') {
      if (b.event === 'judgment.recorded') add(`judgment.recorded ${String(b.judgmentId)}`, e.seq);
      else add(`${String(b.event)} ${String(b.proposalId)}`, e.seq);
    } else if (e.kind === 'status-list.version.v1') add(`status ${String(b.purpose)} ${String(b.version)}`, e.seq);
  }
  return count;
}

/**
 * events-logged (PROTOCOL 9.3): every acknowledged event has exactly one entry: a proposal its
 * proposal.submitted, a judgment its judgment.recorded, a withdrawal its proposal.withdrawn, a
 * revocation that changed a bit its status-list.version.v1 entry, and an attestation is the
 * entry of its id, with the hash acknowledged.
 */
export function checkEventsLogged(ops: readonly Op[], entries: readonly LogEntry[]): { found: Found[]; detail: string } {
  const events = eventIndex(entries);
  const found: Found[] = [];
  let checked = 0;
  const one = (op: Op, key: string) => {
    checked++;
    const seqs = events.get(key) ?? [];
    if (seqs.length !== 1)
      found.push({
        message: `${op.f} acknowledged at history line ${op.lines.at(-1)}: ${seqs.length} "${key}" entries in the log (expected 1)`,
        evidence: { lines: op.lines, acked: op.got, entries: seqs },
      });
  };
  for (const op of ops) {
    if (op.type !== 'ok') continue;
    if (op.f === 'propose') one(op, `proposal.submitted ${String(op.got.proposalId)}`);
    if (op.f === 'judge') one(op, `judgment.recorded ${String(op.got.judgmentId)}`);
    if (op.f === 'withdraw') one(op, `proposal.withdrawn ${String(op.got.proposalId)}`);
    if (op.f === 'revoke' && op.got.changed === true) one(op, `status ${String(op.got.purpose)} ${String(op.got.version)}`);
    if (op.f === 'attest' && str(op.got.id)) {
      checked++;
      const e = entries[Number.parseInt((op.got.id as string).slice(4), 16)];
      if (!e || e.id !== op.got.id || e.hash !== op.got.hash)
        found.push({
          message: `attestation ${String(op.got.id)} acknowledged at history line ${op.lines.at(-1)} is not that entry of the log`,
          evidence: { lines: op.lines, acked: op.got, entry: e ?? null },
        });
    }
  }
  return { found, detail: `${checked} acknowledged events matched to their entries` };
}

const TERMINAL = ['proposal.published', 'proposal.rejected', 'proposal.withdrawn'];

/**
 * one-decision (PROTOCOL 7.4, 9.3): a proposal has at most one decision or withdrawal in the
 * log, exactly one when its detail says it is decided or withdrawn (of that status), none
 * while pending; and the node's own audit of the proposals (`akas log check`: the judgments,
 * the status, the outcome, the pending indexes, the content binding) finds nothing.
 */
export function checkDecisions(
  entries: readonly LogEntry[],
  proposals: Map<string, ProposalView | undefined>,
  auditProblems: readonly string[],
): { found: Found[]; detail: string } {
  const events = eventIndex(entries);
  const found: Found[] = [];
  for (const [id, p] of proposals) {
    const terminal = TERMINAL.map((t) => ({ t, seqs: events.get(`${t} ${id}`) ?? [] })).filter((x) => x.seqs.length);
    const count = terminal.reduce((n, x) => n + x.seqs.length, 0);
    const evidence = { proposalId: id, status: p?.status, entries: terminal };
    if (count > 1) found.push({ message: `proposal ${id} has ${count} decisions in the log (${terminal.map((x) => x.t).join(', ')})`, evidence });
    else if (p && p.status !== 'pending' && (count !== 1 || terminal[0].t !== `proposal.${p.status}`))
      found.push({ message: `proposal ${id} is ${p.status}, and the log holds ${terminal.map((x) => x.t).join(', ') || 'no decision'}`, evidence });
    else if (p?.status === 'pending' && count > 0) found.push({ message: `proposal ${id} is pending, and the log decided it (${terminal[0].t})`, evidence });
  }
  for (const problem of auditProblems) found.push({ message: `akas log check: ${problem}`, evidence: { problem } });
  return { found, detail: `${proposals.size} proposals, one decision each at most` };
}

/**
 * status-versions (PROTOCOL 8.7): each list's versions are 0..N with no gap, made in time
 * order, and each is in the log (one status-list.version.v1 entry of that purpose, version
 * and credential sha256) as each such entry's version is served; versions only grow: a
 * revocation answered after another was answered has a version at least as new (newer when it
 * changed a bit), and the newest served is at least every version acknowledged.
 */
export function checkStatusVersions(
  ops: readonly Op[],
  entries: readonly LogEntry[],
  versions: Map<string, VersionView[]>,
): { found: Found[]; detail: string } {
  const found: Found[] = [];
  let count = 0;
  for (const purpose of PURPOSES) {
    const list = versions.get(purpose) ?? [];
    count += list.length;
    list.forEach((v, i) => {
      if (v.version !== i)
        found.push({
          message: `the ${purpose} list serves version ${v.version} where version ${i} was due: a gap`,
          evidence: { purpose, served: list.map((x) => x.version) },
        });
      if (i > 0 && v.at < list[i - 1].at)
        found.push({
          message: `version ${v.version} of the ${purpose} list was made before version ${v.version - 1}`,
          evidence: { purpose, versions: [list[i - 1], v] },
        });
    });
    const logged = entries.filter((e) => e.kind === 'status-list.version.v1' && e.body?.purpose === purpose);
    for (const v of list) {
      const mine = logged.filter((e) => e.body.version === v.version);
      if (mine.length !== 1 || mine[0].body.credentialSha256 !== v.credentialSha256)
        found.push({
          message: `version ${v.version} of the ${purpose} list has ${mine.length} log entries${mine.length === 1 ? ' of another credential sha256' : ''}`,
          evidence: { purpose, version: v, entries: mine },
        });
    }
    for (const e of logged) {
      if (!list.some((v) => v.version === e.body.version))
        found.push({
          message: `log entry ${e.seq} records version ${String(e.body.version)} of the ${purpose} list, which is not served`,
          evidence: { purpose, entry: e },
        });
    }
    const newest = list.at(-1)?.version ?? -1;
    const answered = ops.filter((o) => o.f === 'revoke' && o.type === 'ok' && o.got.purpose === purpose && typeof o.got.version === 'number');
    for (const b of answered) {
      if ((b.got.version as number) > newest)
        found.push({
          message: `version ${String(b.got.version)} of the ${purpose} list was acknowledged; the newest served is ${newest}`,
          evidence: { lines: b.lines, acked: b.got },
        });
      for (const a of answered) {
        if (!precedes(a, b)) continue;
        const [va, vb] = [a.got.version as number, b.got.version as number];
        if (vb < va || (b.got.changed === true && vb === va))
          found.push({
            message: `the ${purpose} list went back: version ${vb} answered after version ${va} was`,
            evidence: { earlier: { lines: a.lines, acked: a.got }, later: { lines: b.lines, acked: b.got } },
          });
      }
    }
  }
  return { found, detail: `${count} list versions, each logged, in order` };
}
