// Judging from the client side (PROTOCOL 7.1, 7.2): the local
// checks of scores and rationale, the per-kind paths, and the L2 signature over the JCS
// bytes of {type, kind, proposalId, judge, scores, rationale}, made with the private key
// saved in the profile. Shared by `akas judge` and the `akas queue` view so both sign the
// same bytes. The private key never leaves this process; a dry run signs nothing.
import { sign } from '../src/core/ed25519.js';
import type { ProposalKind } from '../src/core/kinds.js';
import { judgmentSigningString, KIND_ROUTES } from '../src/core/judgment.js';
import type { AkasClient } from './client.js';
import type { SavedIdentity } from './profile.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export * from './judge-input.js';
import { kindOfId, type Scores } from './judge-input.js';

export interface JudgmentInput {
  proposalId: string;
  scores: Scores;
  rationale: string;
  /** Ask the node what the judgment would do; nothing is signed or recorded. */
  dryRun?: boolean;
}

export interface JudgeRequest {
  kind: ProposalKind;
  path: string;
  body: { scores: Scores; rationale: string; signature?: string; dryRun?: true };
  /** What was signed (absent for a dry run). */
  signingPayload?: string;
}

/**
 * The request `akas judge` sends: the path of the id's kind, and the body signed with the
 * identity's private key (unsigned with dryRun for a dry run). Throws for an id that is not
 * a proposal id; callers check scores and rationale first.
 */
export function buildJudgeRequest(identity: Pick<SavedIdentity, 'tag' | 'signing'> | undefined, input: JudgmentInput): JudgeRequest {
  const kind = kindOfId(input.proposalId);
  if (!kind) throw new Error(`not a proposal id: ${input.proposalId}`);
  const path = `${KIND_ROUTES[kind].judge}/${input.proposalId}`;
  const scores = { ...input.scores };
  if (input.dryRun) return { kind, path, body: { scores, rationale: input.rationale, dryRun: true } };
  if (!identity) throw new Error('signing a judgment needs a saved identity');
  const signingPayload = judgmentSigningString({ kind, proposalId: input.proposalId, judge: identity.tag, scores, rationale: input.rationale });
  return { kind, path, signingPayload, body: { scores, rationale: input.rationale, signature: sign(identity.signing.privateKey, signingPayload) } };
}

/** Signs (unless a dry run) and sends one judgment; answers the node's JudgmentRecorded or JudgmentDryRun. */
export async function sendJudgment(client: AkasClient, identity: SavedIdentity | undefined, input: JudgmentInput): Promise<Json> {
  const req = buildJudgeRequest(identity, input);
  return client.post<Json>(req.path, req.body, { auth: true });
}
