// Judging from the client side (SPEC 2.4, 4.5; DESIGN.md 3 "judge signature"): the local
// checks of scores and rationale, the per-kind paths, and the L2 signature over the JCS
// bytes of {type, kind, proposalId, judge, scores, rationale}, made with the private key
// saved in the profile. Shared by `akas judge` and the `akas queue` view so both sign the
// same bytes. The private key never leaves this process; a dry run signs nothing.
import { judgmentSigningString, KIND_ROUTES, kindOfProposalId, PROPOSAL_KINDS, sign, type ProposalKind } from '../src/core/index.js';
import type { AkasClient } from './client.js';
import type { SavedIdentity } from './profile.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const SCORE_NAMES = ['accuracy', 'clarity', 'compression', 'sources'] as const;
export type ScoreName = (typeof SCORE_NAMES)[number];
export type Scores = Record<ScoreName, number>;

/** SPEC 2.4: the rationale is at most 400 characters (JSON Schema counts code points). */
export const RATIONALE_MAX = 400;

/** Names the CLI accepts for a kind besides the kind itself (SPEC calls graphs decision-graph). */
const KIND_ALIASES: Record<string, ProposalKind> = { 'decision-graph': 'graph', dg: 'graph' };

/** Every name `--kind` / `akas propose KIND` accepts, for help texts. */
export const KIND_NAMES = [...PROPOSAL_KINDS, ...Object.keys(KIND_ALIASES)];

/** The kind a name stands for (case-insensitive, aliases included), or null. */
export function parseKind(name: string): ProposalKind | null {
  const n = name.trim().toLowerCase();
  if ((PROPOSAL_KINDS as string[]).includes(n)) return n as ProposalKind;
  return KIND_ALIASES[n] ?? null;
}

/** The kind of a proposal id (from its prefix), or null when it is not a proposal id. */
export const kindOfId = (id: string): ProposalKind | null => kindOfProposalId(id);

/**
 * A score typed by a person: a plain decimal in [0, 1] ("0", "1", "0.75", ".5"), or null.
 * Number() alone would take "0x1", "1e0" and " " too; a signed payload should hold what was meant.
 */
export function parseScore(text: string): number | null {
  const t = text.trim();
  if (!/^(?:[01](?:\.\d*)?|\.\d+)$/.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : null;
}

/** Why a rationale would be refused, or null when it is fine. */
export function rationaleProblem(text: string): string | null {
  if (text.length === 0) return 'the rationale may not be empty';
  const length = [...text].length;
  if (length > RATIONALE_MAX) return `the rationale is ${length} characters; at most ${RATIONALE_MAX}`;
  return null;
}

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
