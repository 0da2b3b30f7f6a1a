// What a person types when judging, checked before anything is signed or sent: kinds and
// their aliases, scores, the rationale. Light on purpose: `akas --help` loads it.
import { kindOfProposalId, PROPOSAL_KINDS, type ProposalKind } from '../../../src/core/kinds.js';

export const SCORE_NAMES = ['accuracy', 'clarity', 'compression', 'sources'] as const;
export type ScoreName = (typeof SCORE_NAMES)[number];
export type Scores = Record<ScoreName, number>;

/** PROTOCOL 7.1: the rationale is at most 400 characters (JSON Schema counts code points). */
export const RATIONALE_MAX = 400;

/** Names the CLI accepts for a kind besides the kind itself (graphs are also called decision graphs). */
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
  // The node takes an empty rationale (PROTOCOL 7.1 sets only a maximum); the CLI asks for a reason.
  if (text.length === 0) return 'the rationale may not be empty';
  const length = [...text].length;
  if (length > RATIONALE_MAX) return `the rationale is ${length} characters; at most ${RATIONALE_MAX}`;
  return null;
}
