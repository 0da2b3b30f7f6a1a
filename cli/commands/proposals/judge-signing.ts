// Judging from the client side (PROTOCOL 7.1, 7.2): the local
// checks of scores and rationale, the per-kind paths, and the L2 signature over the JCS
// bytes of {type, kind, proposalId, judge, scores, rationale, contentSha256}, made with the
// private key saved in the profile. Before signing, the proposal is fetched and its content
// hashed here (PROTOCOL 6.10): the judge signs the content it was shown (akas.judgment.v2) and
// nothing else. It refuses to sign when the node's own contentSha256 is not what its proposal
// hashes to, and when the node names none (issue 30 for `akas mcp --stdio`, issue 54 for
// `akas judge`): the v1 payload (PROTOCOL 7.2) binds no content, so a node could strip the binding and the
// judge would vouch for content it never named. Shared by `akas judge`, the `akas queue` view
// and `akas mcp --stdio` so all sign the same bytes by one rule. Each signed judgment is
// journaled pending before it is sent and settled by the node's answer (cli/commands/journal/journal.ts). The
// private key never leaves this process; a dry run signs nothing.
import { contentOfProposalView } from '../../../src/core/content.js';
import { sign } from '../../../src/core/ed25519.js';
import type { ProposalKind } from '../../../src/core/kinds.js';
import { judgmentSigningString, KIND_ROUTES } from '../../../src/core/judgment.js';
import { type AkasClient, CliError, type Json, type SavedIdentity } from '../../kit/index.js';
import { appendJournal, type JournalEntry, type JournalTarget, payloadHash, sendJournaled } from '../journal/journal.js';

export * from './judge-input.js';
import { kindOfId, type Scores } from './judge-input.js';

export interface JudgmentInput {
  proposalId: string;
  scores: Scores;
  rationale: string;
  /** Ask the node what the judgment would do; nothing is signed or recorded. */
  dryRun?: boolean;
  /** The content judged, hashed here (the v2 payload): required to sign (only a dry run goes without). */
  contentSha256?: string;
}

export interface JudgeRequest {
  kind: ProposalKind;
  path: string;
  body: { scores: Scores; rationale: string; signature?: string; contentSha256?: string; dryRun?: true };
  /** What was signed (absent for a dry run). */
  signingPayload?: string;
  /** Its pending line in the journal (when one was asked for), for the answer to settle. */
  journaled?: JournalEntry;
}

/**
 * The request `akas judge` sends: the path of the id's kind, and the body signed with the
 * identity's private key over the v2 payload (unsigned with dryRun for a dry run). Throws for an
 * id that is not a proposal id, and for a judgment without the content hash it would bind;
 * callers check scores and rationale first.
 */
export function buildJudgeRequest(identity: Pick<SavedIdentity, 'tag' | 'signing'> | undefined, input: JudgmentInput, journal?: JournalTarget): JudgeRequest {
  const kind = kindOfId(input.proposalId);
  if (!kind) throw new Error(`not a proposal id: ${input.proposalId}`);
  const path = `${KIND_ROUTES[kind].judge}/${input.proposalId}`;
  const scores = { ...input.scores };
  if (input.dryRun) return { kind, path, body: { scores, rationale: input.rationale, dryRun: true } };
  if (!identity) throw new Error('signing a judgment needs a saved identity');
  if (!input.contentSha256) throw new Error(`signing a judgment of ${input.proposalId} needs the contentSha256 it binds (akas.judgment.v2)`);
  const signingPayload = judgmentSigningString({
    kind,
    proposalId: input.proposalId,
    judge: identity.tag,
    scores,
    rationale: input.rationale,
    contentSha256: input.contentSha256,
  });
  const signature = sign(identity.signing.privateKey, signingPayload);
  // Journaled pending (fsynced) before the caller can send it; the caller settles it with the answer.
  const journaled = journal
    ? appendJournal(journal, {
        kind: 'judgment',
        payloadSha256: payloadHash(signingPayload),
        agent: identity.tag,
        publicKey: identity.signing.publicKey,
        subject: input.proposalId,
        signature,
      })
    : undefined;
  return {
    kind,
    path,
    signingPayload,
    body: { scores, rationale: input.rationale, signature, contentSha256: input.contentSha256 },
    ...(journaled ? { journaled } : {}),
  };
}

/**
 * The contentSha256 of a proposal as fetched from the node, hashed here: what a judgment signs.
 * Refuses (exit 1) to vouch for a proposal whose detail names no contentSha256
 * (`content_not_named`), whose shown fields are not its content, or whose own contentSha256 is
 * not what its content hashes to (`content_unverified`).
 */
export async function fetchContentSha256(client: AkasClient, proposalId: string, kind: ProposalKind): Promise<string> {
  const detail = await client.get<Json>(`/api/knowledge/proposals/${encodeURIComponent(proposalId)}`);
  if (detail.contentSha256 === undefined) {
    const error =
      `Not signing ${proposalId}: the node did not name the proposal's content (its detail has no contentSha256), so a judgment could ` +
      'not bind what you read. akas signs only akas.judgment.v2, which names the content judged.';
    throw new CliError('content_not_named', error, {
      error,
      proposalId,
      hint: 'Judge it on a node that names proposal content (PROTOCOL 6.10), or ask its operator why this one does not.',
    });
  }
  const shown = contentOfProposalView(kind, detail);
  const refuse = (why: string) => new CliError('content_unverified', `Not signing ${proposalId}: ${why}.`, { error: `not signing: ${why}`, proposalId });
  if (!shown.ok) throw refuse(shown.reason);
  if (shown.problems.length) throw refuse(shown.problems.join('; '));
  if (shown.contentSha256 !== detail.contentSha256)
    throw refuse(`the node says its content is ${detail.contentSha256}, but the proposal it served hashes to ${shown.contentSha256}`);
  return shown.contentSha256;
}

/**
 * Fetches the proposal, hashes its content here, signs (unless a dry run) and sends one
 * judgment, settling its journal line by the answer; answers the node's JudgmentRecorded or
 * JudgmentDryRun and the content hash signed.
 */
export async function judgeContent(
  client: AkasClient,
  identity: SavedIdentity | undefined,
  input: JudgmentInput,
  journal?: JournalTarget,
): Promise<{ answer: Json; contentSha256?: string }> {
  let contentSha256: string | undefined;
  if (!input.dryRun) {
    const kind = kindOfId(input.proposalId);
    if (!kind) throw new Error(`not a proposal id: ${input.proposalId}`);
    contentSha256 = await fetchContentSha256(client, input.proposalId, kind);
  }
  const req = buildJudgeRequest(identity, { ...input, ...(contentSha256 ? { contentSha256 } : {}) }, journal);
  const answer = await sendJournaled(
    journal,
    req.journaled,
    () => client.post<Json>(req.path, req.body, { auth: true }),
    (a) => ({ state: 'accepted', ...(typeof a.judgmentId === 'string' ? { judgmentId: a.judgmentId } : {}) }),
  );
  return { answer, ...(contentSha256 ? { contentSha256 } : {}) };
}

/** judgeContent, answering the node's answer with the content hash signed beside it (the queue view shows it). */
export async function sendJudgment(client: AkasClient, identity: SavedIdentity | undefined, input: JudgmentInput, journal?: JournalTarget): Promise<Json> {
  const { answer, contentSha256 } = await judgeContent(client, identity, input, journal);
  return contentSha256 ? { ...answer, contentSha256 } : answer;
}
