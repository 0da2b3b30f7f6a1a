// The L3 checks of a proposal bundle (bundle.ts; PROTOCOL 8.4, 9.3): the node's log events
// about the proposal (submitted, each judgment, the decision), each with its inclusion proof
// against a checkpoint signed by a pinned (or issuer-endorsed) log key and naming the content,
// and the decision recomputed from the judgments and the rule its event names (PROTOCOL 7.4).
// Each sub-check is a generator yielding the signatures it needs (src/core/checking.ts).
import type { Checking } from '../src/core/checking.js';
import type { ProposalContent } from '../src/core/content.js';
import { compositeOf, PUBLISH_THRESHOLD, round6, weightedComposite } from '../src/core/judgment.js';
import type { IssuerTrust } from './issuer-keys.js';
import { endorsedLogKeyChecking, logInclusionChecking, witnessesChecking, type WitnessPolicy } from './log.js';
import type { Checks } from './report.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const EVENT_KIND = 'attestation.event.v1';
const DECISIONS = ['published', 'rejected', 'withdrawn'];

/** What the checks after L2 share: the bundle's proposal and judgments, and what the earlier layers learnt. */
export interface BundleScope {
  bundle: Json;
  proposal: Json;
  judgments: Json[];
  judgmentIds: string[];
  kind: string;
  /** Checked as akas.bundle.v2 (its label, or the content binding it carries). */
  v2: boolean;
  /** The issuer keys reached from the pin; undefined when none was pinned. */
  trust: IssuerTrust | undefined;
  content: ProposalContent | undefined;
  /** The content hash recomputed here; undefined when the content cannot be. */
  contentSha256: string | undefined;
}

/** How the proposal's content is bound at propose (BundleReport's binding.submitted). */
export type Submitted = 'log' | 'store' | 'missing' | 'not-checked';

/** One log item of a bundle: the entry, its event and its proof. */
export interface LogItem {
  entry: Json;
  body: Json;
  event: string;
  item: Json;
}

/** What the L3 sub-checks share: the log's items, the trusted key, and the two questions every event answers. */
interface LogScope extends BundleScope {
  items: LogItem[];
  proposer: unknown;
  /** The event names the content recomputed here (or one of the two does not say). */
  names: (body: Json) => boolean;
  /** The event's inclusion proof against the bundle's checkpoint, under the trusted log key. */
  inclusion: (it: LogItem, subject: string) => Checking<void>;
}

/**
 * L3 made verifiable: each event about the proposal in the node's log, proven against a
 * checkpoint signed by a log key that is pinned, or endorsed by the pinned issuer; the
 * checkpoint's witnesses when a quorum is asked for. Answers how the content was bound at propose.
 */
export function* logChecking(c: Checks, scope: BundleScope, options: { logKey?: string; logKeys?: string[]; witnesses?: WitnessPolicy }): Checking<Submitted> {
  const logPart = isObject(scope.bundle.log) ? scope.bundle.log : undefined;
  const pinned = options.logKey ? [options.logKey] : options.logKeys?.length ? options.logKeys : undefined;
  const logKeys = yield* logKeyChecking(c, logPart, scope.trust, pinned, options.logKey ? '--log-key' : 'the trust file');
  const items: LogItem[] = ((Array.isArray(logPart?.entries) ? logPart!.entries : []) as unknown[]).filter(isObject).map((item) => {
    const entry = isObject(item.entry) ? item.entry : {};
    const body = isObject(entry.body) ? entry.body : {};
    // A v1 bundle lists judgment entries by judgmentId only; what an entry records is its body's word.
    return { entry, body, event: typeof body.event === 'string' ? body.event : '', item };
  });
  const { contentSha256 } = scope;
  const log: LogScope = {
    ...scope,
    items,
    proposer: scope.proposal.proposer ?? null,
    names: (body) => (contentSha256 === undefined || body.contentSha256 === undefined ? true : body.contentSha256 === contentSha256),
    *inclusion(it, subject) {
      if (logKeys) yield* logInclusionChecking(c, { entry: it.item.entry, inclusion: it.item.inclusion, checkpoint: logPart!.checkpoint }, logKeys, subject);
      else c.add({ id: 'log.inclusion', what: "the event is in the node's log", valid: null, why: 'not checked: no trusted log key', subject, anchor: true });
    },
  };
  const submitted = yield* submittedChecking(c, log);
  yield* judgmentEventsChecking(c, log);
  if (scope.v2) {
    eventSetCheck(c, log);
    // The decision (or withdrawal): its event, and the decision recomputed from the judgments.
    yield* decisionChecking(c, log);
  } else {
    c.add({
      id: 'decision.recompute',
      what: `the status shown (${String(scope.proposal.status)}) is the decision the judgments make`,
      valid: null,
      why: 'not checked: an akas.bundle.v1 carries no decision event naming its judgments, weights and rule',
    });
  }
  // The bundle's checkpoint counts only with its witnesses' quorum, when witnesses are given.
  if (options.witnesses) yield* witnessesChecking(c, logPart?.checkpoint, options.witnesses);
  return submitted;
}

