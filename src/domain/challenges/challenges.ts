// Challenges with decoys and the priced tools (PROTOCOL 4.2 to 4.4, 3.4): an agent draws a
// challenge, answers it while calling a tool, and pays tier price x tool multiplier. About
// 10 percent of challenges are honeypot decoys; a wrong answer to one counts toward a ban.
import { newChallengeId, ServiceError, TIER_PRICE, tierOf, type PaidTier } from '../../core/index.js';
import { space, type Tx } from '../../store/index.js';
import { isDecoyAnswerCorrect, validateAnswer, wireChallenge, type ChallengeEntry, type WireChallenge } from '../calibration/bank.js';
import { calibrationSetOf } from '../calibration/set.js';
import type { Ctx } from '../context.js';
import { AGENT_EVENT_KIND, agentEvent } from '../../core/standing.js';
import { revokeStanding } from '../credentials/standing.js';
import { enqueueLogEntry } from '../log/index.js';
import { moveCredits } from '../ledger.js';
import { Agents, agentLock, type AgentRecord } from '../records.js';
import { BAN_MS, bannedError, failureBans, isBanned, reputationScore } from '../identity/reputation.js';
import { isToolError, TOOLS, type ToolError, type ToolName } from './tools/index.js';

/** How long an issued challenge may be answered. */
export const CHALLENGE_TTL_MS = 10 * 60 * 1000;
/** A bank entry is served to an agent again this long after it last was. */
export const CHALLENGE_REUSE_MS = 24 * 60 * 60 * 1000;

interface IssuedChallenge {
  challengeId: string;
  agent: string;
  bankId: string;
  decoy: boolean;
  issuedAt: number;
  expiresAt: number;
  answeredAt: number | null;
}

const Challenges = space<IssuedChallenge>('challenges');
/** `${tag}:${bankId}`: the bank entries an agent has been served (each at most once). */
const Served = space<{ at: number }>('served-challenges');
export const Appeals = space<{ appealId: string; agent: string; message: string; contact?: string; receivedAt: number; bannedUntil: number | null }>('appeals');

const challengeLock = (id: string) => `challenge:${id}`;

export interface Challenge {
  challengeId: string;
  expiresIn: number;
  challenge: WireChallenge;
}

/** Draws an unserved bank entry for the agent (a decoy about decoyRate of the time); 503 no_work when none is left. */
export async function issueChallenge(ctx: Ctx, agent: AgentRecord): Promise<Challenge> {
  return ctx.store.transact([servedLock(agent.tag)], (tx) => drawChallenge(ctx, tx, agent.tag));
}

const servedLock = (tag: string) => `served:${tag}`;

// The draw itself, inside a transaction holding servedLock(tag): use-tool draws the next
// challenge in the same batch as its charge, so a call costs one durable write, not two.
async function drawChallenge(ctx: Ctx, tx: Tx, tag: string): Promise<Challenge> {
  const bank = calibrationSetOf(ctx.config).bank;
  const now = ctx.clock.now();
  const recent = new Set(
    (await tx.list(Served, { gte: `${tag}:`, lt: `${tag};` })).filter(([, v]) => v.at + CHALLENGE_REUSE_MS > now).map(([k]) => k.slice(tag.length + 1)),
  );
  const fresh = (list: readonly ChallengeEntry[]) => list.filter((e) => !recent.has(e.id));
  // A decoy about decoyRate of the time. When the ordinary entries are used up the answer is
  // no_work, never a stream of the decoys that are left (that would give them away).
  const wantDecoy = ctx.random(2).readUInt16BE(0) / 65536 < ctx.config.decoyRate;
  const decoys = wantDecoy ? fresh(bank.decoys) : [];
  const pool = decoys.length ? decoys : fresh(bank.normal);
  if (pool.length === 0) {
    throw new ServiceError('no_work', 'No challenge left for this agent today: every one in the bank was served to you in the last 24 hours.', {
      hint: 'Judge pending proposals instead (GET /api/judge/queue?expand=1); challenges come back 24 hours after they were served.',
    });
  }
  const entry = pool[ctx.random(4).readUInt32BE(0) % pool.length];
  const challengeId = newChallengeId(ctx.random);
  tx.put(Served, `${tag}:${entry.id}`, { at: now });
  tx.put(Challenges, challengeId, {
    challengeId,
    agent: tag,
    bankId: entry.id,
    decoy: Boolean(entry.decoy),
    issuedAt: now,
    expiresAt: now + CHALLENGE_TTL_MS,
    answeredAt: null,
  });
  return { challengeId, expiresIn: Math.round(CHALLENGE_TTL_MS / 1000), challenge: wireChallenge(entry) };
}

export interface UseToolInput {
  challengeId: string;
  answer: unknown;
  tool: ToolName;
  toolInput: unknown;
}

export interface UseToolResult {
  tool: ToolName;
  result: unknown;
  cost: number;
  balance: number;
  agent: AgentRecord;
  /** The next challenge, drawn in the same batch; null when banned or the bank is used up. */
  next: Challenge | null;
}

function challengeGone() {
  return new ServiceError('challenge_expired', 'This challengeId is unknown to you, already answered, or expired.', {
    field: 'challengeId',
    hint: 'GET /api/agent/v1/challenge for a fresh one.',
  });
}

/**
 * Answers a challenge and runs a tool. Every check that can refuse the call runs before any
 * credit moves; the charge, the answered mark and the reputation counters are one batch, and
 * a balance that cannot pay is refused under the agent's lock (so racing calls never go negative).
 */
