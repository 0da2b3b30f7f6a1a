// Stored record shapes and the keyspaces that hold them. Lock-key helpers sit beside the
// spaces they guard so every writer of a record takes the same lock.
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
  ip: string;
}

/** A proposal of any kind (the proposals module owns the full shape). */
export interface ProposalCore {
  proposalId: string;
  proposer: Proposer | null;
}

export const Proposals = space<ProposalCore & Record<string, unknown>>('proposals');