// The log key, the anchor of L3: one pinned (--log-key, or a trust file's policy), else the one
// the pinned issuer endorses in the bundle; answers the keys the inclusion proofs are checked
// under (undefined: none is trusted, and the verdict is unanchored).
function* logKeyChecking(
  c: Checks,
  logPart: Json | undefined,
  trust: IssuerTrust | undefined,
  pinned: string[] | undefined,
  by: string,
): Checking<string[] | undefined> {
  if (pinned) {
    const ok = pinned.includes(logPart?.verifierKey as string);
    c.add({
      id: 'log.key',
      what: `the log key is one pinned by ${by}`,
      valid: ok,
      why: ok ? undefined : `the bundle names ${String(logPart?.verifierKey)}, which ${by} does not pin`,
      anchor: true,
    });
    return pinned;
  }
  const logKey = trust && logPart ? ((yield* endorsedLogKeyChecking(logPart.endorsement, trust)) ?? undefined) : undefined;
  if (trust)
    c.add({
      id: 'log.key',
      what: 'the log key is endorsed by a pinned issuer key',
      valid: logKey !== undefined,
      why: logKey ? undefined : "no endorsement of the bundle's log key by a pinned issuer key",
      anchor: true,
    });
  else
    c.add({
      id: 'log.key',
      what: 'the log key is trusted',
      valid: null,
      why: 'not checked: pass --trust FILE, --log-key KEY, or --issuer DID (whose endorsement of the log key is in the bundle)',
      anchor: true,
    });
  return logKey ? [logKey] : undefined;
}

// The submitted event: the content, kind, path and proposer, as the node logged them at propose.
function* submittedChecking(c: Checks, log: LogScope): Checking<Submitted> {
  if (!log.v2) return 'not-checked';
  const { proposal, kind, content, contentSha256, proposer } = log;
  const sub = log.items.filter((it) => it.event === 'proposal.submitted' && it.body.proposalId === proposal.proposalId);
  if (sub.length === 0) {
    const store = proposal.contentBinding === 'store';
    c.add({
      id: 'log.submitted',
      what: 'the log recorded this content, kind, path and proposer at propose',
      valid: store ? null : false,
      why: store
        ? "not checked: a proposal stored before content binding is bound by the node's store, not by the log"
        : 'the bundle holds no proposal.submitted event for it',
    });
    return store ? 'store' : 'missing';
  }
  const it = sub[0];
  const problems: string[] = [];
  if (sub.length > 1) problems.push(`${sub.length} proposal.submitted events`);
  if (it.entry.kind !== EVENT_KIND) problems.push(`the entry is a ${String(it.entry.kind)}`);
  if (it.body.kind !== kind) problems.push(`it logged kind ${String(it.body.kind)}`);
  if (contentSha256 !== undefined && it.body.contentSha256 !== contentSha256)
    problems.push(`it logged content ${String(it.body.contentSha256)}, the content shown hashes to ${contentSha256}`);
  if (content && it.body.path !== content.path) problems.push(`it logged path ${String(it.body.path)}`);
  if (it.body.proposer !== proposer || it.entry.agent !== proposer)
    problems.push(`it logged proposer ${String(it.body.proposer)}, the proposal shows ${String(proposer)}`);
  c.add({
    id: 'log.submitted',
    what: 'the log recorded this content, kind, path and proposer at propose',
    valid: problems.length === 0,
    why: problems.join('; ') || undefined,
    subject: 'proposal.submitted',
  });
  yield* log.inclusion(it, 'proposal.submitted');
  return 'log';
}

