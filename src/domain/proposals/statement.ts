// A decided proposal as an in-toto Statement v1 (PROTOCOL 16.1): its subject the content hash
// named by its path (and an artifact's bytes by their URI), its predicate the decision with the
// composite and rule it was made by, each judge and its judgment credential, and the log event
// that recorded it. A pending or withdrawn proposal has no decision to state.
import {
  AKAS_PREDICATE_BASE,
  canonicalize,
  credentialUrl,
  hashesNamedBy,
  proposalContent,
  PUBLISH_THRESHOLD,
  type ResourceDescriptor,
  ServiceError,
  sha256Hex,
  type Statement,
  STATEMENT_TYPE,
} from '../../core/index.js';
import type { Ctx } from '../context.js';
import { Credentials } from '../credentials/credentials.js';
import { EVENT_KIND, type TransparencyLog } from '../log/index.js';
import { getProposal } from './proposals.js';

export const DECISION_PREDICATE = `${AKAS_PREDICATE_BASE}decision/v1`;

export async function decisionStatement(ctx: Ctx, log: TransparencyLog, proposalId: string, origin: string): Promise<Statement> {
  const p = await getProposal(ctx, proposalId);
  if (!p.outcome || (p.status !== 'published' && p.status !== 'rejected')) {
    throw new ServiceError('not_exportable', `${proposalId} is ${p.status}: only a decided proposal (published or rejected) has a decision to state.`, {
      hint: 'Export it --format akas (its bundle) instead, or once it is decided.',
    });
  }
  const subject: ResourceDescriptor[] = [{ name: p.path ?? proposalId, digest: { sha256: p.contentSha256 } }];
  for (const ref of hashesNamedBy(proposalContent(p.kind, p.payload))) {
    if (ref.role === 'artifact') subject.push({ name: ref.uri ?? 'artifact', digest: { sha256: ref.sha256 } });
  }
  await log.drain(); // the decision event is appended first
  const events = await log.byIndex(`proposal:${proposalId}:`, 1000);
  const decided = events.find((e) => e.kind === EVENT_KIND && e.body.proposalId === proposalId && e.body.event === `proposal.${p.status}`);
  const judgments = [];
  for (const j of p.judgments) {
    const credential = await ctx.store.get(Credentials, j.judgmentId);
    judgments.push({
      judgmentId: j.judgmentId,
      judge: { tag: j.agentTag, publicKey: j.signature.publicKey },
      scores: j.scores,
      composite: j.composite,
      weight: j.weight,
      judgedAt: new Date(j.receivedAt).toISOString(),
      judgeSignature: j.signature.signature,
      credential: credential
        ? { url: `${origin}${credentialUrl(p.kind, proposalId, j.judgmentId)}`, digest: { sha256: sha256Hex(canonicalize(credential)) } }
        : null,
    });
  }
  return {
    _type: STATEMENT_TYPE,
    subject,
    predicateType: DECISION_PREDICATE,
    predicate: {
      proposalId,
      kind: p.kind,
      path: p.path,
      title: p.title,
      decision: p.outcome.decision,
      decidedAt: p.decidedAt === null ? null : new Date(p.decidedAt).toISOString(),
      contentSha256: p.contentSha256,
      composite: p.outcome.weightedComposite,
      rule: { requiredJudgments: p.requiredJudgments, publishThreshold: PUBLISH_THRESHOLD },
      judgments,
      issuer: ctx.keys.issuer.did,
      log: decided ? { origin: ctx.keys.log.origin, id: decided.id, index: decided.seq, hash: decided.hash } : null,
    },
  };
}
