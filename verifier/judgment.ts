// Offline check of the per-judge signatures (L2, PROTOCOL 7.2) of a proposal: the JSON of
// GET /api/knowledge/proposals/{id} (`akas proposal ID --json`), checked with no node and
// no network. For each judgment:
//  - payload: the fields shown (kind, proposalId, judge tag, the four scores, rationale)
//    rebuild exactly the signingPayload, so what is displayed is what was signed;
//  - signature: Ed25519 over those JCS bytes verifies under the public key given;
//  - key: given the judge's public profile (`akas agents TAG --json`), that key was the
//    judge's when the judgment arrived: the current key from its validFrom, or a prior key
//    within its validFrom..validUntil window. Without a profile this is reported unchecked:
//    a valid signature alone proves only that the holder of *some* key signed.
import { ed25519Hex, runAsync, runNow, type Checking } from '../src/core/checking.js';
import { judgmentSigningString } from '../src/core/judgment.js';
import { kindOfProposalId, type ProposalKind } from '../src/core/kinds.js';

export type KeyBinding = 'current' | 'prior' | 'not-the-judges' | 'unchecked';

export interface JudgmentCheck {
  judgmentId: string;
  agentTag: string;
  /** The displayed fields rebuild the signed payload byte for byte. */
  payloadMatches: boolean;
  signatureValid: boolean;
  key: KeyBinding;
  ok: boolean;
  problems: string[];
}

export interface JudgmentsReport {
  proposalId: string;
  kind: ProposalKind;
  checked: number;
  failed: number;
  /** Judgments whose key could not be tied to the judge (no profile given). */
  keysUnchecked: number;
  ok: boolean;
  checks: JudgmentCheck[];
}

/** The part of a public agent profile (GET /api/agents/{tag}) that binds keys to a tag. */
export interface AgentKeys {
  tag: string;
  signing: { publicKey: string; validFrom: number; priorKeys: Array<{ publicKey: string; validFrom: number; validUntil: number }> };
}

/** Thrown when the input is not a proposal detail (or a profile is not one): the check cannot run. */
export class NotCheckableError extends Error {}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads a public agent profile, or throws NotCheckableError naming what is missing. */
export function parseAgentKeys(value: unknown, source: string): AgentKeys {
  const signing = isObject(value) ? value.signing : undefined;
  const window = (k: unknown) => isObject(k) && typeof k.publicKey === 'string' && typeof k.validFrom === 'number' && typeof k.validUntil === 'number';
  if (
    !isObject(value) ||
    typeof value.tag !== 'string' ||
    !isObject(signing) ||
    typeof signing.publicKey !== 'string' ||
    typeof signing.validFrom !== 'number' ||
    !Array.isArray(signing.priorKeys) ||
    !signing.priorKeys.every(window)
  ) {
    throw new NotCheckableError(`${source} is not a public agent profile ({tag, signing: {publicKey, validFrom, priorKeys}}): fetch one with akas agents TAG --json`);
  }
  return value as unknown as AgentKeys;
}

function keyBinding(publicKey: string, at: number, profile: AgentKeys | undefined): KeyBinding {
  if (!profile) return 'unchecked';
  const { signing } = profile;
  if (signing.publicKey === publicKey && at >= signing.validFrom) return 'current';
  if (signing.priorKeys.some((k) => k.publicKey === publicKey && at >= k.validFrom && at <= k.validUntil)) return 'prior';
  return 'not-the-judges';
}

function* checkOne(kind: ProposalKind, proposalId: string, j: Json, profiles: Map<string, AgentKeys>): Checking<JudgmentCheck> {
  const problems: string[] = [];
  const sig = isObject(j.signature) ? j.signature : {};
  const agentTag = typeof j.agentTag === 'string' ? j.agentTag : '';
  const judgmentId = typeof j.judgmentId === 'string' ? j.judgmentId : '';
  const publicKey = typeof sig.publicKey === 'string' ? sig.publicKey : '';
  const signature = typeof sig.signature === 'string' ? sig.signature : '';
  const signingPayload = typeof sig.signingPayload === 'string' ? sig.signingPayload : '';

  let payloadMatches = false;
  try {
    const scores = j.scores as { accuracy: number; clarity: number; compression: number; sources: number };
    const rebuilt = judgmentSigningString({ kind, proposalId, judge: agentTag, scores, rationale: j.rationale as string });
    payloadMatches = rebuilt === signingPayload;
  } catch {
    // Missing or mistyped fields: nothing to rebuild, reported below.
  }
  if (!payloadMatches) problems.push('the shown kind, proposalId, judge, scores or rationale are not what was signed');

  const signatureValid = yield* ed25519Hex(publicKey, signingPayload, signature);
  if (!signatureValid) problems.push('the Ed25519 signature does not verify under the given public key');

  const at = typeof j.receivedAt === 'number' ? j.receivedAt : Number.NaN;
  const key = keyBinding(publicKey, at, profiles.get(agentTag));
  if (key === 'not-the-judges') problems.push(`the key was not ${agentTag}'s when the judgment arrived (per the profile given)`);

  return { judgmentId, agentTag, payloadMatches, signatureValid, key, ok: problems.length === 0, problems };
}

/**
 * Checks every judgment of a proposal detail. profiles: public profiles of (some of) the
 * judges; the key of a judge without one is reported unchecked, not failed.
 */
export function verifyProposalJudgments(detail: unknown, profiles: AgentKeys[] = []): JudgmentsReport {
  return runNow(proposalJudgmentsChecking(detail, profiles));
}

/** verifyProposalJudgments where Ed25519 is asynchronous (WebCrypto in a browser). */
export function verifyProposalJudgmentsAsync(detail: unknown, profiles: AgentKeys[] = []): Promise<JudgmentsReport> {
  return runAsync(proposalJudgmentsChecking(detail, profiles));
}

/** The checks of verifyProposalJudgments, as a generator of the signatures they need. */
export function* proposalJudgmentsChecking(detail: unknown, profiles: AgentKeys[] = []): Checking<JudgmentsReport> {
  const proposalId = isObject(detail) && typeof detail.proposalId === 'string' ? detail.proposalId : undefined;
  const kind = proposalId ? kindOfProposalId(proposalId) : null;
  if (!isObject(detail) || !proposalId || !kind || (detail.judgments !== undefined && !Array.isArray(detail.judgments))) {
    throw new NotCheckableError('not a proposal detail ({proposalId, judgments[]}): fetch one with akas proposal ID --json');
  }
  const byTag = new Map(profiles.map((p) => [p.tag, p]));
  const judgments = (detail.judgments ?? []) as unknown[];
  const checks: JudgmentCheck[] = [];
  for (const j of judgments) checks.push(yield* checkOne(kind, proposalId, isObject(j) ? j : {}, byTag));
  // The kind signed is the one the id names; a detail that shows another kind misstates it.
  if (detail.kind !== undefined && detail.kind !== kind) {
    for (const c of checks) {
      c.problems.push(`the detail shows kind ${String(detail.kind)}, but ${proposalId} is a ${kind} proposal (the kind signed)`);
      c.ok = false;
    }
  }
  const failed = checks.filter((c) => !c.ok).length;
  return {
    proposalId,
    kind,
    checked: checks.length,
    failed,
    keysUnchecked: checks.filter((c) => c.key === 'unchecked').length,
    ok: failed === 0,
    checks,
  };
}
