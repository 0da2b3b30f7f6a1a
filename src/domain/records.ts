// Stored record shapes and the keyspaces that hold them. Lock-key helpers sit beside the
// spaces they guard so every writer of a record takes the same lock.
import type { ProposalKind } from '../core/index.js';
import { space } from '../store/index.js';

export interface PriorKey {
  publicKey: string;
  validFrom: number;
  validUntil: number;
}

export interface AgentRecord {
  tag: string;
  apiKeyHash: string;
  createdAt: number;
  calibrationPoolId: 'A' | 'B';
  promptId?: string;
  attesterLineage?: Record<string, unknown>;
  registeredIp: string;
  signing: { publicKey: string; validFrom: number; priorKeys: PriorKey[] };
  recoveryTokenHash: string;
  /** Increments at each recover; claim secrets bind to the generation they were issued under. */
  keyGeneration: number;
  /**
   * The public key a recovery with the recovery token (channel A) rotated onto: claim secrets
   * bound to a key older than it no longer recover (PROTOCOL 2.5). Absent: none revoked.
   */
  claimsFloorKey?: string;
  calibration: { attempts: number; score: number | null; bonusPaid: boolean; lastAttemptAt: number | null };
  balance: number;
  reservedBalance: number;
  totalAnswered: number;
  decoyAttempted: number;
  decoyFailed: number;
  bannedUntil: number | null;
  contributions: { proposals: number; judgments: number; published: number };
  /** Judgments of this agent on proposals that have been decided, and how many agreed with the outcome. */
  alignment: { decided: number; aligned: number };
  appeals: number;
  /**
   * The number of this agent's last ledger entry (absent: none yet). moveCredits takes the next
   * one in the transaction that writes this record, under the agent's lock, and keys the entry
   * by it (ledger.ts): the agent's entries are ordered as they happened, whatever the clocks or
   * counters of the processes that wrote them say.
   */
  ledgerSeq?: number;
}

/** What an api key hash points at: the live key of an agent, or one that a recover rotated out. */
export interface ApiKeyRecord {
  tag: string;
  state: 'live' | 'rotated';
  at: number;
}

export type LedgerType = 'mint' | 'spend' | 'reserve' | 'refund' | 'slash';

/** One credit movement. mint/spend/slash change gross capital; reserve/refund move it between balance and reservedBalance. */
export interface LedgerEntry {
  id: string;
  /**
   * Its number among its agent's entries, from 1 (the agent record's ledgerSeq when it was
   * made), also in its key. Absent on an entry stored before the ledger was ordered per agent,
   * until the migration numbers it (migrations.ts).
   */
  seq?: number;
  /** When it was made, by the clock of the process that made it: data, never the order. */
  at: number;
  agent: string;
  type: LedgerType;
  amount: number;
  reason: string;
  ref?: string;
}

export const Agents = space<AgentRecord>('agents');
export const ApiKeys = space<ApiKeyRecord>('api-keys');
export const Ledger = space<LedgerEntry>('ledger');
/** Small integer counters (per-IP registrations per day, propose caps). */
export const Counters = space<{ count: number; resetAt: number }>('counters');

export const agentLock = (tag: string) => `agent:${tag}`;

/** The proposer of an authed proposal and the public key it held then (recover channel B binds to it). */
export interface Proposer {
  tag: string;
  publicKey: string;
}

export type ProposalStatus = 'pending' | 'published' | 'rejected' | 'withdrawn';

export type { ScoreDimensions as Scores, JudgmentSigningPayload } from '../core/index.js';
import type { ScoreDimensions as Scores, JudgmentSigningPayload } from '../core/index.js';

export interface JudgmentRecord {
  judgmentId: string;
  agentTag: string;
  scores: Scores;
  composite: number;
  rationale: string;
  receivedAt: number;
  /** The judge's smoothed alignment when it judged. */
  alignment: number;
  weight: number;
  tier: string;
  intelligenceScore: number;
  ip: string;
  /**
   * The content this judgment is bound to (PROTOCOL 6.10): the proposal's contentSha256. Signed
   * by the judge when signature.payload is akas.judgment.v2; the node's word when it is v1.
   * Set by the migration for judgments stored before content binding.
   */
  contentSha256: string;
  /** L2: the judge's own Ed25519 signature over the JCS payload, and the key it verified against. */
  signature: { algorithm: 'Ed25519'; publicKey: string; signature: string; payload: JudgmentSigningPayload };
  /** The judge's signature paired with the node's HMAC over the same payload (PROTOCOL 7.2: the node also signs). */
  attestation: {
    type: 'akas.judgment.attestation.v1';
    payloadSha256: string;
    judgeSignature: { algorithm: 'Ed25519'; publicKey: string; signature: string };
    nodeMac: { algorithm: 'HMAC-SHA256'; signingKeyId: string; mac: string };
    attestedAt: number;
  };
}

export interface ProposalRecord {
  proposalId: string;
  kind: ProposalKind;
  status: ProposalStatus;
  submittedAt: number;
  decidedAt: number | null;
  /** null on the anonymous path. */
  proposer: Proposer | null;
  proposerIp: string;
  path: string | null;
  title: string;
  payload: Record<string, unknown>;
  requiredJudgments: number;
  judgments: JudgmentRecord[];
  deposit: number;
  billable: boolean;
  tier: string;
  conflictKeys: string[];
  /** sha256 of the JCS of the proposal's content (PROTOCOL 6.10), computed once at propose and never again. */
  contentSha256: string;
  /**
   * What binds the content: `log`, a proposal.submitted event appended with the proposal; `store`,
   * a proposal stored before content binding, whose contentSha256 the migration computed from the
   * stored body (no event can be added after the fact).
   */
  contentBinding: 'log' | 'store';
  outcome: { weightedComposite: number; decision: 'published' | 'rejected'; depositSettlement: 'refunded' | 'slashed' | 'none' } | null;
}

export const Proposals = space<ProposalRecord>('proposals');
/** Conflict key (path, brief id, content hash) -> the pending proposal holding it. */
export const PendingKeys = space<{ proposalId: string }>('pending-keys');
/** `${submittedAt}:${proposalId}` of every pending proposal, oldest first: the judge queue. */
export const PendingQueue = space<{ kind: ProposalKind; proposer: string | null }>('pending-queue');
/** judgmentId -> where it lives (credential URLs name it). */
export const JudgmentIndex = space<{ proposalId: string; kind: ProposalKind }>('judgment-index');

export const proposalLock = (id: string) => `proposal:${id}`;
