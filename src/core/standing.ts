// An agent's standing (PROTOCOL 8.9): a W3C VC 2.0 credential whose figures are functions of the
// log's entries up to a checkpoint. The figures are computed here, once, for the node that issues
// the credential and for every verifier that recomputes them from the entries (the same code
// run on entries the reader holds, proven against the checkpoint the credential names).
import { isoTime, VC_V2_CONTEXT } from './credential.js';
import type { LogEntry } from './log-entry.js';
import { tierOf, type Tier } from './tiers.js';

export const STANDING_CREDENTIAL_TYPE = 'AgentStandingCredential';
/** The node's entries about an agent that no proposal carries: calibration and decoy failures (PROTOCOL 9.3). */
export const AGENT_EVENT_KIND = 'agent.event.v1';
export const AGENT_EVENT_SCHEMA_VERSION = '1.0.0';
/** The node's own audit events (PROTOCOL 9.3), as the figures read them. */
const AUDIT_EVENT_KIND = 'attestation.event.v1';
/** How long a standing is valid: a reader wants a fresh one after this (PROTOCOL 8.9). */
export const STANDING_VALID_MS = 30 * 24 * 60 * 60 * 1000;

export type AgentEventName = 'agent.calibrated' | 'agent.decoy-failed';

/** The body of an agent.event.v1 entry. */
export function agentEvent(event: AgentEventName, at: number, facts: Record<string, number | string | null>) {
  return { schemaVersion: AGENT_EVENT_SCHEMA_VERSION, event, ...facts, at };
}

/** What a standing says, each figure defined in PROTOCOL 8.9 by the entries it counts. */
export interface StandingFigures {
  tier: Tier;
  calibration: { score: number | null; at: string | null };
  judgments: { made: number; decided: number; agreed: number; agreementShare: number | null };
  proposals: { submitted: number; published: number; rejected: number };
  reputation: { status: 'banned' | 'clear'; decoyFailed: number; bannedUntil: string | null };
}

/** The stretch of the log the figures cover: entries [0, end), and the times of the first and last the agent counted in. */
export interface StandingWindow {
  entries: { start: 0; end: number };
  from: string | null;
  until: string | null;
}

/** The checkpoint the figures were computed at: its signed note names the same size and root. */
export interface StandingCheckpoint {
  size: number;
  /** sha256 hex root of the log's first `size` entries. */
  rootHash: string;
  /** The C2SP signed note of that checkpoint, as the node's log signed it. */
  note: string;
}

export type EntryFacts = Pick<LogEntry, 'seq' | 'kind' | 'agent' | 'body' | 'attestedAt'>;

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * The figures of agent `tag` from the log's entries below `size`, at instant `at` (the
 * credential's validFrom, which decides whether a ban still runs). Entries may come in any
 * order and may be any superset of those about the agent and the decisions on its judgments.
 */
