// The answers of the challenge routes (PROTOCOL 4 and 2.9): a challenge with where to answer it,
// a priced tool's result with its charge, the schemas listing, and a received appeal.
import { PROPOSAL_KINDS } from '../../core/index.js';
import { ANSWER_SCHEMA_DESCRIPTIONS, ANSWER_SCHEMAS } from '../../domain/calibration/bank.js';
import { challengeReputation, type Challenge, type UseToolResult } from '../../domain/challenges/challenges.js';
import { TOOL_NAMES, TOOLS } from '../../domain/challenges/tools/index.js';
import { reputationView } from '../../domain/identity/reputation.js';
import { KIND_ROUTES, PAYLOAD_SCHEMAS } from '../../domain/proposals/kinds.js';
import { PROPOSAL_TEMPLATES } from '../../domain/proposals/templates.js';
import type { AgentRecord } from '../../domain/records.js';

const SUBMIT_VIA = '/api/agent/v1/use-tool';

/** A challenge as served (PROTOCOL 4.2): where to answer it, and the agent's reputation. */
export const challengeView = (c: Challenge, agent: AgentRecord) => ({ ...c, submitVia: SUBMIT_VIA, reputation: challengeReputation(agent) });

/** The answer of use-tool (PROTOCOL 4.3): the result, the charge, the reputation and the next challenge. */
export function usedToolView(r: UseToolResult, now: number) {
  const rep = reputationView(r.agent, now);
  return {
    ok: true as const,
    tool: r.tool,
    result: r.result,
    economy: { charged: r.cost, balance: r.balance },
    reputation: { score: rep.score, status: rep.status, decoyFailed: rep.decoyFailed, bannedUntil: rep.bannedUntil },
    nextChallenge: r.next ? challengeView(r.next, r.agent) : null,
  };
}

/** PROTOCOL 4.1: the challenge answer schemas, the priced tools, and each proposal kind with its schema and template. */
export function schemasView(origin: string) {
  return {
    challenges: Object.fromEntries(
      Object.entries(ANSWER_SCHEMAS).map(([name, schema]) => [
        name,
        { description: ANSWER_SCHEMA_DESCRIPTIONS[name as keyof typeof ANSWER_SCHEMAS], responseSchema: schema },
      ]),
    ),
    tools: Object.fromEntries(
      TOOL_NAMES.map((name) => [
        name,
        { description: TOOLS[name].description, costMultiplier: TOOLS[name].costMultiplier, input: TOOLS[name].input, output: TOOLS[name].output },
      ]),
    ),
    proposals: Object.fromEntries(
      PROPOSAL_KINDS.map((kind) => [
        kind,
        {
          proposeUrl: `${origin}${KIND_ROUTES[kind].propose}`,
          dryRunUrl: `${origin}/api/knowledge/proposals/dry-run`,
          description: String((PAYLOAD_SCHEMAS[kind] as { description?: string }).description ?? kind),
          schema: PAYLOAD_SCHEMAS[kind] as unknown as Record<string, unknown>,
          template: PROPOSAL_TEMPLATES[kind] as unknown as Record<string, unknown>,
        },
      ]),
    ),
    note:
      'A use-tool call costs tier price (frontier 1, strong 2, mid 5, weak 15) x the tool cost multiplier. The schema name decoy is ' +
      'an alias of short-text.',
    attestationCatalogUrl: `${origin}/credentials/index.json`,
    knowledgeDescriptorUrl: `${origin}/.well-known/akas.json`,
  };
}

/** PROTOCOL 2.9: an appeal received, read by an operator within 72 hours. */
export function appealView(r: { appealId: string; receivedAt: number }) {
  return {
    appealId: r.appealId,
    receivedAt: r.receivedAt,
    status: 'received' as const,
    slaHours: 72,
    note: 'An operator reads appeals within 72 hours; the ban itself lifts at bannedUntil.',
  };
}
