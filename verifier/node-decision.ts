// The decision behind a published read (PROTOCOL 10.7, a read made with ?evidence=full),
// offline: that the judgments it counted were signed by their judges over the content served,
// that their credentials verify under the pinned issuer, that the decision recomputes from them,
// and that it still holds once the judgments whose credentials are revoked or suspended (read in
// the stapled status lists, under the status head of the read's checkpoint) are taken out.
//
// A bundle's checks (bundle.ts, bundle-log.ts, bundle-status.ts) do each of these for a proposal;
// a read's evidence carries the same parts, so they run here on a bundle made of it: its
// credentials, status and log (the publication event alone, with its proof against the read's
// checkpoint), the judgments as the evidence shows them, and the content hash the node read's
// own checks bound to what is served. What differs is what a revocation means: to a bundle, a
// revoked credential is a failed check; to a read, it is a judgment withdrawn from the decision,
// named, and the read holds while the decision holds without it (status.withdrawn,
// status.decision).
import type { Checking } from '../src/core/checking.js';
import { credentialSetCheck, credentialsChecking, judgeSignatureChecks, judgmentSetCheck } from './bundle.js';
import { recomputeCheck, type BundleScope } from './bundle-log.js';
import { statusChecking, type StatusOutcome } from './bundle-status.js';
import type { IssuerTrust } from './issuer-keys.js';
import { parseAgentKeys, proposalJudgmentsChecking, type AgentKeys } from './judgment.js';
import { Checks, isStatusCheck } from './report.js';
import type { Inflate } from './status-list.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface DecisionOptions {
  /** The issuer keys pinned (undefined: none, the credentials' checks are unanchored). */
  trust?: IssuerTrust;
  /** The log keys the read's checks trust (pinned, or endorsed by the pinned issuer). */
  logKeys?: string[];
  /** The pinned issuer DID (the lists' issuer when no trust chain is given). */
  issuer?: string;
  /** The instant credentials and lists are checked at (ms); now by default. */
  at?: number;
  /** GZIP for the stapled status lists; without it their status is unknown (verifyNodeAsync inflates them first). */
  inflate?: Inflate;
}

/** Whether a read's evidence carries the decision's parts (PROTOCOL 10.7, ?evidence=full). */
export const carriesDecision = (ev: Json) => ev.judgments !== undefined || ev.credentials !== undefined || ev.status !== undefined;

/**
 * The decision's checks of a read with full evidence. `ev` is the read's evidence, whose
 * publication the read's own checks proved (log.publication, log.inclusion). Answers the
 * time the lists speak for and the judgments withdrawn (undefined when no status was read).
 */