// Each judgment's event: recorded in the log, about this judgment of this content.
function* judgmentEventsChecking(c: Checks, log: LogScope): Checking<void> {
  const { v2, proposal } = log;
  for (const id of log.judgmentIds) {
    const it = log.items.find((x) => (x.event === 'judgment.recorded' && x.body.judgmentId === id) || (!v2 && x.item.judgmentId === id));
    if (!it) {
      c.add({
        id: 'log.inclusion',
        what: "the judgment is in the node's log",
        valid: v2 ? false : null,
        why: v2 ? 'the bundle holds no judgment.recorded event for it' : 'not checked: the bundle holds no log entry for it (exported before it was appended)',
        subject: id,
      });
      continue;
    }
    const about = it.entry.kind === EVENT_KIND && it.event === 'judgment.recorded' && it.body.judgmentId === id && it.body.proposalId === proposal.proposalId;
    const ofContent = log.names(it.body);
    c.add({
      id: 'log.entry.about',
      what: 'the log entry records this judgment of this content',
      valid: about && ofContent,
      why: !about ? 'the entry is about something else' : ofContent ? undefined : `it names content ${String(it.body.contentSha256)}`,
      subject: id,
    });
    yield* log.inclusion(it, id);
  }
}

// content: no judgment.recorded event of a judgment the bundle leaves out.
function eventSetCheck(c: Checks, log: LogScope) {
  const extra = log.items
    .filter((it) => it.event === 'judgment.recorded' && !log.judgmentIds.includes(String(it.body.judgmentId)))
    .map((it) => String(it.body.judgmentId));
  c.add({
    id: 'set.events',
    what: 'every judgment.recorded event is of a judgment in the bundle',
    valid: extra.length === 0,
    why: extra.length ? `the log recorded judgments the bundle does not show: ${extra.join(', ')}` : undefined,
  });
}

/**
 * The decision of a bundle's proposal: a decided proposal has its decision event in the log (a
 * pending one has none), naming the status, the content and the proposer; and the decision
 * recomputes from the judgments shown, the weights its event names and the rule it applied
 * (PROTOCOL 7.4), with the same judgments, in the same order.
 */
function* decisionChecking(c: Checks, log: LogScope): Checking<void> {
  const { proposal } = log;
  const status = String(proposal.status);
  const decisions = log.items.filter((it) => DECISIONS.some((d) => it.event === `proposal.${d}`) && it.body.proposalId === proposal.proposalId);
  const what = 'the log recorded the status shown, for this content and proposer';
  if (!DECISIONS.includes(status)) {
    c.add({
      id: 'log.decision',
      what,
      valid: decisions.length === 0,
      why: decisions.length ? `the log recorded ${decisions.map((d) => d.event).join(', ')} for a proposal shown ${status}` : undefined,
    });
    return;
  }
  if (decisions.length === 0) {
    c.add({ id: 'log.decision', what, valid: false, why: `the bundle holds no proposal.${status} event for a proposal shown ${status}` });
    return;
  }
  const it = decisions[0];
  const problems: string[] = [];
  if (decisions.length > 1) problems.push(`${decisions.length} decision events: ${decisions.map((d) => d.event).join(', ')}`);
  if (it.entry.kind !== EVENT_KIND) problems.push(`the entry is a ${String(it.entry.kind)}`);
  if (it.event !== `proposal.${status}`) problems.push(`the log recorded ${it.event}, the proposal shows ${status}`);
  if (!log.names(it.body)) problems.push(`it names content ${String(it.body.contentSha256)}, the content shown hashes to ${String(log.contentSha256)}`);
  if (it.entry.agent !== log.proposer) problems.push(`its agent is ${String(it.entry.agent)}, the proposal shows proposer ${String(log.proposer)}`);
  c.add({
    id: 'log.decision',
    what,
    valid: problems.length === 0,
    why: problems.join('; ') || (it.body.contentSha256 === undefined ? 'logged before content binding: it names no content' : undefined),
    subject: it.event,
  });
  yield* log.inclusion(it, it.event);
  if (status !== 'withdrawn') recomputeCheck(c, log, it);
}

