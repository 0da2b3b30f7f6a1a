// The offline bundle of a proposal (PROTOCOL 8.4): everything an auditor needs to check its
// judgments with no node: the proposal and its judgments with their L2 signatures, the
// judges' public keys with their validity windows, the L1 credentials, the node's issuer keys
// with their signed rotations, and the content hashes the proposal references.
import { ServiceError } from '../core/index.js';
import type { Ctx } from '../domain/context.js';
import { Credentials } from '../domain/credentials.js';
import { getProposal } from '../domain/proposals.js';
import { casHashOfUri } from '../domain/proposal-kinds.js';
import { Agents, type ProposalRecord } from '../domain/records.js';
import { nodeKeysView } from './routes/credentials.js';
import { entryView } from './routes/log.js';
import type { TransparencyLog } from '../domain/log.js';
import { servedCheckpoint, type WitnessClient } from '../domain/witnesses.js';
import { proposalView } from './views.js';

export const BUNDLE_FORMAT = 'akas.bundle.v1';

/** A content hash a proposal names, with what it stands for. */
export interface BundleCasRef {
  sha256: string;
  role: 'artifact' | 'dataset' | 'samples';
  /** Where the bytes are (artifacts). */
  uri?: string;
  bytes?: number;
  /** The node checked these bytes itself (its own content store). */
  platformVerified?: boolean;
}

/** The sha256 values a proposal's payload names. */
export function casRefs(p: ProposalRecord, origin?: string): BundleCasRef[] {
  const payload = p.payload as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (p.kind === 'artifact') {
    const a = payload.payload;
    return [{ sha256: a.sha256, role: 'artifact', uri: a.uri, bytes: a.bytes, platformVerified: casHashOfUri(a.uri, origin) === a.sha256 }];
  }
  if (p.kind === 'eval-result') {
    return [
      { sha256: payload.datasetSha256, role: 'dataset' },
      ...(payload.samplesSha256 ? [{ sha256: payload.samplesSha256 as string, role: 'samples' as const }] : []),
    ];
  }
  return [];
}

/**
 * Each judgment's log entry with its inclusion proof against one checkpoint (made now, so it
 * covers every entry already appended), and the log's key with the issuer's endorsement of it.
 */
async function logPart(ctx: Ctx, log: TransparencyLog, p: ProposalRecord, witnesses?: WitnessClient, waitMs = 0) {
  await log.drain(); // judgments recorded a moment ago are appended first
  const found = [];
  for (const j of p.judgments) {
    const entry = await log.judgmentEntry(p.proposalId, j.judgmentId);
    if (entry) found.push({ j, entry });
  }
  // The checkpoint covers every judgment's entry; with witnesses it is their cosigned one (PROTOCOL 9.9).
  const { cp, note } = await servedCheckpoint(log, witnesses, Math.max(0, ...found.map((f) => f.entry.seq + 1)), waitMs);
  const entries = [];
  for (const { j, entry } of found) {
    if (entry.seq >= cp.size) continue; // not yet appended: the verifier says so
    const proof = await log.inclusion(entry.seq, cp.size);
    entries.push({ judgmentId: j.judgmentId, entry: entryView(entry), inclusion: { index: entry.seq, size: cp.size, proof: proof.map((b) => b.toString('base64')) } });
  }
  return { origin: ctx.keys.log.origin, verifierKey: ctx.keys.log.verifierKey, endorsement: ctx.keys.log.endorsement, checkpoint: note, entries };
}

export async function proposalBundle(ctx: Ctx, log: TransparencyLog, proposalId: string, origin: string, witnesses?: WitnessClient, waitMs = 0) {
  const p = await getProposal(ctx, proposalId);
  const judges = [];
  for (const tag of [...new Set(p.judgments.map((j) => j.agentTag))]) {
    const a = await ctx.store.get(Agents, tag);
    if (!a) throw new ServiceError('internal_error', `judge ${tag} of ${proposalId} is missing`);
    judges.push({ tag, signing: { algorithm: 'Ed25519', publicKey: a.signing.publicKey, validFrom: a.signing.validFrom, priorKeys: a.signing.priorKeys } });
  }
  const credentials = [];
  for (const j of p.judgments) {
    const c = await ctx.store.get(Credentials, j.judgmentId);
    if (c) credentials.push(c);
  }
  return {
    format: BUNDLE_FORMAT,
    exportedAt: ctx.clock.now(),
    node: { origin, issuer: ctx.keys.issuer.did },
    proposal: proposalView(p),
    judges,
    credentials,
    issuerKeys: nodeKeysView(ctx.keys).issuer,
    cas: casRefs(p, origin),
    log: await logPart(ctx, log, p, witnesses, waitMs),
  };
}
