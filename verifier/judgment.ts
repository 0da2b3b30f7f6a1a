// Offline check of the per-judge signatures (L2, PROTOCOL 7.2) of a proposal: the JSON of
// GET /api/knowledge/proposals/{id} (`akas proposal ID --json`), checked with no node and
// no network. For each judgment:
//  - payload: the fields shown (kind, proposalId, judge tag, the four scores, rationale, and
//    for a v2 judgment the contentSha256 recomputed here from the proposal's content) rebuild
//    exactly the signingPayload, so what is displayed is what was signed;
//  - content: a v2 judgment signed the content shown (its hash recomputed here); a v1
//    judgment signed no content, and is bound to it by the node's word only (the hash the
//    node names beside it must still be the content's); and the detail's own contentSha256,
//    path, title and kind are those of the content shown (PROTOCOL 6.6, 6.10);
//  - signature: Ed25519 over those JCS bytes verifies under the public key given;
//  - key: given the judge's public profile (`akas agents TAG --json`), that key was the
//    judge's when the judgment arrived: the current key from its validFrom, or a prior key
//    within its validFrom..validUntil window. Without a profile this is reported unchecked:
//    a valid signature alone proves only that the holder of *some* key signed.
import { ed25519Hex, runAsync, runNow, type Checking } from '../src/core/checking.js';
import { contentOfProposalView } from '../src/core/content.js';
import { judgmentSigningString, JUDGMENT_V2 } from '../src/core/judgment.js';
import { kindOfProposalId, type ProposalKind } from '../src/core/kinds.js';
import { sha256 } from '../src/core/crypto.js';
import { parseStrictJson } from '../src/core/strict-json.js';
import { NotCheckableError } from './report.js';

export type KeyBinding = 'current' | 'prior' | 'not-the-judges' | 'unchecked';

export interface JudgmentCheck {
  judgmentId: string;
  agentTag: string;
  /** The displayed fields rebuild the signed payload byte for byte. */
  payloadMatches: boolean;
  /** Which payload the judge signed: v2 binds the content, v1 (PROTOCOL 7.2) does not. */
  signed: 'v1' | 'v2' | 'unknown';
  /**
   * v2: the content hash the judge signed is the one recomputed from the content shown (null
   * when the content could not be recomputed); v1: null, the judge signed no content.
   */
  contentSigned: boolean | null;
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
  /** Every judge's key was tied to its judge by a profile the auditor gave (issue 32): else the signatures checked ran on keys the detail brought itself. */
  anchored: boolean;
  /** The judgments whose key was not tied to its judge, as `judge.key (JUDGMENT_ID by TAG)`. */
  unanchored: string[];
  /** The contentSha256 recomputed from the proposal's content as shown (undefined when it cannot be). */
  contentSha256?: string;
  /** Judgments signed v1: bound to the content by the node's word only. */
  v1: number;
  /** The content shown against what the detail says of it; absent when the detail shows no payload. */
  content?: ContentCheck;
  /** Every judgment holds, and so does the content (when shown). */
  ok: boolean;
  checks: JudgmentCheck[];
}

/** The proposal's content as shown (PROTOCOL 6.10), against the hash and fields the detail shows beside it. */
export interface ContentCheck {
  /** Recomputed here from kind, path, title, spec and payload; undefined when they cannot be read as the kind's content. */
  contentSha256?: string;
  /** The contentSha256 the detail states (the node's word). */
  stated?: string;
  /** How the node says the content is bound: `log` (a proposal.submitted event) or `store` (stored before content binding). */
  binding?: string;
  /** Judgments that signed this very content (v2, holding). */
  signedBy: number;
  ok: boolean;
  problems: string[];
}

/** The part of a public agent profile (GET /api/agents/{tag}) that binds keys to a tag. */
export interface AgentKeys {
  tag: string;
  signing: { publicKey: string; validFrom: number; priorKeys: Array<{ publicKey: string; validFrom: number; validUntil: number }> };
}