// content: the judgments the decision counted are those shown, and the decision recomputes
// from them, the weights it names and the rule it applied. A node read's decision (PROTOCOL
// 10.7, node-decision.ts) is checked here too, from its publication event.
export function recomputeCheck(c: Checks, log: Pick<LogScope, 'proposal' | 'judgments'>, it: LogItem) {
  const { proposal, judgments } = log;
  const status = String(proposal.status);
  const ev = it.body;
  const counted = Array.isArray(ev.judgments) ? (ev.judgments as unknown[]).filter(isObject) : undefined;
  const rule = isObject(ev.rule) ? ev.rule : undefined;
  if (!counted || !rule) {
    const why = 'not checked: a decision logged before content binding names no judgments, weights or rule';
    c.add({ id: 'set.decision', what: 'the judgments shown are those the decision counted', valid: null, why });
    c.add({ id: 'decision.recompute', what: 'the decision recomputes from the judgments and the rule', valid: null, why });
    return;
  }
  const shownIds = judgments.map((j) => String(j.judgmentId));
  const countedIds = counted.map((j) => String(j.judgmentId));
  const setOk = shownIds.length === countedIds.length && shownIds.every((id, i) => id === countedIds[i]);
  c.add({
    id: 'set.decision',
    what: 'the judgments shown are those the decision counted, in order',
    valid: setOk,
    why: setOk ? undefined : `the decision counted ${countedIds.join(', ') || 'none'}; the bundle shows ${shownIds.join(', ') || 'none'}`,
  });

  const problems: string[] = [];
  const required = rule.requiredJudgments;
  if (rule.publishThreshold !== PUBLISH_THRESHOLD)
    problems.push(`the rule applied publishes at ${String(rule.publishThreshold)}, not PROTOCOL 7.4's ${PUBLISH_THRESHOLD}`);
  if (required !== proposal.requiredJudgments)
    problems.push(`the rule applied wants ${String(required)} judgments, the proposal shows ${String(proposal.requiredJudgments)}`);
  // Fewer than the quorum is no decision; more still is one (and what status.decision recomputes when some are withdrawn).
  if (!(counted.length >= Number(required))) problems.push(`${counted.length} judgments counted, the rule wants ${String(required)}`);
  const rows: Array<{ weight: number; composite: number }> = [];
  for (const k of counted) {
    const j = judgments.find((x) => x.judgmentId === k.judgmentId);
    if (!j) continue; // set.decision names it
    let composite: number;
    try {
      composite = compositeOf(j.scores as never);
    } catch {
      problems.push(`judgment ${String(k.judgmentId)} has no four scores`);
      continue;
    }
    if (k.composite !== composite || j.composite !== composite)
      problems.push(`judgment ${String(k.judgmentId)}: its scores give composite ${composite}, the decision counted ${String(k.composite)}`);
    if (typeof k.weight !== 'number' || !Number.isFinite(k.weight) || k.weight < 0)
      problems.push(`judgment ${String(k.judgmentId)}: the decision counted no weight`);
    else if (j.weight !== k.weight) problems.push(`judgment ${String(k.judgmentId)} shows weight ${String(j.weight)}, the decision counted ${k.weight}`);
    rows.push({ weight: Number(k.weight), composite });
  }
  const weighted = weightedComposite(rows);
  const decision = weighted >= PUBLISH_THRESHOLD ? 'published' : 'rejected';
  const outcome = isObject(proposal.outcome) ? proposal.outcome : {};
  if (round6(weighted) !== ev.weightedComposite)
    problems.push(`the judgments give a weighted composite of ${round6(weighted)}, the decision logged ${String(ev.weightedComposite)}`);
  if (outcome.weightedComposite !== round6(weighted))
    problems.push(`the outcome shows a weighted composite of ${String(outcome.weightedComposite)}, the judgments give ${round6(weighted)}`);
  if (decision !== status || outcome.decision !== decision || it.event !== `proposal.${decision}`) {
    problems.push(
      `the judgments decide ${decision} (${round6(weighted)} against ${PUBLISH_THRESHOLD}); the proposal shows ${status}, its outcome ` +
        `${String(outcome.decision)}, the log ${it.event}`,
    );
  }
  c.add({
    id: 'decision.recompute',
    what: `the decision recomputes from the judgments and the rule (${String(required)} judgments, publish at ${PUBLISH_THRESHOLD})`,
    valid: problems.length === 0,
    why: problems.join('; ') || `${decision} at ${round6(weighted)}`,
  });
}
