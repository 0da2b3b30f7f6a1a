// Whole flows through the HTTP surface for tests: calibrated agents on their own IPs, signed
// proposals and judgments, and a proposal taken all the way to published (or rejected).
import { expect } from 'vitest';
import { canonicalize, sign, type ProposalKind } from '../../src/core/index.js';
import { KIND_ROUTES } from '../../src/domain/proposals/kinds.js';
import { samplePayload } from '../fixtures/payloads.js';
import { markCalibrated } from './agents.js';
import { bearer, registerAgent, type TestNode } from './app.js';

export type Agent = Awaited<ReturnType<typeof registerAgent>> & { ip: string };

let ipCounter = 0;

/** A registered agent on an IP of its own, calibrated at `score` (null: left uncalibrated) with `balance` credits. */
export async function agent(node: TestNode, score: number | null = 0.8, balance = 20): Promise<Agent> {
  const n = ++ipCounter;
  const ip = `10.${100 + Math.floor(n / 62500)}.${Math.floor(n / 250) % 250}.${n % 250}`;
  const a = await registerAgent(node, ip);
  if (score !== null) await markCalibrated(node, a.tag, score, balance);
  return { ...a, ip };
}

export function proposeAs(node: TestNode, a: Agent, kind: ProposalKind, payload: unknown, headers: Record<string, string> = {}) {
  return node.app.inject({
    method: 'POST',
    url: KIND_ROUTES[kind].propose,
    payload: payload as object,
    headers: { ...bearer(a.apiKey), ...headers },
    remoteAddress: a.ip,
  });
}

export const SCORES_HIGH = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
export const SCORES_LOW = { accuracy: 0.2, clarity: 0.3, compression: 0.4, sources: 0.1 };

/** A judge body signed with the agent's key over the JCS payload of PROTOCOL 7.2. */
export function signedBody(a: Agent, kind: ProposalKind, proposalId: string, scores = SCORES_HIGH, rationale = 'Accurate and well sourced.') {
  const payload = canonicalize({ type: 'akas.judgment.v1', kind, proposalId, judge: a.tag, scores, rationale });
  return { scores, rationale, signature: sign(a.signing.privateKey, payload) };
}

/** A judge body signed over the v2 payload of PROTOCOL 7.2: the judgment names the content it judged. */
export function signedBodyV2(
  a: Agent,
  kind: ProposalKind,
  proposalId: string,
  contentSha256: string,
  scores = SCORES_HIGH,
  rationale = 'Accurate and well sourced.',
) {
  const payload = canonicalize({ type: 'akas.judgment.v2', kind, proposalId, judge: a.tag, scores, rationale, contentSha256 });
  return { scores, rationale, contentSha256, signature: sign(a.signing.privateKey, payload) };
}

/** The contentSha256 a proposal's detail shows (PROTOCOL 6.10). */
export async function contentOf(node: TestNode, proposalId: string): Promise<string> {
  return (await node.app.inject({ url: `/api/knowledge/proposals/${proposalId}` })).json().contentSha256;
}

/** Sends a judge body as `a`, to the kind's judge route (or `opts.url`), with any extra headers. */
export function judgeAs(
  node: TestNode,
  a: Agent,
  kind: ProposalKind,
  proposalId: string,
  body: unknown,
  opts: { url?: string; headers?: Record<string, string> } = {},
) {
  return node.app.inject({
    method: 'POST',
    url: opts.url ?? `${KIND_ROUTES[kind].judge}/${proposalId}`,
    payload: body as object,
    headers: { ...bearer(a.apiKey), ...opts.headers },
    remoteAddress: a.ip,
  });
}

/**
 * Proposes `payload` (a sample of the kind by default) and has three fresh judges judge it:
 * high scores publish, low ones reject; they sign the v1 payload (PROTOCOL 7.2), or with `sign: 'v2'` the
 * content they read. Answers the proposal id, the judges and their answers.
 */
export async function decide(
  node: TestNode,
  kind: ProposalKind,
  opts: { payload?: unknown; proposer?: Agent; outcome?: 'published' | 'rejected'; n?: number; sign?: 'v1' | 'v2' } = {},
) {
  const proposer = opts.proposer ?? (await agent(node));
  if (kind === 'eval-result' && !opts.payload) {
    const other = await agent(node);
    expect((await proposeAs(node, other, 'artifact', samplePayload('artifact', opts.n ?? 1))).statusCode).toBe(200);
  }
  const res = await proposeAs(node, proposer, kind, opts.payload ?? samplePayload(kind, opts.n ?? 1));
  expect(res.statusCode, res.body).toBe(200);
  const proposalId = res.json().proposalId as string;
  const judges = [await agent(node, 0.9, 0), await agent(node, 0.8, 0), await agent(node, 0.7, 0)];
  const answers = [];
  const content = opts.sign === 'v2' ? await contentOf(node, proposalId) : undefined;
  for (const j of judges) {
    const scores = opts.outcome === 'rejected' ? SCORES_LOW : SCORES_HIGH;
    const body = content ? signedBodyV2(j, kind, proposalId, content, scores) : signedBody(j, kind, proposalId, scores);
    const r = await judgeAs(node, j, kind, proposalId, body);
    expect(r.statusCode, r.body).toBe(200);
    answers.push(r.json());
  }
  return { proposalId, proposer, judges, answers };
}