// Thrown when the input is not a proposal detail (or a profile is not one): the check cannot run.
// One class for every verifier (report.ts), exported here too, where it was first.
export { NotCheckableError };

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
    throw new NotCheckableError(
      `${source} is not a public agent profile ({tag, signing: {publicKey, validFrom, priorKeys}}): fetch one with akas agents TAG --json`,
    );
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

// The payload type and content hash a judge signed, read from the signingPayload shown.
function signedOf(signingPayload: string): { type: 'v1' | 'v2' | 'unknown'; contentSha256?: string } {
  const parsed = parseStrictJson(signingPayload);
  if (!parsed.ok || !isObject(parsed.value)) return { type: 'unknown' };
  const v = parsed.value;
  if (v.type === JUDGMENT_V2) return { type: 'v2', contentSha256: typeof v.contentSha256 === 'string' ? v.contentSha256 : undefined };
  return { type: v.type === 'akas.judgment.v1' ? 'v1' : 'unknown' };
}

function* checkOne(
  kind: ProposalKind,
  proposalId: string,
  j: Json,
  profiles: Map<string, AgentKeys>,
  contentSha256: string | undefined,
): Checking<JudgmentCheck> {
  const problems: string[] = [];
  const sig = isObject(j.signature) ? j.signature : {};
  const agentTag = typeof j.agentTag === 'string' ? j.agentTag : '';
  const judgmentId = typeof j.judgmentId === 'string' ? j.judgmentId : '';
  const publicKey = typeof sig.publicKey === 'string' ? sig.publicKey : '';
  const signature = typeof sig.signature === 'string' ? sig.signature : '';
  const signingPayload = typeof sig.signingPayload === 'string' ? sig.signingPayload : '';
  const signed = signedOf(signingPayload);

  // A v2 payload is rebuilt with the hash recomputed here, never with the one it carries: a
  // changed content then fails, whatever contentSha256 the proposal claims.
  let payloadMatches = false;
  if (signed.type !== 'v2' || contentSha256 !== undefined) {
    try {
      const scores = j.scores as { accuracy: number; clarity: number; compression: number; sources: number };
      const rebuilt = judgmentSigningString({
        kind,
        proposalId,
        judge: agentTag,
        scores,
        rationale: j.rationale as string,
        ...(signed.type === 'v2' ? { contentSha256 } : {}),
      });
      payloadMatches = rebuilt === signingPayload;
    } catch {
      // Missing or mistyped fields: nothing to rebuild, reported below.
    }
  }
  if (!payloadMatches) {
    problems.push(
      signed.type === 'v2' && contentSha256 === undefined
        ? "the proposal's content cannot be recomputed, so the v2 payload cannot be rebuilt"
        : `the shown kind, proposalId, judge, scores or rationale${signed.type === 'v2' ? ', or the content' : ''} are not what was signed`,
    );
  }
  const contentSigned = signed.type === 'v2' && contentSha256 !== undefined ? signed.contentSha256 === contentSha256 : null;
  if (contentSigned === false) problems.push(`the judge signed content ${String(signed.contentSha256)}, but the content shown hashes to ${contentSha256}`);
  // What the detail says this judgment judged (the node's word; the judge's own for v2).
  if (typeof j.contentSha256 === 'string' && contentSha256 !== undefined && j.contentSha256 !== contentSha256) {
    problems.push(`the detail says this judgment judged content ${j.contentSha256}, but the content shown hashes to ${contentSha256}`);
  }

  const signatureValid = yield* ed25519Hex(publicKey, signingPayload, signature);
  if (!signatureValid) problems.push('the Ed25519 signature does not verify under the given public key');
  // The node's attestation of the judgment (PROTOCOL 7.3) restates the signature and the hash of
  // what was signed: shown, so it must say the same.
  if (j.attestation !== undefined) {
    const a = isObject(j.attestation) ? j.attestation : {};
    const js = isObject(a.judgeSignature) ? a.judgeSignature : {};
    if (
      js.publicKey !== publicKey ||
      js.signature !== signature ||
      a.payloadSha256 !== Array.from(sha256(signingPayload), (b) => b.toString(16).padStart(2, '0')).join('')
    ) {
      payloadMatches = false;
      problems.push("the judgment's attestation names another signature, key or signed payload than the judgment's");
    }
  }

  const at = typeof j.receivedAt === 'number' ? j.receivedAt : Number.NaN;
  const key = keyBinding(publicKey, at, profiles.get(agentTag));
  if (key === 'not-the-judges') problems.push(`the key was not ${agentTag}'s when the judgment arrived (per the profile given)`);

  return { judgmentId, agentTag, payloadMatches, signed: signed.type, contentSigned, signatureValid, key, ok: problems.length === 0, problems };
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

/**
 * The checks of verifyProposalJudgments, as a generator of the signatures they need. `bound`: the
 * content hash a detail that shows no payload is bound to elsewhere (a node read's evidence,
 * PROTOCOL 10.7, whose content the node read's own checks hash): what a v2 judge must have signed.
 */
export function* proposalJudgmentsChecking(detail: unknown, profiles: AgentKeys[] = [], bound?: string): Checking<JudgmentsReport> {
  const proposalId = isObject(detail) && typeof detail.proposalId === 'string' ? detail.proposalId : undefined;
  const kind = proposalId ? kindOfProposalId(proposalId) : null;
  if (!isObject(detail) || !proposalId || !kind || (detail.judgments !== undefined && !Array.isArray(detail.judgments))) {
    throw new NotCheckableError('not a proposal detail ({proposalId, judgments[]}): fetch one with akas proposal ID --json');
  }
  const byTag = new Map(profiles.map((p) => [p.tag, p]));
  const judgments = (detail.judgments ?? []) as unknown[];
  // The content as shown, hashed here (PROTOCOL 6.10): what a v2 judge must have signed.
  const shown = detail.payload !== undefined ? contentOfProposalView(kind, detail) : undefined;
  const contentSha256 = shown ? (shown.ok ? shown.contentSha256 : undefined) : bound;
  const checks: JudgmentCheck[] = [];
  for (const j of judgments) checks.push(yield* checkOne(kind, proposalId, isObject(j) ? j : {}, byTag, contentSha256));
  let content: ContentCheck | undefined;
  if (shown) {
    const problems = shown.ok ? [...shown.problems] : [shown.reason];
    const stated = typeof detail.contentSha256 === 'string' ? detail.contentSha256 : undefined;
    if (contentSha256 !== undefined && stated !== undefined && stated !== contentSha256)
      problems.push(`the detail states contentSha256 ${stated}, but the content shown hashes to ${contentSha256}`);
    content = {
      ...(contentSha256 !== undefined ? { contentSha256 } : {}),
      ...(stated !== undefined ? { stated } : {}),
      ...(typeof detail.contentBinding === 'string' ? { binding: detail.contentBinding } : {}),
      signedBy: checks.filter((c) => c.ok && c.contentSigned === true).length,
      ok: problems.length === 0,
      problems,
    };
    // A judgment of content other than the one shown does not hold for what is shown (as the kind below).
    for (const c of checks) {
      for (const p of problems) c.problems.push(`the content shown: ${p}`);
      if (problems.length) c.ok = false;
    }
  }
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
    anchored: checks.every((c) => c.key !== 'unchecked'),
    unanchored: checks.filter((c) => c.key === 'unchecked').map((c) => `judge.key (${c.judgmentId} by ${c.agentTag})`),
    ...(contentSha256 !== undefined ? { contentSha256 } : {}),
    v1: checks.filter((c) => c.signed === 'v1').length,
    ...(content ? { content } : {}),
    ok: failed === 0 && (content?.ok ?? true),
    checks,
  };
}
