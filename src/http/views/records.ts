// How records are shown: proposals and their judgments (PROTOCOL 6.6: the detail route, the
// judge queue's expanded items and the offline bundle all answer these same views), log entries
// (9.5: the log's reads, attestations, evidence and bundles) and the node's public keys (8.3: the
// keys route, the descriptor and bundles). Route files and the documents built beside them
// import these, never each other.
import {
  canonicalize,
  credentialUrl,
  ed25519Multibase,
  entryLeaf,
  isoTime,
  leafHash,
  type LogEntry,
  type NodeKeys,
  type ProposalKind,
} from '../../core/index.js';
import { judgeUrl } from '../../domain/proposals/kinds.js';
import type { JudgmentRecord, ProposalRecord } from '../../domain/records.js';

export function judgmentView(kind: ProposalKind, proposalId: string, j: JudgmentRecord) {
  return {
    judgmentId: j.judgmentId,
    agentTag: j.agentTag,
    scores: j.scores,
    composite: j.composite,
    rationale: j.rationale,
    receivedAt: j.receivedAt,
    alignment: j.alignment,
    weight: j.weight,
    tier: j.tier,
    // The content the judgment is bound to, and by whom (PROTOCOL 7.2): its judge's v2
    // signature, or (a v1 judgment) the node's word only.
    contentSha256: j.contentSha256,
    contentBoundBy: j.signature.payload.type === 'akas.judgment.v2' ? 'judge' : 'node',
    signature: {
      algorithm: j.signature.algorithm,
      publicKey: j.signature.publicKey,
      signature: j.signature.signature,
      signingPayload: canonicalize(j.signature.payload),
    },
    attestation: j.attestation,
    credentialUrl: credentialUrl(kind, proposalId, j.judgmentId),
  };
}

/** The detail view of a proposal: DgProposal for decision graphs, the common shape otherwise. */
export function proposalView(p: ProposalRecord) {
  return p.kind === 'graph' ? graphProposalView(p) : commonProposalView(p);
}

const judgmentsOf = (p: ProposalRecord) => (p.judgments.length ? { judgments: p.judgments.map((j) => judgmentView(p.kind, p.proposalId, j)) } : {});

function commonOf(p: ProposalRecord) {
  return {
    status: p.status,
    submittedAt: p.submittedAt,
    decidedAt: p.decidedAt,
    judgmentCount: p.judgments.length,
    requiredJudgments: p.requiredJudgments,
    contentSha256: p.contentSha256,
    contentBinding: p.contentBinding,
  };
}

/** DgProposal (PROTOCOL 6.6): a decision graph shown by the node it proposes. */
function graphProposalView(p: ProposalRecord) {
  const g = p.payload as { path: string; title: string; spec: string; payload: Record<string, unknown>; replaceExisting?: boolean };
  return {
    proposalId: p.proposalId,
    path: g.path,
    title: g.title,
    spec: g.spec,
    payload: g.payload,
    ...commonOf(p),
    replaceExisting: g.replaceExisting ?? false,
    proposer: p.proposer?.tag ?? null,
    outcome: p.outcome,
    ...judgmentsOf(p),
  };
}

/** The common shape of a proposal of any kind but a decision graph (PROTOCOL 6.6). */
export function commonProposalView(p: ProposalRecord) {
  return {
    proposalId: p.proposalId,
    kind: p.kind,
    path: p.path,
    title: p.title,
    ...commonOf(p),
    proposer: p.proposer?.tag ?? null,
    payload: p.payload,
    deposit: p.deposit,
    outcome: p.outcome,
    judgeUrl: judgeUrl(p.kind, p.proposalId),
    ...judgmentsOf(p),
  };
}

/** An entry as served: the stored entry and its leaf hash (base64), which proofs start from. */
export const entryView = ({ ticket: _ticket, ...e }: LogEntry) => ({ ...e, leafHash: leafHash(entryLeaf(e)).toString('base64') });

/** The public half of the node's keys (GET /api/node/keys). */
export function nodeKeysView(keys: NodeKeys) {
  return {
    issuer: {
      current: keys.issuer.did,
      keys: keys.issuers.map((k) => ({ ...k, validFromIso: isoTime(k.validFrom), validUntilIso: k.validUntil === null ? null : isoTime(k.validUntil) })),
      rotations: keys.rotations,
      note:
        'Each rotation is signed by the old and the new key over the JCS of {type, from, to, at}: from any issuer DID you trust, the ' +
        "chain reaches the others, and each key was the issuer's from the rotation into it until the rotation out of it.",
    },
    hmac: keys.hmac.map((h, i) => ({ signingKeyId: h.signingKeyId, createdAt: h.createdAt, current: i === 0 })),
    log: {
      origin: keys.log.origin,
      verifierKey: keys.log.verifierKey,
      publicKey: keys.log.publicKey,
      publicKeyMultibase: ed25519Multibase(keys.log.publicKey),
      endorsement: keys.log.endorsement,
      note:
        'Checkpoints are C2SP signed notes under verifierKey; the current issuer key signs the JCS of {type, origin, verifierKey, ' +
        'issuer} (endorsement), so a pinned issuer pins the log too.',
    },
  };
}
