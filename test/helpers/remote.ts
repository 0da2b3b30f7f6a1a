// Calls to a running node over HTTP from tests: agents registered and calibrated through the
// API, signed judge bodies, polling with a deadline.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { canonicalize, sign } from '../../src/core/index.js';

export interface Answer {
  status: number;
  body: any;
  raw: Buffer;
}

/** One HTTP call to a node; a refused connection (a killed process) rejects. */
export async function call(
  node: { url: string },
  method: string,
  path: string,
  opts: { body?: unknown; key?: string; ip?: string; raw?: Buffer } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.ip) headers['x-forwarded-for'] = opts.ip;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.raw) headers['content-type'] = 'application/octet-stream';
  const res = await fetch(node.url + path, { method, headers, body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)) });
  const raw = Buffer.from(await res.arrayBuffer());
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    body = undefined;
  }
  return { status: res.status, body, raw };
}

/** A call that must answer 200: its JSON body, else an error naming the call and the answer. */
export async function ok(node: { url: string }, method: string, path: string, body?: unknown, key?: string): Promise<any> {
  const r = await call(node, method, path, { body, key });
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.raw.toString('utf8')}`);
  return r.body;
}

const pools = new Map<string, Record<string, string>>();
/** The expected answers of a calibration pool (a top score: the agent may judge and propose). */
export function poolAnswers(poolId: string) {
  if (!pools.has(poolId)) {
    const pool = JSON.parse(readFileSync(new URL(`../../data/calibration/pool-${poolId}.json`, import.meta.url), 'utf8')) as {
      questions: Array<{ id: string; expected: string }>;
    };
    pools.set(poolId, Object.fromEntries(pool.questions.map((q) => [q.id, q.expected])));
  }
  return pools.get(poolId)!;
}

export interface Agent {
  tag: string;
  apiKey: string;
  recoveryToken: string;
  signing: { privateKey: string; publicKey: string };
}

let ipCounter = 0;
export const nextIp = () => {
  const n = ++ipCounter;
  return `10.77.${Math.floor(n / 250) % 250}.${n % 250}`;
};

export async function register(node: { url: string }, ip = nextIp()): Promise<Agent> {
  const r = await call(node, 'POST', '/api/agent/v1/register', { ip });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as Agent;
}

export async function calibrated(node: { url: string }): Promise<Agent> {
  const a = await register(node);
  const poolId = (a as unknown as { calibrationPoolId: string }).calibrationPoolId;
  const r = await call(node, 'POST', '/api/agent/v1/calibrate', { key: a.apiKey, body: { answers: poolAnswers(poolId) } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return a;
}

export function judgeBody(a: Agent, proposalId: string) {
  const scores = { accuracy: 0.9, clarity: 0.8, compression: 0.7, sources: 0.8 };
  const rationale = 'Accurate, clear and sourced.';
  return {
    scores,
    rationale,
    signature: sign(a.signing.privateKey, canonicalize({ type: 'akas.judgment.v1', kind: 'brief', proposalId, judge: a.tag, scores, rationale })),
  };
}

export async function untilTrue(check: () => Promise<boolean>, within: number, what: string) {
  const deadline = Date.now() + within;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${within} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The example body of the pipeline.facet.v1 attestation schema. */
export function pipelineFacet() {
  const schema = JSON.parse(readFileSync(new URL('../../data/attestations/pipeline.facet.v1.json', import.meta.url), 'utf8')) as {
    examples: Array<Record<string, unknown>>;
  };
  return schema.examples[0];
}