export async function useTool(ctx: Ctx, agent: AgentRecord, input: UseToolInput): Promise<UseToolResult> {
  const tier = tierOf(agent.calibration.score);
  if (tier === 'uncalibrated') throw new ServiceError('calibration_required', 'Calibrate before using priced tools: GET /api/agent/v1/calibrate.');
  if (tier === 'refused') throw new ServiceError('tier_too_low', 'A calibration score below 0.3 is refused on priced surfaces.', { tier, floor: 0.3 });
  const tool = TOOLS[input.tool];
  const cost = TIER_PRICE[tier as PaidTier] * tool.costMultiplier;

  const issued = await ctx.store.get(Challenges, input.challengeId);
  const now = ctx.clock.now();
  if (!issued || issued.agent !== agent.tag || issued.answeredAt !== null || issued.expiresAt <= now) throw challengeGone();
  // An entry of another set (the node restarted on a new calibration set) is gone too.
  const entry = calibrationSetOf(ctx.config).bank.byId.get(issued.bankId);
  if (!entry) throw challengeGone();
  const valid = validateAnswer(entry.schemaName, input.answer);
  if (!valid.ok) throw new ServiceError('invalid_answer', `The answer does not fit the ${entry.schemaName} schema.`, { errors: valid.errors });
  if (agent.balance < cost) {
    throw new ServiceError('insufficient_balance', `This call costs ${cost} credits; the balance is ${agent.balance}.`, {
      required: cost,
      balance: agent.balance,
    });
  }

  // The tool validates its own input (400 invalid_tool_input) and may refuse. A pattern stopped
  // at the regex time limit has had its 50 ms of the node's one regex worker, and more (compiling
  // cannot be interrupted: regex-test.ts): it is charged and uses the challenge up like a result,
  // so nobody keeps the worker busy for free with one challenge (issue 30). Refusals that say
  // nothing ran (a bad pattern, a busy or stopped evaluator) charge nothing.
  let result: unknown;
  let timedOut: ToolError | undefined;
  try {
    result = await tool.run(input.toolInput as never);
  } catch (e) {
    if (!(isToolError(e) && e.code === 'regex_timeout')) throw e;
    timedOut = e;
  }

  const settled = await ctx.store.transact([agentLock(agent.tag), challengeLock(input.challengeId), servedLock(agent.tag)], async (tx) => {
    const ch = await tx.get(Challenges, input.challengeId);
    if (!ch || ch.answeredAt !== null || ch.expiresAt <= ctx.clock.now()) throw challengeGone();
    const me = (await tx.get(Agents, agent.tag))!;
    // The request was let in before a concurrent decoy failure may have banned the agent.
    if (isBanned(me, ctx.clock.now())) throw bannedError(me);
    ch.answeredAt = ctx.clock.now();
    tx.put(Challenges, ch.challengeId, ch);
    if (ch.decoy) {
      me.decoyAttempted += 1;
      if (!isDecoyAnswerCorrect(entry, input.answer)) {
        me.decoyFailed += 1;
        const bans = failureBans(me);
        if (bans) me.bannedUntil = ctx.clock.now() + BAN_MS;
        // Each decoy failure, and the ban it starts, is logged in the same commit: a standing's
        // reputation is recomputed from these entries (PROTOCOL 8.9, 9.3).
        enqueueLogEntry(tx, ctx, {
          kind: AGENT_EVENT_KIND,
          tier: 'event',
          agent: me.tag,
          body: agentEvent('agent.decoy-failed', ctx.clock.now(), { decoyFailed: me.decoyFailed, bannedUntil: bans ? me.bannedUntil : null }),
        });
      }
    } else {
      me.totalAnswered += 1;
    }
    moveCredits(tx, ctx, me, 'spend', cost, `tool ${input.tool}`, ch.challengeId);
    let next: Challenge | null = null;
    // A timed-out call answers an error, which carries no next challenge: none is drawn.
    if (!timedOut && !isBanned(me, ctx.clock.now())) {
      try {
        next = await drawChallenge(ctx, tx, me.tag);
      } catch (e) {
        if (!(e instanceof ServiceError && e.code === 'no_work')) throw e;
      }
    }
    return { tool: input.tool, result, cost, balance: me.balance, agent: me, next };
  });
  // A ban revokes the agent's standing at once (PROTOCOL 3.4, 8.9): it stops verifying everywhere it was taken.
  if (isBanned(settled.agent, ctx.clock.now())) await revokeStanding(ctx, agent.tag, `the agent ${agent.tag} is banned (PROTOCOL 3.4)`);
  if (timedOut) {
    throw new ServiceError('regex_timeout', `${timedOut.message} The call was charged and its challenge is used up.`, {
      tool: input.tool,
      charged: cost,
      balance: settled.balance,
      hint: 'Simplify the pattern (no nested quantifiers such as (a+)+), draw a new challenge (GET /api/agent/v1/challenge) and call again.',
    });
  }
  return settled;
}

/** The score GET /challenge reports alongside the challenge. */
export const challengeReputation = (a: AgentRecord) => Math.round(reputationScore(a) * 1e6) / 1e6;

/** Records a ban appeal (ban-exempt; PROTOCOL 2.9: answered within 72 hours). */
export async function appeal(ctx: Ctx, agent: AgentRecord, message: string, contact?: string) {
  const appealId = 'apl_' + ctx.random(8).toString('hex');
  const record = { appealId, agent: agent.tag, message, ...(contact ? { contact } : {}), receivedAt: ctx.clock.now(), bannedUntil: agent.bannedUntil };
  await ctx.store.transact([agentLock(agent.tag)], async (tx) => {
    const me = (await tx.get(Agents, agent.tag))!;
    me.appeals += 1;
    tx.put(Agents, me.tag, me);
    tx.put(Appeals, appealId, record);
  });
  return record;
}