export function standingFigures(tag: string, entries: Iterable<EntryFacts>, size: number, at: number): { figures: StandingFigures; window: StandingWindow } {
  const own: EntryFacts[] = [];
  const decisions: EntryFacts[] = [];
  for (const e of entries) {
    if (e.seq >= size) continue;
    const event = e.body.event;
    if (e.kind === AUDIT_EVENT_KIND && (event === 'proposal.published' || event === 'proposal.rejected')) decisions.push(e);
    if (e.agent === tag && (e.kind === AUDIT_EVENT_KIND || e.kind === AGENT_EVENT_KIND)) own.push(e);
  }
  own.sort((a, b) => a.seq - b.seq);
  const judged = new Set<string>();
  const proposals = { submitted: 0, published: 0, rejected: 0 };
  let calibration: { score: number | null; at: string | null } = { score: null, at: null };
  let decoyFailed = 0;
  let bannedUntil: number | null = null;
  const counted: number[] = [];
  for (const e of own) {
    const b = e.body;
    if (e.kind === AUDIT_EVENT_KIND) {
      if (b.event === 'judgment.recorded' && typeof b.judgmentId === 'string') judged.add(b.judgmentId);
      else if (b.event === 'proposal.submitted') proposals.submitted++;
      else if (b.event === 'proposal.published') proposals.published++;
      else if (b.event === 'proposal.rejected') proposals.rejected++;
      else continue;
    } else if (b.event === 'agent.calibrated' && num(b.intelligenceScore) !== null) {
      calibration = { score: num(b.intelligenceScore), at: num(b.at) === null ? null : isoTime(b.at as number) };
    } else if (b.event === 'agent.decoy-failed') {
      decoyFailed = Math.max(decoyFailed, num(b.decoyFailed) ?? 0);
      const until = num(b.bannedUntil);
      if (until !== null) bannedUntil = Math.max(bannedUntil ?? until, until);
    } else continue;
    counted.push(e.attestedAt);
  }
  let decided = 0;
  let agreed = 0;
  for (const d of decisions) {
    const published = d.body.event === 'proposal.published';
    const rule = d.body.rule as { publishThreshold?: unknown } | undefined;
    const threshold = num(rule?.publishThreshold);
    const list = Array.isArray(d.body.judgments) ? (d.body.judgments as Array<{ judgmentId?: unknown; composite?: unknown }>) : [];
    for (const j of list) {
      if (typeof j.judgmentId !== 'string' || !judged.has(j.judgmentId)) continue;
      const composite = num(j.composite);
      decided++;
      if (threshold !== null && composite !== null && composite >= threshold === published) agreed++;
    }
  }
  const figures: StandingFigures = {
    tier: tierOf(calibration.score),
    calibration,
    judgments: { made: judged.size, decided, agreed, agreementShare: decided ? round6(agreed / decided) : null },
    proposals,
    reputation: {
      status: bannedUntil !== null && bannedUntil > at ? 'banned' : 'clear',
      decoyFailed,
      bannedUntil: bannedUntil === null ? null : isoTime(bannedUntil),
    },
  };
  const window: StandingWindow = {
    entries: { start: 0, end: size },
    from: counted.length ? isoTime(Math.min(...counted)) : null,
    until: counted.length ? isoTime(Math.max(...counted)) : null,
  };
  return { figures, window };
}

/** The figure names a verifier compares, in the order it reports them. */
export const STANDING_FIGURES = ['tier', 'calibration', 'judgments', 'proposals', 'reputation', 'window'] as const;

/** The subject of a standing credential: the agent, its figures, and where they were computed. */
export interface StandingSubject extends StandingFigures {
  id: string;
  tag: string;
  publicKey: string;
  window: StandingWindow;
  checkpoint: StandingCheckpoint;
}

export interface UnsignedStandingCredential {
  '@context': string[];
  id: string;
  type: string[];
  issuer: string;
  validFrom: string;
  validUntil: string;
  credentialSubject: StandingSubject;
}

/** The subject and credential id of a standing: a URN, since it outlives any one URL of a node. */
export const standingUrn = (standingId: string) => `urn:akas:standing:${standingId}`;

/** The unsigned AgentStandingCredential; validFrom is when it was computed. */
export function standingCredential(f: {
  issuer: string;
  standingId: string;
  at: number;
  agent: { tag: string; did: string; publicKey: string };
  figures: StandingFigures;
  window: StandingWindow;
  checkpoint: StandingCheckpoint;
}): UnsignedStandingCredential {
  return {
    '@context': [VC_V2_CONTEXT],
    id: standingUrn(f.standingId),
    type: ['VerifiableCredential', STANDING_CREDENTIAL_TYPE],
    issuer: f.issuer,
    validFrom: isoTime(f.at),
    validUntil: isoTime(f.at + STANDING_VALID_MS),
    credentialSubject: {
      id: f.agent.did,
      tag: f.agent.tag,
      publicKey: f.agent.publicKey,
      ...f.figures,
      window: f.window,
      checkpoint: f.checkpoint,
    },
  };
}
