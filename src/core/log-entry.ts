// The entries of the node's attestation chain and transparency log (PROTOCOL 9): one shape
// for the node that appends them, the monitor that audits them and the offline verifier.
// Entry i is leaf i of an RFC 9162 Merkle tree: the leaf is the JCS bytes of
// {seq, prevHash, kind, tier, body, agent, attestedAt}, whose SHA-256 is the entry's `hash`
// (so the chain links entries by hash, and the tree commits to the same bytes).
import { canonicalBytes, canonicalize } from './jcs.js';
import { sha256Hex } from './hash.js';

/** The five tiers of attestations, and `event` for every other kind (the node's audit trail among them). */
export type AttestationTier = 'pipeline' | 'experiment' | 'leaderboard' | 'review' | 'governance' | 'event';

export interface LogEntry {
  /** att_ + 16 hex. */
  id: string;
  /** Its index in the log (the leaf index), from 0. */
  seq: number;
  /** The previous entry's hash; 64 zeros for the first. */
  prevHash: string;
  kind: string;
  tier: AttestationTier;
  body: Record<string, unknown>;
  /** The agent the entry is from or about (its tag); null for what concerns no agent. */
  agent: string | null;
  attestedAt: number;
  /** sha256 hex of the leaf bytes. */
  hash: string;
  /** HMAC-SHA256 hex of `hash` under the node key `signingKeyId` (L3: only the node can check it). */
  mac: string;
  signingKeyId: string;
  /** Node-internal: the outbox ticket it was appended from (not hashed, not served). */
  ticket?: string;
}

export const GENESIS_PREV_HASH = '0'.repeat(64);

/** The fields an entry's hash covers. */
export const hashedFields = (e: Pick<LogEntry, 'seq' | 'prevHash' | 'kind' | 'tier' | 'body' | 'agent' | 'attestedAt'>) => ({
  seq: e.seq,
  prevHash: e.prevHash,
  kind: e.kind,
  tier: e.tier,
  body: e.body,
  agent: e.agent,
  attestedAt: e.attestedAt,
});

/** The leaf bytes of an entry (RFC 9162 leaf data). */
export const entryLeaf = (e: Parameters<typeof hashedFields>[0]) => canonicalBytes(hashedFields(e));

/** The hash an entry must carry. */
export const entryHash = (e: Parameters<typeof hashedFields>[0]) => sha256Hex(canonicalize(hashedFields(e)));

/** The statement by which an issuer key vouches for the log key (a pinned issuer then pins the log). */
export interface LogKeyEndorsement {
  type: 'akas.log-key.v1';
  origin: string;
  verifierKey: string;
  issuer: string;
}