export function* decisionChecking(c: Checks, ev: Json, o: DecisionOptions): Checking<StatusOutcome | undefined> {
  const pub = isObject(ev.publication) ? ev.publication : {};
  const entry = isObject(pub.entry) ? pub.entry : {};
  const body = isObject(entry.body) ? entry.body : {};
  const judgments = (Array.isArray(ev.judgments) ? ev.judgments : []).map((j) => (isObject(j) ? j : {}));
  const rule = isObject(body.rule) ? body.rule : {};
  // The proposal as the publication event says it was decided: what the judgments must recompute to.
  const proposal: Json = {
    proposalId: ev.proposalId,
    kind: ev.kind,
    status: 'published',
    requiredJudgments: rule.requiredJudgments,
    outcome: { weightedComposite: body.weightedComposite, decision: 'published' },
    judgments,
  };
  let judges: AgentKeys[] = [];
  const problems: string[] = [];
  for (const [i, j] of (Array.isArray(ev.judges) ? ev.judges : []).entries()) {
    try {
      judges.push(parseAgentKeys(j, `judges[${i}]`));
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  if (problems.length) {
    c.add({ id: 'shape', what: "the evidence's judges are public agent profiles", valid: false, why: problems.join('; ') });
    judges = [];
  }
  const judgmentIds = judgmentSetCheck(c, proposal);
  // L2: each judge signed these scores over the content the read is bound to (its evidence's contentSha256).
  const contentSha256 = typeof ev.contentSha256 === 'string' ? ev.contentSha256 : undefined;
  const l2 = yield* proposalJudgmentsChecking(proposal, judges, contentSha256);
  judgeSignatureChecks(c, l2, true);
  const logPart = isObject(ev.log) ? ev.log : {};
  const bundle: Json = {
    credentials: Array.isArray(ev.credentials) ? ev.credentials : [],
    issuerKeys: ev.issuerKeys,
    status: ev.status,
    log: {
      verifierKey: logPart.verifierKey,
      endorsement: logPart.endorsement,
      checkpoint: pub.checkpoint,
      entries: [{ event: 'proposal.published', entry: pub.entry, inclusion: pub.inclusion }],
    },
  };
  const scope: BundleScope = { bundle, proposal, judgments, judgmentIds, kind: l2.kind, v2: true, trust: o.trust, content: undefined, contentSha256 };
  // L1: one credential per judgment, verifying under the pinned issuer, saying what the judgment says.
  yield* credentialsChecking(c, scope, o.at);
  credentialSetCheck(c, scope);
  // content: the judgments are those the decision counted, and it recomputes from them.
  recomputeCheck(c, scope, { entry, body, event: String(body.event), item: {} });
  return yield* standingChecking(c, scope, o);
}

// L1: the credentials' status in the stapled lists, under the status head of the read's
// checkpoint; a revoked or suspended judgment is withdrawn from the decision, named, and the read
// holds while status.decision says the decision holds without it.
function* standingChecking(c: Checks, scope: BundleScope, o: DecisionOptions): Checking<StatusOutcome | undefined> {
  if (!o.inflate && isObject(scope.bundle.status)) {
    c.add({
      id: 'status',
      what: 'the status of the credentials the decision rests on (revocation, suspension)',
      valid: null,
      why: 'status unknown: the stapled lists were not inflated (pass inflate, or check with verifyNodeAsync)',
    });
    return undefined;
  }
  const logKey = o.logKeys?.includes(String((scope.bundle.log as Json).verifierKey)) ? String((scope.bundle.log as Json).verifierKey) : o.logKeys?.[0];
  const s = new Checks();
  const outcome = yield* statusChecking(s, scope, { inflate: o.inflate!, at: o.at, logKey, issuer: o.issuer });
  const withdrawn = new Set((outcome?.withdrawn ?? []).map((w) => `${w.purpose}:${w.judgmentId}`));
  const holds = s.list.find((k) => k.id === 'status.decision')?.valid ?? null;
  for (const k of s.list) {
    const purpose = k.id === 'status.revocation' ? 'revocation' : k.id === 'status.suspension' ? 'suspension' : undefined;
    if (k.valid === false && purpose && withdrawn.has(`${purpose}:${k.subject}`)) {
      c.add({
        id: 'status.withdrawn',
        what: `the judgment's credential is ${purpose === 'revocation' ? 'revoked' : 'suspended'}: the read holds only while the decision holds without it`,
        valid: holds,
        why: `${k.why ?? ''}${holds === true ? '; the decision still holds without it' : holds === false ? '; the decision no longer holds without it' : ''}`,
        subject: k.subject,
      });
    } else if (k.id === 'status.decision' && holds !== null) {
      // A reader is told in so many words whether what it reads still stands.
      c.add({ id: k.id, what: k.what, valid: holds, why: `the decision ${holds ? 'still holds' : 'no longer holds'}: ${k.why ?? ''}` });
    } else c.add({ id: k.id, what: k.what, valid: k.valid, why: k.why, subject: k.subject, anchor: k.anchor });
  }
  if (outcome && !withdrawn.size && !s.list.some((k) => isStatusCheck(k.id) && k.valid !== true))
    c.add({
      id: 'status.decision',
      what: 'the decision holds: no judgment it counted is revoked or suspended',
      valid: true,
      why:
        'the decision still holds: no judgment it counted is revoked or suspended ' +
        `(their status as of ${[...new Set(Object.values(outcome.asOf))].join(', ')})`,
    });
  return outcome;
}
