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
import { EVENT_KIND, servedCheckpoint, type StoredCheckpoint, type TransparencyLog, type WitnessClient } from '../domain/log/index.js';
import type { Ctx } from '../domain/context.js';
import { Proposals } from '../domain/records.js';
import { credentialsOf, judgesOf } from './bundle.js';
import { statusPart } from './bundle-status.js';
import { entryView, judgmentView, nodeKeysView } from './views/records.js';

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

// ?evidence=full (PROTOCOL 10.7): what a reader needs to check, with no node, that the decision
// behind a published read still holds. The decision's judgments (each judge's signature and
// payload), their judges' keys and their credentials, the issuer's keys, and the status of those
// credentials (the status head and the lists it names, with the versions that changed them: the
// bundle's status part, src/http/bundle-status.ts), all proven against one checkpoint: the one
// the node hands out now (with its witnesses' cosignatures when it has witnesses), against which
// the publication is proven again. A status read at the publication's own checkpoint would miss
// every revocation since. Made once per proposal and checkpoint: every status change is logged,
// so nothing they say changes while the checkpoint does not, and a reader reading a node again
// at the same checkpoint gets the same bytes (kept FULL_KEPT_MS at most, FULL_PROPOSALS_KEPT of them).

/** Where a full read's checkpoint comes from: the node's witnesses (PROTOCOL 9.9) and how long a read waits for their round. */
export interface Served {
  witnesses?: WitnessClient;
  waitMs: number;
  /** A checkpoint already served for this request (a search's hits share one), used when it covers the publication. */
  at?: { cp: StoredCheckpoint; note: string };
}

type Parts = {
  publication: Publication;
  judgments: Array<ReturnType<typeof judgmentView>>;
  judges: Awaited<ReturnType<typeof judgesOf>>;
  credentials: Awaited<ReturnType<typeof credentialsOf>>;
  status: Awaited<ReturnType<typeof statusPart>>;
};

/** A read with full evidence: the evidence of 10.7 with the decision's parts, its publication proven against the checkpoint of the read. */
export type FullEvidence = Evidence & Omit<Parts, 'publication'> & { issuerKeys: ReturnType<typeof nodeKeysView>['issuer'] };

/** How long a full evidence's parts are kept for a proposal at one checkpoint (ms): the status head's `at` is at most that old. */
export const FULL_KEPT_MS = 60_000;
/** How many proposals' full evidence parts a node keeps (about 15 KiB each). */
export const FULL_PROPOSALS_KEPT = 1000;
const partsOf = new WeakMap<TransparencyLog, Lru<{ until: number; parts: Parts }>>();

/** A checkpoint that covers entry `seq`: the witnessed one when witnesses answer in time (9.9), else the newest. */
export async function coveringCheckpoint(log: TransparencyLog, served: Served, seq: number): Promise<{ cp: StoredCheckpoint; note: string }> {
  if (served.at && served.at.cp.size > seq) return served.at;
  let at = await servedCheckpoint(log, served.witnesses, seq + 1, served.waitMs);
  // A checkpoint being made while the entry was appended may not cover it: the next one does.
  for (let i = 0; i < 3 && at.cp.size <= seq; i++) at = await servedCheckpoint(log, undefined, seq + 1, 0);
  return at;
}

/**
 * The evidence of a read with the decision's parts (PROTOCOL 10.7, ?evidence=full); undefined
 * when the node holds no such proposal. Without a publication (not yet appended) the parts that
 * need a checkpoint (the status) are left out, and the verifier says the publication is missing.
 */
export async function fullEvidenceOf(ctx: Ctx, log: TransparencyLog, proposalId: string, served: Served): Promise<FullEvidence | Evidence | undefined> {
  const light = await evidenceOf(ctx, log, proposalId);
  if (!light?.publication) return light;
  const { cp, note } = await coveringCheckpoint(log, served, light.publication.inclusion.index);
  let kept = partsOf.get(log);
  if (!kept) partsOf.set(log, (kept = new Lru(FULL_PROPOSALS_KEPT)));
  const key = `${proposalId}@${cp.size}`;
  const now = ctx.clock.now();
  let hit = kept.get(key);
  if (!hit || hit.until <= now) {
    const p = (await ctx.store.get(Proposals, proposalId))!;
    const index = light.publication.inclusion.index;
    const proof = await log.inclusion(index, cp.size);
    const parts: Parts = {
      publication: { ...light.publication, inclusion: { index, size: cp.size, proof: proof.map((b) => b.toString('base64')) }, checkpoint: note },
      judgments: p.judgments.map((j) => judgmentView(p.kind, p.proposalId, j)),
      judges: await judgesOf(ctx, p),
      credentials: await credentialsOf(ctx, p),
      status: await statusPart(
        ctx,
        log,
        cp,
        p.judgments.map((j) => j.judgmentId),
      ),
    };
    kept.set(key, (hit = { until: now + FULL_KEPT_MS, parts }));
  }
  const { publication, ...parts } = hit.parts;
  // The note as stored now: the cosignatures its witnesses added since the parts were made.
  return { ...light, publication: { ...publication, checkpoint: note }, ...parts, issuerKeys: nodeKeysView(ctx.keys).issuer };
}
