// The offline bundle of a proposal (PROTOCOL 8.4): everything an auditor needs to check its
// judgments with no node: the proposal and its judgments with their L2 signatures, the
// judges' public keys with their validity windows, the L1 credentials, the node's issuer keys
// with their signed rotations, the content hashes the proposal references, and the node's log
// events about the proposal (submitted, each judgment, the decision) with their inclusion
// proofs: enough to prove offline that what was judged is what is published (PROTOCOL 8.4).
import { hashesNamedBy, proposalContent, ServiceError, type NamedHash } from '../core/index.js';
import type { Ctx } from '../domain/context.js';
import { Credentials } from '../domain/credentials/credentials.js';
import { getProposal } from '../domain/proposals/proposals.js';
import { casHashOfUri } from '../domain/proposals/kinds.js';
import { Agents, type ProposalRecord } from '../domain/records.js';
import { EVENT_KIND, servedCheckpoint, type TransparencyLog, type WitnessClient } from '../domain/log/index.js';
import { statusPart } from './bundle-status.js';
import { entryView, nodeKeysView, proposalView } from './views/records.js';

export const BUNDLE_FORMAT = 'akas.bundle.v2' as const;

/** A content hash a proposal names, with what it stands for. */
export interface BundleCasRef extends NamedHash {
  /** The node checked these bytes itself (its own content store). */
  platformVerified?: boolean;
}

/** The sha256 values a proposal's content names (src/core/content.ts, so the verifier derives the same list). */
export function casRefs(p: ProposalRecord, origin?: string): BundleCasRef[] {
  return hashesNamedBy(proposalContent(p.kind, p.payload)).map((ref) =>
    ref.role === 'artifact' ? { ...ref, platformVerified: casHashOfUri(ref.uri!, origin) === ref.sha256 } : ref,
  );
}

/**
 * The node's log events about the proposal (proposal.submitted, each judgment.recorded, the
 * decision or withdrawal) with their inclusion proofs against one checkpoint (made now, so it
 * covers every entry already appended), and the log's key with the issuer's endorsement of it.
 */
async function logPart(ctx: Ctx, log: TransparencyLog, p: ProposalRecord, witnesses?: WitnessClient, waitMs = 0) {
  await log.drain(); // events recorded a moment ago are appended first
  const found = (await log.byIndex(`proposal:${p.proposalId}:`, 1000)).filter((entry) => entry.kind === EVENT_KIND && entry.body.proposalId === p.proposalId);
  // The checkpoint covers every event; with witnesses it is their cosigned one (PROTOCOL 9.9).
  const { cp, note } = await servedCheckpoint(log, witnesses, Math.max(0, ...found.map((entry) => entry.seq + 1)), waitMs);
  const entries = [];
  for (const entry of found) {
    if (entry.seq >= cp.size) continue; // not yet appended: the verifier says so
    const proof = await log.inclusion(entry.seq, cp.size);
    const event = String(entry.body.event);
    entries.push({
      event,
      ...(typeof entry.body.judgmentId === 'string' ? { judgmentId: entry.body.judgmentId } : {}),
      entry: entryView(entry),
      inclusion: { index: entry.seq, size: cp.size, proof: proof.map((b) => b.toString('base64')) },
    });
  }
  return {
    cp,
    part: { origin: ctx.keys.log.origin, verifierKey: ctx.keys.log.verifierKey, endorsement: ctx.keys.log.endorsement, checkpoint: note, entries },
  };
}

/** The public keys of a proposal's judges with their windows (PROTOCOL 8.4 `judges`): a bundle's, and a full read's evidence (10.7). */
export async function judgesOf(ctx: Pick<Ctx, 'store'>, p: ProposalRecord) {
  const judges = [];
  for (const tag of [...new Set(p.judgments.map((j) => j.agentTag))]) {
    const a = await ctx.store.get(Agents, tag);
    if (!a) throw new ServiceError('internal_error', `judge ${tag} of ${p.proposalId} is missing`);
    judges.push({ tag, signing: { algorithm: 'Ed25519', publicKey: a.signing.publicKey, validFrom: a.signing.validFrom, priorKeys: a.signing.priorKeys } });
  }
  return judges;
}

/** The judgment credentials of a proposal's judgments (PROTOCOL 8.1), in the judgments' order. */
export async function credentialsOf(ctx: Pick<Ctx, 'store'>, p: ProposalRecord) {
  const credentials = [];
  for (const j of p.judgments) {
    const c = await ctx.store.get(Credentials, j.judgmentId);
    if (c) credentials.push(c);
  }
  return credentials;
}

export async function proposalBundle(ctx: Ctx, log: TransparencyLog, proposalId: string, origin: string, witnesses?: WitnessClient, waitMs = 0) {
  const p = await getProposal(ctx, proposalId);
  const judges = await judgesOf(ctx, p);
  const credentials = await credentialsOf(ctx, p);
  const logged = await logPart(ctx, log, p, witnesses, waitMs);
  return {
    format: BUNDLE_FORMAT,
    exportedAt: ctx.clock.now(),
    node: { origin, issuer: ctx.keys.issuer.did },
    proposal: proposalView(p),
    judges,
    credentials,
    issuerKeys: nodeKeysView(ctx.keys).issuer,
    cas: casRefs(p, origin),
    log: logged.part,
    // The status lists as of the checkpoint, the head that says so, and the versions that changed these credentials (PROTOCOL 8.7).
    status: await statusPart(
      ctx,
      log,
      logged.cp,
      p.judgments.map((j) => j.judgmentId),
    ),
  };
}
