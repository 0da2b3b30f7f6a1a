// The evidence a knowledge read carries (PROTOCOL 10.7): what binds the node, brief or
// artifact served to the proposal that published it. The proposal's id and contentSha256
// (PROTOCOL 6.10), its proposal.published event in the log with an inclusion proof against a
// signed checkpoint, and the log's key with the issuer's endorsement of it: checked offline by
// `akas verify node`. A proof made against one checkpoint stays valid against it forever, so
// evidence never goes stale: a proposal's publication entry and its proof are made once and
// kept (PROOFS_KEPT of them, the most recently read), and each read takes the checkpoint of
// that size as stored then, with whatever witness cosignatures it has gathered since. Making
// them at every read (an index scan and a proof of about 2 log2(n) tree hashes) doubled the
// median time of a node read under load (`npm run bench -- load`).
import { Lru, proposalContent, type ProposalContent, type ProposalKind } from '../core/index.js';
import { EVENT_KIND, type TransparencyLog } from '../domain/log/index.js';
import type { Ctx } from '../domain/context.js';
import { Proposals } from '../domain/records.js';
import { entryView } from './views/records.js';

export interface Evidence {
  proposalId: string;
  kind: ProposalKind;
  contentSha256: string;
  /** log: a proposal.submitted event binds the content; store: a proposal stored before content binding. */
  contentBinding: 'log' | 'store';
  /** The content itself, for the kinds whose node alone cannot rebuild it (tree expansions, spec sharpenings). */
  content?: ProposalContent;
  /** The proposal.published event with its inclusion proof, or null while it waits to be appended. */
  publication: { id: string; entry: ReturnType<typeof entryView>; inclusion: { index: number; size: number; proof: string[] }; checkpoint: string } | null;
  log: { verifierKey: string; endorsement: Ctx['keys']['log']['endorsement'] };
}

/** The proposal.published event of a proposal, appending what waits in the outbox first if it is not found. */
async function publicationEntry(log: TransparencyLog, proposalId: string) {
  const find = async () =>
    (await log.byIndex(`proposal:${proposalId}:`, 1000)).find(
      (e) => e.kind === EVENT_KIND && e.body.event === 'proposal.published' && e.body.proposalId === proposalId,
    );
  const found = await find();
  if (found) return found;
  await log.drain();
  return find();
}

type Publication = NonNullable<Evidence['publication']>;
type Proven = Omit<Publication, 'checkpoint'>;

/** How many proposals' publication proofs a node keeps in memory (about 2 KiB each). */
export const PROOFS_KEPT = 2000;
const proofsOf = new WeakMap<TransparencyLog, Lru<Proven>>();

/** The proposal's publication entry with its inclusion proof: made once, then kept (most recently read first out last). */
async function provenPublication(log: TransparencyLog, proposalId: string): Promise<{ proven: Proven; checkpoint?: string } | null> {
  let kept = proofsOf.get(log);
  if (!kept) proofsOf.set(log, (kept = new Lru(PROOFS_KEPT)));
  const hit = kept.get(proposalId);
  if (hit) return { proven: hit };
  const entry = await publicationEntry(log, proposalId);
  if (!entry) return null;
  // The newest checkpoint when it covers the event (the log signs one a second while it
  // grows); else one made now. A read never waits for more than that.
  let cp = await log.latestCheckpoint();
  if (!cp || cp.size <= entry.seq) cp = await log.checkpoint();
  const proof = await log.inclusion(entry.seq, cp.size);
  const proven: Proven = {
    id: entry.id,
    entry: entryView(entry),
    inclusion: { index: entry.seq, size: cp.size, proof: proof.map((b) => b.toString('base64')) },
  };
  kept.set(proposalId, proven);
  return { proven, checkpoint: cp.note };
}

/** The evidence of what the proposal published; undefined when the node holds no such proposal. */
export async function evidenceOf(ctx: Ctx, log: TransparencyLog, proposalId: string): Promise<Evidence | undefined> {
  const p = await ctx.store.get(Proposals, proposalId);
  if (!p) return undefined;
  let publication: Evidence['publication'] = null;
  const found = await provenPublication(log, proposalId);
  if (found) {
    // The checkpoint as stored now: the one the proof was made against, with the cosignatures its witnesses added since.
    const note = found.checkpoint ?? (await log.checkpointAt(found.proven.inclusion.size))?.note;
    if (note) publication = { ...found.proven, checkpoint: note };
    else proofsOf.get(log)?.delete(proposalId); // not stored (cannot happen short of a damaged store): made afresh next time
  }
  return {
    proposalId,
    kind: p.kind,
    contentSha256: p.contentSha256,
    contentBinding: p.contentBinding,
    ...(p.kind === 'tree-expansion' || p.kind === 'spec-sharpening' ? { content: proposalContent(p.kind, p.payload) } : {}),
    publication,
    log: { verifierKey: ctx.keys.log.verifierKey, endorsement: ctx.keys.log.endorsement },
  };
}

/** The parts of evidence that change with the log's growth (the proof, the checkpoint), left out of ETags. */
export const stableEvidence = (e: Evidence | undefined) => (e ? { ...e, publication: e.publication ? { id: e.publication.id } : null } : null);
